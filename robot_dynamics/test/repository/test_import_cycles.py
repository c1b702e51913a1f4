"""No import cycle between the package's modules: the layers import one way.

Every ``import`` and ``from ... import`` of every module of the package counts, wherever it
stands (module level, inside a function, under ``if TYPE_CHECKING:``), relative ones resolved
against the module's package. ``from . import x`` is an import of the submodule ``x`` when the
package has one, else of the package itself (its ``__init__``). A cycle is a strongly connected
set of modules of the import graph (Tarjan): two modules that import each other, or a longer
circle.
"""

from __future__ import annotations

from pathlib import Path

from import_graph import cycles, import_graph


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
    assert not found, ("import cycles between modules (move the shared piece into a module both import): "
                       f"{[sorted(c) for c in found]}")
