"""Frames from tf2_msgs/TFMessage, composed without tf2 (the tests' ROS 2 builds have no tf2_py).

robot_state_publisher publishes one /tf message per sensor_msgs/JointState, every moving
joint's transform stamped with the joint state's stamp, and the fixed joints once on
/tf_static. :class:`TfRecord` keeps both and composes the chain from a base frame to a tip
at one stamp, as 4x4 homogeneous matrices (rotation from the unit quaternion).
"""

from __future__ import annotations

import numpy as np


def transform_matrix(t) -> np.ndarray:
    """geometry_msgs/Transform -> 4x4 (rotation of the normalised quaternion, then translation)."""
    x, y, z, w = t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w
    n = np.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / n, y / n, z / n, w / n
    T = np.eye(4)
    T[:3, :3] = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]
    T[:3, 3] = [t.translation.x, t.translation.y, t.translation.z]
    return T


def stamp_key(stamp) -> tuple[int, int]:
    return (int(stamp.sec), int(stamp.nanosec))


class TfRecord:
    """Collects /tf (by stamp) and /tf_static messages; composes base -> tip."""

    def __init__(self) -> None:
        self.static: dict[str, tuple[str, np.ndarray]] = {}
        self.dynamic: dict[tuple[int, int], dict[str, tuple[str, np.ndarray]]] = {}

    def on_static(self, msg) -> None:
        for t in msg.transforms:
            self.static[t.child_frame_id] = (t.header.frame_id, transform_matrix(t.transform))

    def on_tf(self, msg) -> None:
        for t in msg.transforms:
            self.dynamic.setdefault(stamp_key(t.header.stamp), {})[t.child_frame_id] = (
                t.header.frame_id, transform_matrix(t.transform))

    def pose(self, base: str, tip: str, stamp: tuple[int, int]) -> np.ndarray | None:
        """T_base_tip at ``stamp`` (None while a link of the chain is missing)."""
        moving = self.dynamic.get(stamp, {})
        T = np.eye(4)
        frame = tip
        for _ in range(1000):
            if frame == base:
                return T
            link = moving.get(frame) or self.static.get(frame)
            if link is None:
                return None
            parent, T_parent_frame = link
            T = T_parent_frame @ T
            frame = parent
        raise AssertionError(f"no chain from {tip!r} to {base!r}")
