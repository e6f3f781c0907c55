"""House rules read from the source with :mod:`ast` (issue 32): no library function takes more than 12
parameters (``self``/``cls`` not counted).

Settings that travel together are one value (``xleval.stats.Resampling``, ``xleval.meta.MetaStatistics``,
``xleval.decision.Procedure``, ...; docs/design.md, "Options are values"), as mt-metrics-eval's ``Task`` carries a
task's settings, instead of the same keywords threaded through a dozen functions. Functions under
``src/xleval/cli/`` are exempt: a click command takes one parameter per option.

:data:`KNOWN_PENDING` lists the functions still over the bound, each with who removes it; the list only shrinks:
an entry that is no longer over the bound fails the test until it is deleted here.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src" / "xleval"
MAX_PARAMETERS = 12

#: (module path under src/xleval, qualified name) -> why it is still over the bound
KNOWN_PENDING: dict[tuple[str, str], str] = {}


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    args = node.args
    count = len(args.posonlyargs) + len(args.args) + len(args.kwonlyargs)
    first = (args.posonlyargs + args.args)[:1]
    return count - (1 if first and first[0].arg in ("self", "cls") else 0)


def _functions(tree: ast.AST, prefix: str = ""):
    """Every function and method with its qualified name (``Class.method``, ``outer.inner``)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield f"{prefix}{node.name}", node
            yield from _functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")
        else:
            yield from _functions(node, prefix)


def over_the_bound() -> dict[tuple[str, str], int]:
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT)
        if relative.parts[0] == "cli":
            continue
        for name, node in _functions(ast.parse(path.read_text(encoding="utf-8"))):
            count = _parameters(node)
            if count > MAX_PARAMETERS:
                found[(relative.as_posix(), name)] = count
    return found


def test_the_count_reads_methods_without_self_and_every_kind_of_parameter():
    tree = ast.parse("class A:\n    def m(self, a, /, b, *args, c, d=1, **kw): ...\n"
                     "    @classmethod\n    def k(cls, a): ...\n"
                     "def f(a, b, *, c): ...\n")
    counts = {name: _parameters(node) for name, node in _functions(tree)}
    assert counts == {"A.m": 4, "A.k": 1, "f": 3}  # *args and **kw are not counted, as the measure


def test_no_library_function_takes_more_than_12_parameters():
    found = over_the_bound()
    new = {k: v for k, v in found.items() if k not in KNOWN_PENDING}
    assert not new, ("functions over 12 parameters: group the settings that travel together into a frozen "
                     f"option object (docs/design.md, 'Options are values'): {new}")


def test_the_pending_list_only_shrinks():
    gone = [k for k in KNOWN_PENDING if k not in over_the_bound()]
    assert not gone, f"no longer over the bound: delete {gone} from KNOWN_PENDING"
