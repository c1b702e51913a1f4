"""The library's layers, bottom up (docs/architecture.md): a module imports only from its own
layer and the layers below, wherever the import stands (module level, inside a function, for the
type checker). The package's root (``robot_dynamics/__init__.py``, the public API) sits above the
library: only the ROS nodes and the command line import names from it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from import_graph import PACKAGE, import_graph
from repo_files import repository_file

#: (layer, the package's subpackages and top-level modules in it), bottom up: the table of
#: docs/architecture.md.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("errors", "conventions", "spatial", "_batch", "_extras", "_progress", "_rk4", "testing")),
    ("engine boundary", ("engine",)),
    ("model", ("model",)),
    ("kinematics", ("kinematics",)),
    ("dynamics", ("dynamics",)),
    ("mechanisms, motion and output", ("drivetrain", "trajectory", "control", "observers", "io", "codegen")),
    ("closed loops and closed chains", ("simulation", "closedchain")),
    ("studies", ("identification", "study")),
    ("ROS 2", ("ros",)),
    ("command line", ("commands", "cli")),
]
ROOT_USERS = ("ros", "commands", "cli")  # the units that may import the package's root


def unit(module: str) -> str:
    """The layer unit of a module: its first name below the package ('' for the root)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def level(name: str) -> int:
    """The layer index of a unit (the root: above every layer)."""
    if name == "":
        return len(LAYERS)
    return next(i for i, (_, units) in enumerate(LAYERS) if name in units)


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """'a -> b' for every import of a module by one in a lower layer (the root: by a non-user)."""
    out = []
    for module, imported in sorted(graph.items()):
        here = unit(module)
        for other in sorted(imported):
            there = unit(other)
            if here == "" or here == there:
                continue
            allowed = here in ROOT_USERS if there == "" else level(there) <= level(here)
            if not allowed:
                out.append(f"{module} -> {other}")
    return out


def test_every_unit_of_the_package_is_in_one_layer() -> None:
    units = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
             if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and (p / "__init__.py").exists())}
    listed = [u for _, us in LAYERS for u in us]
    assert len(listed) == len(set(listed)), "a unit listed in two layers"
    assert units == set(listed), f"not in a layer: {sorted(units - set(listed))}; gone: {sorted(set(listed) - units)}"


def test_no_module_imports_from_a_higher_layer() -> None:
    graph = import_graph()
    assert "robot_dynamics.engine.layout" in graph and "robot_dynamics.model.robot_model" in graph
    assert upward_imports(graph) == []


def test_an_upward_import_is_seen(tmp_path: Path) -> None:
    """The check on a made-up graph: the model importing the dynamics, the kinematics the root."""
    graph = {
        "robot_dynamics.model.robot_model": {"robot_dynamics.dynamics.rnea", "robot_dynamics.engine.layout"},
        "robot_dynamics.kinematics": {"robot_dynamics"},
        "robot_dynamics.ros.node": {"robot_dynamics", "robot_dynamics.simulation.core"},
    }
    assert upward_imports(graph) == ["robot_dynamics.kinematics -> robot_dynamics",
                                     "robot_dynamics.model.robot_model -> robot_dynamics.dynamics.rnea"]
    with pytest.raises(StopIteration):
        level("no_such_unit")


def test_the_architecture_page_lists_the_layers_in_this_order() -> None:
    text = repository_file("docs", "architecture.md").read_text(encoding="utf-8")
    at = [text.find(f"| {name} |") for name, _ in LAYERS]
    assert -1 not in at, f"layers missing from the page's table: {[n for (n, _), a in zip(LAYERS, at) if a < 0]}"
    assert at == sorted(at, reverse=True), "the page's table lists the layers top down"
