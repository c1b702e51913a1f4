"""Forward simulation of the quadruped with a tail and the paper's two scenarios (section 4).

* :func:`simulate`: fixed-step RK4 (the paper's Simulink runs use ODE4) of eq. (43) in the
  state (q, nu), with ``q_dot = [v, E(phi)^-1 omega, theta_t_dot]``; it also integrates the
  actuators' work so that the energy balance ``E(t) - E(0) = W(t)`` can be checked. It never
  raises on the state: an unreachable or singular configuration stops it with ``ok=False``
  and a one-line message.
* :func:`yaw_manoeuvre`: section 4.1, the torque profile that makes the robot yaw.
* :func:`pitch_motion`: section 4.2, inverse dynamics of the pitch motion, then forward
  simulation under those torques, without and with the feedback compensation of Fig. 7.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._rk4 import rk4_step
from ..errors import InputError, SingularityError
from .quadruped import (
    _energy_flat,
    _forward_flat,
    _mass_flat,
    inverse_dynamics,
    rpy_rate_matrix,
    velocity_from_rates,
)
from .quadruped_kinematics import _COND_MAX, _kinematics_flat
from .quadruped_params import QuadrupedParams

__all__ = [
    "QuadrupedSimulation",
    "PitchResult",
    "simulate",
    "yaw_torques",
    "yaw_manoeuvre",
    "pitch_trajectory",
    "pitch_motion",
]

Array = NDArray[np.float64]


class _StageError(Exception):
    """An RK4 stage reached a state the model cannot take (its message says which)."""


TorqueLaw = Callable[[float, Array, Array], tuple[Array, Array]]


class QuadrupedSimulation(NamedTuple):
    """A simulated motion.

    Attributes:
        t: times (T,) [s].
        q: coordinates (T, 8); nu: twists (T, 8); nu_dot: their derivatives (T, 8).
        tau_a, tau_p: applied torques (T, 8), (T, 6) [N m].
        kinetic, potential: energies (T,) [J].
        work: work done by the actuators since t[0] (T,) [J].
        ok: False when the run stopped early; message: a one-line report.
    """

    t: Array
    q: Array
    nu: Array
    nu_dot: Array
    tau_a: Array
    tau_p: Array
    kinetic: Array
    potential: Array
    work: Array
    ok: bool
    message: str

    @property
    def energy_error(self) -> Array:
        """Energy balance residual E(t) - E(0) - W(t), (T,) [J]."""
        E = self.kinetic + self.potential
        return E - E[0] - self.work


def _q_dot(q: Array, nu: Array) -> Array | None:
    """q_dot from nu; None at the roll-pitch-yaw singularity."""
    E = rpy_rate_matrix(q[3:6])
    if abs(np.cos(q[4])) < 1e-9:
        return None
    qd = nu.copy()
    qd[3:6] = np.linalg.solve(E, nu[3:6])
    return qd


def _initial_state(q0: ArrayLike, nu0: ArrayLike, duration: float, dt: float) -> tuple[Array, Array, int]:
    """The initial coordinates and twist, each (8,), and the number of samples of the run.

    Raises:
        InputError: non-finite initial state, non-positive duration or step.
    """
    q = np.asarray(q0, dtype=float).reshape(8).copy()
    nu = np.asarray(nu0, dtype=float).reshape(8).copy()
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(nu))):
        raise InputError("q0 and nu0 must be 8 finite numbers each")
    if not (duration > 0 and dt > 0 and np.isfinite(duration) and np.isfinite(dt)):
        raise InputError(f"duration and dt must be positive, got {duration}, {dt}")
    return q, nu, int(round(duration / dt)) + 1


def _state_derivative(
    params: QuadrupedParams, torques: TorqueLaw, t: float, x: Array
) -> tuple[Array, Array, Array, Array, str | None]:
    """Derivative of the state ``x = [q, nu, W]`` (17,) at time t [s] (W: the actuators' work [J]).

    Returns:
        (x_dot (17,), nu_dot (8,), tau_a (8,), tau_p (6,), error): ``error`` is None, or the
        reason the state cannot be integrated (then x_dot is meaningless).
    """
    qk, nuk = x[:8], x[8:16]
    kin = _kinematics_flat(params, qk[None])
    if not kin.ok[0]:
        return x, nuk, np.zeros(8), np.zeros(6), kin.message
    qdk = _q_dot(qk, nuk)
    if qdk is None:
        return x, nuk, np.zeros(8), np.zeros(6), "phi_y reached +-pi/2 (roll-pitch-yaw singularity)"
    ta, tp = torques(t, qk, nuk)
    ta, tp = np.asarray(ta, dtype=float).reshape(8), np.asarray(tp, dtype=float).reshape(6)
    nud = _forward_flat(params, kin, nuk[None], ta[None], tp[None])[0]
    # power of the actuators, F . nu (eq. 46): tau_a . q_a_dot + tau_p . q_p_dot
    power = ta @ (kin.J_tau_a[0] @ nuk) + tp @ (kin.J_tau_p[0] @ nuk)
    if not np.all(np.isfinite(nud)):
        return x, nuk, ta, tp, "non-finite acceleration"
    return np.concatenate([qdk, nud, [power]]), nud, ta, tp, None


def _energies(params: QuadrupedParams, Q: Array, NU: Array) -> tuple[Array, Array]:
    """Kinetic and potential energy [J], each (m,), along the states Q, NU (m, 8) of a run."""
    if len(Q):
        return _energy_flat(params, _kinematics_flat(params, Q), NU)
    return np.zeros(0), np.zeros(0)


def simulate(
    params: QuadrupedParams,
    q0: ArrayLike,
    nu0: ArrayLike,
    duration: float,
    dt: float,
    torques: TorqueLaw,
) -> QuadrupedSimulation:
    """Integrate M nu_dot + C + G = F (eqs. 42-46) with RK4 at a fixed step.

    Args:
        params: the quadruped.
        q0, nu0: initial coordinates and twist, (8,).
        duration: simulated time [s]; dt: step [s].
        torques: ``(tau_a (8,), tau_p (6,)) = torques(t, q, nu)``, called at each RK4 stage.

    Returns:
        A QuadrupedSimulation (shorter, ``ok=False``, if a configuration became singular).

    Raises:
        InputError: non-finite initial state, non-positive duration or step.
        SingularityError: the initial configuration is unreachable or singular.
    """
    q, nu, n = _initial_state(q0, nu0, duration, dt)
    kin0 = _kinematics_flat(params, q[None])
    if not kin0.ok[0]:
        raise SingularityError(f"initial configuration: {kin0.message}")

    def stage(t: float, x: Array) -> Array:
        f, *_, err = _state_derivative(params, torques, t, x)
        if err is not None:
            raise _StageError(err)
        return f

    T = np.full(n, np.nan)
    Q, NU, NUD = np.full((n, 8), np.nan), np.full((n, 8), np.nan), np.full((n, 8), np.nan)
    TA, TP = np.full((n, 8), np.nan), np.full((n, 6), np.nan)
    W = np.full(n, np.nan)
    x = np.concatenate([q, nu, [0.0]])
    ok, message, last = True, f"integrated {duration:g} s with RK4, dt = {dt:g} s", n - 1
    for k in range(n):
        t = k * dt
        f1, nud, ta, tp, err = _state_derivative(params, torques, t, x)
        if err is not None:
            ok, message, last = False, f"stopped at t = {t:.4g} s: {err}", k - 1
            break
        T[k], Q[k], NU[k], NUD[k], TA[k], TP[k], W[k] = t, x[:8], x[8:16], nud, ta, tp, x[16]
        if k == n - 1:
            break
        try:
            x = rk4_step(stage, x, dt, f1, t=t)
        except _StageError as exc:
            ok, message, last = False, f"stopped at t = {t + dt:.4g} s: {exc}", k
            break
    m = last + 1
    kinetic, potential = _energies(params, Q[:m], NU[:m])
    return QuadrupedSimulation(T[:m], Q[:m], NU[:m], NUD[:m], TA[:m], TP[:m], kinetic, potential, W[:m], ok, message)


# -- section 4.1 --------------------------------------------------------------------------------
def yaw_torques(t: float) -> tuple[Array, Array]:
    """The torque profile of section 4.1: tau_a = [0, 0, 15, 15, 20.5, 20.5, -7.7, -10 sin(31.4 t)], tau_p = 0."""
    return np.array([0.0, 0.0, 15.0, 15.0, 20.5, 20.5, -7.7, -10.0 * np.sin(31.4 * t)]), np.zeros(6)


def yaw_manoeuvre(params: QuadrupedParams, duration: float = 1.0, dt: float = 1e-3) -> QuadrupedSimulation:
    """Section 4.1: forward simulation from the initial pose at rest under :func:`yaw_torques`."""
    return simulate(params, params.q0, np.zeros(8), duration, dt, lambda t, q, nu: yaw_torques(t))


# -- section 4.2 --------------------------------------------------------------------------------
#: Period of the pitch motion of section 4.2 [s].
PITCH_PERIOD = 0.3


def pitch_trajectory(params: QuadrupedParams, t: ArrayLike) -> tuple[Array, Array, Array]:
    """The desired pitch motion of section 4.2 and its derivatives.

    ``q = [0.2, 0.3, 0.4, pi/36 sin(2 pi t / 0.3), 0, 0, 0, pi/18 sin(2 pi t / 0.3 + pi)]``
    (the position entries are the initial pose's).

    Returns:
        (q, qd, qdd), each (..., 8), coordinate rates.
    """
    t = np.asarray(t, dtype=np.float64)
    w = 2.0 * np.pi / PITCH_PERIOD
    q = np.broadcast_to(params.q0, t.shape + (8,)).copy()
    qd = np.zeros(t.shape + (8,))
    qdd = np.zeros(t.shape + (8,))
    for idx, amp, phase in ((3, np.pi / 36.0, 0.0), (7, np.pi / 18.0, np.pi)):
        q[..., idx] = amp * np.sin(w * t + phase)
        qd[..., idx] = amp * w * np.cos(w * t + phase)
        qdd[..., idx] = -amp * w * w * np.sin(w * t + phase)
    return q, qd, qdd


class PitchResult(NamedTuple):
    """Section 4.2: required torques and three forward simulations.

    Attributes:
        t: times (T,) [s]; q_desired: desired coordinates (T, 8).
        tau_required: inverse-dynamics torques tau_a along the desired motion (T, 8) [N m].
        open_loop: forward run under tau_required from the desired initial state (the
            inverse-then-forward consistency check).
        open_loop_rest: the same torques from the paper's initial condition (at rest).
        closed_loop: from rest with the feedback of Fig. 7 added.
        tau_compensation: the feedback torque of the closed-loop run (T, 8) [N m].
        kp, kd: feedback gains [1/s^2], [1/s].
    """

    t: Array
    q_desired: Array
    tau_required: Array
    open_loop: QuadrupedSimulation
    open_loop_rest: QuadrupedSimulation
    closed_loop: QuadrupedSimulation
    tau_compensation: Array
    kp: float
    kd: float


def _required_torques(params: QuadrupedParams, t: Array) -> Array:
    """tau_a of the inverse model (eq. 41, tau_p = 0) along the desired pitch motion, (T, 8)."""
    q, qd, qdd = pitch_trajectory(params, t)
    nu, nud = velocity_from_rates(q, qd, qdd)
    return inverse_dynamics(params, q, nu, nud).tau_a


def pitch_motion(
    params: QuadrupedParams,
    duration: float = 0.9,
    dt: float = 1e-3,
    kp: float = 400.0,
    kd: float = 40.0,
) -> PitchResult:
    """Section 4.2: inverse dynamics of the pitch motion, then forward simulation.

    The feedback of Fig. 7 adds ``tau_c = J_tau_a^-T M H (kp e + kd e_dot)`` to the required
    torques, with ``e = q_d - q`` and ``H = blockdiag(I, E(phi), I)``: a computed-torque PD
    whose error dynamics are ``e_ddot + kd e_dot + kp e = 0`` once the model is exact, so
    ``tau_c`` decays to zero when the inverse model is right.

    Raises:
        SingularityError: the desired motion crosses a singular configuration (J_tau_a).
    """
    n = int(round(duration / dt)) + 1
    t = np.arange(n, dtype=np.float64) * dt
    q_des, qd_des, _ = pitch_trajectory(params, t)
    nu_des, _ = velocity_from_rates(q_des, qd_des)
    # the required torques on the RK4 half-step grid, computed once (batched)
    half = dt / 2.0
    tau_half = _required_torques(params, np.arange(2 * n - 1, dtype=np.float64) * half)
    tau_req = tau_half[::2]
    zeros6 = np.zeros(6)

    def required(tk: float) -> Array:
        return tau_half[min(int(round(tk / half)), len(tau_half) - 1)]

    def feedforward(tk: float, q: Array, nu: Array) -> tuple[Array, Array]:
        return required(tk), zeros6

    def compensation(tk: float, q: Array, nu: Array) -> Array:
        qd_k, qdd_k, _ = pitch_trajectory(params, tk)
        qdot = _q_dot(q, nu)
        if qdot is None:
            return np.zeros(8)
        e, edot = qd_k - q, qdd_k - qdot
        kin = _kinematics_flat(params, q[None])
        H = np.eye(8)
        H[3:6, 3:6] = rpy_rate_matrix(q[3:6])
        F_c = _mass_flat(params, kin)[0] @ (H @ (kp * e + kd * edot))
        Ja = kin.J_tau_a[0]
        cond = np.linalg.cond(Ja)
        if not np.isfinite(cond) or cond > _COND_MAX:  # never raise inside the loop
            return np.zeros(8)
        return np.linalg.solve(Ja.T, F_c)

    def closed(tk: float, q: Array, nu: Array) -> tuple[Array, Array]:
        return required(tk) + compensation(tk, q, nu), zeros6

    ol = simulate(params, q_des[0], nu_des[0], duration, dt, feedforward)
    rest = simulate(params, params.q0, np.zeros(8), duration, dt, feedforward)
    cl = simulate(params, params.q0, np.zeros(8), duration, dt, closed)
    tau_c = cl.tau_a - tau_req[: len(cl.t)]
    return PitchResult(t, q_des, tau_req, ol, rest, cl, tau_c, kp, kd)
