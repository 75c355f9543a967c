"""Remedies written once. The driver remedy: doctor's finding, fix's manual instruction and smoke's cause say the same
words, with the driver version as NVIDIA writes it (590.44.01, never PEP 440's 590.44.1). The CUTLASS fetch: doctor's
and smoke's remedies give by hand the very git commands fix runs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import factsbuilder as fb
from shellstubs import Stubs
from test_explain_stack import EXACT
from test_upstream_messages import MESSAGES
from wheelfactory import build_wheel, install, make_venv

from envcheck.judge import judge
from envcheck.judge.cuda import driver_remedy
from envcheck.fix.plan import make_plan
from envcheck.fix.steps import PlanOptions
from envcheck.model import Failure, ProfileChoice, Report, Status
from envcheck.render import render
from envcheck.causes import SIGNATURES, Evidence, context_from, diagnose

OLD = fb.driver(version="570.86.10", cuda="12.8", gpus=[fb.gpu((9, 0), "NVIDIA H200")])
CONSUMER = fb.driver(version="570.86.10", cuda="12.8", gpus=[fb.gpu((12, 0), "NVIDIA GeForce RTX 5090")])


def doctor_remedy(policy, facts):
    return next(f for f in judge(facts, policy) if f.id == "cuda.driver").remedy


def fix_instruction(policy, facts, tmp_path):
    options = PlanOptions(python="/t/bin/python", state_dir=str(tmp_path), cutlass_dir=str(tmp_path / "c"),
                          cutlass_url="https://github.com/NVIDIA/cutlass")
    plan = make_plan(judge(facts, policy), facts, policy, options)
    return next(m for m in plan.manual if m.check_id == "cuda.driver")


def smoke_remedy(policy, facts):
    evidence = Evidence(result=None, log="RuntimeError: CUDA driver version is insufficient for CUDA runtime version\n",
                        returncode=1)
    return diagnose(evidence, context_from(facts, policy, "/t/bin/python")).remedy


@pytest.mark.parametrize("driver, datacenter", [(OLD, True), (CONSUMER, False)])
def test_doctor_fix_and_smoke_say_the_same_driver_remedy(policy, tmp_path, driver, datacenter):
    facts = fb.facts(driver=driver)
    doctor = doctor_remedy(policy, facts)
    assert doctor == driver_remedy(policy, tuple(g.name for g in driver.gpus))
    instruction = fix_instruction(policy, facts, tmp_path)
    assert (instruction.text, instruction.commands) == (doctor.text, doctor.commands)
    assert smoke_remedy(policy, facts) == doctor
    assert "590.44.01 or newer" in doctor.text and "590.44.1 " not in doctor.text
    assert ("cuda-compat-13-1" in str(doctor.commands)) is datacenter


def test_no_driver_at_all_says_install(policy):
    remedy = doctor_remedy(policy, fb.facts(driver=Failure("driver", "NVML library not found")))
    assert remedy.text.startswith("Install an NVIDIA driver 590.44.01 or newer") and not remedy.commands


def test_a_lead_sentence_comes_first(policy):
    assert driver_remedy(policy, lead="Seen: error 35.").text.startswith("Seen: error 35. Upgrade")


def test_doctor_and_smoke_give_the_git_commands_fix_runs(policy):
    from envcheck.gitsafe import git_commands
    from envcheck.causes import preflight

    source = policy.cutlass
    facts = fb.facts(checkout=None, interpreter=fb.interpreter(modules={"cutlass_api": None},
                                                                dists={k: v for k, v in fb.GOOD_DISTS.items() if k != "cutlass-api"}))
    doctor = next(f for f in judge(facts, policy) if f.id == "cutlass.checkout").remedy
    smoke = preflight(facts, policy, context_from(facts, policy, "/opt/venv/bin/python")).remedy
    by_hand = git_commands("cutlass", source.url, source.branch, source.commit, source.subdir)
    for remedy in (doctor, smoke):
        assert remedy.commands[1:-1] == by_hand
        assert remedy.commands[-1][-1] == f"cutlass/{source.subdir}[torch]"


# --------------------------------------------------------------------------------------------------------------
# Remedies that paste (issue 16 item 4): every `$` line doctor, fix and explain print is pasted into a real bash whose
# PATH holds only stubs that record their argv; each must run exactly the remedy's argv and nothing else, and leave
# no file behind (an unquoted `<=4.3.5,>=4.3.0` is a redirection).

# A folder name that no shell word survives unquoted: a substitution, backquotes, quotes, ;, redirections, a comment.
HOSTILE = "my env $(touch MARK) `touch MARK` 'q' \"d\" ; <in >out & #c ${IFS}x"
PROGRAMS = ("envcheck", "git", "mv", "python3", "python3.12", "apt-get", "env", "nvidia-smi")


def dollar_lines(text: str) -> list[str]:
    """The commands a table, a plan or explain shows: each line's text after its `$ ` (after explain's `check`)."""
    return [m[1] for m in re.finditer(r"^ *(?:check +)?\$ (.*)$", text, re.M)]


def markdown_commands(text: str) -> list[str]:
    """The commands of markdown's ```sh blocks."""
    found, inside = [], False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            inside = line.strip() == "```sh"
        elif inside:
            found.append(line.strip())
    return found


def remedy_argvs(findings) -> list[list[str]]:
    return [list(c) for f in findings if f.status not in (Status.PASS, Status.SKIP) and f.remedy for c in f.remedy.commands]


def broken_variants(python: str, checkout: str) -> list:
    """Facts that between them draw every kind of remedy command, for a target and checkout at hostile paths."""
    def target(**kw):
        return replace(fb.interpreter(**kw), executable=python)

    every_missing = {"torch": "2.11.0+cu130", "pip": "25.0"}
    return [
        fb.facts(interpreter=target(dists=every_missing), checkout=None, driver=OLD),
        fb.facts(interpreter=target(version=(3, 11, 7)), toolkit=fb.toolkit(None), driver=CONSUMER),
        fb.facts(interpreter=target(dists={**fb.GOOD_DISTS, "nvidia-cutlass-dsl": "4.4.0", "nvidia-cutlass": "3.5.0"}),
                 checkout=fb.checkout(path=checkout, commit="0" * 40, dirty_files=("x",))),
        fb.facts(interpreter=target(), checkout=fb.checkout(path=checkout, has_package=False)),
        fb.facts(interpreter=target(), checkout=fb.checkout(path=checkout, dirty_files=("a b",)),
                 cuda_visible_devices="-1"),
        fb.facts(interpreter=target(modules={"cutlass": None})),
    ]


def _choice(policy):
    return ProfileChoice(policy.id, "given to this test", policy.source, True)


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_every_command_doctor_shows_pastes_as_its_argv(policy, tmp_path, fmt):
    stubs = Stubs(tmp_path / "sandbox", PROGRAMS)
    odd = tmp_path / f"{HOSTILE}\nRUN touch MARK\u2028x"  # a line break in a path: shown as $'...', still one line
    python, checkout = str(odd / "venv" / "bin" / "python"), str(odd / "cutlass")
    stubs.add(python)
    pasted = 0
    for facts in broken_variants(python, checkout):
        report = Report(profile=_choice(policy), target=python, findings=judge(facts, policy), facts=facts)
        text = render(report, fmt)
        shown = dollar_lines(text) if fmt == "table" else markdown_commands(text)
        expected = remedy_argvs(report.findings)
        assert len(shown) == len(expected) and expected, text
        for line, argv in zip(shown, expected):
            stubs.expect(line, argv)
        pasted += len(expected)
    assert pasted >= 20


def test_the_variants_draw_every_kind_of_remedy_command(policy, tmp_path):
    """The table above is worth something only if it holds every program a remedy names."""
    python = str(tmp_path / "py")
    programs = {argv[0] for facts in broken_variants(python, str(tmp_path / "c"))
                for argv in remedy_argvs(judge(facts, policy))}
    assert {python, "envcheck", "git", "apt-get", "env", "python3.12"} <= programs, programs


# The same, through the real commands on a real virtual environment under $HOME, in a folder of that hostile name:
# doctor redacts the home folder to ~, and a printed command leaves that ~ to the shell.

SAMPLES = {  # one line of a log per signature of envcheck/causes/signatures.toml
    "dsl-too-new": "AttributeError: module 'cutlass.cute.nvgpu.tcgen05' has no attribute 'ProxyKind'",
    "tvm-ffi-too-old": "TypeError: make_kwargs_wrapper() got an unexpected keyword argument 'map_dataclass_to_tuple'",
    "dsl-libs-missing": "RuntimeError: No CTK flavor installed: expected one or more of _cutlass_ir.cu{N}.so",
    "torch-missing": "ModuleNotFoundError: No module named 'torch'",
    "cutlass-api-missing": "ModuleNotFoundError: No module named 'cutlass_api'",
    "cutlass-not-importable": "ModuleNotFoundError: No module named 'cutlass'",
    "cuda-driver": "RuntimeError: CUDA driver version is insufficient for CUDA runtime version",
    "cuda-out-of-memory": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "no-cuda": "AssertionError: Torch not compiled with CUDA enabled",
    "no-valid-choices": "torch._inductor.exc.NoValidChoicesError: No choices to select",
    # torch 2.15.0 on the H200, a Linear with a bias and NVGEMM alone (tests/data/h200-s6/a5-linear.log)
    "nvgemm-no-kernel-for-op": ("torch._inductor.exc.InductorError: LoweringException: NoValidChoicesError: No choices "
                                "to select. Provided reason: No choices exist for backend.\n  target: aten.addmm.default"),
    "fell-back": "SmokeFellBack: the generated code calls extern_kernels.mm",
    "wrong-result": "SmokeWrongResult: max error 3.5",
    # the stack's messages, each as its source writes it (tests/test_explain_stack.py quotes them with file and line)
    **{cause: message for message, cause in reversed(EXACT)},
}
# and every other cause as upstream writes it (tests/data/upstream-messages.toml), its first entry
SAMPLES |= {m["cause"]: m["text"].strip("\n") for m in reversed(MESSAGES) if m["cause"] not in SAMPLES}


@pytest.fixture
def odd_target(tmp_path, wheelhouse):
    """A real venv (this Python) under $HOME/<HOSTILE>: an old DSL beside nvidia-cutlass, an old tvm-ffi, no
    cutlass_api; a profile that takes this Python (which the built-in one does not), in a folder of the same name;
    and a --cutlass-dir of that name too."""
    home = tmp_path / "home"
    folder = home / HOSTILE
    python = make_venv(folder / "venv")
    build_wheel(tmp_path / "pip-wheel", "pip", "25.0", {"pip/__init__.py": ""})  # fix drives the target's own pip
    install(python, wheelhouse, "torch==2.11.0+cu130", "nvidia-cutlass-dsl==4.2.1", "apache-tvm-ffi==0.1.6",
            "nvidia-cutlass==3.5.0", extra=("--find-links", str(tmp_path / "pip-wheel"), "pip==25.0"))
    profile = folder / "profile.toml"
    profile.write_text('extends = "torch-2.11-nvgemm"\n\n[python]\nversion = ">=3.10"\n')
    return home, python, profile, folder / "cutlass"


def envcheck(*args: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "envcheck", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "HOME": str(home)}, timeout=120)


def at_home(argv, home: Path) -> list[str]:
    """An argv as redacted output shows it (~/...), with the home folder the shell puts back."""
    return [str(home) + a[1:] if a == "~" or a.startswith("~/") else a for a in argv]


@pytest.mark.slow
def test_doctor_fix_and_explain_print_commands_that_run_exactly_their_argv(odd_target, tmp_path):
    home, python, profile, cutlass = odd_target
    flags = ["--python", python, "--policy", profile, "--cutlass-dir", cutlass, "--no-gpu"]
    log = tmp_path / "run.log"
    # the interpreter the log's paths name (explain without --python takes it) is one the sandbox can stub
    logged = tmp_path / "logvenv" / "bin" / "python"
    log.write_text("\n".join(SAMPLES.values()).replace("/venv/lib/", f"{logged.parent.parent}/lib/") + "\n")
    assert set(SAMPLES) == {s.id for s in SIGNATURES}, "a new signature needs its sample line here"

    table = envcheck("doctor", *flags, home=home).stdout
    markdown = envcheck("doctor", *flags, "--format", "markdown", home=home).stdout
    report = json.loads(envcheck("doctor", *flags, "--json", home=home).stdout)
    doctor = [c for check in report["checks"] if check["status"] not in ("pass", "skip") and check["remedy"]
              for c in check["remedy"]["commands"]]
    plan_text = envcheck("fix", *flags, "--dry-run", home=home).stdout
    plan = json.loads(envcheck("fix", *flags, "--dry-run", "--json", home=home).stdout)["plan"]
    planned = [c for part in ("steps", "offered", "manual") for step in plan[part] for c in step["commands"]]
    explained = {}
    for target in (["--python", python], []):  # with the target's facts, and from the log alone (its paths' Python)
        text = envcheck("explain", log, *target, home=home).stdout
        answer = json.loads(envcheck("explain", log, *target, "--json", home=home).stdout)
        causes = answer["causes"]
        assert {c["id"] for c in causes} == set(SAMPLES)
        assert target or answer["python"]["path"] == str(logged)
        check = ["envcheck", "doctor", "--python", str(python) if target else str(logged)]
        explained[text] = [c for cause in causes
                           for c in (cause["remedy"]["commands"] if cause["remedy"] else []) + ([check] if cause["checks"] else [])]

    stubs = Stubs(tmp_path / "sandbox", PROGRAMS, home=home)
    python.unlink()  # from here on the target interpreter only records what it is asked to do
    stubs.add(python)
    stubs.add(logged)
    cases = [(dollar_lines(table), doctor), (markdown_commands(markdown), doctor), (dollar_lines(plan_text), planned)]
    cases += [(dollar_lines(text), commands) for text, commands in explained.items()]
    for shown, commands in cases:
        assert len(shown) == len(commands) and commands, shown
        for line, argv in zip(shown, commands):
            stubs.expect(line, at_home(argv, home))
    assert "<=4.3.5,>=4.3.0" in table and "'nvidia-cutlass-dsl<=4.3.5,>=4.3.0'" in next(iter(explained))
    assert not list(tmp_path.rglob("MARK")) and not (stubs.cwd / "out").exists()


# doctor's "`envcheck fix ...` can fix" line (issue 15 item 5): the command it prints plans for what doctor judged.


@pytest.mark.slow
def test_doctors_fix_line_carries_the_flags_it_judged_with_and_plans_for_the_same_checks(odd_target, tmp_path):
    home, python, profile, cutlass = odd_target
    flags = ["--python", python, "--policy", profile, "--cutlass-dir", cutlass, "--no-gpu"]
    table = envcheck("doctor", *flags, home=home).stdout
    promise = re.search(r"^`(.*)` can fix: (.*) \(it shows its plan first\)\.$", table, re.M)
    assert promise, table
    stubs = Stubs(tmp_path / "sandbox", ["envcheck"], home=home)
    (argv,) = stubs.paste(promise[1]).argvs  # the shell reads it back
    assert argv == ["envcheck", "fix", "--python", str(python), "--profile", str(profile), "--cutlass-dir", str(cutlass),
                    "--no-gpu"]
    in_remedies = [line for line in dollar_lines(table) if line.startswith("envcheck fix")]
    assert in_remedies and all(stubs.paste(line).argvs == [argv] for line in in_remedies), "each remedy's fix says the same"

    report = json.loads(envcheck("doctor", *flags, "--json", home=home).stdout)
    fix = json.loads(envcheck(*argv[1:], "--dry-run", "--json", home=home).stdout)
    plan = fix["plan"]
    assert fix["policy"]["source"] == str(profile) and plan["steps"] and not plan["blocked"]
    assert set(plan["failing"]) == {c["id"] for c in report["checks"] if c["status"] in ("fail", "error")}
    kinds = {s["kind"] for s in plan["steps"]}
    promised = promise[2].split(", ")
    assert {"cutedsl.version", "cutlass.checkout"} <= set(promised)
    for check in (c for c in report["checks"] if c["id"] in promised):
        assert {s["kind"] for s in check["remedy"]["steps"]} <= kinds, check["id"]
    fetch = next(s for s in plan["steps"] if s["kind"] == "cutlass-fetch")
    assert fetch["what"].endswith(f"into {cutlass}")

    # What the line said before (`envcheck fix --python X`) plans for another profile: blocked on this Python.
    bare = json.loads(envcheck("fix", "--python", python, "--dry-run", "--json", home=home).stdout)["plan"]
    assert bare["blocked"]
