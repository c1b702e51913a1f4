"""Quadruped with a 2-dof tail, four feet on the ground, by the virtual work principle.

The formulation of Liu & Ben-Tzvi ("Dynamic modeling of a quadruped with a robotic tail using
virtual work principle"): an 8-dof hybrid mechanism whose torso (the travelling plate) is
carried by four SRRR legs (hip universal joint = ``theta_ha`` about y then ``theta_hb``, knee
``theta_k``, spherical foot fixed on the ground) and carries a pendulum tail (universal joint
``theta_ta`` about x then ``theta_tb`` about z, massless bar, point mass at the tip N).

Coordinates and velocities
    ``q = [p, phi_x, phi_y, phi_z, theta_ta, theta_tb]`` (8,): torso centre P in the ground
    frame S [m], the fixed-axis roll-pitch-yaw angles of eq. (1), ``R = Rz Ry Rx`` [rad], and
    the tail angles [rad]. The paper's velocity is the twist ``nu = [v, omega, theta_ta_dot,
    theta_tb_dot]`` (8,), omega the torso angular velocity in S: every Jacobian of eqs. (13)-(28)
    multiplies ``nu``. Eqs. (2)-(3) state ``omega = phi_dot``, which holds only where
    ``phi_y = phi_z = 0``; here ``omega = E(phi) phi_dot`` (:func:`rpy_rate_matrix`) and the
    functions with ``nu`` in their signature use the twist, as the paper's equations do. The
    :class:`QuadrupedTail` interface speaks plain coordinate rates ``qd = dq/dt``.

Corrections to the machine-extracted equations (each one is also noted at its line):
    (7)  ``theta_ha = atan(s_x / s_z)``: atan2(s_x, s_z) gives angles near pi for a leg below
         its hip (s_z < 0), outside the stated range (-pi/2, pi/2).
    (11) the left side is ``sin(pi - theta_k) theta_k_dot`` (the derivative of a cosine).
    (13) ``j_s = [-R_S^P, R_S^P [d_i - p]x]``: the skew of (d_i - p) is lost in the text.
    (17)-(18) are written for the knee's relative angle ``pi - theta_k``; with the knee angle of
         eq. (6) (the interior angle HKF, which makes the knee torques of section 4.1
         positive) they read ``cos(theta_hb - theta_k)`` and the lower sum becomes a difference.
    (19) ``v_h = d(p + a_i)/dt`` (the hip is at p + a_i, eq. 4).
    (29)-(31) the first tilde terms are ``[omega_dot]x`` (angular acceleration).
    (36) the hip term is ``m_th / 2`` (the thigh's half of its weight), as in (40) and (47).
    (48) the last term is ``K_t_dot theta_t_dot`` (velocities, not angles).
    (51) a bar's mass matrix is ``m/3 (J1^T J1 + J2^T J2) + m/6 (J1^T J2 + J2^T J1)``: the
         extracted form puts the whole cross term ``m/3 J1^T J2`` on one side, which gives the
         right kinetic energy but is not symmetric.
    K_t of (31), (48), (55) is K_n of (25).

Leg joint accelerations, which the paper leaves implicit in (30), come from differentiating the
loop equation (5) twice.

Geometry not given by the paper (see ``config/quadruped_tail.yaml``): the hip rectangle and the
tail joint are the vectors that fit Table 1's distances and the feet of section 4; the four
identical legs are written in leg frames L_i (frame P turned by ``hip_yaw_i`` about z), and the
rear pair is mounted turned by 180 deg: with that mounting the torques holding the initial pose
at rest match the constant part of the section 4.1 profile, with all knees on one side they do
not (the hips theta_ha_1,2 would need -92/+92 N m where the profile applies 0).

Every function takes leading batch dimensions: ``q`` of shape (..., 8).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._batch import as_batch, broadcast_batch
from ..errors import SingularityError, UnknownNameError
from ..spatial import cross, rpy_rate_matrix, rpy_rate_matrix_dot
from .quadruped_kinematics import (
    _COND_MAX,
    COORDINATE_NAMES,
    QuadrupedAccelerations,
    QuadrupedKinematics,
    _accelerations_flat,
    _actuation_message,
    _checked_kinematics,
    _flat_motion,
    _flat_q,
    _tail_velocity_terms,
    accelerations,
    check_configuration,
    kinematics,
    leg_inverse_kinematics,
    leg_positions,
)
from .quadruped_params import QuadrupedParams, load_quadruped_params

__all__ = [
    "COORDINATE_NAMES",
    "ACTUATED_JOINTS",
    "REDUNDANT_JOINTS",
    "LEG_JOINTS",
    "DISTRIBUTIONS",
    "QuadrupedKinematics",
    "QuadrupedAccelerations",
    "QuadrupedForces",
    "QuadrupedTail",
    "rpy_rate_matrix",
    "rpy_rate_matrix_dot",
    "velocity_from_rates",
    "rates_from_velocity",
    "leg_inverse_kinematics",
    "leg_positions",
    "kinematics",
    "accelerations",
    "generalized_forces",
    "mass_matrix",
    "gravity_forces",
    "bias_forces",
    "coriolis_terms",
    "inverse_dynamics",
    "forward_dynamics",
    "actuation_force",
    "energy",
    "check_configuration",
]

Array = NDArray[np.float64]

#: The non-redundant actuated joints q_a, in the order of eq. (27).
ACTUATED_JOINTS = ("theta_ha_1", "theta_ha_2", "theta_k_1", "theta_k_2", "theta_k_3", "theta_k_4",
                   "theta_ta", "theta_tb")
#: The redundant actuated joints q_p, in the order of eq. (28).
REDUNDANT_JOINTS = ("theta_ha_3", "theta_ha_4", "theta_hb_1", "theta_hb_2", "theta_hb_3", "theta_hb_4")
#: The joints of the four legs, leg by leg.
LEG_JOINTS = tuple(f"theta_{j}_{i}" for i in range(1, 5) for j in ("ha", "hb", "k"))
#: How the inverse dynamics shares the load between tau_a and tau_p.
DISTRIBUTIONS = ("prescribed", "min_norm")

_EZ = np.array([0.0, 0.0, 1.0])


# -- orientation rates: spatial.rpy_rate_matrix (eq. 1) -------------------------------------------
def velocity_from_rates(q: ArrayLike, qd: ArrayLike, qdd: ArrayLike | None = None) -> tuple[Array, Array]:
    """The twist ``nu`` and its derivative ``nu_dot`` from coordinate rates ``qd``, ``qdd``.

    ``omega = E phi_dot``, ``omega_dot = E phi_ddot + E_dot phi_dot``; the other entries are
    unchanged. Shapes (..., 8); ``qdd`` defaults to zeros.
    """
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    qdd = np.zeros(np.broadcast_shapes(q.shape, qd.shape)) if qdd is None else np.asarray(qdd, dtype=float)
    E = rpy_rate_matrix(q[..., 3:6])
    Ed = rpy_rate_matrix_dot(q[..., 3:6], qd[..., 3:6])
    nu, nud = np.array(qd, dtype=float), np.array(qdd, dtype=float)
    nu[..., 3:6] = np.einsum("...ij,...j->...i", E, qd[..., 3:6])
    nud[..., 3:6] = np.einsum("...ij,...j->...i", E, qdd[..., 3:6]) + np.einsum("...ij,...j->...i", Ed, qd[..., 3:6])
    return nu, nud


def rates_from_velocity(q: ArrayLike, nu: ArrayLike, nu_dot: ArrayLike | None = None) -> tuple[Array, Array]:
    """Coordinate rates ``qd`` and ``qdd`` from the twist ``nu`` and ``nu_dot`` (default zeros).

    Raises:
        SingularityError: ``cos(phi_y) = 0`` (the roll-pitch-yaw angles are singular there).
    """
    q, nu = np.asarray(q, dtype=float), np.asarray(nu, dtype=float)
    if np.any(np.abs(np.cos(q[..., 4])) < 1e-9):
        raise SingularityError("phi_y = +-pi/2: the roll-pitch-yaw rates are undefined (gimbal lock)")
    nud = np.zeros(np.broadcast_shapes(q.shape, nu.shape)) if nu_dot is None else np.asarray(nu_dot, dtype=float)
    E = rpy_rate_matrix(q[..., 3:6])
    qd, qdd = np.array(nu, dtype=float), np.array(nud, dtype=float)
    qd[..., 3:6] = np.linalg.solve(E, nu[..., 3:6, None])[..., 0]
    Ed = rpy_rate_matrix_dot(q[..., 3:6], qd[..., 3:6])
    rhs = nud[..., 3:6] - np.einsum("...ij,...j->...i", Ed, qd[..., 3:6])
    qdd[..., 3:6] = np.linalg.solve(E, rhs[..., None])[..., 0]
    return qd, qdd


# -- virtual work: inverse dynamics (eqs. 32-41) ----------------------------------------------
class QuadrupedForces(NamedTuple):
    """Generalized forces of eq. (37) and the actuator torques that balance them.

    Attributes:
        tau_a: non-redundant actuator torques, ACTUATED_JOINTS order, (..., 8) [N m].
        tau_p: redundant actuator torques, REDUNDANT_JOINTS order, (..., 6) [N m].
        generalized: right side of eq. (37), tau_b + tau_t + sum tau_l, (..., 8)
            [N, N m] (work-conjugate to nu).
        tau_b, tau_t: torso (eq. 38) and tail (eq. 39) parts, (..., 8).
        tau_l: the four legs' parts (eq. 40), (..., 4, 8).
    """

    tau_a: Array
    tau_p: Array
    generalized: Array
    tau_b: Array
    tau_t: Array
    tau_l: Array


def _generalized_flat(P: QuadrupedParams, kin: QuadrupedKinematics, nu: Array, nud: Array,
                      gravity: bool = True) -> tuple[Array, Array, Array]:
    acc = _accelerations_flat(P, kin, nu, nud)
    N = nu.shape[0]
    g = P.g * _EZ if gravity else np.zeros(3)  # -[0, 0, -g]
    w, vd, wd = nu[:, 3:6], nud[:, :3], nud[:, 3:6]
    # eq. (38): tau_b = J_bx^T m_b (v_dot - [0 0 -g]) + J_bw^T (I_b w_dot + [w]x I_b w), I_b = R I_b^(P) R^T
    I_S = kin.R @ P.I_b @ np.swapaxes(kin.R, -1, -2)
    tau_b = np.zeros((N, 8))
    tau_b[:, :3] = P.m_b * (vd + g)
    tau_b[:, 3:6] = np.einsum("nij,nj->ni", I_S, wd) + cross(w, np.einsum("nij,nj->ni", I_S, w))
    # eq. (39): tau_t = J_t^T m_t (a_n - [0 0 -g])
    tau_t = np.einsum("nij,ni->nj", kin.J_t, P.m_t * (acc.a_n + g))
    # eq. (40): each leg = thigh (ideal bar H-K) + shank (ideal bar K-F, F fixed), eqs. (33)-(36)
    mth, msh = P.m_th, P.m_sh
    fk = (mth + msh) / 3.0 * acc.a_k + mth / 6.0 * acc.a_h + (mth + msh) / 2.0 * g
    fh = mth / 3.0 * acc.a_h + mth / 6.0 * acc.a_k + mth / 2.0 * g
    tau_l = np.einsum("nkij,nki->nkj", kin.J_k, fk) + np.einsum("nkij,nki->nkj", kin.J_h, fh)
    return tau_b, tau_t, tau_l


def generalized_forces(params: QuadrupedParams, q: ArrayLike, nu: ArrayLike, nu_dot: ArrayLike) -> Array:
    """Right side of eq. (37): the generalized force the actuators must supply, (..., 8).

    Equals ``M nu_dot + C + G`` (eq. 42); work-conjugate to the twist ``nu``.
    """
    (qf, nuf, nudf), batch = _flat_motion(q, nu, nu_dot)
    tb, tt, tl = _generalized_flat(params, _checked_kinematics(params, qf), nuf, nudf)
    return (tb + tt + tl.sum(axis=1)).reshape(batch + (8,))


def _solve_actuators(kin: QuadrupedKinematics, F: Array, tau_p: Array | None, distribution: str) -> tuple[Array, Array]:
    """tau_a, tau_p with J_tau_a^T tau_a + J_tau_p^T tau_p = F (eq. 37); SingularityError if J_tau_a is singular."""
    N = F.shape[0]
    JaT = np.swapaxes(kin.J_tau_a, -1, -2)
    JpT = np.swapaxes(kin.J_tau_p, -1, -2)
    if distribution == "min_norm":
        # minimum-norm split of the 14 torques: [J_a^T J_p^T] tau = F
        A = np.concatenate([JaT, JpT], axis=-1)
        tau = np.einsum("nij,nj->ni", np.linalg.pinv(A), F)
        s = np.linalg.svd(A, compute_uv=False)
        if np.any(s[:, -1] <= 1e-12 * s[:, 0]):
            raise SingularityError("the 14 actuators cannot balance the motion ([J_tau_a^T J_tau_p^T] has rank < 8)")
        return tau[:, :8], tau[:, 8:]
    tp = np.zeros((N, 6)) if tau_p is None else tau_p
    cond = np.linalg.cond(kin.J_tau_a)
    bad = ~np.isfinite(cond) | (cond > _COND_MAX)
    if np.any(bad):
        n = int(np.argmax(bad))
        raise SingularityError((f"sample {n}: " if N > 1 else "") + _actuation_message(float(cond[n])))
    # eq. (41), generalised to a prescribed tau_p: tau_a = J_tau_a^-T (F - J_tau_p^T tau_p)
    ta = np.linalg.solve(JaT, (F - np.einsum("nij,nj->ni", JpT, tp))[..., None])[..., 0]
    return ta, tp


def inverse_dynamics(
    params: QuadrupedParams,
    q: ArrayLike,
    nu: ArrayLike,
    nu_dot: ArrayLike,
    tau_p: ArrayLike | None = None,
    *,
    distribution: str = "prescribed",
) -> QuadrupedForces:
    """Actuator torques for a motion, by virtual work (eqs. 37-41).

    Args:
        params: the quadruped.
        q: generalized coordinates (..., 8); nu, nu_dot: twist and its derivative (..., 8).
        tau_p: prescribed redundant torques (..., 6), REDUNDANT_JOINTS order; default zeros
            (the paper's choice, eq. 41). Used with ``distribution="prescribed"``.
        distribution: ``"prescribed"`` (tau_p given, tau_a solved, eq. 41) or ``"min_norm"``
            (the minimum-norm set of all 14 torques).

    Raises:
        SingularityError: an unreachable leg configuration, or J_tau_a singular (eq. 41).
        UnknownNameError: an unknown distribution.
    """
    if distribution not in DISTRIBUTIONS:
        raise UnknownNameError("distribution", distribution, DISTRIBUTIONS)
    parts = [_flat_q(q), as_batch(nu, 8, "nu", COORDINATE_NAMES), as_batch(nu_dot, 8, "nu_dot", COORDINATE_NAMES)]
    if tau_p is not None:
        parts.append(as_batch(tau_p, 6, "tau_p", REDUNDANT_JOINTS))
    flat, batch = broadcast_batch(parts)
    qf, nuf, nudf = flat[:3]
    kin = _checked_kinematics(params, qf)
    tb, tt, tl = _generalized_flat(params, kin, nuf, nudf)
    F = tb + tt + tl.sum(axis=1)  # eq. (37), right side
    ta, tp = _solve_actuators(kin, F, flat[3] if tau_p is not None else None, distribution)
    return QuadrupedForces(ta.reshape(batch + (8,)), tp.reshape(batch + (6,)), F.reshape(batch + (8,)),
                           tb.reshape(batch + (8,)), tt.reshape(batch + (8,)), tl.reshape(batch + (4, 8)))


# -- forward dynamics (eqs. 42-55) -------------------------------------------------------------
def _bar_mass(m: float, J1: Array, J2: Array) -> Array:
    """Mass matrix of an ideal bar from its end-point Jacobians, eq. (51) corrected.

    T = m/6 (v1.v1 + v2.v2 + v1.v2), so M = m/3 (J1^T J1 + J2^T J2) + m/6 (J1^T J2 + J2^T J1).
    """
    J1T, J2T = np.swapaxes(J1, -1, -2), np.swapaxes(J2, -1, -2)
    return m / 3.0 * (J1T @ J1 + J2T @ J2) + m / 6.0 * (J1T @ J2 + J2T @ J1)


def _mass_flat(P: QuadrupedParams, kin: QuadrupedKinematics) -> Array:
    N = kin.R.shape[0]
    # eq. (54): torso
    M = np.zeros((N, 8, 8))
    M[:, :3, :3] = P.m_b * np.eye(3)
    M[:, 3:6, 3:6] = kin.R @ P.I_b @ np.swapaxes(kin.R, -1, -2)
    # eq. (55): tail tip, m_t J_t^T J_t
    M += P.m_t * np.swapaxes(kin.J_t, -1, -2) @ kin.J_t
    # eq. (53): thigh (bar H-K) and shank (bar K-F with J_F = 0)
    zero = np.zeros_like(kin.J_k)
    M += (_bar_mass(P.m_th, kin.J_h, kin.J_k) + _bar_mass(P.m_sh, kin.J_k, zero)).sum(axis=1)
    return M


def mass_matrix(params: QuadrupedParams, q: ArrayLike) -> Array:
    """Mass matrix M(q) of eq. (42) in the twist coordinates nu (eqs. 51-55), (..., 8, 8).

    Kinetic energy ``T = 1/2 nu^T M nu``; symmetric positive definite at regular configurations.
    """
    qf, batch = _flat_q(q)
    return _mass_flat(params, _checked_kinematics(params, qf)).reshape(batch + (8, 8))


def _gravity_flat(P: QuadrupedParams, kin: QuadrupedKinematics) -> Array:
    # eq. (47): G = [m_b J_bx^T + m_t J_t^T + sum(J_k^T (m_th + m_sh)/2 + J_h^T m_th/2)] [0, 0, g]
    N = kin.R.shape[0]
    gz = P.g * _EZ
    G = np.zeros((N, 8))
    G[:, :3] = P.m_b * gz
    G += P.m_t * np.einsum("nij,i->nj", kin.J_t, gz)
    G += np.einsum("nkij,i->nj", kin.J_k, (P.m_th + P.m_sh) / 2.0 * gz)
    G += np.einsum("nkij,i->nj", kin.J_h, P.m_th / 2.0 * gz)
    return G


def gravity_forces(params: QuadrupedParams, q: ArrayLike) -> Array:
    """G(q) of eq. (47), (..., 8)."""
    qf, batch = _flat_q(q)
    return _gravity_flat(params, _checked_kinematics(params, qf)).reshape(batch + (8,))


def bias_forces(params: QuadrupedParams, q: ArrayLike, nu: ArrayLike) -> Array:
    """C(q, nu) + G(q) of eq. (42): the inverse dynamics at nu_dot = 0, (..., 8).

    C collects eq. (45) (torso), eq. (48) (tail) and the legs' velocity terms, which the paper
    omits "due to space limitations" and which come here from eq. (30) at zero acceleration.
    """
    (qf, nuf), batch = _flat_motion(q, nu, None)
    kin = _checked_kinematics(params, qf)
    tb, tt, tl = _generalized_flat(params, kin, nuf, np.zeros_like(nuf))
    return (tb + tt + tl.sum(axis=1)).reshape(batch + (8,))


def coriolis_terms(params: QuadrupedParams, q: ArrayLike, nu: ArrayLike) -> dict[str, Array]:
    """The parts of C(q, nu) (eq. 44): torso (eq. 45), tail (eq. 48) and legs, each (..., 8).

    The legs' part, which the paper omits, is eq. (40) at zero acceleration and gravity.
    """
    (qf, nuf), batch = _flat_motion(q, nu, None)
    kin = _checked_kinematics(params, qf)
    w, thd = nuf[:, 3:6], nuf[:, 6:]
    N = qf.shape[0]
    # eq. (45): C_b = J_bw^T [w]x I_b w
    I_S = kin.R @ params.I_b @ np.swapaxes(kin.R, -1, -2)
    C_b = np.zeros((N, 8))
    C_b[:, 3:6] = cross(w, np.einsum("nij,nj->ni", I_S, w))
    # eq. (48) corrected: C_t = m_t J_t^T ([w]x^2 (r + t) + 2 [w]x R K_t theta_t_dot + R K_t_dot theta_t_dot)
    a_vel = cross(w, cross(w, kin.rt)) + _tail_velocity_terms(params, kin, w, thd)
    C_t = params.m_t * np.einsum("nij,ni->nj", kin.J_t, a_vel)
    _, _, tl = _generalized_flat(params, kin, nuf, np.zeros_like(nuf), gravity=False)
    return {"torso": C_b.reshape(batch + (8,)), "tail": C_t.reshape(batch + (8,)),
            "legs": tl.sum(axis=1).reshape(batch + (8,))}


def actuation_force(params: QuadrupedParams, q: ArrayLike, tau_a: ArrayLike, tau_p: ArrayLike | None = None) -> Array:
    """F = J_tau_a^T tau_a + J_tau_p^T tau_p (eq. 46), (..., 8)."""
    parts = [_flat_q(q), as_batch(tau_a, 8, "tau_a", ACTUATED_JOINTS)]
    if tau_p is not None:
        parts.append(as_batch(tau_p, 6, "tau_p", REDUNDANT_JOINTS))
    flat, batch = broadcast_batch(parts)
    kin = _checked_kinematics(params, flat[0])
    F = np.einsum("nij,ni->nj", kin.J_tau_a, flat[1])
    if tau_p is not None:
        F += np.einsum("nij,ni->nj", kin.J_tau_p, flat[2])
    return F.reshape(batch + (8,))


def _forward_flat(P: QuadrupedParams, kin: QuadrupedKinematics, nu: Array, ta: Array, tp: Array | None) -> Array:
    M = _mass_flat(P, kin)
    tb, tt, tl = _generalized_flat(P, kin, nu, np.zeros_like(nu))
    CG = tb + tt + tl.sum(axis=1)
    F = np.einsum("nij,ni->nj", kin.J_tau_a, ta)  # eq. (46)
    if tp is not None:
        F += np.einsum("nij,ni->nj", kin.J_tau_p, tp)
    # eq. (43): nu_dot = M^-1 (F - C - G), by a Cholesky-backed solve (M is SPD)
    return np.linalg.solve(M, (F - CG)[..., None])[..., 0]


def forward_dynamics(
    params: QuadrupedParams, q: ArrayLike, nu: ArrayLike, tau_a: ArrayLike, tau_p: ArrayLike | None = None
) -> Array:
    """Twist derivative nu_dot under actuator torques (eq. 43), (..., 8).

    Args:
        q: generalized coordinates (..., 8); nu: twist (..., 8).
        tau_a: non-redundant torques (..., 8), ACTUATED_JOINTS order.
        tau_p: redundant torques (..., 6), REDUNDANT_JOINTS order; default zeros.

    Raises:
        SingularityError: an unreachable or singular leg configuration.
    """
    parts = [_flat_q(q), as_batch(nu, 8, "nu", COORDINATE_NAMES), as_batch(tau_a, 8, "tau_a", ACTUATED_JOINTS)]
    if tau_p is not None:
        parts.append(as_batch(tau_p, 6, "tau_p", REDUNDANT_JOINTS))
    flat, batch = broadcast_batch(parts)
    kin = _checked_kinematics(params, flat[0])
    out = _forward_flat(params, kin, flat[1], flat[2], flat[3] if tau_p is not None else None)
    return out.reshape(batch + (8,))


def _potential_flat(P: QuadrupedParams, kin: QuadrupedKinematics) -> Array:
    p = kin.q[:, :3]
    hip_z = p[:, None, 2] + kin.a[..., 2]
    knee_z = hip_z + kin.b[..., 2]
    foot_z = P.d[None, :, 2]
    tip_z = p[:, 2] + kin.rt[:, 2]
    z = (P.m_b * p[:, 2] + P.m_t * tip_z
         + (P.m_th * (hip_z + knee_z) / 2.0 + P.m_sh * (knee_z + foot_z) / 2.0).sum(axis=1))
    return P.g * z


def _energy_flat(P: QuadrupedParams, kin: QuadrupedKinematics, nu: Array) -> tuple[Array, Array]:
    """(kinetic, potential) energy [J], each (N,), for twists nu (N, 8) at the configurations of ``kin``."""
    T = 0.5 * np.einsum("ni,nij,nj->n", nu, _mass_flat(P, kin), nu)
    return T, _potential_flat(P, kin)


def energy(params: QuadrupedParams, q: ArrayLike, nu: ArrayLike) -> tuple[Array, Array]:
    """(kinetic, potential) energy [J], each (...): ``1/2 nu^T M nu`` and the weight's potential."""
    (qf, nuf), batch = _flat_motion(q, nu, None)
    T, V = _energy_flat(params, _checked_kinematics(params, qf), nuf)
    return T.reshape(batch), V.reshape(batch)


# -- the common closed-chain interface (general.Mechanism) ---------------------------------------
class QuadrupedTail:
    """The quadruped in the common Mechanism interface: coordinates q, rates qd = dq/dt.

    ``inverse_dynamics``, ``forward_dynamics`` and ``mass_matrix`` answer as for a serial robot,
    in the coordinates ``COORDINATE_NAMES`` and their plain time derivatives (the roll-pitch-yaw
    rates, converted to the paper's twist internally).

    Args:
        params: the quadruped (default: the bundled Table 1 parameters).
        actuation: ``"paper"``: the 8 actuators q_a with the redundant torques held at zero
            (eq. 41); ``"all"``: the 14 actuators q_a + q_p, minimum-norm inverse dynamics.
    """

    ACTUATIONS = ("paper", "all")

    def __init__(self, params: QuadrupedParams | None = None, actuation: str = "paper") -> None:
        if actuation not in self.ACTUATIONS:
            raise UnknownNameError("actuation", actuation, self.ACTUATIONS)
        self.params = load_quadruped_params() if params is None else params
        self.actuation = actuation

    @property
    def nq(self) -> int:
        """Number of generalized coordinates (8)."""
        return 8

    @property
    def coordinate_names(self) -> tuple[str, ...]:
        """Names of the generalized coordinates."""
        return COORDINATE_NAMES

    @property
    def actuator_names(self) -> tuple[str, ...]:
        """Names of the actuated joints (tau order)."""
        return ACTUATED_JOINTS if self.actuation == "paper" else ACTUATED_JOINTS + REDUNDANT_JOINTS

    def inverse_dynamics(self, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike) -> Array:
        """Actuator torques (..., na) [N m] for the motion q, qd = dq/dt, qdd = d2q/dt2."""
        (qf, qdf, qddf), batch = broadcast_batch([_flat_q(q), as_batch(qd, 8, "qd", COORDINATE_NAMES),
                                                  as_batch(qdd, 8, "qdd", COORDINATE_NAMES)])
        nu, nud = velocity_from_rates(qf, qdf, qddf)
        dist = "prescribed" if self.actuation == "paper" else "min_norm"
        res = inverse_dynamics(self.params, qf, nu, nud, distribution=dist)
        tau = res.tau_a if self.actuation == "paper" else np.concatenate([res.tau_a, res.tau_p], axis=-1)
        return tau.reshape(batch + (len(self.actuator_names),))

    def forward_dynamics(self, q: ArrayLike, qd: ArrayLike, tau: ArrayLike) -> Array:
        """Coordinate accelerations d2q/dt2 (..., 8) under actuator torques tau (..., na)."""
        na = len(self.actuator_names)
        (qf, qdf, tf), batch = broadcast_batch([_flat_q(q), as_batch(qd, 8, "qd", COORDINATE_NAMES),
                                                as_batch(tau, na, "tau", self.actuator_names)])
        nu, _ = velocity_from_rates(qf, qdf)
        tp = tf[:, 8:] if na == 14 else None
        nud = forward_dynamics(self.params, qf, nu, tf[:, :8], tp)
        _, qdd = rates_from_velocity(qf, nu, nud)
        return qdd.reshape(batch + (8,))

    def mass_matrix(self, q: ArrayLike) -> Array:
        """Mass matrix in the coordinate rates, ``H^T M H`` with nu = H qd, (..., 8, 8)."""
        qf, batch = _flat_q(q)
        M = mass_matrix(self.params, qf)
        H = np.broadcast_to(np.eye(8), M.shape).copy()
        H[:, 3:6, 3:6] = rpy_rate_matrix(qf[:, 3:6])
        return (np.swapaxes(H, -1, -2) @ M @ H).reshape(batch + (8, 8))

    def energy(self, q: ArrayLike, qd: ArrayLike) -> Array:
        """Total mechanical energy [J], (...)."""
        nu, _ = velocity_from_rates(np.asarray(q, dtype=float), np.asarray(qd, dtype=float))
        T, V = energy(self.params, q, nu)
        return T + V

    def __repr__(self) -> str:
        return f"QuadrupedTail(params={self.params.name!r}, actuation={self.actuation!r})"
