"""Bundled robots: ``rd.list_robots()`` and ``rd.load_robot(name)``.

The data files live in the ament package's ``urdf/`` and ``config/`` folders. They are found
in the source tree (editable installs, tests), in ``<prefix>/share/robot_dynamics`` (pip and
colcon installs), or through the ament index when ROS 2 is sourced.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

from ..errors import ModelError, UnknownNameError
from .robot_model import RobotModel

__all__ = ["share_directory", "list_robots", "robot_files", "load_robot", "DEFAULT_ROBOT"]

#: The robot the CLI uses when none is named.
DEFAULT_ROBOT = "puma560"


def _candidates() -> list[Path]:
    here = Path(__file__).resolve()
    dirs = [here.parents[2]]  # source tree: robot_dynamics/ (package.xml beside urdf/)
    for prefix in {sys.prefix, sys.base_prefix, os.environ.get("VIRTUAL_ENV", sys.prefix)}:
        dirs.append(Path(prefix) / "share" / "robot_dynamics")
    # a --user or --prefix install: data files sit under the prefix of the scheme in use
    dirs.append(Path(sysconfig.get_path("data")) / "share" / "robot_dynamics")
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if prefix:
            dirs.append(Path(prefix) / "share" / "robot_dynamics")
    return dirs


def share_directory() -> Path:
    """The folder that holds ``urdf/`` and ``config/`` of the bundled robots."""
    for d in _candidates():
        if (d / "urdf").is_dir() and any((d / "urdf").glob("*.urdf")):
            return d
    raise ModelError(
        "The bundled robot files (urdf/, config/) were not found; looked in: "
        + ", ".join(str(d) for d in _candidates())
    )


def list_robots() -> list[str]:
    """Names of the bundled robots (``urdf/<name>.urdf``), sorted."""
    return sorted(p.stem for p in (share_directory() / "urdf").glob("*.urdf"))


def robot_files(name: str) -> tuple[Path, Path | None]:
    """(URDF path, drive-train YAML path or None) of a bundled robot."""
    robots = list_robots()
    if name not in robots:
        raise UnknownNameError("robot", name, robots)
    share = share_directory()
    sidecar = share / "config" / f"{name}_drivetrain.yaml"
    return share / "urdf" / f"{name}.urdf", sidecar if sidecar.is_file() else None


def load_robot(name: str = DEFAULT_ROBOT) -> RobotModel:
    """Load a bundled robot with its drive-train YAML (friction, rotor inertia) when it has one."""
    from .urdf import load_urdf

    urdf, sidecar = robot_files(name)
    return load_urdf(urdf, drivetrain=sidecar)
