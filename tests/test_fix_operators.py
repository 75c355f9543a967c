"""`envcheck fix` for the torch >= 2.14 operators profile, on real virtual environments and small real wheels shaped
like the upstream ones (nvidia-cutlass-dsl 4.8.1 is a meta package: -libs-base, -libs-cu12 by default, -libs-cu13
with [cu13]; nvidia-cutlass-operators 0.3.0 needs DSL >= 4.8.0, tvm-ffi >= 0.1.11, networkx >= 3).

The move of an environment from the old recipe to the new stack after a torch upgrade: the stale DSL 4.3.x goes
before the new one goes in, everything else is one pip transaction that holds torch where it is, cutlass_api goes
only with consent, and undo gives back the environment as it was. And on an empty environment the plan never asks
for a torch outside the profile's range."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from wheelfactory import install, make_venv, operators_wheels

from envcheck.commands.fix import FixOptions, Io, run_fix

pytestmark = pytest.mark.slow  # real venvs and pip installs: run by .ci/run after the default command

OLD_RECIPE = ("torch==2.14.1+cu130", "cuda-bindings==13.3.1", "cuda-python==13.3.1", "nvidia-cutlass-dsl==4.3.5",
              "apache-tvm-ffi==0.1.7", "torch-c-dlpack-ext==0.1.5", "cutlass-api==0.1.0a1")


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> Path:
    return operators_wheels(tmp_path_factory.mktemp("operators-wheels"))


def freeze(python: Path) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "--isolated", "--disable-pip-version-check", "freeze", "--all"],
        capture_output=True, text=True, check=True, env={**env, "PIP_CONFIG_FILE": os.devnull},
    )
    return sorted(done.stdout.splitlines())


def fix(python: Path, wheels: Path, *, confirm=None, **kw) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    options = FixOptions(python=str(python), find_links=(str(wheels),), no_index=True, no_gpu=True, **kw)
    code = run_fix(options, Io(out=out, err=err, confirm=confirm))
    return code, out.getvalue(), err.getvalue()


def plan_of(python: Path, wheels: Path, **kw) -> dict:
    code, out, err = fix(python, wheels, dry_run=True, as_json=True, **kw)
    assert code in (0, 1), out + err
    return json.loads(out)


@pytest.fixture
def old_recipe(tmp_path, wheels) -> Path:
    """The torch 2.11 recipe's environment after `pip install -U torch`: torch 2.14.1 beside DSL 4.3.5 and cutlass_api."""
    python = make_venv(tmp_path / "old")
    install(python, wheels, *OLD_RECIPE, extra=("--no-deps",))
    return python


def test_the_plan_moves_an_old_recipe_to_the_operators_stack(old_recipe, wheels):
    data = plan_of(old_recipe, wheels)
    assert data["policy"]["id"] == "torch-2.14-operators" and "2.14.1" in data["policy"]["reason"]
    kinds = [s["kind"] for s in data["plan"]["steps"]]
    assert kinds[0] == "pip-uninstall" and set(kinds[1:]) == {"pip-install"}
    removed = data["plan"]["steps"][0]["commands"][0]
    assert "nvidia-cutlass-dsl" in removed and "cutlass-api" not in removed  # the stale DSL first; cutlass_api: consent
    pins = next(s for s in data["plan"]["steps"] if "one transaction" in s["what"])
    argv = pins["commands"][0]
    assert "torch==2.14.1+cu130" in argv  # torch held where it is, in the same transaction
    assert any(a.startswith("nvidia-cutlass-dsl[cu13]") for a in argv)
    assert any(a.startswith("nvidia-cutlass-operators") for a in argv) and any(a.startswith("apache-tvm-ffi") for a in argv)
    offered = [s for s in data["plan"]["offered"] if s["kind"] == "pip-uninstall"]
    assert [s["offer"] for s in offered] == ["--remove cutlass-api"]


def test_consent_moves_cutlass_api_into_the_removal(old_recipe, wheels):
    with_flag = plan_of(old_recipe, wheels, remove=("cutlass-api",))
    assert "cutlass-api" in with_flag["plan"]["steps"][0]["commands"][0] and not any(
        s["kind"] == "pip-uninstall" for s in with_flag["plan"]["offered"])
    asked = []
    code, out, _ = fix(old_recipe, wheels, confirm=lambda q: asked.append(q) or "cutlass-api" in q, dry_run=False,
                       yes=False, remove=())
    # at the terminal: asked once about cutlass_api, then once to apply; the second answer (False here) stops it
    assert any("uninstall cutlass-api" in q for q in asked) and len(asked) == 2 and code == 1
    assert "1. uninstall cutlass-api, nvidia-cutlass-dsl" in out and "Offered" not in out


def test_fix_then_undo_across_the_move(old_recipe, wheels):
    before = freeze(old_recipe)
    code, out, err = fix(old_recipe, wheels, yes=True, remove=("cutlass-api",))
    assert code == 0 and "Still failing" not in out, out + err
    after = freeze(old_recipe)
    assert "torch==2.14.1+cu130" in after
    assert "nvidia-cutlass-dsl==4.8.1" in after and "nvidia-cutlass-dsl-libs-cu13==4.8.1" in after
    assert "nvidia-cutlass-operators==0.3.0" in after and "apache-tvm-ffi==0.1.15.post2" in after
    assert not any(line.startswith(("cutlass-api==", "nvidia-cutlass-dsl==4.3")) for line in after), after
    assert "Undo with:" in out, out + err

    code, out, err = fix(old_recipe, wheels, yes=True, undo=True)
    assert code == 0, out + err
    assert freeze(old_recipe) == before


@pytest.mark.parametrize("profile, bound", [
    (None, "torch<2.16,>=2.14"),  # no torch: the profile of what `pip install torch` gives (this Python takes 2.15.0)
    ("torch-2.11-nvgemm", "torch<2.14,>=2.11"), ("torch-2.14-operators", "torch<2.16,>=2.14")])
def test_an_empty_environment_gets_a_torch_inside_the_profiles_range(tmp_path, wheels, profile, bound):
    python = make_venv(tmp_path / "empty")
    data = plan_of(python, wheels, **({"profile": profile} if profile else {}))
    torch_steps = [s for s in data["plan"]["steps"] if any(a.startswith("torch") for a in s["commands"][0][-1:])]
    assert torch_steps and torch_steps[0]["commands"][0][-1] == bound
    for step in data["plan"]["steps"]:
        assert not any(a.startswith("torch") and a not in (bound,) and "dlpack" not in a for a in step["commands"][0][4:]
                       if not a.startswith("--")), step



def test_cuda12_dsl_libraries_on_a_cuda13_torch_get_the_cu13_extra_not_a_removal(tmp_path, wheels):
    """A plain `pip install nvidia-cutlass-dsl` beside torch 2.14.1+cu130 brings only -libs-cu12: the plan installs
    the [cu13] extra and removes nothing (the DSL itself needs -libs-cu12). The cu12 build ran on the H200, so with no
    GPU known (or any but 10.7) that is a recipe warning: the extra goes in the recommended transaction."""
    python = make_venv(tmp_path / "plain")
    install(python, wheels, "torch==2.14.1+cu130", "nvidia-cutlass-dsl==4.8.1", "nvidia-cutlass-operators[torch]==0.3.0",
            "apache-tvm-ffi==0.1.15.post2")
    assert "nvidia-cutlass-dsl-libs-cu13==4.8.1" not in freeze(python)
    data = plan_of(python, wheels)
    assert data["policy"]["id"] == "torch-2.14-operators"
    assert not any(s["kind"] == "pip-uninstall" for s in data["plan"]["steps"] + data["plan"]["offered"])
    pins = next(s for s in data["plan"]["steps"] if any(a.startswith("nvidia-cutlass-dsl[cu13]") for a in s["commands"][0]))
    assert pins["optional"] and "torch==2.14.1+cu130" in pins["commands"][0]
    code, out, err = fix(python, wheels, yes=True)
    after = freeze(python)
    assert "nvidia-cutlass-dsl-libs-cu13==4.8.1" in after and "nvidia-cutlass-dsl-libs-cu12==4.8.1" in after, out + err
