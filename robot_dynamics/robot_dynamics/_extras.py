"""Optional dependencies, grouped as the package's extras (from a clone: ``pip install "./robot_dynamics[NAME]"``).

The core, the command line's main job and the ROS nodes need numpy, scipy, PyYAML,
xacro, matplotlib, rosbags and tqdm only. Studies on Dask and the symbolic derivations need
more; a feature that needs an extra that is not installed says which one, instead of failing
on an import deep inside.
"""

from __future__ import annotations

import importlib.util

from .errors import MissingDependencyError

__all__ = ["EXTRAS", "require"]

#: extra -> the importable modules it installs.
EXTRAS: dict[str, tuple[str, ...]] = {
    "studies": ("dask", "distributed", "pyarrow"),
    "symbolic": ("sympy",),
}


def _available(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a module without a spec
        return False


def require(extra: str, feature: str) -> None:
    """Raise :class:`MissingDependencyError` naming ``extra`` when one of its modules is missing.

    Args:
        extra: a key of :data:`EXTRAS`.
        feature: what needs it, in words (``"studies"``, ``"the symbolic gear-train terms"``).
    """
    missing = [m for m in EXTRAS[extra] if not _available(m)]
    if missing:
        raise MissingDependencyError(
            f"{feature}: the '{extra}' extra is not installed (missing {', '.join(missing)}); "
            f"from a clone: pip install \"./robot_dynamics[{extra}]\"")
