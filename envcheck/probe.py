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

# The modules to locate come from the profile, as a JSON list: the first argument, or, when that is "-", the first
# line of stdin, read after the slow part (the distributions), so the caller can start the probe before it has read
# its profile. torch is always looked for.
MODULES = ("torch",)


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


def requested_modules(argv):
    """torch, plus the module names the caller passed as a JSON list (argv[1], or stdin's first line for "-")."""
    names = list(MODULES)
    if len(argv) > 1:
        try:
            given = json.loads(sys.stdin.readline() if argv[1] == "-" else argv[1])
        except ValueError:
            given = []
        if not isinstance(given, list):
            given = []
        names += [n for n in given if isinstance(n, str) and n not in names]
    return names


def _origin(spec):
    locations = list(spec.submodule_search_locations or [])
    return spec.origin if spec.origin not in (None, "namespace") else (locations[0] if locations else None)


def _submodule(parent_spec, name):
    """Where `parent.child` would load from, without importing the parent (find_spec of a dotted name would run the
    parent's __init__). Looks in the parent's own folders, then in `<parent>/` of every sys.path entry: a package
    that extends its __path__ with sibling distributions' folders (nvidia-cutlass-dsl admits cutlass.operators so)."""
    parent, _, child = name.rpartition(".")
    middle = parent.split(".")[1:]
    folders = [os.path.join(folder, *middle) for folder in (parent_spec.submodule_search_locations or [])]
    folders += [os.path.join(entry or ".", *parent.split(".")) for entry in sys.path]
    for folder in folders:
        for candidate in (os.path.join(folder, child, "__init__.py"), os.path.join(folder, child + ".py")):
            if os.path.isfile(candidate):
                return candidate
    return None


def modules(names=MODULES):
    import importlib.util

    found = []
    for name in names:
        top = name.split(".")[0]
        try:
            spec = importlib.util.find_spec(top)
        except Exception as exc:  # find_spec runs finders that can raise
            found.append({"name": name, "origin": None, "error": "%s: %s" % (type(exc).__name__, exc)})
            continue
        if spec is None:
            found.append({"name": name, "origin": None})
        elif name == top:
            found.append({"name": name, "origin": _origin(spec)})
        else:
            found.append({"name": name, "origin": _submodule(spec, name)})
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
    found_distributions = distributions()
    found_modules = modules(requested_modules(sys.argv))
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
        "distributions": found_distributions,
        "modules": found_modules,
        "torch": torch_build(torch_origin),
        "markers": markers(),
    }
    sys.stdout.write(json.dumps(report))


if __name__ == "__main__":
    main()
