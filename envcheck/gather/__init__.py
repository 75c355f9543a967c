"""gather: collect facts, never judge. Every gatherer is guarded and time-limited; a failure becomes a Failure fact.

The gatherers run concurrently; what they return is assembled into one Facts value in a fixed shape.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Mapping, Optional, Union

from ..model import Facts, Failure, Interpreter, gpus_given

if TYPE_CHECKING:
    from ..profile import Policy
from .checkout import locate_checkout, read_checkout
from .driver import gather_driver
from .interpreter import Probe, gather_interpreter
from .paths import read_search_paths
from .pythons import find_pythons
from .system import gather_system
from .toolkit import early_nvcc, gather_toolkit

__all__ = ["Sources", "gather", "Gatherers", "started", "head_start"]

def _default_modules() -> tuple[str, ...]:
    """The default profile's modules, for a Sources made without a policy."""
    from ..profile import DEFAULT_PROFILE, load_builtin

    return load_builtin(DEFAULT_PROFILE).probe_modules


@dataclass(frozen=True)
class Sources:
    """What to look at: the target interpreter, the checkout flag, the environment, the policy's CUTLASS layout."""

    python: str = sys.executable
    cutlass_dir: Optional[str] = None
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    cutlass_distribution: Optional[str] = "cutlass-api"  # None: the profile needs no CUTLASS checkout
    cutlass_subdir: str = "python/cutlass_api"
    cutlass_module: str = "cutlass_api"
    timeout: float = 30.0
    modules: tuple[str, ...] = field(default_factory=_default_modules)  # what the probe locates (the profile's)
    gpu_capabilities: tuple[tuple[int, int], ...] = ()  # --gpu-capability: GPUs to judge for, as if present
    variables: tuple[str, ...] = ()  # the environment variables the profiles judge (Policy.variables)
    torch_values: tuple[tuple[str, str], ...] = ()  # numbers of torch's sources to read (Policy.torch_values)

    @classmethod
    def for_policy(
        cls, python: str, policy: "Policy", cutlass_dir: Optional[str] = None, env: Optional[Mapping[str, str]] = None
    ) -> "Sources":
        """What to look at for a target interpreter under a policy (its modules, where its CUTLASS package lives)."""
        source = policy.cutlass
        return cls(
            python=python,
            cutlass_dir=cutlass_dir,
            env=dict(os.environ if env is None else env),
            cutlass_distribution=source.distribution if source else None,
            cutlass_subdir=source.subdir if source else "",
            cutlass_module=source.module if source else "",
            modules=policy.probe_modules,
            variables=policy.variables,
            torch_values=policy.torch_values,
        )


@dataclass(frozen=True)
class Gatherers:
    """The gatherers, passed in so that a test can break any one of them."""

    interpreter: Callable[..., Interpreter] = gather_interpreter  # (python, timeout, env, modules, torch_values)
    driver: Callable[[], object] = gather_driver
    toolkit: Callable[..., object] = gather_toolkit
    checkout: Callable[..., object] = read_checkout
    system: Callable[..., object] = gather_system  # (env): the bug-report facts
    pythons: Callable[..., tuple] = find_pythons  # (env): other interpreters; run by diagnose only when needed


@dataclass(frozen=True)
class _Host:
    """The host's slow, policy-free gatherers, running: NVML's answer and each nvcc found without the interpreter."""

    driver: Future
    nvcc: dict

    @classmethod
    def start(cls, env: Mapping[str, str]) -> "_Host":
        nvml = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nvml")
        driver = nvml.submit(gather_driver)
        nvml.shutdown(wait=False)
        return cls(driver, early_nvcc(env))


_HEAD_START: dict[str, _Host] = {}  # the one head start of this process, by target path, until it is taken


def head_start(python: str) -> None:
    """Start the host's gatherers (NVML, nvcc) for a doctor of `python` (an absolute path, as resolve_python gives
    it) before anything else is known: __main__ calls it before the CLI is imported, so that they run while typer
    loads and parses. The next started(python) takes them. The target interpreter itself is not started here: a
    command line or a profile that is refused must not have run it (started() runs it, once doctor has read both)."""
    _HEAD_START[python] = _Host.start(os.environ)


def started(python: str, env: Optional[Mapping[str, str]] = None) -> Gatherers:
    """Gatherers whose slow, policy-free parts (the probe's scan, NVML, each nvcc found without the interpreter) are
    already running, so the caller can do other work (import the judges) meanwhile; the probe gets the policy's
    modules when it is read. Call it once the command line and the profile are known to be usable: it starts the
    target interpreter. A head start for the same target (and the environment of the process) is taken, once."""
    host = (_HEAD_START.pop(python, None) if env is None else None) or _Host.start(os.environ if env is None else env)
    probe = Probe(python, env)
    return replace(Gatherers(), interpreter=lambda _python, timeout, _env, modules=(), torch_values=():
                   probe.result(timeout, modules, torch_values),
                   driver=host.driver.result, toolkit=functools.partial(gather_toolkit, started=host.nvcc))


def _settle(name: str, future: Future, deadline: float, timings: dict) -> Union[object, Failure]:
    """The gatherer's result, or a Failure naming it: an exception or a timeout never escapes."""
    try:
        return future.result(timeout=max(0.0, deadline - time.monotonic()))
    except FutureTimeout:
        return Failure(name, "did not answer within its time limit")
    except Exception as exc:  # noqa: BLE001 - the contract: gathering never raises
        return Failure(name, str(exc) or type(exc).__name__)
    finally:
        timings.setdefault(name, time.monotonic())


def gather(sources: Sources, gatherers: Gatherers = Gatherers()) -> Facts:
    start = time.monotonic()
    deadline = start + sources.timeout
    timings: dict[str, float] = {}
    pool = ThreadPoolExecutor(max_workers=5, thread_name_prefix="gather")
    try:
        interpreter_f = pool.submit(gatherers.interpreter, sources.python, sources.timeout, sources.env, sources.modules,
                                    sources.torch_values)
        driver_f = pool.submit(gatherers.driver)
        system_f = pool.submit(gatherers.system, sources.env)
        paths = read_search_paths(sources.env)  # a few folder listings, here while the others run
        interpreter = _settle("interpreter", interpreter_f, deadline, timings)
        known = interpreter if isinstance(interpreter, Interpreter) else None
        toolkit_f = pool.submit(gatherers.toolkit, sources.env, known)
        located = locate_checkout(
            sources.cutlass_dir, sources.env, known, sources.cutlass_distribution, sources.cutlass_subdir
        ) if sources.cutlass_distribution else None
        checkout_f = (
            pool.submit(gatherers.checkout, located[0], located[1], sources.cutlass_subdir, sources.cutlass_module)
            if located
            else None
        )
        driver = _settle("driver", driver_f, deadline, timings)
        toolkit = _settle("toolkit", toolkit_f, deadline, timings)
        checkout = _settle("checkout", checkout_f, deadline, timings) if checkout_f else None
        system = _settle("system", system_f, deadline, timings)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return Facts(
        interpreter=interpreter,
        driver=driver,
        toolkit=toolkit,
        checkout=checkout,
        cuda_visible_devices=sources.env.get("CUDA_VISIBLE_DEVICES"),
        timings=tuple((name, round(t - start, 3)) for name, t in sorted(timings.items())),
        given_gpus=gpus_given(sources.gpu_capabilities),
        environment=tuple((name, sources.env[name]) for name in sources.variables if name in sources.env),
        paths=paths,
        system=system,
    )
