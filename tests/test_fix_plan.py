"""The pure parts of the fixer: argv building and validation, and the plan made from findings (tables)."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest
from packaging.requirements import Requirement

from envcheck.errors import UsageError
from envcheck.fix.pip import (
    PipSources,
    install_argv,
    merge_requirements,
    parse_requirement,
    pip_prefix,
    sources_from_flags,
    uninstall_argv,
)
from envcheck.fix.plan import make_plan, plan_blockers
from envcheck.fix.planners import constraints_text
from envcheck.fix.steps import PlanOptions
from envcheck.model import Checkout, Distribution, Facts, Failure, Finding, Interpreter, Remedy, Status, Step
from envcheck.redact import redact_url

PIP = ("/t/bin/python", "-m", "pip")


# ---------------------------------------------------------------------------------------------------------------
# pip argv


@pytest.mark.parametrize("text", [
    "--index-url=https://evil.example/simple", "-e .", "foo @ https://evil.example/foo.whl", "not a requirement!",
    "foo; os_name == 'posix' and", "",
])
def test_requirements_that_are_not_plain_requirements_are_refused(text):
    with pytest.raises(UsageError):
        parse_requirement(text, "--test")


@pytest.mark.parametrize("url", [
    "http://pypi.example/simple", "ssh://host/simple", "-https://x", "https://x/simple\n--no-deps", "ftp://x", "",
    "javascript:alert(1)",
])
def test_index_urls_are_limited_to_https_and_file(url):
    with pytest.raises(UsageError, match="--index-url"):
        sources_from_flags(index_url=url)


def test_find_links_must_be_a_directory_and_becomes_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-wheels").mkdir()
    sources = sources_from_flags(find_links=["-wheels"])
    assert sources.find_links == (str(tmp_path / "-wheels"),)
    with pytest.raises(UsageError, match="--find-links"):
        sources_from_flags(find_links=[str(tmp_path / "nowhere")])
    with pytest.raises(UsageError, match="--no-index"):
        sources_from_flags(index_url="https://x/simple", no_index=True)


def test_every_value_is_joined_to_its_option_or_after_the_double_dash(tmp_path):
    sources = PipSources(find_links=(str(tmp_path),), index_url="https://user:secret@mirror.example/simple")
    argv = install_argv(PIP, [Requirement("apache-tvm-ffi==0.1.7")], sources=sources, constraints="c.txt",
                        editable="rel/dir[torch]", no_deps=True)
    assert argv[:4] == (*PIP, "install")
    assert "--isolated" in argv and "--no-input" in argv
    values = [a for a in argv[4:] if not a.startswith("--")]
    assert values == ["apache-tvm-ffi==0.1.7"] and argv[-2] == "--"
    assert f"--constraint={os.path.abspath('c.txt')}" in argv
    assert f"--editable={os.path.abspath('rel/dir')}[torch]" in argv
    assert uninstall_argv(PIP, ["Nvidia_Cutlass"])[-2:] == ("--", "nvidia-cutlass")
    with pytest.raises(UsageError):
        uninstall_argv(PIP, ["--yes"])


def test_a_step_index_is_used_only_when_the_user_chose_no_sources(tmp_path):
    torch_index = "https://download.pytorch.org/whl/cu130"
    assert f"--index-url={torch_index}" in PipSources().options(torch_index)
    offline = PipSources(find_links=(str(tmp_path),), no_index=True)
    assert offline.options(torch_index) == ("--no-index", f"--find-links={tmp_path}")
    assert PipSources(index_url="https://mirror/simple").options(torch_index) == ("--index-url=https://mirror/simple",)


def test_pip_prefix_uses_the_targets_pip_or_drives_it_from_outside():
    assert pip_prefix("/v/bin/python", True) == ("/v/bin/python", "-m", "pip")
    outside = pip_prefix("/v/bin/python", False, "/own/python")
    assert outside == ("/own/python", "-m", "pip", "--python=/v/bin/python")


def test_merge_requirements_intersects_specifiers_and_joins_extras():
    merged = merge_requirements([Requirement("a>=1"), Requirement("b"), Requirement("A[x]<3")])
    assert [str(r) for r in merged] == ["a[x]<3,>=1", "b"]


def test_redact_hides_secrets_in_urls():
    assert redact_url("https://user:tok@host/simple") == "https://***@host/simple"
    assert redact_url("https://tok@host/simple") == "https://***@host/simple"
    assert redact_url("https://host/simple") == "https://host/simple"


# ---------------------------------------------------------------------------------------------------------------
# Plans from findings


def interpreter(*dists: tuple[str, str], version=(3, 12, 3)) -> Interpreter:
    return Interpreter(
        executable="/t/bin/python", version=version, implementation="cpython", prefix="/t", base_prefix="/usr",
        site_dirs=("/t/site",), sys_path=("/t/site",),
        distributions=tuple(Distribution(n, v, "/t/site") for n, v in dists),
        modules=(), torch=None, markers=(),
    )


def facts(interp, checkout=None) -> Facts:
    return Facts(interpreter=interp, driver=Failure("driver", "none"), toolkit=Failure("toolkit", "none"), checkout=checkout)


def finding(check_id, status=Status.FAIL, *steps: Step, text="do it") -> Finding:
    return Finding(check_id, check_id, status, "found", remedy=Remedy(text, steps=tuple(steps)) if steps or text else None)


def opts(tmp_path, **kw) -> PlanOptions:
    kw.setdefault("toolkit_prefix", str(tmp_path / "cuda-13.1"))
    return PlanOptions(python="/t/bin/python", pip=PIP, state_dir=str(tmp_path / "state"),
                       cutlass_dir=str(tmp_path / "cutlass"), cutlass_url="https://github.com/NVIDIA/cutlass", **kw)


BROKEN = interpreter(("torch", "2.11.0+cu130"), ("nvidia-cutlass-dsl", "4.4.0"), ("nvidia-cutlass-dsl-libs-base", "4.4.0"),
                     ("nvidia-cutlass", "3.5.0"), ("apache-tvm-ffi", "0.1.6"))


def broken_findings():
    return (
        finding("cutedsl.version", Status.FAIL, Step("pip-install", ("nvidia-cutlass-dsl>=4.3.0,<=4.3.5",), "dsl")),
        finding("cutedsl.importable", Status.FAIL, Step("pip-uninstall", ("nvidia-cutlass",), "wrong package"),
                Step("pip-install", ("nvidia-cutlass-dsl>=4.3.0,<=4.3.5",), "restore", reinstall=True)),
        finding("nvgemm.deps", Status.FAIL, Step("pip-install", ("apache-tvm-ffi==0.1.7", "nvidia-matmul-heuristics"), "deps")),
        finding("packages.consistency", Status.WARN, Step("pip-install", ("nvidia-cutlass-dsl-libs-base==4.4.0",), "missing")),
        finding("cutlass.checkout", Status.FAIL, Step("cutlass-fetch", (), "missing"), Step("cutlass-install", (), "x")),
        finding("cuda.toolkit", Status.FAIL, Step("toolkit-install", ("cuda-toolkit[nvcc]==13.1.*",), "nvcc")),
        finding("cuda.driver", Status.FAIL, text="Upgrade the driver to 590.44.01."),
    )


def test_the_plan_order_and_what_each_step_carries(tmp_path, policy):
    plan = make_plan(broken_findings(), facts(BROKEN), policy, opts(tmp_path))
    kinds = [(s.kind, s.optional) for s in plan.steps]
    assert kinds == [
        ("pip-uninstall", False),  # the wrong package and the stale split libs, first
        ("pip-install", False),  # the pins, in one transaction, torch held
        ("pip-install", False),  # the reinstall over overwritten files
        ("pip-install", True),  # recommended packages, allowed to fail
        ("cutlass-fetch", False),
        ("cutlass-install", False),
    ]
    uninstall, pins, renew, extra, fetch, install = plan.steps
    assert uninstall.commands[0][-2:] == ("nvidia-cutlass", "nvidia-cutlass-dsl-libs-base")
    assert pins.commands[0][-4:] == ("--", "nvidia-cutlass-dsl<=4.3.5,>=4.3.0", "apache-tvm-ffi==0.1.7", "torch==2.11.0+cu130")
    assert "--force-reinstall" in renew.commands[0] and "--no-deps" in renew.commands[0]
    assert extra.commands[0][-2] == "nvidia-matmul-heuristics"  # the split libs are never installed back
    assert not any("libs-base" in a for s in plan.steps[1:] for c in s.commands for a in c)
    assert fetch.param("commit") == policy.cutlass.commit and fetch.param("dest") == str(tmp_path / "cutlass")
    assert any(a.startswith("--editable=") and a.endswith("python/cutlass_api[torch]") for a in install.commands[0])
    assert [s.kind for s in plan.offered] == ["toolkit-install"]  # only offered without --toolkit
    assert [m.check_id for m in plan.manual] == ["cuda.driver"] and "590.44.01" in plan.manual[0].text
    constraints = dict(pins.writes)[str(tmp_path / "state" / "constraints.txt")]
    assert "nvidia-cutlass-dsl<=4.3.5,>=4.3.0" in constraints and "torch==2.11.0+cu130" in constraints
    assert plan.runnable and not plan.blocked


def test_the_toolkit_goes_into_a_prefix_of_its_own_when_asked(tmp_path, policy):
    prefix = str(tmp_path / "cuda-13.1")
    plan = make_plan(broken_findings(), facts(BROKEN), policy, opts(tmp_path, toolkit=True, toolkit_prefix=prefix))
    step = plan.steps[-1]
    assert step.kind == "toolkit-install" and f"--target={prefix}" in step.commands[0]
    env_file, text = step.writes_after[0]
    assert env_file == f"{prefix}/env.sh" and f"CUDA_HOME={prefix}/nvidia/cu13" in text


def test_torch_is_installed_first_from_its_index_and_then_rides_along(tmp_path, policy):
    cpu = interpreter(("torch", "2.13.0+cpu"))
    findings = (
        finding("torch.cuda-build", Status.FAIL,
                Step("pip-install", ("torch>=2.11",), "cpu build", index_url="https://download.pytorch.org/whl/cu130", reinstall=True)),
        finding("nvgemm.deps", Status.FAIL, Step("pip-install", ("apache-tvm-ffi==0.1.7",), "deps")),
    )
    plan = make_plan(findings, facts(cpu), policy, opts(tmp_path))
    torch_step, pins = plan.steps
    assert "--index-url=https://download.pytorch.org/whl/cu130" in torch_step.commands[0]
    # the remedy asked for torch>=2.11; fix never installs a torch outside the profile's range
    assert "--force-reinstall" in torch_step.commands[0] and torch_step.commands[0][-1] == "torch<2.14,>=2.11"
    assert pins.commands[0][-1] == "torch<2.14,>=2.11"
    # the user's sources replace the step's index
    offline = make_plan(findings, facts(cpu), policy, opts(tmp_path, sources=PipSources(find_links=(str(tmp_path),), no_index=True)))
    assert not any(a.startswith("--index-url") for a in offline.steps[0].commands[0])


@pytest.mark.parametrize("pythons, chosen", [
    ((("/usr/bin/python3.13", "3.13.1"), ("/usr/bin/python3.11", "3.11.7")), "/usr/bin/python3.13"),
    ((("/opt/py312/bin/python3", "3.12.0"),), "/opt/py312/bin/python3"),  # the lowest the range takes
    ((("/usr/bin/python3.11", "3.11.9"),), "python3.12"),  # none the stack takes: the floor, to be installed
    ((), "python3.12"),
])
def test_an_old_interpreter_blocks_the_plan_with_doctors_advice(tmp_path, policy, pythons, chosen):
    """doctor's remedy and fix's plan name the same interpreter: the plan's advice is the finding's, made once."""
    from envcheck.judge import judge

    old = facts(interpreter(("torch", "2.11.0+cu130"), version=(3, 11, 7)))
    old = replace(old, pythons=pythons)
    findings = judge(old, policy, no_gpu=True)
    python = next(f for f in findings if f.id == "python.version")
    plan = make_plan(findings, old, policy, opts(tmp_path))
    assert plan.blocked and not plan.runnable
    advice = next(m for m in plan.manual if m.check_id == "python.version")
    assert advice.text == python.remedy.text and advice.commands == python.remedy.commands
    venv = next(c for c in advice.commands if c[1:3] == ("-m", "venv"))
    assert venv[0] == chosen
    assert advice.commands[-1][:3] == ("envcheck", "fix", "--python")
    assert advice.text.startswith("Python is too old (found 3.11.7, needs >=3.12)")
    assert ("is on this machine at " + chosen in advice.text) == chosen.startswith("/")


def test_a_dirty_checkout_that_must_move_stops_the_plan_before_any_change(tmp_path, policy):
    dirty = Checkout(path=str(tmp_path / "cutlass"), source="--cutlass-dir", is_repo=True, commit="0" * 40,
                     dirty_files=("python/cutlass_api/x.py",))
    findings = (finding("cutlass.checkout", Status.FAIL, Step("cutlass-fetch", (), "old commit")),)
    plan = make_plan(findings, facts(interpreter(), dirty), policy, opts(tmp_path))
    assert plan.blocked and "does not touch a dirty checkout" in plan.blocked[0]
    clean = replace(dirty, dirty_files=())
    assert not make_plan(findings, facts(interpreter(), clean), policy, opts(tmp_path)).blocked


def test_an_unreadable_interpreter_gives_no_steps(tmp_path, policy):
    plan = make_plan(broken_findings(), Facts(Failure("interpreter", "no python"), Failure("d", ""), Failure("t", ""), None),
                     policy, opts(tmp_path))
    assert not plan.steps and plan.blocked


@pytest.mark.parametrize("status, blocked", [
    (Status.FAIL, True), (Status.ERROR, True), (Status.WARN, False), (Status.PASS, False), (Status.SKIP, False),
])
def test_plan_blockers_are_the_python_version_problem_and_make_plan_starts_from_them(tmp_path, policy, status, blocked):
    old = facts(interpreter(("torch", "2.11.0+cu130"), version=(3, 11, 7)))
    findings = (finding("python.version", status, text="needs 3.12"),) + broken_findings()
    reasons = plan_blockers(findings, old, policy)
    assert reasons == ((f"/t/bin/python is Python 3.11.7; the stack needs Python {policy.python} (python.version says "
                        "what to do)",) if blocked else ())
    wanted = replace(findings[0], wanted="Python >=3.11 (beside torch 2.15.0)")  # the finding's own words, as doctor said them
    assert all("the stack needs Python >=3.11 (beside torch 2.15.0)" in r
               for r in plan_blockers((wanted,) + findings[1:], old, policy))
    assert make_plan(findings, old, policy, opts(tmp_path)).blocked[:len(reasons)] == reasons


def test_plan_blockers_name_an_unreadable_interpreter(tmp_path, policy):
    unreadable = Facts(Failure("interpreter", "no python"), Failure("d", ""), Failure("t", ""), None)
    reasons = plan_blockers(broken_findings(), unreadable, policy)
    assert reasons == ("the target interpreter could not be read: no python",)
    assert make_plan(broken_findings(), unreadable, policy, opts(tmp_path)).blocked == reasons
    assert plan_blockers(broken_findings(), facts(BROKEN), policy) == ()


def test_nothing_failing_means_an_empty_plan(tmp_path, policy):
    plan = make_plan((Finding("python.version", "p", Status.PASS, "3.12"),), facts(interpreter()), policy, opts(tmp_path))
    assert not plan.steps and not plan.manual and not plan.runnable


def test_constraints_hold_torch_where_it_is(policy):
    text = constraints_text(policy, interpreter(("torch", "2.11.0+cu130")), torch_planned=False)
    assert "torch==2.11.0+cu130" in text.splitlines()
    assert "apache-tvm-ffi==0.1.7" in text.splitlines()
    assert "torch<2.14,>=2.11" in constraints_text(policy, interpreter(), torch_planned=True).splitlines()


@pytest.mark.parametrize("version", ["2.11.0\n--extra-index-url https://evil.example/simple",  # a folded Version: header
                                     "       2.11.0\n--extra-index-url https://evil.example/simple",
                                     "2.11.0\u2028-r /etc/evil.txt", "2.11.0 --index-url=https://evil.example"])
@pytest.mark.parametrize("no_deps", [False, True])
def test_the_targets_metadata_never_writes_a_line_of_the_constraints_file(tmp_path, policy, version, no_deps):
    """The target's files are untrusted: its torch's version is held only when it parses as a version."""
    target = interpreter(("torch", version), ("nvidia-cutlass-dsl", "4.4.0"))
    findings = (Finding("cutedsl.version", "d", Status.FAIL, "4.4.0", remedy=Remedy(
        "x", steps=(Step("pip-install", ("nvidia-cutlass-dsl<=4.3.5,>=4.3.0",)),))),)
    plan = make_plan(findings, facts(target), policy, replace(opts(tmp_path), no_deps=no_deps))
    written = [text for step in plan.steps for _, text in step.writes]
    assert written and all(line.startswith("#") or Requirement(line) for text in written for line in text.splitlines())
    assert not any("evil" in line for text in written for line in text.splitlines())
    assert not any("evil" in arg for step in plan.steps for argv in step.commands for arg in argv)


def test_plan_json_has_what_why_and_the_exact_command(tmp_path, policy):
    data = make_plan(broken_findings(), facts(BROKEN), policy, opts(tmp_path)).to_json()
    assert data["schema_version"] == 1
    for step in data["steps"]:
        assert step["what"] and step["why"] and step["commands"] and step["command"]


def test_from_a_bundle_every_locked_package_is_pinned_where_it_differs_and_what_it_lacks_is_not_planned(tmp_path, policy):
    """fix --bundle: the locked stack exactly (a locked package missing or at another version is pinned, one at its
    locked version is left alone), and a recommended package the bundle does not carry is not planned."""
    target = interpreter(("torch", "2.11.0+cu130"), ("typing-extensions", "4.16.0"), ("cuda-bindings", "13.0.0"))
    findings = (
        finding("nvgemm.deps", Status.FAIL, Step("pip-install", ("apache-tvm-ffi==0.1.7",), "deps")),
        finding("packages.consistency", Status.WARN, Step("pip-install", ("cuda-python>=12.8",), "missing")),
    )
    locked = ("apache-tvm-ffi==0.1.7", "cuda-bindings==13.3.1", "typing-extensions==4.16.0")
    plan = make_plan(findings, facts(target), policy, opts(tmp_path, locked=locked, no_deps=True))
    installs = [s for s in plan.steps if s.kind == "pip-install"]
    assert len(installs) == 1  # the recommended cuda-python is not in the bundle: no step that must fail
    argv = installs[0].commands[0]
    assert "apache-tvm-ffi==0.1.7" in argv and "cuda-bindings==13.3.1" in argv and "--no-deps" in argv
    assert not any(a.startswith("typing-extensions") for a in argv)
    unbundled = make_plan(findings, facts(target), policy, opts(tmp_path))
    assert any("cuda-python>=12.8" in s.commands[0] for s in unbundled.steps)


# ---------------------------------------------------------------------------------------------------------------
# fix --dry-run on a torch whose own requirements are missing (issue 31 item 7): no step of torch's, the optional
# step called recommended only where it is, the constraints file named once


@pytest.mark.parametrize("dsl_lacks, called", [(False, "(recommended: a failure here does not stop the plan)"),
                                               (True, "(a failure here does not stop the plan)")])
def test_the_dry_run_plans_the_stack_not_torchs_own_requirements(tmp_path, dsl_lacks, called):
    from factsbuilder import facts as fact_set, stack

    from envcheck.judge import judge
    from envcheck.profile import load_builtin
    from envcheck.render.fix import render_plan

    operators = load_builtin("torch-2.14-operators")
    env = stack(torch="2.15.0", drop=("nvidia-cutlass-operators", "nvidia-matmul-heuristics"))
    torch_own = ("filelock", "sympy>=1.13.3", 'cuda-toolkit[cublas,cudart]==13.2.2; platform_system == "Linux"')
    env = replace(env, distributions=tuple(
        replace(d, requires=d.requires + (torch_own if d.name == "torch" else ("mpmath",) if dsl_lacks and
                                          d.name == "nvidia-cutlass-dsl" else ())) for d in env.distributions))
    findings = judge(fact_set(interpreter=env), operators, no_gpu=True)
    plan = make_plan(findings, fact_set(interpreter=env), operators, opts(tmp_path))
    text = render_plan(plan, "envcheck fix")
    planned = " ".join(a for s in plan.steps for argv in s.commands for a in argv)
    assert not any(name in planned for name in ("filelock", "sympy", "cuda-toolkit")), text
    assert ("mpmath" in planned) is dsl_lacks
    assert [s.kind for s in plan.steps] == ["pip-install", "pip-install"], text  # the pins, then the optional one
    assert plan.steps[1].what.endswith(called), plan.steps[1].what
    constraints = opts(tmp_path).constraints_file
    assert text.count(f"writes {constraints}") == 1 and text.count(f"--constraint={constraints}") == 2, text
