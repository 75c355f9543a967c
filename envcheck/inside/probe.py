"""Runs inside the target interpreter and prints what it finds there as JSON.

Standard library only, Python 3.6 syntax, nothing imported beyond what the interpreter ships: a broken environment
must still be described. Nothing of the target's runs: envcheck starts it isolated (`python -I -S`: no site, so no
.pth file, sitecustomize or usercustomize; no PYTHON* variable applied; no working directory on the path), and the
search path the target would have is computed here from data, as site.py builds it (SearchPath). sys.path itself
is never changed, so everything this script imports comes from the standard library. Modules are located with
PathFinder over the computed path (find_spec runs no module), distributions are read from their .dist-info folders,
torch's version.py is read as text. Import lines of .pth files are reported, never run; the MAPPING of a setuptools
editable finder that one would install is read as a literal.
"""

import ast
import json
import locale
import os
import platform
import site
import sys
from importlib.machinery import PathFinder, all_suffixes

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


# The search path: site.main's work, done from data.

_PTH_LIMIT = 1 << 20  # bytes of a .pth file read; a larger one is not a list of folders


def _venv():
    """(prefix, whether it sees the system site-packages) of the virtual environment that site.venv() finds from
    sys.executable's pyvenv.cfg, or None. A pyvenv.cfg without `include-system-site-packages` sees them, as in site."""
    bin_dir = os.path.dirname(os.path.abspath(sys.executable))
    prefix = os.path.dirname(bin_dir)
    for config in (os.path.join(bin_dir, "pyvenv.cfg"), os.path.join(prefix, "pyvenv.cfg")):
        if not os.path.isfile(config):
            continue
        system_site = "true"
        with open(config, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, equals, value = line.partition("=")
                if equals and key.strip().lower() == "include-system-site-packages":
                    system_site = value.strip().lower()
        return prefix, system_site == "true"
    return None


def _user_site(venv):
    """The user site-packages folder site.main() adds, or None: not in a venv that hides the system's, not with
    PYTHONNOUSERSITE set (read as text: -I ignores it), not where the uid or gid is not the effective one."""
    if venv is not None and not venv[1]:
        return None
    if os.environ.get("PYTHONNOUSERSITE"):
        return None
    if hasattr(os, "getuid") and (os.geteuid() != os.getuid() or os.getegid() != os.getgid()):
        return None
    return site.getusersitepackages()


def _pth_lines(path):
    """A .pth file's lines, decoded as site.py does (UTF-8, else the locale's encoding); nothing for a file that is
    not a regular one (a FIFO would hang) or cannot be read."""
    if not os.path.isfile(path):
        return []
    try:
        with open(path, "rb") as handle:
            data = handle.read(_PTH_LIMIT)
    except OSError:
        return []
    try:
        return data.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError:
        return data.decode(locale.getpreferredencoding(False), "replace").splitlines()


def _assigned_literals(path):
    """The top-level `NAME = <literal>` assignments of a Python file, read with ast and never run."""
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return {}
    values = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target, value = node.target.id, node.value
        else:
            continue
        try:
            values[target] = ast.literal_eval(value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
    return values


def site_dirs():
    """The site folders site.main() adds, in its order and as often as it does: a venv's own, the user's, the
    system's (in a venv, the system's list names the venv's own again, and site reads their .pth files twice). Their
    names come from site.getsitepackages, the interpreter's own rule (Debian's dist-packages included). sys.prefix
    moves to the venv first, as site.venv() moves it: Debian's rule asks whether this is a venv, and the report
    says its prefix."""
    venv = _venv()
    own = []
    if venv is not None:
        sys.prefix = sys.exec_prefix = venv[0]
        own = site.getsitepackages([venv[0]])
    user = _user_site(venv)
    system = [sys.prefix] + ([sys.base_prefix, sys.base_exec_prefix] if venv is None or venv[1] else [])
    return own + ([user] if user else []) + site.getsitepackages(_unique(system))


class SearchPath:
    """sys.path as site.main() would leave it in the target, built without running anything of the target's.

    In site's order: PYTHONPATH (read as text), the interpreter's own folders, then each site folder that exists,
    followed by the path lines of its .pth files in sorted order (relative to the folder; comments, blank lines and
    folders that do not exist skipped). An import line is recorded in `pth_imports`, never run: where it only puts a
    folder on sys.path, that is read as data and applied (_apply_path_changes); where it is the one of a setuptools
    editable install, the finder's MAPPING (module -> folder) is read from its file into `editable`."""

    def __init__(self, folders):
        self.site_dirs = _unique(folders)
        self.entries = []
        self.pth_imports = []
        self.editable = []
        self._known = set()
        self._read = set()
        text = os.environ.get("PYTHONPATH", "")
        for entry in (text.split(os.pathsep) if text else []) + sys.path:
            self._add(entry)
        for folder in folders:
            if os.path.isdir(folder):
                self._add_site_dir(folder)

    def _add(self, entry):
        entry = os.path.abspath(entry)
        key = os.path.normcase(entry)
        if key not in self._known:
            self._known.add(key)
            self.entries.append(entry)

    def _add_site_dir(self, folder):
        self._add(folder)
        try:
            names = os.listdir(folder)
        except OSError:
            return
        hidden = sys.version_info >= (3, 13)  # 3.13 skips .pth files whose name starts with a dot
        for name in sorted(n for n in names if n.endswith(".pth") and not (hidden and n.startswith("."))):
            pth = os.path.join(folder, name)
            for line in _pth_lines(pth):
                if line.startswith("#") or not line.strip():
                    continue
                if line.startswith(("import ", "import\t")):
                    if not self._import_line(pth, folder, line):
                        break  # it would fail: site ignores the rest of the file
                    continue
                try:
                    entry = os.path.join(folder, line.rstrip())
                    if os.path.exists(entry):
                        self._add(entry)
                except ValueError:  # a NUL byte (before 3.8 exists() raises): site ignores the rest of the file
                    break

    def _import_line(self, pth, folder, line):
        """Record an import line (once, though site runs it each time it reads the file) and apply what it does to
        sys.path, read as data. False where it would fail on an import: site then ignores the rest of the file.

        Only a line made of imports and `sys.path.insert(N, PATH)` / `sys.path.append(PATH)` is applied, where PATH
        is built from text, `sitedir`, os.path.join/dirname/abspath and `M.__path__[0]` or `M.__file__` of a module
        the line imports (located, not imported). nvidia-cutlass-dsl 4.6 and later put their `cutlass` first so:
        `import sys, os, nvidia_cutlass_dsl; sys.path.insert(0, os.path.join(nvidia_cutlass_dsl.__path__[0], ...))`.
        Any other line changes nothing here: what it would do is unknown, and it stays reported."""
        try:
            changes = self._path_changes(ast.parse(line.strip()), folder)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            changes = None
        for index, path in changes or ():  # site's exec() changes sys.path directly: no folder check, no known paths
            if index is None:
                self.entries.append(path)
            else:
                self.entries.insert(index, path)
        if (pth, line) not in self._read:
            self._read.add((pth, line))
            self.pth_imports.append({"file": pth, "line": line.strip(), "added": [p for _, p in changes or ()]})
            mapping = self._editable_mapping(line)
            if mapping:
                self.editable.append(mapping)
        return changes is not False

    def _path_changes(self, tree, folder):
        """[(index, or None for append, path)] of a parsed import line; None where it does anything else, False
        where one of its imports would fail."""
        imported, changes = {}, []
        for statement in tree.body:
            if isinstance(statement, ast.Import):
                if not all(self._importable(a.name.split(".")[0]) for a in statement.names):
                    return False
                # `import a.b` binds a; `import a.b as c` binds c to a.b
                imported.update((a.asname, a.name) if a.asname else (a.name.split(".")[0],) * 2 for a in statement.names)
                continue
            call = statement.value if isinstance(statement, ast.Expr) else None
            method = _dotted(call.func) if isinstance(call, ast.Call) else None
            if method == "sys.path.insert" and len(call.args) == 2 and not call.keywords:
                index, path = _literal(call.args[0]), self._path_value(call.args[1], folder, imported)
                if not isinstance(index, int) or isinstance(index, bool):
                    return None
            elif method == "sys.path.append" and len(call.args) == 1 and not call.keywords:
                index, path = None, self._path_value(call.args[0], folder, imported)
            else:
                return None
            if path is None:
                return None
            changes.append((index, path))
        return changes

    def _path_value(self, node, folder, imported):
        """The text a path expression of an import line stands for, or None where it is not read as data."""
        text = _literal(node)
        if isinstance(text, str):
            return text
        if isinstance(node, ast.Name) and node.id == "sitedir":  # the folder, in site's frame where the line runs
            return folder
        if isinstance(node, ast.Call) and not node.keywords:
            function = {"os.path.join": os.path.join, "os.path.dirname": os.path.dirname,
                        "os.path.abspath": os.path.abspath}.get(_dotted(node.func))
            args = [self._path_value(a, folder, imported) for a in node.args]
            if function is None or not args or None in args:
                return None
            return function(*args)
        if isinstance(node, ast.Subscript) and _dotted(node.value).endswith(".__path__"):
            index = node.slice.value if type(node.slice).__name__ == "Index" else node.slice  # ast.Index before 3.9
            located = self._imported_module(_dotted(node.value)[:-len(".__path__")], imported)
            return located[1][0] if located and located[1] and _literal(index) == 0 else None
        if isinstance(node, ast.Attribute) and node.attr == "__file__":
            located = self._imported_module(_dotted(node.value), imported)
            return located[0] if located else None
        return None

    def _importable(self, name):
        return name in sys.builtin_module_names or PathFinder.find_spec(name, list(self.entries)) is not None

    def _imported_module(self, name, imported):
        """(origin, package folders) of a module an import line imports, located on the path as it is now."""
        if name not in imported:
            return None
        spec = PathFinder.find_spec(imported[name], list(self.entries))
        return (_origin(spec), list(spec.submodule_search_locations or [])) if spec is not None else None

    def _editable_mapping(self, line):
        """module -> folder of the setuptools editable finder an import line would install
        (`import __editable___NAME_finder; __editable___NAME_finder.install()`), from the finder's MAPPING literal;
        {} for any other line."""
        words = line.replace(";", " ").split()
        name = words[1] if len(words) > 1 else ""
        if not (name.startswith("__editable___") and name.endswith("_finder")):
            return {}
        spec = PathFinder.find_spec(name, list(self.entries))  # where that import would find the finder's file
        if spec is None or not (spec.origin or "").endswith(".py"):
            return {}
        mapping = _assigned_literals(spec.origin).get("MAPPING")
        if not isinstance(mapping, dict):
            return {}
        return {k: v for k, v in mapping.items() if isinstance(k, str) and isinstance(v, str)}


def _unique(items):
    return list(dict.fromkeys(items))


def _literal(node):
    """A literal's value (a string, a number), or None."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _dotted(node):
    """`a.b.c` for a chain of names and attributes, "" for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id] + parts[::-1]) if isinstance(node, ast.Name) else ""


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


def _origin(spec):
    locations = list(spec.submodule_search_locations or [])
    return spec.origin if spec.origin not in (None, "namespace") else (locations[0] if locations else None)


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
        return _origin(spec), list(spec.submodule_search_locations or [])
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
    values = {k: v for k, v in _assigned_literals(path).items() if isinstance(v, str)}
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
    search = SearchPath(site_dirs())
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
