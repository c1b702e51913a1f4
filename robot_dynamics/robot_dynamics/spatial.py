"""6D spatial algebra (Featherstone, Rigid Body Dynamics Algorithms, ch. 2), batched.

Every function accepts leading batch dimensions ``...``. Spatial vectors are
``[angular; linear]`` (see :mod:`robot_dynamics.conventions`); a Plücker transform from frame
A to frame B is ``(E, r)`` with ``E`` = B_R_A (3, 3) and ``r`` the origin of B in A (3,).

The algorithms work on 3-vector halves rather than 6x6 matrices where that is cheaper; the
6x6 forms are here too (``plucker``, ``crm_matrix``, ``spatial_inertia``) for the
articulated-body recursions and for tests.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "cross",
    "skew",
    "rotation_about_axis",
    "rpy_to_matrix",
    "matrix_to_rpy",
    "rpy_rate_matrix",
    "rpy_rate_matrix_dot",
    "exp_so3",
    "log_so3",
    "homogeneous",
    "invert_homogeneous",
    "plucker",
    "transform_motion",
    "inverse_transform_motion",
    "transform_force_to_parent",
    "crm",
    "crf",
    "crm_matrix",
    "crf_matrix",
    "spatial_inertia",
    "inertia_times_motion",
    "rotational_inertia_about_origin",
]

Array = NDArray[np.float64]


def cross(a: ArrayLike, b: ArrayLike, axis: int = -1) -> Array:
    """Cross product of 3-vectors laid along ``axis`` (-1: shape (..., 3); -2: (..., 3, N)).

    Faster than ``np.cross`` on small batches; ``axis=-2`` is the batch-last layout of the
    recursions, where every component is a contiguous row.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if axis == -1:
        a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
        b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    else:
        a0, a1, a2 = a[..., 0, :], a[..., 1, :], a[..., 2, :]
        b0, b1, b2 = b[..., 0, :], b[..., 1, :], b[..., 2, :]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=axis)


def _rotate(E: Array, v: Array) -> Array:
    """E @ v for stacks of 3x3 matrices and 3-vectors (einsum beats matmul on tiny matrices)."""
    if E.ndim == 2:
        return v @ E.T
    return np.einsum("...ij,...j->...i", E, v)


def skew(v: ArrayLike) -> Array:
    """Skew-symmetric matrix [v]x such that ``skew(v) @ u == cross(v, u)``; (..., 3) -> (..., 3, 3)."""
    v = np.asarray(v, dtype=float)
    z = np.zeros(v.shape[:-1])
    x, y, w = v[..., 0], v[..., 1], v[..., 2]
    return np.stack(
        [np.stack([z, -w, y], -1), np.stack([w, z, -x], -1), np.stack([-y, x, z], -1)], -2
    )


def rotation_about_axis(axis: ArrayLike, angle: ArrayLike) -> Array:
    """Rotation matrix of ``angle`` [rad] about the unit ``axis`` (Rodrigues' formula).

    Args:
        axis: unit vector, shape (3,) or (..., 3).
        angle: shape (...) [rad].

    Returns:
        The active rotation R, shape (..., 3, 3): ``R @ u`` rotates u about ``axis``.
    """
    axis = np.asarray(axis, dtype=float)
    angle = np.asarray(angle, dtype=float)
    s = np.sin(angle)[..., None, None]
    c = np.cos(angle)[..., None, None]
    K = skew(axis)
    K2 = K @ K
    return np.eye(3) + s * K + (1.0 - c) * K2


def rpy_to_matrix(rpy: ArrayLike) -> Array:
    """URDF roll-pitch-yaw to a rotation matrix, ``Rz(yaw) Ry(pitch) Rx(roll)``; (..., 3) -> (..., 3, 3)."""
    rpy = np.asarray(rpy, dtype=float)
    cr, sr = np.cos(rpy[..., 0]), np.sin(rpy[..., 0])
    cp, sp = np.cos(rpy[..., 1]), np.sin(rpy[..., 1])
    cy, sy = np.cos(rpy[..., 2]), np.sin(rpy[..., 2])
    return np.stack(
        [
            np.stack([cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr], -1),
            np.stack([sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr], -1),
            np.stack([-sp, cp * sr, cp * cr], -1),
        ],
        -2,
    )


def matrix_to_rpy(R: ArrayLike) -> Array:
    """Inverse of :func:`rpy_to_matrix`; pitch in [-pi/2, pi/2]; (..., 3, 3) -> (..., 3)."""
    R = np.asarray(R, dtype=float)
    pitch = np.arcsin(np.clip(-R[..., 2, 0], -1.0, 1.0))
    roll = np.arctan2(R[..., 2, 1], R[..., 2, 2])
    yaw = np.arctan2(R[..., 1, 0], R[..., 0, 0])
    # At gimbal lock (cos pitch = 0) roll and yaw are coupled: put everything in yaw.
    lock = np.abs(np.cos(pitch)) < 1e-9
    if np.any(lock):
        roll = np.where(lock, 0.0, roll)
        yaw = np.where(lock, np.arctan2(-R[..., 0, 1], R[..., 1, 1]), yaw)
    return np.stack([roll, pitch, yaw], -1)


def rpy_rate_matrix(phi: ArrayLike) -> Array:
    """E(phi) with ``omega = E phi_dot`` (base axes) for URDF roll-pitch-yaw angles,
    ``R = Rz(phi_z) Ry(phi_y) Rx(phi_x)`` (:func:`rpy_to_matrix`).

    Args:
        phi: [roll, pitch, yaw] = [phi_x, phi_y, phi_z], shape (..., 3) [rad].

    Returns:
        E, shape (..., 3, 3); its columns are the world axes of the three rotations
        (``Rz Ry e_x``, ``Rz e_y``, ``e_z``); det E = cos(phi_y).
    """
    phi = np.asarray(phi, dtype=float)
    cy, sy = np.cos(phi[..., 1]), np.sin(phi[..., 1])
    cz, sz = np.cos(phi[..., 2]), np.sin(phi[..., 2])
    z, o = np.zeros_like(cy), np.ones_like(cy)
    return np.stack([np.stack([cz * cy, -sz, z], -1), np.stack([sz * cy, cz, z], -1),
                     np.stack([-sy, z, o], -1)], -2)


def rpy_rate_matrix_dot(phi: ArrayLike, phi_dot: ArrayLike) -> Array:
    """Time derivative of :func:`rpy_rate_matrix`, shape (..., 3, 3)."""
    phi, phi_dot = np.asarray(phi, dtype=float), np.asarray(phi_dot, dtype=float)
    cy, sy = np.cos(phi[..., 1]), np.sin(phi[..., 1])
    cz, sz = np.cos(phi[..., 2]), np.sin(phi[..., 2])
    dy, dz = phi_dot[..., 1], phi_dot[..., 2]
    z = np.zeros_like(cy)
    return np.stack([np.stack([-sz * cy * dz - cz * sy * dy, -cz * dz, z], -1),
                     np.stack([cz * cy * dz - sz * sy * dy, -sz * dz, z], -1),
                     np.stack([-cy * dy, z, z], -1)], -2)


def exp_so3(w: ArrayLike) -> Array:
    """Rotation matrix of the rotation vector ``w`` (axis * angle [rad]); (..., 3) -> (..., 3, 3)."""
    w = np.asarray(w, dtype=float)
    theta = np.linalg.norm(w, axis=-1)
    small = theta < 1e-12
    safe = np.where(small, 1.0, theta)
    axis = w / safe[..., None]
    axis = np.where(small[..., None], np.array([1.0, 0.0, 0.0]), axis)
    return rotation_about_axis(axis, np.where(small, 0.0, theta))


def log_so3(R: ArrayLike) -> Array:
    """Rotation vector (axis * angle, angle in [0, pi]) of a rotation matrix; (..., 3, 3) -> (..., 3).

    Well conditioned at every angle: theta = atan2(|vee(R - R^T)| / 2, (tr R - 1) / 2); below
    pi/2 the axis is vee(R - R^T) / (2 sin theta); above, it comes from the symmetric part,
    (R + R^T) / 2 = cos(theta) I + (1 - cos(theta)) a a^T, exact up to pi.
    """
    R = np.asarray(R, dtype=float)
    tr = R[..., 0, 0] + R[..., 1, 1] + R[..., 2, 2]
    vee = np.stack(
        [R[..., 2, 1] - R[..., 1, 2], R[..., 0, 2] - R[..., 2, 0], R[..., 1, 0] - R[..., 0, 1]], -1
    )
    sin_t = 0.5 * np.linalg.norm(vee, axis=-1)
    cos_t = 0.5 * (tr - 1.0)
    theta = np.arctan2(sin_t, cos_t)
    # theta / (2 sin theta), with its series near 0
    factor = np.where(theta < 1e-6, 0.5 + theta**2 / 12.0, theta / (2.0 * np.where(sin_t == 0, 1.0, sin_t)))
    w = factor[..., None] * vee
    wide = theta > np.pi / 2
    if np.any(wide):
        S = 0.5 * (R + np.swapaxes(R, -1, -2)) - cos_t[..., None, None] * np.eye(3)
        S = S / (1.0 - cos_t)[..., None, None]  # = a a^T
        diag = np.stack([S[..., 0, 0], S[..., 1, 1], S[..., 2, 2]], -1)
        k = np.argmax(diag, axis=-1)
        col = np.take_along_axis(S, k[..., None, None].repeat(3, -1), axis=-2)[..., 0, :]
        axis = col / np.sqrt(np.maximum(np.take_along_axis(diag, k[..., None], -1), 1e-300))
        sign = np.where(np.sum(axis * vee, -1) < 0, -1.0, 1.0)
        w = np.where(wide[..., None], sign[..., None] * axis * theta[..., None], w)
    return w


def homogeneous(R: ArrayLike, p: ArrayLike) -> Array:
    """4x4 homogeneous transform from rotation (..., 3, 3) and translation (..., 3)."""
    R = np.asarray(R, dtype=float)
    p = np.asarray(p, dtype=float)
    shape = np.broadcast_shapes(R.shape[:-2], p.shape[:-1])
    T = np.zeros(shape + (4, 4))
    T[..., :3, :3] = R
    T[..., :3, 3] = p
    T[..., 3, 3] = 1.0
    return T


def invert_homogeneous(T: ArrayLike) -> Array:
    """Inverse of a rigid 4x4 transform, shape (..., 4, 4)."""
    T = np.asarray(T, dtype=float)
    R = T[..., :3, :3]
    Rt = np.swapaxes(R, -1, -2)
    return homogeneous(Rt, -(Rt @ T[..., :3, 3:4])[..., 0])


def plucker(E: ArrayLike, r: ArrayLike) -> Array:
    """6x6 motion transform ``[[E, 0], [-E [r]x, E]]`` (Featherstone eq. 2.24); (..., 6, 6)."""
    E = np.asarray(E, dtype=float)
    r = np.asarray(r, dtype=float)
    shape = np.broadcast_shapes(E.shape[:-2], r.shape[:-1])
    X = np.zeros(shape + (6, 6))
    X[..., :3, :3] = E
    X[..., 3:, 3:] = E
    X[..., 3:, :3] = -E @ skew(r)
    return X


def transform_motion(E: ArrayLike, r: ArrayLike, m: ArrayLike) -> Array:
    """Apply the motion transform (E, r) to motion vectors ``m = [w; v]`` of shape (..., 6).

    ``X m = [E w; E (v - r x w)]``.
    """
    E = np.asarray(E, dtype=float)
    m = np.asarray(m, dtype=float)
    w, v = m[..., :3], m[..., 3:]
    return np.concatenate([_rotate(E, w), _rotate(E, v - cross(r, w))], -1)


def inverse_transform_motion(E: ArrayLike, r: ArrayLike, m: ArrayLike) -> Array:
    """Apply the inverse motion transform: ``X^-1 m = [E^T w; E^T v + r x E^T w]``; (..., 6)."""
    Et = np.swapaxes(np.asarray(E, dtype=float), -1, -2)
    m = np.asarray(m, dtype=float)
    w = _rotate(Et, m[..., :3])
    return np.concatenate([w, _rotate(Et, m[..., 3:]) + cross(r, w)], -1)


def transform_force_to_parent(E: ArrayLike, r: ArrayLike, f: ArrayLike) -> Array:
    """Apply ``X^T`` to forces ``f = [n; f]`` (child coordinates -> parent coordinates); (..., 6).

    ``X^T f = [E^T n + r x E^T f; E^T f]`` (Featherstone eq. 2.25 for X* = X^-T).
    """
    Et = np.swapaxes(np.asarray(E, dtype=float), -1, -2)
    f = np.asarray(f, dtype=float)
    lin = _rotate(Et, f[..., 3:])
    return np.concatenate([_rotate(Et, f[..., :3]) + cross(r, lin), lin], -1)


def crm(v: ArrayLike, m: ArrayLike) -> Array:
    """Spatial cross product for motions, ``v x m = [w x mw; w x mv + v x mw]``; (..., 6)."""
    v = np.asarray(v, dtype=float)
    m = np.asarray(m, dtype=float)
    w, u = v[..., :3], v[..., 3:]
    return np.concatenate([cross(w, m[..., :3]), cross(w, m[..., 3:]) + cross(u, m[..., :3])], -1)


def crf(v: ArrayLike, f: ArrayLike, axis: int = -1) -> Array:
    """Spatial cross product for forces, ``v x* f = [w x n + v x f; w x f]``.

    Vectors of 6 along ``axis``: -1 for shape (..., 6), -2 for the batch-last (..., 6, N).
    """
    v = np.asarray(v, dtype=float)
    f = np.asarray(f, dtype=float)
    if axis == -1:
        w, u, n, F = v[..., :3], v[..., 3:], f[..., :3], f[..., 3:]
    else:
        w, u, n, F = v[..., :3, :], v[..., 3:, :], f[..., :3, :], f[..., 3:, :]
    return np.concatenate([cross(w, n, axis) + cross(u, F, axis), cross(w, F, axis)], axis)


def crm_matrix(v: ArrayLike) -> Array:
    """6x6 matrix of ``v x`` (motion cross product), shape (..., 6, 6)."""
    v = np.asarray(v, dtype=float)
    W = skew(v[..., :3])
    U = skew(v[..., 3:])
    out = np.zeros(v.shape[:-1] + (6, 6))
    out[..., :3, :3] = W
    out[..., 3:, 3:] = W
    out[..., 3:, :3] = U
    return out


def crf_matrix(v: ArrayLike) -> Array:
    """6x6 matrix of ``v x*`` (force cross product) ``= -crm_matrix(v)^T``, shape (..., 6, 6)."""
    return -np.swapaxes(crm_matrix(v), -1, -2)


def rotational_inertia_about_origin(mass: ArrayLike, com: ArrayLike, I_com: ArrayLike) -> Array:
    """Parallel-axis theorem: inertia about the frame origin, ``Ic + m (|c|^2 I - c c^T)``; (..., 3, 3)."""
    mass = np.asarray(mass, dtype=float)
    com = np.asarray(com, dtype=float)
    C = skew(com)
    return np.asarray(I_com, dtype=float) - mass[..., None, None] * (C @ C)


def spatial_inertia(mass: ArrayLike, com: ArrayLike, I_com: ArrayLike) -> Array:
    """6x6 spatial inertia about the frame origin (Featherstone eq. 2.63); (..., 6, 6).

    Args:
        mass: (...) [kg].
        com: centre of mass in the frame, (..., 3) [m].
        I_com: rotational inertia about the centre of mass, frame axes, (..., 3, 3) [kg m^2].
    """
    mass = np.asarray(mass, dtype=float)
    com = np.asarray(com, dtype=float)
    C = skew(com)
    m = mass[..., None, None]
    out = np.zeros(np.broadcast_shapes(mass.shape, com.shape[:-1]) + (6, 6))
    out[..., :3, :3] = rotational_inertia_about_origin(mass, com, I_com)
    out[..., :3, 3:] = m * C
    out[..., 3:, :3] = -m * C
    out[..., 3:, 3:] = m * np.eye(3)
    return out


def inertia_times_motion(mass: ArrayLike, h: ArrayLike, I_o: ArrayLike, a: ArrayLike) -> Array:
    """Spatial inertia applied to a motion, from the body's parameters; (..., 6).

    ``I a = [I_o w + h x v; m v - h x w]`` with ``h = m c`` the first moment of mass
    (Khalil's MS) and ``I_o`` the rotational inertia about the frame origin (Khalil's J).
    """
    a = np.asarray(a, dtype=float)
    w, v = a[..., :3], a[..., 3:]
    ang = _rotate(np.asarray(I_o, dtype=float), w) + cross(h, v)
    lin = np.asarray(mass)[..., None] * v - cross(h, w)
    return np.concatenate([ang, lin], -1)
