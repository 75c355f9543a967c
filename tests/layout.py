#!/usr/bin/env python3
"""The import graph of envcheck/, read from the code, and the rules of its layout (tests/test_layout.py runs them on
every run of the suite): no import cycle, no module over 400 lines (300 in envcheck/profile/), every import going to
a lower floor or staying in its room, every module on a declared floor, nothing but the standard library at the top
of envcheck/inside/.

    python tests/layout.py [--repo DIR] [--arrows] [--collapse] [--json]

--repo DIR   the repository root holding envcheck/ (default: the one this file is in)
--arrows     also print every arrow (importer -> imported, kind, line)
--collapse   also print the graph with every subpackage as one node
--json       the whole result as JSON instead of text

Every import is an arrow, whatever its place: at module level ("top"), inside a function ("lazy"), under
`if TYPE_CHECKING:` ("typing"), and importlib.resources.files("envcheck.x") / importlib.import_module("envcheck.x")
with a constant name ("resource": it imports the package named). `from .pkg import name` points at pkg/name.py when
that module exists, else at pkg (its __init__).

The checks (exit 1 when one fails):
  cycles      no strongly connected component of more than one module, no module importing itself
  size        no module over 400 lines; none over 300 in envcheck/profile/
  layers      every arrow goes to a strictly lower floor, or stays inside its room (its subpackage; in
              envcheck/commands/ every module is a room of its own, so no command imports another)
  placed      every module stands on a declared floor (a new module or folder is given its floor in FLOORS first)
  inside      envcheck/inside/ imports nothing of envcheck outside it, and only the standard library at module level
Standard library only; Python 3.10+. Issue 19's acceptance check (importgraph.py), kept beside the tests it serves.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import json
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

MAX_LINES = 400
MAX_LINES_IN = {"envcheck.profile": 300}  # a room with a tighter cap (issue 19: profile/ under 300 lines a module)

# --------------------------------------------------------------------------------------------------------------
# The declared layer order, lowest first. A module may import only from a lower floor, or from its own room.
# Patterns are fnmatch patterns over dotted module names ("envcheck.gather.*" is every module of gather/).

FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("inside", ("envcheck.inside", "envcheck.inside.*")),  # runs in the target interpreter: standard library only
    # words: counts and wrapping for every renderer and command; uvenv: how uv made envcheck's own environment
    ("basics", ("envcheck", "envcheck.redact", "envcheck.proc", "envcheck.atomic", "envcheck.shell", "envcheck.terminal",
                "envcheck.gitsettings", "envcheck.words", "envcheck.uvenv")),
    ("pip", ("envcheck.piprun",)),  # how every pip starts: in a folder of its own (proc), a secret in a file (redact)
    ("errors", ("envcheck.errors",)),
    ("user-data", ("envcheck.userdata",)),  # TOML and JSON into values envcheck can compute with, or a named error
    ("user-files", ("envcheck.userfile",)),  # reading and writing the files a user names (paths reads its own with it)
    ("edges", ("envcheck.paths", "envcheck.gitsafe")),
    ("model", ("envcheck.model", "envcheck.model.*")),
    ("profile", ("envcheck.profile", "envcheck.profile.*")),
    ("facts-verdicts", ("envcheck.gather", "envcheck.gather.*", "envcheck.judge", "envcheck.judge.*")),
    ("shared", ("envcheck.diagnose", "envcheck.runner", "envcheck.cutlass_fetch", "envcheck.causes",
                "envcheck.causes.*", "envcheck.lock", "envcheck.lock.*")),
    # own: envcheck itself as installed (its version line for the CLI, its own dependencies for diff), read from
    # gather and lock
    ("domain", ("envcheck.smoke", "envcheck.smoke.*", "envcheck.bench", "envcheck.bench.*", "envcheck.fix",
                "envcheck.fix.*", "envcheck.bundle", "envcheck.bundle.*", "envcheck.fleet", "envcheck.fleet.*",
                "envcheck.own")),
    # jsonanswer: the top of every command's JSON object (status, exit_code), and the object of a run with no answer
    ("json-answer", ("envcheck.jsonanswer",)),
    ("render", ("envcheck.render", "envcheck.render.*")),
    ("commands", ("envcheck.commands", "envcheck.commands.*")),
    ("cli-values", ("envcheck.optionvalues",)),  # how a command-line value becomes what a command takes
    # what cli.py is made of: the options commands share and their checks, --help's style, how a run ends
    ("cli-parts", ("envcheck.options", "envcheck.helpstyle", "envcheck.endings")),
    ("cli", ("envcheck.cli",)),
    ("main", ("envcheck.__main__",)),
)

@dataclass(frozen=True)
class Arrow:
    importer: str
    imported: str
    kind: str  # top, lazy, typing, resource
    line: int
    names: tuple[str, ...]


# --------------------------------------------------------------------------------------------------------------
# Reading the package


def modules_of(root: Path, package: str) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of the package (its __init__.py as the package's name)."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


class _Collector(ast.NodeVisitor):
    """Every import of one module, with where it stands (module level, a function, a TYPE_CHECKING block)."""

    def __init__(self) -> None:
        self.found: list[tuple[ast.AST, str]] = []
        self._function = 0
        self._typing = 0

    def _kind(self) -> str:
        return "typing" if self._typing else "lazy" if self._function else "top"

    def visit_FunctionDef(self, node: ast.AST) -> None:
        self._function += 1
        self.generic_visit(node)
        self._function -= 1

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        typing_block = (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
        if typing_block:
            self._typing += 1
            for child in node.body:
                self.visit(child)
            self._typing -= 1
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found.append((node, self._kind()))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.found.append((node, self._kind()))

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in ("files", "import_module") and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            self.found.append((node, "resource"))
        self.generic_visit(node)


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The longest known module that name is or lies inside."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def arrows_of(known: dict[str, Path], package: str) -> list[Arrow]:
    arrows: list[Arrow] = []
    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        collector = _Collector()
        collector.visit(tree)
        is_package = path.name == "__init__.py"
        here = module if is_package else module.rpartition(".")[0]
        for node, kind in collector.found:
            targets: list[tuple[str, tuple[str, ...]]] = []
            if isinstance(node, ast.Import):
                targets = [(alias.name, (alias.name,)) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base_parts = here.split(".")
                    if node.level > 1:
                        base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                    base = ".".join(base_parts + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                for alias in node.names:
                    candidate = f"{base}.{alias.name}"
                    targets.append((candidate if candidate in known else base, (alias.name,)))
            else:  # a resource or import_module call naming a package
                targets = [(node.args[0].value, ())]
            for target, names in targets:
                if not (target == package or target.startswith(package + ".")):
                    continue
                resolved = _resolve(target, known)
                if resolved is None:
                    continue
                if kind == "resource" and (resolved == module or resolved == here):
                    continue  # a module reading data files of its own package: no arrow to another module
                arrows.append(Arrow(module, resolved, kind, node.lineno, names))
    merged: dict[tuple[str, str, str, int], Arrow] = {}
    for a in arrows:  # `from x import a, b` on one line: one arrow
        key = (a.importer, a.imported, a.kind, a.line)
        if key in merged:
            merged[key] = Arrow(a.importer, a.imported, a.kind, a.line, merged[key].names + a.names)
        else:
            merged[key] = a
    return sorted(merged.values(), key=lambda a: (a.importer, a.line, a.imported))


def line_counts(known: dict[str, Path]) -> dict[str, int]:
    return {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in known.items()}


# --------------------------------------------------------------------------------------------------------------
# Graph measures


def strongly_connected(nodes: list[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), each sorted, in reverse topological order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def measured_floors(components: list[list[str]], edges: dict[str, set[str]]) -> dict[str, int]:
    """Each module's floor from the code itself: 0 imports nothing of the package, otherwise one above the highest
    floor it imports from (a cycle's members share one floor)."""
    of = {m: i for i, comp in enumerate(components) for m in comp}
    floor_of_component: dict[int, int] = {}
    for i, component in enumerate(components):  # reverse topological: what a component imports comes first
        below = {of[t] for m in component for t in edges.get(m, ()) if of[t] != i}
        floor_of_component[i] = 1 + max((floor_of_component[j] for j in below), default=-1)
    return {m: floor_of_component[of[m]] for m in of}


def declared_floor(module: str) -> tuple[int, str] | None:
    for number, (name, patterns) in enumerate(FLOORS):
        if any(fnmatch.fnmatchcase(module, p) for p in patterns):
            return number, name
    return None


def room(module: str, known: dict[str, Path], package: str) -> str:
    """A subpackage is one room; in commands/ each module is its own; a top-level module is its own room."""
    parts = module.split(".")
    if len(parts) <= 2:
        return module
    sub = ".".join(parts[:2])
    if sub == f"{package}.commands":
        return module
    return sub if sub in known and known[sub].name == "__init__.py" else module


# --------------------------------------------------------------------------------------------------------------


def analyse(repo: Path, package: str = "envcheck") -> dict:
    known = modules_of(repo, package)
    arrows = arrows_of(known, package)
    sizes = line_counts(known)
    edges: dict[str, set[str]] = {m: set() for m in known}
    for a in arrows:
        if a.importer != a.imported:
            edges[a.importer].add(a.imported)
    components = strongly_connected(sorted(known), edges)
    cycles = [c for c in components if len(c) > 1] + [[a.importer] for a in arrows if a.importer == a.imported]
    floors = measured_floors(components, edges)
    cycle_arrows = [a for a in arrows if any(a.importer in c and a.imported in c for c in cycles)]
    over = sorted(
        ((m, n, limit) for m, n in sizes.items()
         for limit in [min([MAX_LINES] + [cap for r, cap in MAX_LINES_IN.items() if m == r or m.startswith(r + ".")])]
         if n > limit),
        key=lambda item: -item[1])
    unplaced = sorted(m for m in known if declared_floor(m) is None)
    against = []
    for a in arrows:
        mine, theirs = declared_floor(a.importer), declared_floor(a.imported)
        if mine is None or theirs is None or a.importer == a.imported:
            continue
        same_room = room(a.importer, known, package) == room(a.imported, known, package)
        if theirs[0] > mine[0] or (theirs[0] == mine[0] and not same_room):
            against.append((a, mine[1], theirs[1]))
    inside_problems = []
    for module, path in known.items():
        place = declared_floor(module)
        if place is None or place[1] != "inside":
            continue
        for a in arrows:
            if a.importer == module and (declared_floor(a.imported) or (0, ""))[1] != "inside":
                inside_problems.append(f"{module}:{a.line} imports {a.imported}")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module != "__future__":
                names = [node.module or ""]
            for name in names:
                if name.split(".")[0] not in sys.stdlib_module_names:
                    inside_problems.append(f"{module}:{node.lineno} imports {name} at module level (not the standard library)")
    by_kind: dict[str, int] = {}
    for a in arrows:
        by_kind[a.kind] = by_kind.get(a.kind, 0) + 1
    return {
        "repo": str(repo),
        "modules": len(known), "lines": sum(sizes.values()), "arrows": len(arrows), "arrows_by_kind": by_kind,
        "cycles": cycles, "cycle_arrows": [asdict(a) for a in cycle_arrows],
        "measured_floors": max(floors.values(), default=-1) + 1,
        "floor_of": dict(sorted(floors.items(), key=lambda kv: (kv[1], kv[0]))),
        "sizes": dict(sorted(sizes.items(), key=lambda kv: -kv[1])), "over": over,
        "unplaced": unplaced,
        "against": [dict(asdict(a), importer_floor=f, imported_floor=g) for a, f, g in against],
        "inside": inside_problems,
        "all_arrows": [asdict(a) for a in arrows],
        "_edges": edges, "_known": known,
    }


def collapsed(result: dict, package: str) -> dict:
    """The graph with every subpackage as one node: the issue's "files and packages" view."""
    known, edges = result["_known"], result["_edges"]

    def node(m: str) -> str:
        parts = m.split(".")
        sub = ".".join(parts[:2])
        return sub if len(parts) >= 2 and sub in known and known[sub].name == "__init__.py" else m

    nodes = sorted({node(m) for m in known})
    grouped: dict[str, set[str]] = {n: set() for n in nodes}
    arrows = set()
    for a in result["all_arrows"]:
        s, t = node(a["importer"]), node(a["imported"])
        if s != t:
            grouped[s].add(t)
            arrows.add((s, t))
    components = strongly_connected(nodes, grouped)
    floors = measured_floors(components, grouped)
    return {"nodes": len(nodes), "arrows": len(arrows), "floors": max(floors.values()) + 1,
            "cycles": [c for c in components if len(c) > 1]}


def text(result: dict, show_arrows: bool, collapse: dict | None) -> str:
    out = [f"envcheck import graph of {result['repo']}",
           f"{result['modules']} modules, {result['lines']} lines, {result['arrows']} arrows "
           f"({', '.join(f'{n} {k}' for k, n in sorted(result['arrows_by_kind'].items()))}), "
           f"{result['measured_floors']} floors measured from the code"]
    if collapse:
        out.append(f"subpackages as one node: {collapse['nodes']} nodes, {collapse['arrows']} arrows, "
                   f"{collapse['floors']} floors, {len(collapse['cycles'])} cycles"
                   + "".join(f"\n  cycle: {' '.join(c)}" for c in collapse["cycles"]))
    out.append("")
    out.append(f"CYCLES: {len(result['cycles'])}")
    for cycle in result["cycles"]:
        out.append(f"  {len(cycle)} modules: {' '.join(cycle)}")
        for a in result["cycle_arrows"]:
            if a["importer"] in cycle and a["imported"] in cycle:
                out.append(f"    {a['importer']}:{a['line']} -> {a['imported']} ({a['kind']}: {', '.join(a['names'])})")
    out.append("")
    out.append(f"MODULES OVER THE LIMIT ({MAX_LINES} lines; {', '.join(f'{r}: {n}' for r, n in MAX_LINES_IN.items())}): "
               f"{len(result['over'])}")
    out += [f"  {n:5d}  {m} (limit {limit})" for m, n, limit in result["over"]]
    out.append("")
    out.append(f"ARROWS AGAINST THE DECLARED LAYER ORDER: {len(result['against'])}")
    out.append("  floors, lowest first: " + " < ".join(name for name, _ in FLOORS))
    for a in result["against"]:
        same = " (same floor, another room)" if a["importer_floor"] == a["imported_floor"] else ""
        out.append(f"  {a['importer']}:{a['line']} [{a['importer_floor']}] -> {a['imported']} [{a['imported_floor']}]"
                   f"{same} ({a['kind']}: {', '.join(a['names']) or 'the package'})")
    out.append("")
    out.append(f"MODULES ON NO DECLARED FLOOR: {len(result['unplaced'])}")
    out += [f"  {m}" for m in result["unplaced"]]
    out.append("")
    out.append(f"INSIDE (target-interpreter code importing beyond the standard library or inside/): {len(result['inside'])}")
    out += [f"  {p}" for p in result["inside"]]
    out.append("")
    out.append("FLOORS MEASURED (0 imports nothing of envcheck):")
    by_floor: dict[int, list[str]] = {}
    for m, f in result["floor_of"].items():
        by_floor.setdefault(f, []).append(m)
    for f in sorted(by_floor):
        out.append(f"  {f:2d}: {' '.join(by_floor[f])}")
    out.append("")
    out.append("SIZES (lines):")
    out += [f"  {n:5d}  {m}" for m, n in result["sizes"].items()]
    if show_arrows:
        out.append("")
        out.append("ARROWS:")
        out += [f"  {a['importer']}:{a['line']} -> {a['imported']} ({a['kind']}: {', '.join(a['names'])})"
                for a in result["all_arrows"]]
    failed = [name for name, bad in (("cycles", result["cycles"]), ("size", result["over"]),
                                      ("layers", result["against"]), ("placed", result["unplaced"]),
                                      ("inside", result["inside"])) if bad]
    out.append("")
    out.append("RESULT: " + ("FAILED: " + ", ".join(failed) if failed else "every check passed"))
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", default=None)
    parser.add_argument("--package", default="envcheck")
    parser.add_argument("--arrows", action="store_true")
    parser.add_argument("--collapse", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    repo = Path(args.repo) if args.repo else Path(__file__).resolve().parent.parent
    if not (repo / args.package / "__init__.py").is_file():
        print(f"--repo {repo}: no {args.package}/__init__.py there", file=sys.stderr)
        return 2
    result = analyse(repo, args.package)
    collapse = collapsed(result, args.package) if args.collapse else None
    failed = any(result[k] for k in ("cycles", "over", "against", "unplaced", "inside"))
    if args.json:
        shown = {k: v for k, v in result.items() if not k.startswith("_")}
        if collapse:
            shown["collapsed"] = collapse
        print(json.dumps(shown, indent=1, default=str))
    else:
        sys.stdout.write(text(result, args.arrows, collapse))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
