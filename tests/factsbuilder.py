"""Facts built by hand for the pure judge tests: a known-good B200 machine, varied one fact at a time."""

from __future__ import annotations

from dataclasses import replace

from envcheck.model import (Checkout, Distribution, Driver, Facts, Gpu, Interpreter, ModuleLocation, Nvcc, Toolkit,
                            TorchBuild)

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
    base = Facts(interpreter=interpreter(), driver=driver(), toolkit=toolkit(), checkout=checkout())
    return replace(base, **kw)
