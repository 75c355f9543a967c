"""A Policy from a merged profile: each table read with `fields`, every key known, every value checked.

Each function reads one part of the schema (schema.py lists every key); an error names the file that set the value
and the key, and says what was expected.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from packaging.specifiers import SpecifierSet

from ..model import Status
from .composite import _BESIDE, _MODULE_DIRS, _besides, _exempt, _flavours, _module_dirs
from .fields import (
    _CAPABILITIES, _RELATIVE_PATH_EXPECTED, _Table, _apt_package, _aten_op, _frame, _backend_name, _basis, _bool, _capability,
    _distribution_name, _extras, _git_ref, _index_url, _level, _minor_version, _module, _name_prefix, _names, _one_line, _regex,
    _relative_path, _requirement, _requirement_text, _sha, _specifier, _status, _url, _version,
)
from .origins import _Origins
from .runs import builtin_runs
from .target import compile_target
from .schema import (
    RUNTIME, SCHEMA, Caveat, Conflict, CutlassSource, GemmOp, GpuRule, PackageRule, Policy, PythonRange, SmokeSpec,
    StandIn, TorchFrames,
)

__all__ = ["build"]


def _rule(table: _Table, name_key: str, level: str = "required") -> PackageRule:
    """A requirement table: [[packages]] entries and [cutedsl]."""
    return PackageRule(
        name=table.get(name_key, _distribution_name, "a distribution name"),
        specifier=table.get("version", _specifier, "a version specifier such as '==0.1.7' or '' for any", SpecifierSet()),
        level=table.get("level", _level, "'required', 'recommended' or 'optional'", level),
        why=table.text("why", ""),
        basis=table.get("basis", _basis, "'runtime' or 'recipe'", RUNTIME),
        runtime=table.get("runtime", _specifier, "a version specifier (the part of a recipe requirement that is runtime)", SpecifierSet()),
        runtime_on=table.get("runtime-on", _specifier, _CAPABILITIES, None),
        runtime_on_version=table.get("runtime-on-version", _specifier,
                                     "a version specifier (what runs on the compute capabilities of runtime-on)", None),
        recipe_note=table.text("recipe-note", ""),
        extras=table.get("extras", _extras, "a list of extra names", ()),
        module=table.get("module", _module, "a module name such as 'nvMatmulHeuristics'", None),
        module_dirs=table.get("module-dirs", _module_dirs, _MODULE_DIRS, ()),
        runtime_beside=table.get("runtime-beside", _besides, _BESIDE, ()),
        source=table.text("source", ""),
        verified=table.get("verified", _specifier, "a version specifier such as '<=4.8.1' (the versions runs had)",
                           SpecifierSet()),
        verified_source=table.text("verified-source", ""),
        flavours=table.get("flavours", _flavours, "a table of version specifier -> list of distribution names (e.g. "
                           "{'>=4.6' = ['nvidia-cutlass-dsl-libs-cu12', 'nvidia-cutlass-dsl-libs-cu13']})", ()),
    )


def _package(table: _Table) -> PackageRule:
    rule = _rule(table, "name")
    table.done()
    return rule


def _stand_in(table: _Table) -> StandIn:
    stand_in = StandIn(
        missing=table.get("missing", _distribution_name, "a distribution name"),
        present=table.get("present", _distribution_name, "a distribution name"),
        why=table.text("why", ""),
        source=table.text("source", ""),
    )
    table.done()
    return stand_in


def _conflict(entry: _Table) -> Conflict:
    name, prefix = entry.raw("name", None), entry.raw("prefix", None)
    if (name is None) == (prefix is None):
        raise entry._error("name", name, "exactly one of 'name' or 'prefix'")
    if name is not None:
        match, is_prefix = entry.get("name", _distribution_name, "a distribution name"), False
    else:
        match, is_prefix = entry.get("prefix", _name_prefix, "a distribution name prefix"), True
    if "status" in entry.data and "basis" in entry.data:
        raise entry._error("basis", entry.data["basis"], "either 'status' or 'basis' (with 'runtime-on'), not both")
    conflict = Conflict(
        match, is_prefix, entry.text("why", ""),
        version=entry.get("version", _specifier, "a version specifier such as '<4.4'", SpecifierSet()),
        torch_cuda=entry.get("torch-cuda", _specifier, "a CUDA version specifier such as '>=13'", None),
        unless=entry.get("unless", _distribution_name, "a distribution name", None),
        status=entry.get("status", _status, "'pass', 'warn' or 'fail'", Status.FAIL),
        instead=entry.get("instead", _requirement_text, "a requirement such as 'nvidia-cutlass-dsl[cu13]>=4.8'", None),
        consent=entry.get("consent", _bool, "true or false", False),
        basis=entry.get("basis", _basis, "'runtime' or 'recipe'", RUNTIME),
        runtime_on=entry.get("runtime-on", _specifier, _CAPABILITIES, None),
        source=entry.text("source", ""),
    )
    entry.done()
    return conflict


def _caveat(entry: _Table) -> Caveat:
    caveat = Caveat(
        name=entry.get("name", _git_ref, "a name (letters, digits, '.', '-', '_')"),
        capability=entry.get("capability", _specifier, _CAPABILITIES),
        torch=entry.get("torch", _specifier, "a torch version specifier such as '>=2.14,<2.15'", SpecifierSet()),
        status=entry.get("status", _status, "'pass', 'warn' or 'fail'"),
        text=entry.text("text"),
        remedy=entry.text("remedy", ""),
        source=entry.text("source", ""),
        when=entry.get("when", _requirement, "a requirement such as 'nvidia-cutlass-operators>=0.2.0'", None),
    )
    entry.done()
    return caveat


def _gemm_op(entry: _Table) -> GemmOp:
    row = GemmOp(
        op=entry.get("op", _aten_op, "an aten op's name such as 'addmm' or '_scaled_mm'"),
        capability=entry.get("capability", _specifier, _CAPABILITIES, None),
        why=entry.text("why", ""),
        source=entry.text("source", ""),
    )
    entry.done()
    return row


def _torch_frames(entry: _Table) -> TorchFrames:
    row = TorchFrames(
        torch=entry.get("torch", _version, "a torch release such as '2.15.0'"),
        frames=frozenset(entry.get("frames", _names(_frame), "a list of frames such as "
                                   "['torch/_inductor/graph.py:1595 call_function']")),
        source=entry.text("source", ""),
    )
    entry.done()
    return row


def _python_range(entry: _Table) -> PythonRange:
    python_range = PythonRange(
        torch=entry.get("torch", _specifier, "a torch version specifier such as '>=2.15'"),
        version=entry.get("version", _specifier, "a version specifier such as '>=3.11'"),
        why=entry.text("why", ""),
        source=entry.text("source", ""),
    )
    entry.done()
    return python_range


def _gpu_rule(entry: _Table, gpus: bool = True) -> GpuRule:
    return GpuRule(
        capability=entry.get("capability", _capability, "a compute capability such as '9.0'"),
        status=entry.get("status", _status, "'pass', 'warn' or 'fail'"),
        kernels=entry.text("kernels"),
        gpus=entry.text("gpus", "") if gpus else "",
        remedy=entry.text("remedy", ""),
        source=entry.text("source", ""),
    )


def _smoke(top: _Table, backend: str) -> SmokeSpec:
    if "smoke" not in top.data:
        top.used.add("smoke")
        return SmokeSpec((backend,))
    table = top.table("smoke")
    extra = []
    for entry in table.tables("capability-backends", []):
        extra.append((entry.get("capability", _specifier, _CAPABILITIES),
                      entry.get("backends", _names(_backend_name), "a list of Inductor backend names")))
        entry.done()
    spec = SmokeSpec(
        backends=table.get("backends", _names(_backend_name), "a list of Inductor backend names such as ['NVGEMM']", (backend,)),
        capability_backends=tuple(extra),
        call_pattern=table.get("call-pattern", _regex, "a regular expression", ""),
        kernel_pattern=table.get("kernel-pattern", _regex, "a regular expression", ""),
        imports=table.get("imports", _names(_module), "a list of module names", ()),
        library=table.get("library", _module, "a module name such as 'cutlass.operators'", ""),
    )
    table.done()
    return spec


def _cutlass(top: _Table) -> Optional[CutlassSource]:
    if "cutlass" not in top.data:
        top.used.add("cutlass")
        return None
    cutlass = top.table("cutlass")
    source = CutlassSource(
        url=cutlass.get("url", _url, "an https, ssh or file URL"),
        branch=cutlass.get("branch", _git_ref, "a git branch name"),
        commit=cutlass.get("commit", _sha, "a full 40-character commit SHA"),
        subdir=cutlass.get("subdir", _relative_path, _RELATIVE_PATH_EXPECTED),
        distribution=cutlass.get("distribution", _distribution_name, "a distribution name"),
        module=cutlass.get("module", _module, "a module name"),
        extras=cutlass.get("extras", _extras, "a list of extra names", ()),
        why=cutlass.text("why", ""),
    )
    cutlass.done()
    return source


def build(data: dict, origins: _Origins) -> Policy:
    """The Policy of a merged profile (`merge`), every key read and checked; PolicyError names the first bad one.
    Its runs are the evidence of the built-in profiles it stands on (runs.py, each file read once)."""
    source = origins.named
    top = _Table(data, origins, "")
    schema = top.raw("schema", SCHEMA)
    if type(schema) is not int or schema != SCHEMA:  # not true (a bool is an int), not 1.0 (equal to 1)
        raise top._error("schema", schema, f"the integer {SCHEMA} (this envcheck reads schema {SCHEMA})")

    python = top.table("python")
    torch = top.table("torch")
    cuda = top.table("cuda")
    cutedsl = top.table("cutedsl")

    floors = []
    for entry in cuda.tables("driver-floor"):
        floors.append((entry.get("cuda", _version, "a CUDA version such as '13.1'"),
                       entry.get("driver", _version, "a driver version such as '590.44.01'")))
        entry.done()
    if not floors:
        raise cuda._error("driver-floor", [], "at least one [[cuda.driver-floor]] entry")

    gpus = []
    for entry in top.tables("gpu", []):
        gpus.append(_gpu_rule(entry))
        entry.done()
    below_table = top.table("gpu-below")
    gpu_below = _gpu_rule(below_table, gpus=False)
    gpu_why = below_table.text("why", "")
    below_table.done()

    inductor_modules: tuple[str, ...] = ()
    if "inductor" in top.data:
        inductor = top.table("inductor")
        inductor_modules = inductor.get("modules", _names(_module), "a list of module names such as ['cutlass', 'cutlass_api']")
        inductor.done()
    else:
        top.used.add("inductor")

    torch_range = torch.get("version", _specifier, "a version specifier such as '>=2.11'")
    backend = top.get("backend", _backend_name, "an Inductor backend name such as 'NVGEMM'")
    dsl = _rule(cutedsl, "distribution")
    policy = Policy(
        id=top.get("id", lambda v: _git_ref(v), "a profile id (letters, digits, '.', '-', '_')"),
        title=top.get("title", _one_line, "a one-line title (no line breaks, control or invisible characters)"),
        source=source,
        backend=backend,
        link=top.get("link", _url, "an https URL", ""),
        python=python.get("version", _specifier, "a version specifier such as '>=3.12'"),
        python_why=python.text("why", ""),
        python_source=python.text("source", ""),
        python_by_torch=tuple(_python_range(t) for t in python.tables("by-torch", [])),
        python_suggested=python.get("suggested", _minor_version, "a Python version MAJOR.MINOR such as '3.12'", ""),
        python_suggested_source=python.text("suggested-source", ""),
        torch=torch_range,
        torch_verified=torch.get("verified", _specifier, "a version specifier such as '>=2.14,<2.16'", torch_range),
        torch_cuda=torch.get("cuda", _specifier, "a CUDA version specifier such as '>=13,<14'"),
        torch_requirement=torch.get("requirement", _requirement, "a requirement such as 'torch>=2.11'"),
        torch_index_url=torch.get("index-url", _index_url, "an https or file URL of a package index", ""),
        torch_why=torch.text("why", ""),
        toolkit=cuda.get("toolkit", _specifier, "a CUDA version specifier such as '>=13.1,<14'"),
        toolkit_level=cuda.get("toolkit-level", _level, "'required' or 'recommended'", "required"),
        toolkit_requirement=cuda.get("toolkit-requirement", _requirement, "a requirement such as 'cuda-toolkit[nvcc]==13.1.*'"),
        driver_cuda=cuda.get("driver-cuda", _version, "a CUDA version such as '13.1'"),
        driver_floors=tuple(sorted(floors)),
        cuda_why=cuda.text("why", ""),
        forward_compat=cuda.get("forward-compat", _apt_package, "a Debian package name such as 'cuda-compat-13-1'", ""),
        cuda_basis=cuda.get("basis", _basis, "'runtime' or 'recipe'", RUNTIME),
        cutedsl=replace(dsl, module=dsl.module or cutedsl.get("module", _module, "a module name")),  # required here
        cutlass=_cutlass(top),
        packages=tuple(_package(t) for t in top.tables("packages", [])),
        conflicts=tuple(_conflict(t) for t in top.tables("conflicts", [])),
        stand_ins=tuple(_stand_in(t) for t in top.tables("stand-ins", [])),
        gpus=tuple(sorted(gpus, key=lambda g: g.capability)),
        gpu_below=gpu_below,
        inductor_modules=inductor_modules,
        smoke=_smoke(top, backend),
        mixed_cuda_exempt=top.get("mixed-cuda-exempt", _exempt, "a list of distribution name prefixes, each a string "
                                  "or {prefix = '...', version = 'a specifier'}", ()),
        gpu_why=gpu_why,
        origins=tuple(origins.where.items()),
        caveats=tuple(_caveat(t) for t in top.tables("caveats", [])),
        runs=tuple(run for name in origins.builtins for run in builtin_runs(name)),
        torch_newest=torch.get("newest", _version, "a torch release such as '2.15.0'", None),
        torch_newest_source=torch.text("newest-source", ""),
        compile_target=compile_target(top),
        gemm_ops=tuple(_gemm_op(t) for t in top.tables("gemm-ops", [])),
        torch_frames=tuple(_torch_frames(t) for t in torch.tables("frames", [])),
    )
    for table in (python, torch, cuda, cutedsl, top):
        table.done()
    return policy
