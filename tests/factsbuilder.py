"""Facts built by hand for the pure judge tests: a known-good B200 machine, varied one fact at a time."""

from __future__ import annotations

from dataclasses import replace

from envcheck.model import (Checkout, Distribution, Driver, Facts, Gpu, Interpreter, ModuleLocation, Nvcc, SearchPaths,
                            Toolkit, TorchBuild)

PINNED = "e594def95e1c73ad9d5517ab28b80d691127dd1c"
SITE = "/opt/venv/lib/python3.12/site-packages"
CHECKOUT = "/src/cutlass"
DSL_CUTLASS = f"{SITE}/nvidia_cutlass_dsl/python_packages/cutlass/__init__.py"

GOOD_DISTS = {
    "torch": "2.11.0+cu130",
    "nvidia-cutlass-dsl": "4.3.5",
    "apache-tvm-ffi": "0.1.7",
    "torch-c-dlpack-ext": "0.1.5",
    "nvidia-matmul-heuristics": "0.1.0.27",
    "cuda-bindings": "13.3.1",
    "cuda-python": "13.3.1",
    "cutlass-api": "0.1.0a1",
}
REQUIRES = {
    "nvidia-cutlass-dsl": ("cuda-python>=12.8", "numpy; python_version >= '3.99'"),
    "torch": ("cuda-bindings>=13.0.3,<14; platform_system == 'Linux'",),
    "cuda-python": ("cuda-bindings~=13.3.1",),
}


def dist(name: str, version: str, location: str = SITE, **kw) -> Distribution:
    return Distribution(name=name, version=version, location=location, requires=REQUIRES.get(name, ()), **kw)


def interpreter(
    version=(3, 12, 3),
    dists: dict | None = None,
    extra: tuple[Distribution, ...] = (),
    modules: dict | None = None,
    torch: TorchBuild | None | str = "default",
) -> Interpreter:
    dists = dict(GOOD_DISTS if dists is None else dists)
    made = []
    for name, version_ in dists.items():
        if name == "cutlass-api":
            made.append(dist(name, version_, editable=f"{CHECKOUT}/python/cutlass_api"))
        else:
            made.append(dist(name, version_))
    found_modules = {
        "torch": f"{SITE}/torch/__init__.py" if "torch" in dists else None,
        "cutlass": DSL_CUTLASS if "nvidia-cutlass-dsl" in dists else None,
        "cutlass_api": f"{CHECKOUT}/python/cutlass_api/cutlass_api/__init__.py" if "cutlass-api" in dists else None,
        "nvMatmulHeuristics": f"{SITE}/nvMatmulHeuristics/__init__.py" if "nvidia-matmul-heuristics" in dists else None,
    }
    found_modules.update(modules or {})
    if torch == "default":
        torch = TorchBuild(dists["torch"], "13.0", "abc", f"{SITE}/torch/version.py") if "torch" in dists else None
    return Interpreter(
        executable="/opt/venv/bin/python",
        version=version,
        implementation="cpython",
        prefix="/opt/venv",
        base_prefix="/usr",
        site_dirs=(SITE,),
        sys_path=(SITE,),
        distributions=tuple(made) + tuple(extra),
        modules=tuple(ModuleLocation(n, o) for n, o in found_modules.items()),
        torch=torch,
        markers=(("platform_system", "Linux"), ("python_version", f"{version[0]}.{version[1]}"), ("sys_platform", "linux")),
    )


def gpu(capability=(10, 0), name="NVIDIA B200", index=0, mig=False) -> Gpu:
    return Gpu(index=index, name=name, capability=capability, memory_bytes=180 * 2**30, mig=mig)


def driver(version="590.48.01", cuda="13.1", gpus=None) -> Driver:
    return Driver(version=version, cuda=cuda, gpus=(gpu(),) if gpus is None else tuple(gpus))


def toolkit(*versions: str | None) -> Toolkit:
    versions = versions or ("13.1.80",)
    return Toolkit(tuple(
        Nvcc(path=f"/usr/local/cuda-{i}/bin/nvcc", source="PATH" if i == 0 else "/usr/local/cuda", version=v,
             error=None if v else "no nvcc there")
        for i, v in enumerate(versions)
    ))


def checkout(**kw) -> Checkout:
    base = Checkout(path=CHECKOUT, source="editable cutlass-api install", exists=True, is_repo=True, commit=PINNED,
                    branch="cutlass_api", shallow=True, sparse=True, remotes=("https://github.com/NVIDIA/cutlass",),
                    has_package=True, is_cutlass=True, package_version="0.1.0a1")
    return replace(base, **kw)


def facts(**kw) -> Facts:
    base = Facts(interpreter=interpreter(), driver=driver(), toolkit=toolkit(), checkout=checkout(), paths=SearchPaths())
    return replace(base, **kw)


CUDA = {"2.11.0": "13.0", "2.13.0": "13.0", "2.14.0": "13.0", "2.14.1": "13.0", "2.15.0": "13.2"}


def stack(torch="2.14.1", dsl="4.8.1", flavours=("cu12", "cu13"), library="operators", tvm="0.1.15.post2",
          python=(3, 12, 3), drop=(), cutlass_dir=None, operators="0.3.0", versions=None):
    """An environment of either stack, as the probe reports it: torch, the DSL with its -libs-* (per its version's
    layout), the kernel library, the companions."""
    dists = {"torch": f"{torch}+cu{CUDA.get(torch, '13.0').replace('.', '')}", "nvidia-cutlass-dsl": dsl,
             "apache-tvm-ffi": tvm, "torch-c-dlpack-ext": "0.1.5", "nvidia-matmul-heuristics": "0.1.0.27",
             "cuda-bindings": "13.3.1", "cuda-python": "13.3.1"}
    version = tuple(int(p) for p in dsl.split(".")[:2])
    if version >= (4, 4):
        dists["nvidia-cutlass-dsl-libs-base"] = dsl
    if version >= (4, 6):
        dists["nvidia-cutlass-dsl-libs-core"] = dsl
    for flavour in flavours:
        if version >= (4, 6) or (flavour == "cu13" and version >= (4, 4)):  # -libs-cu12 from 4.6, -libs-cu13 from 4.4
            dists[f"nvidia-cutlass-dsl-libs-{flavour}"] = dsl
    if library == "operators":
        dists["nvidia-cutlass-operators"] = operators
    else:
        dists["cutlass-api"] = "0.1.0a1"
    dists = {k: v for k, v in {**dists, **(versions or {})}.items() if k not in drop}
    layout = "dsl_packages" if version >= (4, 6) else "python_packages"
    modules = {"cutlass": cutlass_dir or f"{SITE}/nvidia_cutlass_dsl/{layout}/cutlass/__init__.py",
               "cutlass.operators": f"{SITE}/cutlass/operators/__init__.py" if "nvidia-cutlass-operators" in dists else None}
    made = interpreter(version=python, dists=dists, modules=modules,
                       torch=TorchBuild(dists["torch"], CUDA.get(torch, "13.0"), "abc", f"{SITE}/torch/version.py"))
    meta = {(4, 6): (f"nvidia-cutlass-dsl-libs-base=={dsl}", f"nvidia-cutlass-dsl-libs-cu12=={dsl}",
                     f'nvidia-cutlass-dsl-libs-cu13=={dsl}; extra == "cu13"'),
            (4, 4): (f"nvidia-cutlass-dsl-libs-base=={dsl}", f'nvidia-cutlass-dsl-libs-cu13=={dsl}; extra == "cu13"')}
    requires = {"nvidia-cutlass-dsl": meta[(4, 6)] if version >= (4, 6) else meta[(4, 4)] if version >= (4, 4) else ("cuda-python>=12.8",),
                # -libs-base 4.6 and later needs -libs-core (its METADATA): not a stale split package either
                "nvidia-cutlass-dsl-libs-base": (f"nvidia-cutlass-dsl-libs-core=={dsl}",) if version >= (4, 6) else ()}
    return replace(made, distributions=tuple(replace(d, requires=requires[d.name]) if d.name in requires else d
                                             for d in made.distributions))


def decoded(kind, value):
    """A model value from its JSON (`plain`): the dataclass `kind` with its tuples, optionals and unions rebuilt, so
    that a captured doctor report's facts can be judged again."""
    import dataclasses
    import typing

    if value is None:
        return None
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is typing.Union:
        options = [a for a in args if a is not type(None)]
        fitting = [a for a in options if not dataclasses.is_dataclass(a)
                   or (isinstance(value, dict) and set(value) <= {f.name for f in dataclasses.fields(a)})]
        return decoded(fitting[0], value)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(decoded(args[0], item) for item in value)
        return tuple(decoded(a, item) for a, item in zip(args, value))
    if dataclasses.is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        return kind(**{name: decoded(hints[name], item) for name, item in value.items() if name in hints})
    return value


def facts_of_report(report: dict) -> Facts:
    """The facts a doctor --json report recorded."""
    return decoded(Facts, report["facts"])
