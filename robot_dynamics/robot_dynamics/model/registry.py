"""Bundled robots: ``rd.list_robots()`` and ``rd.load_robot(name)``.

The data files live in the ament package's ``urdf/`` and ``config/`` folders. setup.py installs
them as data files into ``<data>/share/robot_dynamics``, where ``<data>`` is the install scheme's
data prefix: the venv or ``--prefix`` (``<prefix>/lib/pythonX.Y/site-packages/robot_dynamics``
beside ``<prefix>/share/robot_dynamics``), the user base of ``pip install --user``, the folder of
``pip install --target DIR`` (``DIR/robot_dynamics`` beside ``DIR/share/robot_dynamics``) or a
colcon install tree (``install/robot_dynamics/lib/pythonX.Y/site-packages`` beside
``install/robot_dynamics/share/robot_dynamics``). They are looked for, in this order:

1. in the source tree (the package folder beside ``urdf/``: tests, editable installs);
2. beside the imported package itself, at each install scheme's data prefix relative to the
   folder that holds it (so the copy of the data that came with this copy of the code wins);
3. under the running interpreter's prefixes and the ament index (``AMENT_PREFIX_PATH``).
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
from pathlib import Path

from ..errors import ModelError, UnknownNameError
from .robot_model import RobotModel

__all__ = ["share_directory", "list_robots", "robot_files", "load_robot", "DEFAULT_ROBOT"]

#: The robot the CLI uses when none is named.
DEFAULT_ROBOT = "puma560"


#: The folder of the data files inside a data prefix.
SHARE = Path("share") / "robot_dynamics"


def _package_dir() -> Path:
    """The folder of the imported ``robot_dynamics`` package."""
    return Path(__file__).resolve().parents[1]


@functools.cache
def _levels_to_data() -> tuple[int, ...]:
    """How many folders up from the one that holds the packages (purelib/platlib) each known
    install scheme puts its data prefix: 3 for ``lib/pythonX.Y/site-packages`` (POSIX prefixes,
    venvs, the user base), 2 for ``Lib/site-packages`` (Windows) and ``lib/python`` (--home)."""
    base = str(Path("/").resolve() / "prefix")
    names = ("base", "platbase", "userbase", "installed_base", "installed_platbase")
    levels = set()
    for scheme in sysconfig.get_scheme_names():
        try:
            paths = sysconfig.get_paths(scheme, vars=dict.fromkeys(names, base))
        except (KeyError, ValueError):  # a scheme this platform cannot expand
            continue
        for lib in ("purelib", "platlib"):
            up = Path(os.path.relpath(paths["data"], paths[lib])).parts
            if up and all(part == os.pardir for part in up):
                levels.add(len(up))
    return tuple(sorted(levels))


def _beside_package(package: Path) -> list[Path]:
    """``share/robot_dynamics`` of the install that holds ``package`` (the robot_dynamics folder).

    ``pip install --target DIR`` puts the data files in ``DIR/share`` beside ``DIR/robot_dynamics``;
    every install scheme puts them a fixed number of folders above the one holding the packages.
    """
    site = package.parent
    dirs = [site / SHARE]
    for level in _levels_to_data():
        if level <= len(site.parents):
            dirs.append(site.parents[level - 1] / SHARE)
    return dirs


def _candidates() -> list[Path]:
    package = _package_dir()
    dirs = [package.parent]  # source tree: robot_dynamics/ (package.xml beside urdf/)
    dirs += _beside_package(package)
    for prefix in (sys.prefix, sys.base_prefix, os.environ.get("VIRTUAL_ENV", sys.prefix)):
        dirs.append(Path(prefix) / SHARE)
    # the default scheme's data prefix (a distribution's Python installs into /usr/local)
    dirs.append(Path(sysconfig.get_path("data")) / SHARE)
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if prefix:
            dirs.append(Path(prefix) / SHARE)
    return list(dict.fromkeys(dirs))  # in order, each once


def _first_with_robots(dirs: list[Path]) -> Path | None:
    """The first folder of ``dirs`` with a ``urdf/*.urdf``, or None."""
    for d in dirs:
        if (d / "urdf").is_dir() and any((d / "urdf").glob("*.urdf")):
            return d
    return None


def share_directory() -> Path:
    """The folder that holds ``urdf/`` and ``config/`` of the bundled robots."""
    dirs = _candidates()
    found = _first_with_robots(dirs)
    if found is None:
        raise ModelError(
            "The bundled robot files (urdf/, config/) were not found; looked in: "
            + ", ".join(str(d) for d in dirs)
        )
    return found


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
    """Load a bundled robot with its drive-train YAML (friction, rotor inertia) when it has one.

    Warns:
        ModelWarning: as :func:`~robot_dynamics.model.load_urdf`; the bundled robots declare
            their known issues in their YAML and load without one.
    """
    from .checks import warn_model_issues
    from .urdf import _load_urdf

    urdf, sidecar = robot_files(name)
    model = _load_urdf(urdf, drivetrain=sidecar)
    warn_model_issues(model)
    return model
