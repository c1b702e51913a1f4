"""Files of the repository around the package (README.md, .github/): found by walking up.

The tests run from a clone (``robot_dynamics/test`` two levels below the repository root) and
from a ROS workspace where the clone sits in ``src/`` under any name; either way the repository
root is the nearest folder above the package that holds both packages, ``robot_dynamics/`` and
``robot_dynamics_interfaces/``. An installed package without its repository has no such
folder: a test that reads these files then skips, naming the file. Inside the repository a
missing file is a failure, never a skip.
"""

from __future__ import annotations

from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1]
PACKAGES = ("robot_dynamics", "robot_dynamics_interfaces")


def repository_root(start: Path = PACKAGE) -> Path | None:
    """The nearest folder above ``start`` that holds both packages (their package.xml), or None."""
    for folder in start.parents:
        if all((folder / name / "package.xml").is_file() for name in PACKAGES):
            return folder
    return None


def repository_path(*parts: str) -> Path | None:
    """The path of a repository file, or None without a repository (for module-level use)."""
    root = repository_root()
    return None if root is None else root.joinpath(*parts)


def repository_file(*parts: str) -> Path:
    """The repository file ``parts``, in a test: skips without a repository, fails if it lacks the file."""
    name = "/".join(parts)
    path = repository_path(*parts)
    if path is None:
        pytest.skip(f"{name}: no repository around {PACKAGE} (the package without its repository)")
    assert path.is_file(), f"the repository at {path.parents[len(parts) - 1]} has no {name}"
    return path
