"""What of ROS 2 is there, asked without raising: tests that need a component skip in a test
function, never while their module is imported (launch_testing's pytest plugin imports every
module of the folder, and under pytest 8 a skip raised at import skips the whole folder).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence


def missing_ros(modules: Sequence[str] = (), packages: Sequence[str] = ()) -> str:
    """The first missing Python module or ament package, as a skip reason ("" when all are there).

    A missing module reads "<name> is not installed"; a missing ament package (found through
    the ament index, as ``ros2 run`` finds it) "<name> is not built in this ROS 2 (no C++ stack)".
    """
    for name in modules:
        if importlib.util.find_spec(name) is None:
            if name in ("rclpy", "launch_testing", "launch_ros"):
                return f"{name} is not installed (ROS 2 is not sourced)"
            return f"{name} is not built in this ROS 2 (no C++ stack)"
    if packages:
        from ament_index_python.packages import PackageNotFoundError, get_package_prefix

        for name in packages:
            try:
                get_package_prefix(name)
            except PackageNotFoundError:
                return f"{name} is not built in this ROS 2 (no C++ stack)"
    return ""


def executable(package: str, name: str) -> str:
    """Path of an ament package's executable (``lib/<package>/<name>``), as ``ros2 run`` runs it."""
    import os

    from ament_index_python.packages import get_package_prefix

    return os.path.join(get_package_prefix(package), "lib", package, name)
