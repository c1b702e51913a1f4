"""The conventions of robot_dynamics, in one place (each one is pinned by a test).

Units
    SI throughout: m, kg, s, rad, N, N m. Angles of RPY in radians.

Gravity
    A vector in the base frame; default ``GRAVITY = (0, 0, -9.81)`` m/s^2 (z up).

Joint order
    ``model.joint_names``: the movable, independent joints in tree order (a parent before its
    children). Messages and dictionaries are matched by name, never by position.

Public 6-vectors: linear first
    Twists, geometric Jacobians and wrenches at the public API are ``[linear; angular]``:
    ``[vx, vy, vz, wx, wy, wz]`` and ``[fx, fy, fz, tx, ty, tz]``. This is the order of
    geometry_msgs/Twist and Wrench, of Khalil's J and f_en, and of Pinocchio.

Internal spatial vectors: angular first
    Inside the recursive algorithms (``spatial.py``, ``dynamics/``) spatial motion and force
    vectors are Featherstone's ``[angular; linear]``, so the code reads like his book.
    :func:`swap_halves` converts between the two orders.

Plücker transforms
    A transform from frame A coordinates to frame B coordinates is the pair ``(E, r)``:
    ``E`` = rotation matrix B_R_A (maps A coordinates to B coordinates) and ``r`` = position of
    B's origin expressed in A (Featherstone's ``plx(E, r)``).

Homogeneous transforms
    ``T_a_b`` (shape (4, 4)) maps coordinates in b to coordinates in a: ``p_a = T_a_b @ p_b``.

RPY
    URDF's fixed-axis roll-pitch-yaw: ``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)``.

External wrenches (``f_ext``)
    Khalil's f_en [7.30]: the wrench a link EXERTS ON the environment, ``[force; moment]``,
    expressed in the base frame, the moment about the link frame's origin. The torque needed
    grows by ``J^T f`` where J is the geometric Jacobian at that origin.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["GRAVITY", "swap_halves"]

#: Default gravity in the base frame, m/s^2.
GRAVITY: tuple[float, float, float] = (0.0, 0.0, -9.81)


def swap_halves(v: ArrayLike) -> NDArray[np.float64]:
    """Swap the halves of 6-vectors, shape (..., 6): [a; b] -> [b; a].

    Converts Featherstone's [angular; linear] to [linear; angular] (Pinocchio, ROS) and back.
    For a (..., 6, k) matrix, swaps the row halves.
    """
    arr = np.asarray(v, dtype=float)
    if arr.shape[-1] == 6:
        return np.concatenate([arr[..., 3:], arr[..., :3]], axis=-1)
    if arr.ndim >= 2 and arr.shape[-2] == 6:
        return np.concatenate([arr[..., 3:, :], arr[..., :3, :]], axis=-2)
    raise ValueError(f"swap_halves expects a 6-vector or (6, k) matrix, got shape {arr.shape}")
