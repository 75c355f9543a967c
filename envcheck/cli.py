"""The command line: parse, call one function, return its exit code. No logic lives here.

Exit codes (the same for every command, envcheck/endings.py maps every ending to one): 0 every required check
passed, 1 a required check failed, 2 bad usage or bad input, 3 envcheck itself failed (the log's path is printed),
130 interrupted, 141 standard output closed early.

No `from __future__ import annotations` here: typer reads every command's annotations, and as strings it would
evaluate each of them (hundreds, at every start; a measured part of doctor's start-up).
"""

import sys
from pathlib import Path
from typing import List, Optional

import typer

from . import endings, helpstyle
from .errors import UsageError
from .options import (CutlassDirOpt, LayoutOpt, PolicyOpt, ProfileOpt, PythonOpt, StrictOpt, gpu_capabilities,
                      gpu_capability_option, named_profile, output_file, output_option, seconds)

app = typer.Typer(
    cls=helpstyle.Group,
    add_completion=False,
    no_args_is_help=True,
    help="Will TorchInductor's CuteDSL (NVGEMM) GEMM backend work here? Check, fix and prove it.",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from .own import version_line

        print(version_line())
        raise typer.Exit(0)


@app.callback()
def _group(
    version: bool = typer.Option(False, "-V", "--version", is_eager=True, callback=_version, expose_value=False,
                                 help="Show envcheck's version, where it is installed and the Python running it."),
) -> None:
    """Will TorchInductor's CuteDSL (NVGEMM) GEMM backend work here? Check, fix and prove it."""


@app.command()
def doctor(
    python: Optional[str] = PythonOpt,
    profile: Optional[str] = ProfileOpt,
    policy: Optional[str] = PolicyOpt,
    strict: bool = StrictOpt,
    cutlass_dir: Optional[str] = CutlassDirOpt,
    output_format: str = typer.Option("table", "--format", metavar="FORMAT", help="table, json, markdown, prom (node-exporter textfile) or npd (node-problem-detector plugin: one line, exit 0/1/2)."),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    output: Optional[Path] = output_option("Write the report to FILE (atomically) instead of standard output."),
    anonymize: bool = typer.Option(False, "--anonymize", help="Put a hash of the hostname in the report's host object."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Show every finding's details."),
    no_gpu: bool = typer.Option(False, "--no-gpu", help="Skip the checks that need a GPU (CI builders, image builds)."),
    gpu_capability: List[str] = gpu_capability_option(),
    evidence: List[Path] = typer.Option([], "--evidence", metavar="FILE",
                                        help="A run's `envcheck smoke --json` result to count as a recorded run "
                                             "of this stack (repeatable)."),
    smoke: bool = typer.Option(False, "--smoke", help="Also compile and run a real CuteDSL GEMM (needs a GPU)."),
    junit: Optional[Path] = typer.Option(None, "--junit", metavar="FILE", callback=output_file("--junit"),
                                         help="Also write the checks as JUnit XML (one testcase per check)."),
    bench: bool = typer.Option(False, "--bench", help="Also show the last `envcheck bench` result (saved under the cache)."),
) -> int:
    """Check every link of the stack and report what is missing."""
    from .commands.doctor import DoctorOptions, run_doctor

    return run_doctor(
        DoctorOptions(
            python=python,
            profile=named_profile(profile, policy),
            strict=strict,
            cutlass_dir=cutlass_dir,
            output_format="json" if as_json else output_format,
            verbose=verbose,
            no_gpu=no_gpu,
            gpu_capabilities=gpu_capability,
            evidence=tuple(evidence),
            smoke=smoke,
            junit=junit,
            output=output,
            anonymize=anonymize,
            bench=bench,
        )
    )


@app.command()
def smoke(
    python: Optional[str] = PythonOpt,
    profile: Optional[str] = ProfileOpt,
    policy: Optional[str] = PolicyOpt,
    timeout: float = typer.Option(300.0, "--timeout", metavar="SECONDS", help="Kill the smoke run after this long.",
                                  callback=seconds("--timeout")),
    fresh: bool = typer.Option(False, "--fresh", help="Empty envcheck's Inductor cache first: a cold compile."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    allow_skip: bool = typer.Option(False, "--allow-skip", help="Exit 0 when there is no GPU to run on (a skip proves nothing: exit 1 otherwise)."),
    output: Optional[Path] = output_option("Write the result to FILE (atomically) instead of standard output."),
    library: bool = typer.Option(
        False, "--library",
        help="Run one GEMM through the profile's kernel library directly (no Inductor), name the kernel and check it.",
    ),
    layout: str = LayoutOpt,
) -> int:
    """Compile and run one GEMM through the CuteDSL backend, and prove which kernel ran."""
    from .commands.smoke import smoke_command

    return smoke_command(python, named_profile(profile, policy), timeout=timeout, fresh=fresh, as_json=as_json, allow_skip=allow_skip, output=output,
                         library=library, layout=layout)


@app.command()
def explain(
    log: Optional[str] = typer.Argument(None, metavar="FILE|-", help="The log or traceback to read (default: standard input)."),
    python: Optional[str] = typer.Option(None, "--python", metavar="PATH", help="Also show what doctor sees in this interpreter."),
    profile: Optional[str] = ProfileOpt,
    policy: Optional[str] = PolicyOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the causes as JSON."),
    output: Optional[Path] = output_option("Write the causes to FILE (atomically) instead of standard output."),
    gpu_capability: List[str] = gpu_capability_option(
        help="The compute capability of the GPU the log ran on (the first given); with --python, judge for a GPU of "
             "it as if it were here (it wins over one seen; repeatable)."),
) -> int:
    """Find known failures of the stack in a log or traceback: cause, evidence line, remedy, checks to run."""
    from .commands.explain import run_explain

    return run_explain(log, python, named_profile(profile, policy), as_json, gpu_capabilities=gpu_capability,
                       output=output)


@app.command()
def bench(
    python: Optional[str] = PythonOpt,
    profile: Optional[str] = ProfileOpt,
    policy: Optional[str] = PolicyOpt,
    shapes: Optional[str] = typer.Option(None, "--shapes", metavar="SET", help="llm (the default), square, a list MxNxK,... or a file of shapes (a line may name its layout: '16x4096x4096 row-major')."),
    layout: Optional[str] = typer.Option(None, "--layout", metavar="LAYOUT", help="How B of each GEMM is stored: linear (the default: nn.Linear's weight, x @ W.T, what LLM layers run), row-major (B [K, N] row-major) or both."),
    dtype: Optional[str] = typer.Option(None, "--dtype", metavar="DTYPE", help="bf16 (the default) or fp16."),
    model: Optional[str] = typer.Option(None, "--model", metavar="FILE.py[:FUNCTION]", help="Bench the GEMMs your model runs, then the model itself per backend set: FUNCTION (default model) returns the nn.Module and its example inputs. Runs that file's code in a child of the target interpreter."),
    record_on: Optional[str] = typer.Option(None, "--record-on", metavar="DEVICE", help="With --model: the device its GEMMs are recorded on, one real forward: cuda (the default with a GPU), cpu (without one) or meta (no memory, but fused kernels such as SDPA's may show as their decompositions' GEMMs)."),
    budget: float = typer.Option(600.0, "--budget", metavar="SECONDS", help="Stop measuring new shapes after this long.",
                                 callback=seconds("--budget")),
    timeout: Optional[float] = typer.Option(None, "--timeout", metavar="SECONDS", help="Kill the run after this long (default: the budget plus 180 s).",
                                            callback=seconds("--timeout")),
    output_format: str = typer.Option("table", "--format", metavar="FORMAT", help="table, json or markdown."),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    output: Optional[Path] = output_option("Write the report (table, JSON or markdown) to FILE (atomically) instead of standard output."),
    plot: Optional[Path] = typer.Option(None, "--plot", metavar="FILE", callback=output_file("--plot"), help="Also draw the speed relative to cuBLAS and TF/s by shape (with --compare: each result against its own cuBLAS); .png or .svg, needs matplotlib."),
    fresh: bool = typer.Option(False, "--fresh", help="Empty envcheck's Inductor cache first: cold compiles."),
    library: bool = typer.Option(False, "--library", help="Time the profile's kernel library directly beside cuBLAS, without Inductor: nvMatmulHeuristics' best 5 candidates per shape (every one where it is not installed)."),
    all_candidates: bool = typer.Option(False, "--all-candidates", help="With --library: time every candidate kernel, not only nvMatmulHeuristics' best 5."),
    weights: Optional[Path] = typer.Option(None, "--weights", metavar="FILE", help="How often each shape runs (lines 'MxNxK COUNT', or a JSON/TOML map), for the total cost of Inductor's own pick."),
    compare: bool = typer.Option(False, "--compare", help="Compare saved results (RESULT.json...: `envcheck bench --json` outputs) instead of measuring."),
    results: Optional[List[Path]] = typer.Argument(None, metavar="RESULT.json", help="With --compare: two or more saved bench results, the first the reference."),
) -> int:
    """Time each GEMM backend through Inductor on this GPU, and say whether to enable the CuteDSL one."""
    output_format = "json" if as_json else output_format
    if compare or results:
        if not compare:
            raise UsageError(f"{results[0]}: saved results are read with --compare (envcheck bench --compare A.json B.json)")
        from .commands.bench import compare_command

        return compare_command(results or [], weights=weights, output_format=output_format, output=output, plot=plot)
    from .commands.bench import bench_command

    if all_candidates and not library:
        raise UsageError("--all-candidates: it chooses the kernels --library times; add --library")
    return bench_command(python, named_profile(profile, policy), shapes=shapes, layout=layout, dtype=dtype, model=model,
                         record_on=record_on, budget=budget,
                         timeout=timeout, output_format=output_format, output=output, plot=plot, fresh=fresh,
                         library=library, weights=weights, all_candidates=all_candidates)


@app.command()
def lock(
    output: Path = output_option("Where to write the lock.", Path("pylock.toml")),
    profile: Optional[str] = ProfileOpt,
    policy: Optional[str] = PolicyOpt,
    python_version: Optional[str] = typer.Option(None, "--python-version", metavar="X.Y", help="Resolve for this CPython (default 3.12)."),
    platform: Optional[str] = typer.Option(None, "--platform", metavar="NAME", help="Resolve for this uv platform (default x86_64-manylinux_2_28)."),
    torch_index_url: Optional[str] = typer.Option(None, "--torch-index-url", metavar="URL", help="Index searched first (default: the profile's torch.index-url; '' for none)."),
    without: List[str] = typer.Option([], "--without", metavar="NAME", help="Leave a package of the profile out of the resolution; repeatable."),
    from_env: bool = typer.Option(False, "--from-env", help="Lock the live environment (--python, default this one) instead of resolving."),
    python: Optional[str] = typer.Option(None, "--python", metavar="PATH", help="The live environment to lock (implies --from-env)."),
    find_links: List[Path] = typer.Option([], "--find-links", metavar="DIR", help="Local wheels and sdists to lock (hashed here); repeatable."),
    index_url: str = typer.Option("https://pypi.org/simple", "--index-url", metavar="URL", help="The package index (torch also tries the profile's torch.index-url first)."),
    no_index: bool = typer.Option(False, "--no-index", help="Ask no index: files and hashes come from --find-links only."),
    from_lock: Optional[Path] = typer.Option(None, "--from", metavar="LOCK", help="Re-read this lock instead of locking the target (with --format requirements)."),
    output_format: str = typer.Option("pylock", "--format", metavar="FORMAT", help="pylock (PEP 751) or requirements (hash-pinned, for any pip)."),
) -> int:
    """Write a PEP 751 pylock.toml of a profile's stack, resolved for a target platform (or --from-env: as installed)."""
    from .lock import Target
    from .commands.lock import run_lock

    target = None
    if python_version is not None or platform is not None:
        target = Target(python_version or Target.python_version, platform or Target.platform)
    return run_lock(
        output,
        python=python,
        profile=named_profile(profile, policy),
        find_links=find_links,
        index_url=index_url,
        no_index=no_index,
        from_lock=from_lock,
        output_format=output_format,
        from_env=from_env,
        target=target,
        torch_index_url=torch_index_url,
        without=without,
    )


@app.command()
def verify(
    lock_file: Path = typer.Option(..., "--lock", metavar="FILE", help="The pylock.toml to compare with."),
    python: Optional[str] = PythonOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the drift as JSON."),
    output: Optional[Path] = output_option("Write the drift to FILE (atomically) instead of standard output."),
) -> int:
    """Compare the target's installed packages with a lock; list the drift per package (exit 1 on drift)."""
    from .commands.verify import run_verify

    return run_verify(lock_file, python, as_json=as_json, output=output)


@app.command()
def bundle(
    output: Path = output_option("A new folder, or one tar file.", ..., metavar="DIR|FILE.tar"),
    profile: Optional[str] = ProfileOpt,
    policy: Optional[str] = PolicyOpt,
    lock_file: Optional[Path] = typer.Option(None, "--lock", metavar="FILE", help="The lock to bundle (default: the profile resolved for the target, as `envcheck lock --profile` does)."),
    python_version: Optional[str] = typer.Option(None, "--python-version", metavar="X.Y", help="CPython version of the target (default: --python's, else 3.12)."),
    platform: Optional[str] = typer.Option(None, "--platform", metavar="NAME", help="Build for this uv platform, as `envcheck lock` resolves for it: a glibc Linux one (x86_64-manylinux_2_28, aarch64-manylinux_2_28, ...), its wheels only (default: --python's machine, else x86_64; wheels for glibc 2.17 to 2.39)."),
    without: List[str] = typer.Option([], "--without", metavar="NAME", help="Leave a package out, and what only it needs (--without torch); repeatable."),
    only_missing: bool = typer.Option(False, "--only-missing", help="Only what --python lacks (as doctor sees it)."),
    python: Optional[str] = typer.Option(None, "--python", metavar="PATH", help="With --only-missing: the target interpreter."),
    gpu_capability: List[str] = gpu_capability_option("With --only-missing, judge what is missing", no_gpu=False),
    split: Optional[str] = typer.Option(None, "--split", metavar="SIZE", help="Cut FILE.tar into parts of at most SIZE (40M, 1G)."),
    index_url: Optional[str] = typer.Option(None, "--index-url", metavar="URL", help="The package index pip downloads from."),
    no_index: bool = typer.Option(False, "--no-index", help="Download from --find-links only."),
    find_links: List[str] = typer.Option([], "--find-links", metavar="DIR", help="Local wheels; repeatable."),
    cutlass_url: Optional[str] = typer.Option(None, "--cutlass-url", metavar="URL", help="Where to fetch the CUTLASS commit (a local mirror works)."),
) -> int:
    """Everything the profile's stack needs, for a machine with no network: wheels, CUTLASS, lock, manifest."""
    from .commands.bundle import run_bundle

    return run_bundle(
        output, profile=named_profile(profile, policy), lock=lock_file, python_version=python_version, platform=platform,
        without=without,
        only_missing=only_missing, python=python, split=split, index_url=index_url, no_index=no_index,
        find_links=find_links, cutlass_url=cutlass_url, gpu_capabilities=gpu_capability,
    )


@app.command()
def dockerfile(
    output: Optional[Path] = output_option("Where to write it (default: standard output)."),
    profile: Optional[str] = ProfileOpt,
    policy: Optional[str] = PolicyOpt,
    base_image: Optional[str] = typer.Option(None, "--base-image", metavar="IMAGE", help="Override the profile's nvidia/cuda devel image."),
    gpu_capability: List[str] = typer.Option([], "--gpu-capability", metavar="X.Y", callback=gpu_capabilities("--gpu-capability"),
                                             help="Build for GPUs of this compute capability: the image sets their compile "
                                                  "target (ENV CUTE_DSL_ARCH) where its torch needs it, and its doctor "
                                                  "judges for them; repeatable."),
    torch: Optional[str] = typer.Option(None, "--torch", metavar="VERSION",
                                        help="The torch the image installs (its pylock.toml's), such as 2.15.0: the "
                                             "profile that covers it, and whether its GPUs need CUTE_DSL_ARCH (default: "
                                             "not known, so set where any torch of the profile needs it)."),
) -> int:
    """Render the Dockerfile template for a profile (with its .dockerignore next to -o FILE)."""
    from .commands.dockerfile import run_dockerfile

    return run_dockerfile(output, profile=named_profile(profile, policy), base_image=base_image,
                          gpu_capabilities=gpu_capability, torch=torch)


@app.command()
def fix(
    python: Optional[str] = PythonOpt,
    profile: Optional[str] = ProfileOpt,
    policy: Optional[str] = PolicyOpt,
    cutlass_dir: Optional[str] = CutlassDirOpt,
    cutlass_url: Optional[str] = typer.Option(None, "--cutlass-url", metavar="URL", help="Where to fetch CUTLASS from: https, ssh or file URL, or a local mirror (default: the profile's)."),
    find_links: List[str] = typer.Option([], "--find-links", metavar="DIR", help="A folder of wheels for pip; repeatable."),
    index_url: Optional[str] = typer.Option(None, "--index-url", metavar="URL", help="The package index pip uses (https or file)."),
    no_index: bool = typer.Option(False, "--no-index", help="pip asks no index: packages come from --find-links only."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the plan and stop: nothing changes."),
    yes: bool = typer.Option(False, "-y", "--yes", help="Apply without asking (CI)."),
    as_json: bool = typer.Option(False, "--json", help="Print the plan (and, with --yes, the outcome) as JSON."),
    undo: bool = typer.Option(False, "--undo", help="Give back the environment as it was before the last fix."),
    no_deps: bool = typer.Option(False, "--no-deps", help="Install exactly the pinned packages, no dependencies (air-gapped sites lacking some)."),
    toolkit: bool = typer.Option(False, "--toolkit", help="Also install the CUDA toolkit in a prefix of its own (otherwise only offered)."),
    toolkit_prefix: Optional[str] = typer.Option(None, "--toolkit-prefix", metavar="DIR", help="Where --toolkit installs it (default: a per-user cache folder)."),
    no_gpu: bool = typer.Option(False, "--no-gpu", help="Skip the checks that need a GPU."),
    gpu_capability: List[str] = gpu_capability_option("Plan"),
    break_system_packages: bool = typer.Option(False, "--break-system-packages", help="Allow pip to change an interpreter the OS manages (PEP 668); used only where it is one."),
    remove: List[str] = typer.Option([], "--remove", metavar="NAME", help="Agree to remove a distribution the profile removes only with consent (e.g. cutlass-api left from the torch 2.11 recipe); repeatable."),
    bundle: Optional[str] = typer.Option(None, "--bundle", metavar="DIR|FILE", help="Install from an `envcheck bundle` (folder, FILE.tar or its parts) with no network."),
    lock_timeout: Optional[float] = typer.Option(None, "--lock-timeout", metavar="SECONDS", help="While another fix or undo changes the same environment, wait this long for it (default 600), then exit 2.",
                                                 callback=seconds("--lock-timeout")),
) -> int:
    """Turn failing checks into a plan, show it, and apply it (--yes) or stop (--dry-run); --undo gives it back."""
    from .commands.fix import FixOptions, run_fix

    return run_fix(FixOptions(
        python=python, profile=named_profile(profile, policy), cutlass_dir=cutlass_dir, cutlass_url=cutlass_url, find_links=tuple(find_links),
        index_url=index_url, no_index=no_index, dry_run=dry_run, yes=yes, as_json=as_json, undo=undo,
        no_deps=no_deps, toolkit=toolkit, toolkit_prefix=toolkit_prefix, no_gpu=no_gpu, gpu_capabilities=gpu_capability,
        break_system_packages=break_system_packages, remove=tuple(remove), bundle=bundle, lock_timeout=lock_timeout,
    ))


@app.command()
def diff(
    a: Path = typer.Argument(..., metavar="A", help="The environment that works: a doctor --json report or a pylock.toml."),
    b: Path = typer.Argument(..., metavar="B", help="The environment to compare with it: a doctor --json report (or a lock)."),
    output_format: str = typer.Option("table", "--format", metavar="FORMAT", help="table, json or markdown."),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    output: Optional[Path] = output_option("Write to FILE (atomically)."),
    all_packages: bool = typer.Option(False, "--all-packages", help="Also list changes of envcheck's own dependencies (typer, click, ...), left out by default."),
) -> int:
    """What changed from A to B, most important first; exit 1 when B regresses against A."""
    from .commands.diff import run_diff

    return run_diff(a, b, output_format=output_format, as_json=as_json, output=output, all_packages=all_packages)


@app.command()
def fleet(
    reports: List[Path] = typer.Argument(..., metavar="REPORT", help="doctor --json reports, or folders of them (one per node)."),
    output_format: str = typer.Option("table", "--format", metavar="FORMAT", help="table, json or markdown."),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    output: Optional[Path] = output_option("Write to FILE (atomically)."),
) -> int:
    """Many nodes' reports as one view: groups by outcome, per-check counts, outliers; exit 1 if any node fails."""
    from .commands.fleet import run_fleet

    return run_fleet(reports, output_format=output_format, as_json=as_json, output=output)


# Every command above shows its --help as git and pip do (envcheck/helpstyle.py), a command added later too.
for _command in app.registered_commands:
    _command.cls = helpstyle.Command


def main(argv: Optional[List[str]] = None) -> int:
    """Run the command line (default: this process's arguments) and return its exit code (envcheck/endings.py)."""
    return endings.run(app, list(sys.argv[1:] if argv is None else argv))
