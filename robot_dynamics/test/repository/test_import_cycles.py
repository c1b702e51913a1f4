"""No import cycle between the package's modules: the layers import one way.

Every ``import`` and ``from ... import`` of every module of the package counts, wherever it
stands (module level, inside a function, under ``if TYPE_CHECKING:``), relative ones resolved
against the module's package. ``from . import x`` is an import of the submodule ``x`` when the
package has one, else of the package itself (its ``__init__``). A cycle is a strongly connected
set of modules of the import graph (Tarjan): two modules that import each other, or a longer
circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import robot_dynamics

PACKAGE = Path(robot_dynamics.__file__).resolve().parent

#: Cycles still present, each with the work that removes it; the test fails when one is gone so
#: that its entry goes too.
KNOWN: dict[frozenset[str], str] = {}


def _modules(package: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package's ``__init__``) of every module under ``package``."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        out[".".join(parts)] = (path, is_package)
    return out


def _owner(name: str, modules: dict[str, tuple[Path, bool]]) -> str | None:
    """The module of the package that ``name`` (a dotted module name) is or lies in, or None."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules of the package it imports (itself left out)."""
    modules = _modules(package)
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        here = name.split(".") if is_package else name.split(".")[:-1]
        found: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                found.update(_owner(alias.name, modules) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = here[: len(here) - node.level + 1] if node.level else []
                source = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    sub = f"{source}.{alias.name}"
                    found.add(sub if sub in modules else _owner(source, modules))
        graph[name] = {m for m in found if m is not None and m != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected sets of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
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
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.add(member)
                    if member == node:
                        break
                if len(members) > 1:
                    out.append(frozenset(members))
    return out


def test_the_graph_sees_every_kind_of_import(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .a import f\n")
    (pkg / "a.py").write_text("def f():\n    from .sub import b\n    return b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..c import g\n")
    (pkg / "c.py").write_text("import pkg.sub.b\nfrom . import a\nfrom pkg import d\n")
    (pkg / "d.py").write_text("import os\nfrom .. import nothing_outside\n")
    graph = import_graph(pkg)
    assert graph == {
        "pkg": {"pkg.a"},
        "pkg.a": {"pkg.sub.b"},
        "pkg.sub": set(),
        "pkg.sub.b": {"pkg.c"},
        "pkg.c": {"pkg.sub.b", "pkg.a", "pkg.d"},
        "pkg.d": set(),
    }
    assert cycles(graph) == [frozenset({"pkg.a", "pkg.sub.b", "pkg.c"})]
    assert sorted(map(sorted, cycles({"x": {"y"}, "y": {"z"}, "z": {"x"}, "w": {"x"}}))) == [["x", "y", "z"]]


def test_no_two_modules_import_each_other() -> None:
    graph = import_graph()
    assert len(graph) > 100 and "robot_dynamics.closedchain.general" in graph
    found = cycles(graph)
    new = [sorted(c) for c in found if c not in KNOWN]
    assert not new, f"import cycles between modules (move the shared piece into a module both import): {new}"
    gone = [sorted(c) for c in KNOWN if c not in found]
    assert not gone, f"these cycles are gone: remove them from KNOWN: {gone}"
