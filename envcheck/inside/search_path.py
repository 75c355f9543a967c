"""The search path a target interpreter would have, computed from data: for the probe (probe.py), which runs
isolated (`python -I -S`), so that site.py, .pth files and sitecustomize never run.

site.main's work, done by reading files: the site folders in site's order (a venv's own, the user's, the system's),
PYTHONPATH read as text, the path lines of each .pth file, and the import lines of .pth files recorded, never run
(where one only puts a folder on the path, or installs a setuptools editable finder, that is read as data).

Standard library only, Python 3.6 syntax. gather/interpreter.py runs this file's text and then probe.py's as one
source (`python -I -S -c SOURCE`); envcheck's own process imports it as envcheck.inside.search_path (tests).
"""

import ast
import locale
import os
import site
import sys
from importlib.machinery import PathFinder

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


def assigned_literals(path):
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

    def __init__(self, folders, cwd=None):
        """cwd: the folder the target would start in (the user's), which a relative PYTHONPATH entry is taken from;
        the probe itself runs in an empty folder of its own. Default: this process's."""
        self.cwd = cwd or os.getcwd()
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
        entry = os.path.normpath(os.path.join(self.cwd, entry))
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
        return (spec_origin(spec), list(spec.submodule_search_locations or [])) if spec is not None else None

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
        mapping = assigned_literals(spec.origin).get("MAPPING")
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


def spec_origin(spec):
    """Where a module spec loads from: its file, or the first folder of a namespace package."""
    locations = list(spec.submodule_search_locations or [])
    return spec.origin if spec.origin not in (None, "namespace") else (locations[0] if locations else None)
