"""Runs inside the target interpreter and prints what it finds there as JSON.

Standard library only, Python 3.6 syntax, nothing imported beyond what the interpreter ships: a broken environment
must still be described. Nothing of the target's runs: envcheck starts it isolated (`python -I -S`: no site, so no
.pth file, sitecustomize or usercustomize; no PYTHON* variable applied; no working directory on the path), and the
search path the target would have is computed from data, as site.py builds it (search_path.py). sys.path itself
is never changed, so everything this script imports comes from the standard library. Modules are located with
PathFinder over the computed path (find_spec runs no module), distributions are read from their .dist-info folders,
torch's version.py is read as text. Import lines of .pth files are reported, never run; the MAPPING of a setuptools
editable finder that one would install is read as a literal.
"""

import json
import os
import platform
import sys
from importlib.machinery import PathFinder, all_suffixes

try:  # imported as envcheck.inside.probe by envcheck's own process (tests)
    from .search_path import SearchPath, assigned_literals, site_dirs, spec_origin
except ImportError:  # run as `python -I -S -c SOURCE`: SOURCE is search_path.py's text, then this file's
    pass  # (gather/interpreter.py, probe_source), so these names are defined already

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


def distributions(path):
    """Every installed distribution on the path, in path order, as importlib.metadata would find them.

    Read straight from the .dist-info and .egg-info directories: importlib.metadata's email parser would read each
    whole METADATA file, which is most of the probe's time in a large environment."""
    found = []
    for entry in path:
        try:
            names = os.listdir(entry)
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


def _editable_module(name, mappings):
    """(origin, package folders) as setuptools' editable finder finds a module its MAPPING names: the folder's
    __init__.py, else the folder's name with a module suffix; None where no finder maps it."""
    for mapping in mappings:
        folder = mapping.get(name)
        if folder is None:
            continue
        init = os.path.join(folder, "__init__.py")
        if os.path.exists(init):
            return init, [folder]
        for suffix in all_suffixes():
            if os.path.exists(os.path.splitext(folder)[0] + suffix):
                return os.path.splitext(folder)[0] + suffix, []
    return None


def _top_level(name, search):
    """(origin, package folders) of a top-level module, or None: the path first (PathFinder, no module run), then
    the editable finders, which setuptools appends to sys.meta_path behind it."""
    spec = PathFinder.find_spec(name, list(search.entries))
    if spec is not None:
        return spec_origin(spec), list(spec.submodule_search_locations or [])
    return _editable_module(name, search.editable)


def _submodule(parent_folders, name, path):
    """Where `parent.child` would load from, without importing the parent (find_spec of a dotted name would run the
    parent's __init__). Looks in the parent's own folders, then in `<parent>/` of every path entry: a package
    that extends its __path__ with sibling distributions' folders (nvidia-cutlass-dsl admits cutlass.operators so)."""
    parent, _, child = name.rpartition(".")
    middle = parent.split(".")[1:]
    folders = [os.path.join(folder, *middle) for folder in parent_folders]
    folders += [os.path.join(entry, *parent.split(".")) for entry in path]
    for folder in folders:
        for candidate in (os.path.join(folder, child, "__init__.py"), os.path.join(folder, child + ".py")):
            if os.path.isfile(candidate):
                return candidate
    return None


def modules(names, search):
    found = []
    for name in names:
        top = name.split(".")[0]
        try:
            located = _top_level(top, search)
        except Exception as exc:  # a path entry's finder can raise
            found.append({"name": name, "origin": None, "error": "%s: %s" % (type(exc).__name__, exc)})
            continue
        if located is None:
            found.append({"name": name, "origin": None})
        elif name == top:
            found.append({"name": name, "origin": located[0]})
        else:
            origin = _submodule(located[1], name, search.entries) or (_editable_module(name, search.editable) or (None,))[0]
            found.append({"name": name, "origin": origin})
    return found


def torch_build(origin):
    """torch/version.py next to torch/__init__.py, read as text: never import torch."""
    if not origin:
        return None
    path = os.path.join(os.path.dirname(origin), "version.py")
    if not os.path.isfile(path):
        return None
    # a set, a number or a None is not a version: JSON must stay writable
    values = {k: v for k, v in assigned_literals(path).items() if isinstance(v, str)}
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
    # os.uname(), where there is one, is what platform reads: platform before 3.9 runs `uname -p` found on PATH
    uname = os.uname() if hasattr(os, "uname") else None
    return {
        "implementation_name": implementation.name,
        "implementation_version": version,
        "os_name": os.name,
        "platform_machine": uname.machine if uname else platform.machine(),
        "platform_release": uname.release if uname else platform.release(),
        "platform_system": uname.sysname if uname else platform.system(),
        "platform_version": uname.version if uname else platform.version(),
        "python_full_version": platform.python_version(),
        "platform_python_implementation": platform.python_implementation(),
        "python_version": ".".join(platform.python_version_tuple()[:2]),
        "sys_platform": sys.platform,
    }


def main():
    search = SearchPath(site_dirs(), sys.argv[2] if len(sys.argv) > 2 else None)  # argv[2]: the user's folder
    found_distributions = distributions(search.entries)
    found_modules = modules(requested_modules(sys.argv), search)
    torch_origin = next((m["origin"] for m in found_modules if m["name"] == "torch"), None)
    report = {
        "executable": sys.executable,
        "version": list(sys.version_info[:3]),
        "implementation": sys.implementation.name,
        "prefix": sys.prefix,
        "base_prefix": sys.base_prefix,
        "site_dirs": search.site_dirs,
        "sys_path": search.entries,
        "pythonpath": os.environ.get("PYTHONPATH", ""),
        "pythonhome": os.environ.get("PYTHONHOME", ""),
        "pth_imports": search.pth_imports,
        "distributions": found_distributions,
        "modules": found_modules,
        "torch": torch_build(torch_origin),
        "markers": markers(),
    }
    sys.stdout.write(json.dumps(report))


if __name__ == "__main__":
    main()
    # The answer is written: the interpreter's teardown (every module it imported, unloaded) would only keep envcheck
    # waiting for the exit, a few ms of doctor's measured start-up. Nothing of the probe's needs cleaning up.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
