"""Runs inside the target interpreter and prints what it finds there as JSON.

Standard library only, Python 3.8 syntax, nothing imported beyond what the interpreter ships: a broken environment
must still be described. It never imports torch, cutlass or cutlass_api: find_spec locates top-level modules without
running them, and torch's version.py is read as text.
"""

import sys

# `python -c` puts the current directory first on sys.path before this line runs. It is not part of the environment,
# and an ast.py or json.py there must never run: it goes before anything is imported. PYTHONPATH entries stay.
if sys.path and sys.path[0] == "":
    del sys.path[0]

import ast  # noqa: E402 - after the line above, on purpose
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import site  # noqa: E402

MODULES = ("torch", "cutlass", "cutlass_api", "nvMatmulHeuristics", "triton")


def _header_fields(path):
    """Name, Version and Requires-Dist from the header block of METADATA; the body (often long) is not read."""
    name = version = None
    requires = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if not line.strip():
                break
            key, _, value = line.partition(":")
            value = value.strip()
            if key == "Name":
                name = value
            elif key == "Version":
                version = value
            elif key == "Requires-Dist":
                requires.append(value)
    return name, version, requires


def _read(folder, name):
    try:
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            return handle.read()
    except (OSError, ValueError):
        return None


def distributions():
    """Every installed distribution on sys.path, in path order, as importlib.metadata would find them.

    Read straight from the .dist-info and .egg-info directories: importlib.metadata's email parser would read each
    whole METADATA file, which is most of the probe's time in a large environment."""
    found = []
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for folder_name in names:
            if not folder_name.endswith((".dist-info", ".egg-info")):
                continue
            folder = os.path.join(entry, folder_name)
            metadata = os.path.join(folder, "METADATA" if folder_name.endswith(".dist-info") else "PKG-INFO")
            if not os.path.isdir(folder):
                metadata = folder  # an .egg-info file is itself the PKG-INFO
            try:
                name, version, requires = _header_fields(metadata)
            except (OSError, ValueError):
                continue
            if not name:
                continue
            entry_data = {
                "name": name,
                "version": version or "",
                "location": entry,
                "requires": requires,
                "installer": (_read(folder, "INSTALLER") or "").strip() or None,
            }
            direct = _read(folder, "direct_url.json")
            if direct:
                try:
                    info = json.loads(direct)
                    entry_data["url"] = info.get("url")
                    entry_data["editable"] = bool(info.get("dir_info", {}).get("editable"))
                    entry_data["commit"] = info.get("vcs_info", {}).get("commit_id")
                except ValueError:
                    pass
            found.append(entry_data)
    return found


def modules():
    import importlib.util

    found = []
    for name in MODULES:
        try:
            spec = importlib.util.find_spec(name)
        except Exception as exc:  # find_spec runs finders that can raise
            found.append({"name": name, "origin": None, "error": "%s: %s" % (type(exc).__name__, exc)})
            continue
        if spec is None:
            found.append({"name": name, "origin": None})
        else:
            locations = list(spec.submodule_search_locations or [])
            origin = spec.origin if spec.origin not in (None, "namespace") else (locations[0] if locations else None)
            found.append({"name": name, "origin": origin})
    return found


def torch_build(origin):
    """torch/version.py next to torch/__init__.py, read as text: never import torch."""
    if not origin:
        return None
    path = os.path.join(os.path.dirname(origin), "version.py")
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return None
    values = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target, value = node.target.id, node.value
        else:
            continue
        try:
            literal = ast.literal_eval(value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(literal, str):  # a set, a number or a None is not a version: JSON must stay writable
            values[target] = literal
    return {
        "version": values.get("__version__"),
        "cuda": values.get("cuda"),
        "git_version": values.get("git_version"),
        "path": path,
    }


def markers():
    implementation = sys.implementation
    info = implementation.version
    version = "%d.%d.%d" % (info.major, info.minor, info.micro)
    if info.releaselevel != "final":
        version += info.releaselevel[0] + str(info.serial)
    return {
        "implementation_name": implementation.name,
        "implementation_version": version,
        "os_name": os.name,
        "platform_machine": platform.machine(),
        "platform_release": platform.release(),
        "platform_system": platform.system(),
        "platform_version": platform.version(),
        "python_full_version": platform.python_version(),
        "platform_python_implementation": platform.python_implementation(),
        "python_version": ".".join(platform.python_version_tuple()[:2]),
        "sys_platform": sys.platform,
    }


def site_dirs():
    dirs = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return dirs


def main():
    found_modules = modules()
    torch_origin = next((m["origin"] for m in found_modules if m["name"] == "torch"), None)
    report = {
        "executable": sys.executable,
        "version": list(sys.version_info[:3]),
        "implementation": sys.implementation.name,
        "prefix": sys.prefix,
        "base_prefix": getattr(sys, "base_prefix", sys.prefix),
        "site_dirs": site_dirs(),
        "sys_path": sys.path,
        "pythonpath": os.environ.get("PYTHONPATH", ""),
        "distributions": distributions(),
        "modules": found_modules,
        "torch": torch_build(torch_origin),
        "markers": markers(),
    }
    sys.stdout.write(json.dumps(report))


if __name__ == "__main__":
    main()
