"""Runs inside the target interpreter and prints what it finds there as JSON.

Standard library only, Python 3.6 syntax, nothing imported beyond what the interpreter ships: a broken environment
must still be described. Nothing of the target's runs: envcheck starts it isolated (`python -I -S`: no site, so no
.pth file, sitecustomize or usercustomize; no PYTHON* variable applied; no working directory on the path), and the
search path the target would have is computed from data, as site.py builds it (search_path.py). sys.path itself
is never changed, so everything this script imports comes from the standard library. Modules are located with
PathFinder over the computed path (find_spec runs no module), distributions are read from their .dist-info folders,
torch's version.py is read as text, and so are the numbers of torch's own sources the profile asks for (the line
`NAME = <integer>` of a file in torch's package folder: torch_values). Import lines of .pth files are reported, never run; the MAPPING of a setuptools
editable finder that one would install is read as a literal.
"""

import json
import os
import platform
import re
import sys
from importlib.machinery import PathFinder, all_suffixes

try:  # imported as envcheck.inside.probe by envcheck's own process (tests)
    from .search_path import SearchPath, assigned_literals, site_dirs, spec_origin
except ImportError:  # run as `python -I -S -c SOURCE`: SOURCE is search_path.py's text, then this file's
    pass  # (gather/interpreter.py, probe_source), so these names are defined already

# What to look for comes from the profile: the first argument, or, when that is "-", the first line of stdin, read
# after the slow part (the distributions), so the caller can start the probe before it has read its profile. It is a
# JSON list of modules to locate, or an object {"modules": [...], "torch_values": [[FILE, NAME], ...]} that also
# names numbers to read in torch's sources. torch is always looked for.
MODULES = ("torch",)
SOURCE_LIMIT = 8 << 20  # bytes of a torch source file read for a number (select_algorithm.py of 2.15.0: 259 KB)


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


def requested(argv):
    """(modules, torch values) the caller asked for (argv[1], or stdin's first line for "-"): torch plus the module
    names given, and the (file, name) pairs to read in torch's sources. Anything else in the request is ignored."""
    given = []
    if len(argv) > 1:
        try:
            given = json.loads(sys.stdin.readline() if argv[1] == "-" else argv[1])
        except ValueError:
            given = []
    if isinstance(given, dict):
        names, pairs = given.get("modules"), given.get("torch_values")
    else:
        names, pairs = given, []
    modules = list(MODULES)
    modules += [n for n in (names if isinstance(names, list) else []) if isinstance(n, str) and n not in modules]
    values = [(p[0], p[1]) for p in (pairs if isinstance(pairs, list) else [])
              if isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)]
    return modules, values


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


def _safe_file(file):
    """A file named relative to torch's folder, of plain names: nothing above it, nothing absolute."""
    parts = file.split("/")
    return file.endswith(".py") and all(p and p not in (".", "..") and re.match(r"^[A-Za-z0-9_.-]+$", p) for p in parts)


def torch_value(folder, file, name):
    """The number `name` is assigned on one line of torch's `file` (`NAME = 8`, `NAME: int = 8`, a comment after it),
    read as text from at most SOURCE_LIMIT bytes of a regular file: {file, name, value, line}, or {file, name, why}."""
    found = {"file": file, "name": name}
    path = os.path.join(folder, *file.split("/"))
    if not _safe_file(file) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
        found["why"] = "not a file and name envcheck reads"
        return found
    if not os.path.isfile(path):
        found["why"] = "torch has no %s" % file
        return found
    try:
        with open(path, "rb") as handle:
            data = handle.read(SOURCE_LIMIT + 1)
    except OSError as exc:
        found["why"] = "%s could not be read: %s" % (file, exc.strerror or exc)
        return found
    if len(data) > SOURCE_LIMIT:
        found["why"] = "%s is larger than %d MiB: not read" % (file, SOURCE_LIMIT >> 20)
        return found
    pattern = re.compile(r"[ \t]*" + name + r"[ \t]*(?::[ \t]*int[ \t]*)?=[ \t]*([0-9]+)[ \t\r]*(?:#.*)?$")
    text = data.decode("utf-8", "replace")
    lines = {}
    at = text.find(name)
    while at >= 0:  # only the lines that name it are matched: the file is large
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        match = pattern.match(text, start, len(text) if end < 0 else end)
        if match:
            lines.setdefault(int(match.group(1)), text.count("\n", 0, start) + 1)
        at = text.find(name, at + len(name))
    if not lines:
        found["why"] = "no line of %s assigns %s a number" % (file, name)
    elif len(lines) > 1:
        found["why"] = "%s assigns %s %d different numbers (lines %s)" % (
            file, name, len(lines), ", ".join(str(n) for n in sorted(lines.values())))
    else:
        ((found["value"], found["line"]),) = lines.items()
    return found


def torch_values(origin, pairs):
    """Each (file, name) asked, read in the folder of torch's __init__.py (torch_value); none without torch."""
    if not origin or not pairs:
        return []
    folder = os.path.dirname(origin)
    return [torch_value(folder, file, name) for file, name in pairs]


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
    names, values = requested(sys.argv)
    found_modules = modules(names, search)
    torch_origin = next((m["origin"] for m in found_modules if m["name"] == "torch"), None)
    build = torch_build(torch_origin)
    if build is not None:
        build["values"] = torch_values(torch_origin, values)
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
        "torch": build,
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
