"""The import graph of ``src/xleval`` keeps its floors (issue 32, item 8; docs/design.md, "Layers").

The graph is read from the source with :mod:`ast`, every ``import`` and ``from ... import`` counted, also
those inside functions (a lazy import is still an arrow) and under ``TYPE_CHECKING``. Packages sit on the
floors of :data:`FLOORS`, lowest first; a module may import from its own package and from lower floors only:

- no arrow from a package to a higher floor, and none between two packages of one floor (the packages of a
  floor are independent of each other: the analyses do not call one another);
- no circle between packages, and none between modules (``a`` imports ``b`` imports ``a``, through
  functions or not).

``from xleval import __version__`` (or ``from .. import __version__``) reads a constant of the root module;
it is counted as an arrow to the bottom floor, not to the root package (which re-exports the table and sits
on the top floor).

Arrows that the refactor of issue 32 (items 1, 2, 5) removes are listed in :data:`KNOWN_PENDING`, each with
the item that removes it. The list only shrinks: an entry whose arrow is gone fails the test until it is
deleted here.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = SRC / "xleval"

#: the floors, lowest first (docs/design.md, "Layers"). ``exceptions`` and the version constant are the
#: ground; ``_base`` holds what every package shares (grouping, results, seeds, signatures); ``io`` and
#: ``stats`` need nothing else; the table is built on ``io``; metrics score texts (their paired tests
#: draw on ``stats``), ratings turn human judgements into table columns, ``synthetic`` draws data;
#: ``calibration`` (estimators, maps, intervals) sits below ``diagnostics`` (bias, validity, agreement,
#: the out-of-fold comparison), which sits below ``decision`` (which calibration, and how sure); the
#: analyses on top of them are independent of one another; the report renders their results; the demo
#: runs the report; the CLI only parses and renders; the root package and ``__main__`` re-export.
FLOORS: tuple[frozenset[str], ...] = tuple(frozenset(f) for f in (
    {"exceptions", "__version__"},
    {"_base"},
    {"io", "stats"},
    {"table"},
    {"metrics", "ratings", "synthetic"},
    {"calibration"},
    {"diagnostics"},
    {"decision"},
    {"leaderboard", "meta", "fairness", "intrinsic", "audit", "output_checks", "scale", "judges"},
    {"report"},
    {"demo"},
    {"cli"},
    {"xleval", "__main__"},
))

#: (importing module, imported module or package) arrows the lead's refactor of issue 32 removes. Empty it as
#: they go; never add to it.
KNOWN_PENDING: dict[tuple[str, str], str] = {
    # emptied by the decision package (item 1: calibration._fit and diagnostics._decide/_evaluate) and by the
    # report rendering the meta and output-check sections (item 5)
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The xleval modules (or the version constant) one import statement reaches."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "xleval"]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target.split(".")[0] != "xleval":
        return []
    out = []
    for alias in node.names:
        if target == "xleval" and alias.name == "__version__":
            out.append("__version__")
        else:  # `from pkg import submodule` reaches the submodule; `from pkg import name`, the package
            out.append(f"{target}.{alias.name}" if f"{target}.{alias.name}" in MODULES else target)
    return out


def _arrows() -> dict[tuple[str, str], list[int]]:
    """(importer, imported) -> the lines of the import statements."""
    arrows: dict[tuple[str, str], list[int]] = defaultdict(list)
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _targets(module, path.name == "__init__.py", node):
                    if target != module:
                        arrows[(module, target)].append(node.lineno)
    return arrows


ARROWS = _arrows()


def package(module: str) -> str:
    """``xleval.calibration._fit`` -> ``calibration``; ``xleval.table`` -> ``table``; the root -> ``xleval``."""
    parts = module.split(".")
    return parts[1] if parts[0] == "xleval" and len(parts) > 1 else parts[0]


def _pending(importer: str, imported: str) -> str | None:
    for (source, target), why in KNOWN_PENDING.items():
        if importer == source and (imported == target or imported.startswith(target + ".")):
            return why
    return None


def _floor(name: str) -> int:
    return next(i for i, floor in enumerate(FLOORS) if name in floor)


def _where(importer: str, imported: str) -> str:
    lines = ", ".join(map(str, sorted(set(ARROWS[(importer, imported)]))))
    return f"{MODULES[importer].relative_to(SRC.parent)}:{lines} imports {imported}"


def test_every_package_is_on_a_floor():
    packages = {package(m) for m in MODULES} | {"__version__"}
    placed = set().union(*FLOORS)
    assert packages - placed == set(), "put each new package on a floor of FLOORS (and in docs/design.md)"


def test_no_arrow_up_or_across_a_floor():
    wrong = []
    for importer, imported in ARROWS:
        here, there = package(importer), package(imported)
        if here == there or _pending(importer, imported):
            continue
        if _floor(there) >= _floor(here):
            side = "across its floor" if _floor(there) == _floor(here) else "up"
            wrong.append(f"{here} -> {there} ({side}): {_where(importer, imported)}")
    assert not wrong, "\n".join(wrong)


def _circles(nodes: set[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
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
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_circle_between_packages():
    edges: dict[str, set[str]] = defaultdict(set)
    for importer, imported in ARROWS:
        if package(importer) != package(imported) and not _pending(importer, imported):
            edges[package(importer)].add(package(imported))
    assert _circles(set(edges) | {p for e in edges.values() for p in e}, edges) == []


def test_no_circle_between_modules():
    edges: dict[str, set[str]] = defaultdict(set)
    for importer, imported in ARROWS:
        if imported in MODULES and not _pending(importer, imported):
            edges[importer].add(imported)
    assert _circles(set(MODULES), edges) == []


def test_the_allow_list_only_shrinks():
    """An arrow of KNOWN_PENDING that the refactor removed is deleted from the list, so it cannot come back."""
    gone = [f"{source} -> {target}" for source, target in KNOWN_PENDING
            if not any(i == source and (t == target or t.startswith(target + ".")) for i, t in ARROWS)]
    assert not gone, f"these arrows are gone: delete them from KNOWN_PENDING: {gone}"


def test_the_graph_reader_sees_lazy_imports_and_the_version_constant():
    """The reader itself: an import inside a function is an arrow, and ``__version__`` is the ground floor."""
    assert ("xleval.calibration._frame", "xleval._base.signature") in ARROWS  # inside score_signature()
    assert ("xleval.calibration._lgn", "__version__") in ARROWS
    assert ("xleval.calibration._lgn", "xleval") not in ARROWS
    assert package("xleval.table") == "table" and package("xleval") == "xleval"


@pytest.mark.parametrize(("low", "high"), [("table", "calibration"), ("io", "metrics"), ("meta", "leaderboard"),
                                           ("meta", "report"), ("calibration", "diagnostics")])
def test_the_arrows_issue_32_named_are_gone(low, high):
    """Issue 32 found these arrows running back up (or across) the floors: the table's signatures in
    calibration, the readers' metric hint, meta asking the leaderboard for a direction, meta building its
    own report section, calibration calling the decision. (The circles it named inside metrics, calibration
    and audit are :func:`test_no_circle_between_modules`'s.)"""
    arrows = [(i, t) for i, t in ARROWS if package(i) == low and package(t) == high]
    if arrows and all(_pending(i, t) for i, t in arrows):
        pytest.xfail(f"pending (KNOWN_PENDING): {[_where(i, t) for i, t in arrows]}")
    assert not arrows, [_where(i, t) for i, t in arrows]
