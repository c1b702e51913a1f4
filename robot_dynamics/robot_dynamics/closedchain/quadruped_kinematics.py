"""Kinematics of the quadruped with a tail (Liu & Ben-Tzvi, eqs. 4-31).

Position analysis (leg inverse kinematics, eqs. 4-10), the joint, point and actuation
Jacobians (eqs. 11-28) and the accelerations of the joints, hips, knees and tail tip
(eqs. 29-31) of the mechanism described in :mod:`robot_dynamics.closedchain.quadruped`, whose
docstring lists the corrections made to the machine-extracted equations. Every function takes
leading batch dimensions: ``q`` of shape (..., 8).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._batch import as_batch, broadcast_batch
from ..errors import SingularityError
from ..spatial import cross, rpy_to_matrix, skew
from .quadruped_params import QuadrupedParams

__all__ = [
    "COORDINATE_NAMES",
    "QuadrupedKinematics",
    "QuadrupedAccelerations",
    "leg_inverse_kinematics",
    "leg_positions",
    "kinematics",
    "accelerations",
    "check_configuration",
]

Array = NDArray[np.float64]

#: Generalized coordinates q (eq. 8 of section 2 of the paper).
COORDINATE_NAMES = ("p_x", "p_y", "p_z", "phi_x", "phi_y", "phi_z", "theta_ta", "theta_tb")

_EY = np.array([0.0, 1.0, 0.0])
# Singularity thresholds: relative margins on the leg triangle, on the denominators of the joint
# Jacobians and on the condition number of J_tau_a.
_REACH_MARGIN = 1e-9
_DEN_TOL = 1e-9
_COND_MAX = 1e10


# -- position analysis (eqs. 4-10) ----------------------------------------------------------------
def _rot_y(angle: Array) -> Array:
    c, s = np.cos(angle), np.sin(angle)
    z, o = np.zeros_like(c), np.ones_like(c)
    return np.stack([np.stack([c, z, s], -1), np.stack([z, o, z], -1), np.stack([-s, z, c], -1)], -2)


def _u(beta: Array) -> Array:
    """Unit direction of a leg segment at angle beta in the leg plane: (0, -sin, -cos)."""
    return np.stack([np.zeros_like(beta), -np.sin(beta), -np.cos(beta)], -1)


def _du(beta: Array) -> Array:
    return np.stack([np.zeros_like(beta), -np.cos(beta), np.sin(beta)], -1)


class _Legs(NamedTuple):
    R: Array  # (N, 3, 3) R_P^S
    RL: Array  # (N, 4, 3, 3) R_L^S of each leg frame
    dp: Array  # (N, 4, 3) d_i - p in S
    s: Array  # (N, 4, 3) s_i in P (eq. 5)
    ns: Array  # (N, 4) |s_i|
    ha: Array
    hb: Array
    k: Array  # (N, 4) joint angles
    ok: Array  # (N,) configuration is regular
    message: str


def _leg_ik(P: QuadrupedParams, qf: Array) -> _Legs:
    """Leg inverse kinematics, eqs. (4)-(9), with the checks of a regular configuration."""
    lth, lsh = P.l_th, P.l_sh
    R = rpy_to_matrix(qf[:, 3:6])  # eq. (1)
    RL = np.einsum("nij,kjl->nkil", R, P.R_leg)  # leg frames L_i (frame P turned by hip_yaw_i)
    dp = P.d[None] - qf[:, None, :3]
    # eq. (5): s_i = R_S^P (d_i - p) - a_i^(P), expressed in the leg frame L_i
    s = np.einsum("nkji,nkj->nki", RL, dp) - np.einsum("kji,kj->ki", P.R_leg, P.a)[None]
    ns = np.linalg.norm(s, axis=-1)
    # eq. (6): cos(pi - theta_k) = (|s|^2 - l_th^2 - l_sh^2) / (2 l_th l_sh); theta_k is the
    # interior angle HKF of the leg triangle.
    c = (ns**2 - lth**2 - lsh**2) / (2.0 * lth * lsh)
    k = np.pi - np.arccos(np.clip(c, -1.0, 1.0))
    # eq. (7) corrected: atan(s_x / s_z) (the extracted atan2(s_x, s_z) is off by pi for s_z < 0).
    sx, sy, sz = s[..., 0], s[..., 1], s[..., 2]
    below = sz < 0.0
    sz_safe = np.where(below, sz, -1.0)
    ha = np.arctan(sx / sz_safe)
    # eq. (8)-(9): hb = atan(s'_y / s'_z) - (hip angle of triangle H K F), A by Heron's formula.
    szp = np.sin(ha) * sx + np.cos(ha) * sz_safe  # s'_z of s' = R_y(ha)^T s (< 0 below the hip)
    semi = (lth + lsh + ns) / 2.0
    area = np.sqrt(np.clip(semi * (semi - lth) * (semi - lsh) * (semi - ns), 0.0, None))
    # asin(2A / (|s| l_th)) of eq. (8), taken with the cosine rule so an obtuse hip angle stays right
    # (sin = 2A / (|s| l_th), cos = (l_th^2 + |s|^2 - l_sh^2) / (2 l_th |s|), both scaled by 2 l_th |s|).
    gamma = np.arctan2(4.0 * area, lth**2 + ns**2 - lsh**2)
    hb = np.arctan(sy / szp) - gamma
    reach_lo, reach_hi = abs(lth - lsh), lth + lsh
    tol = _REACH_MARGIN * reach_hi
    reach_ok = (ns > reach_lo + tol) & (ns < reach_hi - tol)
    den = lth * np.cos(hb) - lsh * np.cos(hb - k)  # denominator of eq. (17), corrected
    den_ok = np.abs(den) > _DEN_TOL * reach_hi
    ok_leg = reach_ok & below & den_ok
    ok = np.all(ok_leg, axis=1)
    message = "regular configuration"
    if not np.all(ok):
        n = int(np.argmin(ok))
        i = int(np.argmin(ok_leg[n]))
        pre = f"sample {n}: " if qf.shape[0] > 1 else ""
        if not reach_ok[n, i]:
            message = (f"{pre}leg {i + 1}: foot out of reach, |s_{i + 1}| = {ns[n, i]:.6g} m is not inside "
                       f"({reach_lo:.6g}, {reach_hi:.6g}) m (leg length out of range, eq. 6)")
        elif not below[n, i]:
            message = (f"{pre}leg {i + 1}: the foot is not below the hip (s_z = {sz[n, i]:.4g} m >= 0): "
                       f"theta_ha leaves (-pi/2, pi/2) (eq. 7)")
        else:
            message = (f"{pre}leg {i + 1}: hip singularity, l_th cos(theta_hb) = l_sh cos(theta_hb - theta_k) "
                       f"(theta_hb is not determined by the foot velocity, eq. 17)")
    return _Legs(R, RL, dp, s, ns, ha, hb, k, ok, message)


def _flat_q(q: ArrayLike) -> tuple[Array, tuple[int, ...]]:
    return as_batch(q, 8, "q", COORDINATE_NAMES)


def leg_inverse_kinematics(params: QuadrupedParams, q: ArrayLike) -> tuple[Array, Array, Array]:
    """Joint angles of the four legs, eqs. (4)-(9).

    Args:
        params: the quadruped.
        q: generalized coordinates, shape (..., 8).

    Returns:
        (theta_ha, theta_hb, theta_k), each shape (..., 4) [rad]; theta_k is the interior knee
        angle of eq. (6).

    Raises:
        SingularityError: a foot out of reach (leg length out of range), a foot above its hip,
            or a hip singularity; the message names the leg.
    """
    qf, batch = _flat_q(q)
    legs = _leg_ik(params, qf)
    if not np.all(legs.ok):
        raise SingularityError(legs.message)
    return tuple(x.reshape(batch + (4,)) for x in (legs.ha, legs.hb, legs.k))  # type: ignore[return-value]


def _leg_vectors(P: QuadrupedParams, ha: Array, hb: Array, k: Array) -> tuple[Array, Array]:
    """b_i^(P) (hip to knee) and c_i^(P) (knee to foot) from the joint angles."""
    Ry = _rot_y(ha)
    b = np.einsum("...ij,...j->...i", Ry, P.l_th * _u(hb))  # = l_th [-s_ha c_hb, -s_hb, -c_ha c_hb]
    c = np.einsum("...ij,...j->...i", Ry, P.l_sh * _u(hb + np.pi - k))  # shank turned by pi - theta_k
    return b, c


def leg_positions(params: QuadrupedParams, q: ArrayLike) -> dict[str, Array]:
    """World positions of the hips H_i, knees K_i, feet F_i (..., 4, 3) and tail tip N (..., 3) [m].

    The feet are computed forward from the joint angles (they equal ``params.d`` when the loops
    close), so the result checks the inverse kinematics.
    """
    qf, batch = _flat_q(q)
    legs = _leg_ik(params, qf)
    if not np.all(legs.ok):
        raise SingularityError(legs.message)
    R, RL = legs.R, legs.RL
    b, c = _leg_vectors(params, legs.ha, legs.hb, legs.k)
    p = qf[:, None, :3]
    hip = p + np.einsum("nij,kj->nki", R, params.a)
    knee = hip + np.einsum("nkij,nkj->nki", RL, b)
    foot = knee + np.einsum("nkij,nkj->nki", RL, c)
    tip = qf[:, :3] + np.einsum("nij,nj->ni", R, params.r + _tail_vector(params, qf[:, 6], qf[:, 7]))
    return {"hip": hip.reshape(batch + (4, 3)), "knee": knee.reshape(batch + (4, 3)),
            "foot": foot.reshape(batch + (4, 3)), "tail_tip": tip.reshape(batch + (3,))}


def _tail_vector(P: QuadrupedParams, ta: Array, tb: Array) -> Array:
    """t^(P) = R_x(theta_ta) R_z(theta_tb) [0, -l_t, 0] (eq. 10)."""
    ca, sa, cb, sb = np.cos(ta), np.sin(ta), np.cos(tb), np.sin(tb)
    return P.l_t * np.stack([sb, -ca * cb, -sa * cb], -1)


# -- Jacobians (eqs. 11-28) ---------------------------------------------------------------------
class QuadrupedKinematics(NamedTuple):
    """Positions and Jacobians of the quadruped at one configuration (flattened batch N).

    Attributes:
        q: the configurations, (N, 8).
        R: R_P^S, (N, 3, 3). RL: R_L^S of the four leg frames, (N, 4, 3, 3).
        s: s_i in the leg frame L_i (eq. 5), (N, 4, 3) [m].
        theta_ha, theta_hb, theta_k: leg joint angles, (N, 4) [rad].
        a, b: hip offsets a_i and thigh vectors b_i in frame S, (N, 4, 3) [m].
        rt: r + t, tail joint to tail tip from P, frame S, (N, 3) [m].
        j_s: Jacobians of s_i w.r.t. the torso twist (eq. 13), (N, 4, 3, 6).
        j_ha, j_hb, j_k: joint Jacobians (eqs. 15, 16, 18) w.r.t. nu, (N, 4, 8).
        Q_k: eq. (22), (N, 4, 3, 2). K_n: eq. (25), (N, 3, 2).
        J_h, J_k: point Jacobians of the hips and knees (eqs. 20, 23), (N, 4, 3, 8).
        J_t: point Jacobian of the tail tip (eq. 26), (N, 3, 8).
        J_tau_a, J_tau_p: actuation Jacobians (eqs. 27, 28), (N, 8, 8) and (N, 6, 8).
        dp: d_i - p in frame S, (N, 4, 3) [m].
        ok: regular configuration, (N,); message: a one-line report of the first irregular one.
    """

    q: Array
    R: Array
    RL: Array
    s: Array
    theta_ha: Array
    theta_hb: Array
    theta_k: Array
    a: Array
    b: Array
    rt: Array
    dp: Array
    j_s: Array
    j_ha: Array
    j_hb: Array
    j_k: Array
    Q_k: Array
    K_n: Array
    J_h: Array
    J_k: Array
    J_t: Array
    J_tau_a: Array
    J_tau_p: Array
    ok: Array
    message: str


def _pad8(j6: Array) -> Array:
    out = np.zeros(j6.shape[:-1] + (8,))
    out[..., :6] = j6
    return out


def _kinematics_flat(P: QuadrupedParams, qf: Array) -> QuadrupedKinematics:
    legs = _leg_ik(P, qf)
    R, RL, s, dp, ha, hb, k = legs.R, legs.RL, legs.s, legs.dp, legs.ha, legs.hb, legs.k
    N = qf.shape[0]
    lth, lsh = P.l_th, P.l_sh
    RLt = np.swapaxes(RL, -1, -2)
    # eq. (13): j_s = [-R_S^P, R_S^P [d_i - p]x] (the skew is lost in the extracted text), in frame L_i
    j_s = np.concatenate([-RLt, RLt @ skew(dp)], axis=-1)
    sin_k = np.sin(k)
    sin_k_safe = np.where(np.abs(sin_k) > 1e-300, sin_k, 1.0)
    # eq. (15): j_k = s^T j_s / (l_th l_sh sin theta_k)
    sTj = np.einsum("nki,nkij->nkj", s, j_s)
    j_k = sTj / (lth * lsh * sin_k_safe)[..., None]
    # eq. (16): j_ha = cos^2(ha) / s_z^2 [s_z, 0, -s_x] j_s
    sx, sz = s[..., 0], s[..., 2]
    sz_safe = np.where(sz < 0, sz, -1.0)
    row = np.stack([sz, np.zeros_like(sz), -sx], -1)
    j_ha = (np.cos(ha) ** 2 / sz_safe**2)[..., None] * np.einsum("nki,nkij->nkj", row, j_s)
    # eq. (18) corrected for the interior knee angle (see the docstring of closedchain.quadruped):
    # j_hb = (-l_th sin k [0 1 0] j_s - cos(hb - k) s^T j_s) / (l_th sin k (l_th cos hb - l_sh cos(hb - k)))
    den = lth * sin_k_safe * (lth * np.cos(hb) - lsh * np.cos(hb - k))
    den = np.where(np.abs(den) > 1e-300, den, 1.0)
    j_hb = (-(lth * sin_k)[..., None] * j_s[:, :, 1, :] - np.cos(hb - k)[..., None] * sTj) / den[..., None]
    j_ha8, j_hb8, j_k8 = _pad8(j_ha), _pad8(j_hb), _pad8(j_k)
    # eq. (22): Q_k = d b^(P) / d(theta_ha, theta_hb)
    cha, sha, chb, shb = np.cos(ha), np.sin(ha), np.cos(hb), np.sin(hb)
    Q_k = lth * np.stack([np.stack([-cha * chb, sha * shb], -1),
                          np.stack([np.zeros_like(chb), -chb], -1),
                          np.stack([sha * chb, cha * shb], -1)], -2)
    b_P, _ = _leg_vectors(P, ha, hb, k)
    aS = np.einsum("nij,kj->nki", R, P.a)
    bS = np.einsum("nkij,nkj->nki", RL, b_P)
    I3 = np.broadcast_to(np.eye(3), (N, 4, 3, 3))
    zeros2 = np.zeros((N, 4, 3, 2))
    # eq. (20): J_h = [I, -[a_i]x, 0]
    J_h = np.concatenate([I3, -skew(aS), zeros2], axis=-1)
    # eq. (23): J_k = [I, -[a_i]x - [b_i]x, 0] + R Q_k [j_ha; j_hb]
    J_k = np.concatenate([I3, -skew(aS + bS), zeros2], axis=-1)
    J_k = J_k + np.einsum("nkij,nkjl,nklm->nkim", RL, Q_k, np.stack([j_ha8, j_hb8], axis=-2))
    # eq. (10), (25), (26): tail tip
    ta, tb = qf[:, 6], qf[:, 7]
    rt = np.einsum("nij,nj->ni", R, P.r + _tail_vector(P, ta, tb))
    ca, sa, cb, sb = np.cos(ta), np.sin(ta), np.cos(tb), np.sin(tb)
    K_n = P.l_t * np.stack([np.stack([np.zeros_like(cb), cb], -1), np.stack([sa * cb, ca * sb], -1),
                            np.stack([-ca * cb, sa * sb], -1)], -2)
    J_t = np.concatenate([np.broadcast_to(np.eye(3), (N, 3, 3)), -skew(rt), R @ K_n], axis=-1)
    # eqs. (27), (28): actuation Jacobians
    tail_rows = np.zeros((N, 2, 8))
    tail_rows[:, 0, 6] = 1.0
    tail_rows[:, 1, 7] = 1.0
    J_tau_a = np.concatenate([j_ha8[:, :2], j_k8, tail_rows], axis=1)
    J_tau_p = np.concatenate([j_ha8[:, 2:], j_hb8], axis=1)
    return QuadrupedKinematics(qf, R, RL, s, ha, hb, k, aS, bS, rt, dp, j_s, j_ha8, j_hb8, j_k8, Q_k, K_n, J_h, J_k,
                               J_t, J_tau_a, J_tau_p, legs.ok, legs.message)


def kinematics(params: QuadrupedParams, q: ArrayLike) -> QuadrupedKinematics:
    """Leg angles, joint, point and actuation Jacobians (eqs. 4-28) at ``q``.

    Args:
        params: the quadruped.
        q: generalized coordinates, shape (..., 8); the result's arrays have the batch
            flattened to N (one row per configuration).

    Raises:
        SingularityError: an unreachable or singular configuration (the message names the leg).
    """
    qf, _ = _flat_q(q)
    kin = _kinematics_flat(params, qf)
    if not np.all(kin.ok):
        raise SingularityError(kin.message)
    return kin


def check_configuration(params: QuadrupedParams, q: ArrayLike, *, actuation: bool = True) -> tuple[bool, str]:
    """Whether ``q`` (8,) is a regular configuration, with a one-line reason; never raises on q.

    Checks the leg triangles (reach), the branch of eq. (7), the hip singularity of eq. (17), the
    roll-pitch-yaw singularity and, with ``actuation``, the conditioning of J_tau_a (eq. 41).
    """
    qf = np.asarray(q, dtype=float).reshape(1, 8)
    if not np.all(np.isfinite(qf)):
        return False, "non-finite configuration"
    kin = _kinematics_flat(params, qf)
    if not kin.ok[0]:
        return False, kin.message
    if abs(np.cos(qf[0, 4])) < 1e-9:
        return False, "phi_y = +-pi/2: roll-pitch-yaw singularity"
    if actuation:
        cond = np.linalg.cond(kin.J_tau_a[0])
        if not np.isfinite(cond) or cond > _COND_MAX:
            return False, _actuation_message(cond)
    return True, "regular configuration"


def _actuation_message(cond: float) -> str:
    return (f"J_tau_a is singular (condition number {cond:.3g} > {_COND_MAX:.0e}): the non-redundant actuators "
            f"theta_ha_1, theta_ha_2, theta_k_1..4, theta_ta, theta_tb cannot balance the motion (eq. 41)")


# -- accelerations (eqs. 29-31) ------------------------------------------------------------------
class QuadrupedAccelerations(NamedTuple):
    """Joint rates and point accelerations of a motion (flattened batch N).

    Attributes:
        leg_rates: (theta_ha_dot, theta_hb_dot, theta_k_dot) of each leg, (N, 4, 3) [rad/s].
        leg_accelerations: the second derivatives, (N, 4, 3) [rad/s^2].
        a_h, a_k: hip and knee accelerations (eqs. 29, 30), (N, 4, 3) [m/s^2].
        a_n: tail-tip acceleration (eq. 31), (N, 3) [m/s^2].
    """

    leg_rates: Array
    leg_accelerations: Array
    a_h: Array
    a_k: Array
    a_n: Array


def _accelerations_flat(P: QuadrupedParams, kin: QuadrupedKinematics, nu: Array, nud: Array) -> QuadrupedAccelerations:
    lth, lsh = P.l_th, P.l_sh
    v, w, thd = nu[:, :3], nu[:, 3:6], nu[:, 6:]
    vd, wd, thdd = nud[:, :3], nud[:, 3:6], nud[:, 6:]
    R, ha, hb, k = kin.R, kin.theta_ha, kin.theta_hb, kin.theta_k
    # eqs. (14), (16), (18): joint rates from the twist
    had = np.einsum("nkj,nj->nk", kin.j_ha, nu)
    hbd = np.einsum("nkj,nj->nk", kin.j_hb, nu)
    kd = np.einsum("nkj,nj->nk", kin.j_k, nu)
    # Second derivative of eq. (12): R s_ddot = -v_dot + 2 w x v + (d - p) x w_dot - w x ((d - p) x w)
    wN, vN = w[:, None], v[:, None]
    rhs_S = -vd[:, None] + 2.0 * cross(wN, vN) + cross(kin.dp, wd[:, None]) - cross(wN, cross(kin.dp, wN))
    s_dd = np.einsum("nkji,nkj->nki", kin.RL, rhs_S)
    # Loop equation (5) twice differentiated in the leg: s = Ry(ha) w(hb, k),
    # w = l_th u(hb) + l_sh u(hb + pi - k); J_f theta_ddot = s_ddot - (terms quadratic in rates).
    b2 = hb + np.pi - k
    wv = lth * _u(hb) + lsh * _u(b2)
    w_hb = lth * _du(hb) + lsh * _du(b2)
    w_k = -lsh * _du(b2)
    Ry = _rot_y(ha)
    ey = np.broadcast_to(_EY, wv.shape)
    J_f = np.einsum("nkij,nkjl->nkil", Ry, np.stack([cross(ey, wv), w_hb, w_k], axis=-1))
    wdot = w_hb * hbd[..., None] + w_k * kd[..., None]
    wdd_q = -lth * _u(hb) * (hbd**2)[..., None] - lsh * _u(b2) * ((hbd - kd) ** 2)[..., None]
    quad_local = (cross(ey, cross(ey, wv)) * (had**2)[..., None] + 2.0 * cross(ey, wdot) * had[..., None] + wdd_q)
    quad = np.einsum("nkij,nkj->nki", Ry, quad_local)
    theta_dd = np.linalg.solve(J_f, (s_dd - quad)[..., None])[..., 0]
    hadd, hbdd = theta_dd[..., 0], theta_dd[..., 1]
    # eq. (29) (the first tilde is [w_dot]x): a_h = v_dot + w_dot x a + w x (w x a)
    aS = kin.a
    a_h = vd[:, None] + cross(wd[:, None], aS) + cross(wN, cross(wN, aS))
    # eq. (30): knee acceleration, with Q_k_dot the derivative of eq. (22)
    cha, sha, chb, shb = np.cos(ha), np.sin(ha), np.cos(hb), np.sin(hb)
    Qd = lth * np.stack([np.stack([sha * chb * had + cha * shb * hbd, cha * shb * had + sha * chb * hbd], -1),
                         np.stack([np.zeros_like(chb), shb * hbd], -1),
                         np.stack([cha * chb * had - sha * shb * hbd, -sha * shb * had + cha * chb * hbd], -1)], -2)
    hip_rates = np.stack([had, hbd], -1)
    hip_acc = np.stack([hadd, hbdd], -1)
    ab = aS + kin.b
    RQt = np.einsum("nkij,nkj->nki", kin.RL, np.einsum("nkij,nkj->nki", kin.Q_k, hip_rates))
    a_k = (vd[:, None] + cross(wd[:, None], ab) + cross(wN, cross(wN, ab)) + 2.0 * cross(wN, RQt)
           + np.einsum("nkij,nkj->nki", kin.RL, np.einsum("nkij,nkj->nki", kin.Q_k, hip_acc)
                       + np.einsum("nkij,nkj->nki", Qd, hip_rates)))
    # eq. (31): tail tip, K_t = K_n of eq. (25), K_n_dot its derivative
    a_n = vd + cross(wd, kin.rt) + cross(w, cross(w, kin.rt)) + _tail_velocity_terms(P, kin, w, thd)
    a_n = a_n + np.einsum("nij,nj->ni", R, np.einsum("nij,nj->ni", kin.K_n, thdd))
    rates = np.stack([had, hbd, kd], -1)
    accs = np.stack([hadd, hbdd, theta_dd[..., 2]], -1)
    return QuadrupedAccelerations(rates, accs, a_h, a_k, a_n)


def _tail_K_dot(P: QuadrupedParams, ta: Array, tb: Array, ad: Array, bd: Array) -> Array:
    """K_n_dot: time derivative of eq. (25), (N, 3, 2)."""
    ca, sa, cb, sb = np.cos(ta), np.sin(ta), np.cos(tb), np.sin(tb)
    z = np.zeros_like(cb)
    return P.l_t * np.stack([
        np.stack([z, -sb * bd], -1),
        np.stack([ca * cb * ad - sa * sb * bd, -sa * sb * ad + ca * cb * bd], -1),
        np.stack([sa * cb * ad + ca * sb * bd, ca * sb * ad + sa * cb * bd], -1),
    ], -2)


def _tail_velocity_terms(P: QuadrupedParams, kin: QuadrupedKinematics, w: Array, thd: Array) -> Array:
    """2 [w]x R K_n theta_t_dot + R K_n_dot theta_t_dot: the rate terms of eqs. (31) and (48)."""
    Kd = _tail_K_dot(P, kin.q[:, 6], kin.q[:, 7], thd[:, 0], thd[:, 1])
    RKt = np.einsum("nij,nj->ni", kin.R, np.einsum("nij,nj->ni", kin.K_n, thd))
    return 2.0 * cross(w, RKt) + np.einsum("nij,nj->ni", kin.R, np.einsum("nij,nj->ni", Kd, thd))


def _flat_motion(q: ArrayLike, nu: ArrayLike, nu_dot: ArrayLike | None) -> tuple[list[Array], tuple[int, ...]]:
    parts = [_flat_q(q), as_batch(nu, 8, "nu", COORDINATE_NAMES)]
    if nu_dot is not None:
        parts.append(as_batch(nu_dot, 8, "nu_dot", COORDINATE_NAMES))
    return broadcast_batch(parts)


def _checked_kinematics(P: QuadrupedParams, qf: Array) -> QuadrupedKinematics:
    kin = _kinematics_flat(P, qf)
    if not np.all(kin.ok):
        raise SingularityError(kin.message)
    return kin


def accelerations(params: QuadrupedParams, q: ArrayLike, nu: ArrayLike, nu_dot: ArrayLike) -> QuadrupedAccelerations:
    """Leg joint rates and accelerations, hip, knee and tail-tip accelerations (eqs. 14-18, 29-31).

    Args:
        q: generalized coordinates (..., 8); nu, nu_dot: twist and its derivative (..., 8).

    Returns:
        A QuadrupedAccelerations with the batch flattened to N.
    """
    (qf, nuf, nudf), _ = _flat_motion(q, nu, nu_dot)
    return _accelerations_flat(params, _checked_kinematics(params, qf), nuf, nudf)
