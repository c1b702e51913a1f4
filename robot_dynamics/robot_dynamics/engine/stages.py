"""The stages of a closed-loop tick, one state each: the engine's control laws, saturation and plant.

The compiled loop (``src/engine/simulate.c``) sequences these same engine functions
(``control.c``, ``plant.c``); the Python controllers and plant call them here, so a Python tick
and a compiled one compute the same numbers by construction. Each takes float64 vectors of the
model's nq values (copied to contiguous ones when they are not), runs on ``model.engine_model``
and the calling thread's data (the engine's ``thread_data``), and raises the package's error for a
status other than OK (:func:`~robot_dynamics.engine.check_status`, worded as the algorithm it
ran).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from . import RobotModel, check_status, engine

__all__ = ["computed_torque", "pd_gravity", "saturate", "plant_accel", "plant_step", "plant_advance", "PlantAdvance",
           "momentum", "momentum_observer_update", "CompliantOptions", "CompliantTick", "compliant", "impedance_damping"]

Array = NDArray[np.float64]


def _vectors(*arrays: Any) -> list[Array]:
    """The arrays as the engine reads them: float64, C-contiguous (copied only when not already)."""
    return [np.ascontiguousarray(a, dtype=float) for a in arrays]


def _model_data(model: RobotModel) -> tuple[Any, Any]:
    """The engine's (model, data) pair of a stage: ``model.engine_model`` and this thread's data."""
    em = model.engine_model
    return em, engine().thread_data(em)


def computed_torque(model: RobotModel, kp: Array, kd: Array, *, position: bool, predictive: bool,
                    desired_friction: bool, q: Array, qd: Array, qr: Array, qdr: Array, qddr: Array) -> Array:
    """Joint torques (nq,) [N m or N] of joint-space computed torque (Khalil 9.4.2).

    ``Gamma = A^(q) w + H^(q, qd)`` by Newton-Euler (9.4.2.5) on ``model``, w of the tracking
    scheme [9.24] or, with ``position``, of [9.29]; ``predictive`` evaluates A^, H^ on the
    desired state [9.31]; ``desired_friction`` feeds friction forward at qdr instead of the
    measured velocity. q, qd measured and qr, qdr, qddr the reference, each (nq,).
    """
    tau = np.empty(model.nq)
    code = engine().computed_torque(*_model_data(model), *_vectors(kp, kd), position, predictive, desired_friction,
                                    *_vectors(q, qd, qr, qdr, qddr), tau)
    check_status(model, code, "rnea")
    return tau


def pd_gravity(model: RobotModel, kp: Array, kd: Array, q: Array, qd: Array, qr: Array, qdr: Array) -> Array:
    """Joint torques (nq,) of PD with gravity compensation (Khalil [9.12] with Q(q)):
    ``Kp (qr - q) + Kd (qdr - qd) + Q(q)``, Q by Newton-Euler at rest on ``model``."""
    tau = np.empty(model.nq)
    code = engine().pd_gravity(*_model_data(model), *_vectors(kp, kd, q, qd, qr, qdr), tau)
    check_status(model, code, "rnea")
    return tau


def saturate(model: RobotModel, limit: Array, A_inv: Array | None, actuator_limit: Array | None,
             tau: Array) -> tuple[Array, Array, Array, bool]:
    """Joint torques clipped to +-limit, mapped to actuator torques ``xi = A^-1 tau`` and clipped to
    +-actuator_limit (each (nq,); A_inv (nq, nq) or None for the identity, actuator_limit None for none).

    Returns:
        (tau clipped, xi, flags (nq,) 1.0 where a joint or an actuator torque was clipped, True when
        an actuator torque was clipped: tau is then no longer ``A xi``).
    """
    tau_sat = np.array(tau, dtype=float)
    xi, flags = np.empty(model.nq), np.empty(model.nq)
    A = None if A_inv is None else np.ascontiguousarray(A_inv, dtype=float)
    al = None if actuator_limit is None else np.ascontiguousarray(actuator_limit, dtype=float)
    actuator = engine().saturate(*_model_data(model), np.ascontiguousarray(limit, dtype=float), A, al, tau_sat, xi, flags)
    return tau_sat, xi, flags, bool(actuator)


def plant_accel(model: RobotModel, g: Array, friction: bool, smooth: float, q: Array, qd: Array, u: Array) -> Array:
    """Joint accelerations qdd (nq,) of the rigid plant ``model`` under joint torques u (nq,).

    Gravity g (3,) [m/s^2]; friction on or off, its Coulomb sign smoothed to tanh(qd / smooth)
    when smooth > 0 [rad/s or m/s].
    """
    qdd = np.empty(model.nq)
    code = engine().plant_accel(*_model_data(model), g, bool(friction), float(smooth), *_vectors(q, qd, u), qdd)
    check_status(model, code, "aba")
    return qdd


def plant_step(model: RobotModel, g: Array, friction: bool, smooth: float, h: float, substeps: int, x: Array,
               k1: Array | None, u: Array) -> Array:
    """The rigid plant's state x = (q, qd) (2 nq,) after ``substeps`` classical RK4 steps of h [s]
    under the held joint torques u (nq,); k1 = f(x) of the first step when known (else None).

    Raises:
        FloatingPointError: the state left :data:`~robot_dynamics.simulation.plant.DIVERGED`.
    """
    xn = np.array(x, dtype=float)
    k = None if k1 is None else np.ascontiguousarray(k1, dtype=float)
    code = engine().plant_step(*_model_data(model), g, bool(friction), float(smooth), float(h), int(substeps), xn, k,
                               np.ascontiguousarray(u, dtype=float))
    if code == engine().BAD_OUTPUT:
        raise FloatingPointError("non-finite plant state")
    check_status(model, code, "aba")
    return xn


class PlantAdvance(NamedTuple):
    """One period of a simulated arm (:func:`plant_advance`, the engine's rd_plant_advance)."""

    code: int  #: the engine's status: OK, BAD_SIZE (a refused period), or the RK4 step's
    x: Array  #: the state (q, qd) (2 nq,) after the period (the state given, unless OK or braked)
    applied: Array  #: the joint torques (nq,) [N m or N] held over the period (0 where u is NaN)
    steps: int  #: RK4 steps taken
    h: float  #: their length [s]
    braked: bool  #: no command (u None or NaN on every joint): the arm held, its velocities set to zero
    lagging: bool  #: a period longer than max_substeps steps of max_step: those were taken

    @property
    def refused(self) -> bool:
        """The period was refused: dt not finite or <= 0, substeps < 1, or a step over max_step."""
        return self.code == engine().BAD_SIZE

    @property
    def diverged(self) -> bool:
        """The state left :data:`~robot_dynamics.simulation.plant.DIVERGED` (or an RK4 stage's
        accelerations were not finite)."""
        return self.code == engine().BAD_OUTPUT

    def check(self, model: RobotModel) -> None:
        """Raise the package's error for a status other than OK (worded as the aba it ran)."""
        check_status(model, self.code, "aba")


def plant_advance(model: RobotModel, g: Array, friction: bool, smooth: float, substeps: int, max_step: float,
                  max_substeps: int, dt: float, x: Array, k1: Array | None, u: Array | None) -> PlantAdvance:
    """One period dt [s] of the rigid plant under the held command u (nq,) [N m or N], with the
    command rules of a simulated arm (engine.h's rd_plant_advance): u None or NaN on every joint
    holds the arm (brakes: velocities zeroed), a NaN joint gets zero effort; then ``substeps`` RK4
    steps of dt / substeps, a step over ``max_step`` [s] refused (``max_substeps`` 0) or the period
    cut into ceil(dt / max_step) steps, at most ``max_substeps``. k1 = f(x) of the first step when
    known. Never raises for the plant's status: the caller words ``code``.
    """
    xn = np.array(x, dtype=float)
    applied = np.empty(model.nq)
    k = None if k1 is None else np.ascontiguousarray(k1, dtype=float)
    held = None if u is None else np.ascontiguousarray(u, dtype=float)
    code, steps, h, braked, lagging = engine().plant_advance(
        *_model_data(model), g, bool(friction), float(smooth), int(substeps), float(max_step), int(max_substeps),
        float(dt), xn, k, held, applied)
    return PlantAdvance(code, xn, applied, steps, h, bool(braked), bool(lagging))


def momentum(model: RobotModel, q: Array, qd: Array) -> tuple[Array, Array]:
    """The generalized momentum ``p = A(q) qd`` and ``C^T(q, qd) qd`` (each (nq,)), the kinetic
    energy's gradient in q at a fixed qd, by one forward and one backward recursion (engine.h's
    rd_momentum; rotor inertias, mimic joints and secondary links included)."""
    p, ctq = np.empty(model.nq), np.empty(model.nq)
    code = engine().momentum(*_model_data(model), *_vectors(q, qd), p, ctq)
    check_status(model, code, "momentum")
    return p, ctq


def momentum_observer_update(model: RobotModel, options: tuple[Any, ...], state: Array, clock: Array, t: float,
                             q: Array, qd: Array, tau: Array) -> int:
    """One update of the generalized momentum observer (engine.h's rd_momentum_observer_update).

    ``options``: (gain, threshold, relative (nq,) float64 each, gravity (3,) or None, friction,
    smooth, hold); ``state`` (8, nq) float64: r, p, z, b, tau, model, threshold, q; ``clock`` (4,)
    float64: t, started, collision, joint; both updated in place. Returns the engine's status (the
    caller words it: BAD_INPUT leaves the state unchanged).
    """
    return int(engine().momentum_observer_update(*_model_data(model), *options, state, clock, float(t),
                                                 *_vectors(q, qd, tau)))


class CompliantOptions(NamedTuple):
    """The options of a compliant law (engine.h's rd_compliant_options), in the engine's order.

    ``kp`` and ``kd`` hold one value per task row, in the order of the rows' bits in ``rows``
    (x, y, z, rx, ry, rz); the others as rd_compliant_options says.
    """

    law: int  #: the engine's CARTESIAN_IMPEDANCE or OPERATIONAL_SPACE
    frame: int  #: the task frame's index
    rows: int  #: the task rows' bits (0: all six)
    kp: Array  #: (r,) the impedance's stiffness K [N/m, N m/rad], or Kp [1/s^2]
    kd: Array | None  #: (r,) Kd [1/s] (operational space), or None
    damping_ratio: float  #: the impedance's zeta (operational space: not read)
    null_stiffness: Array  #: (nq,) K_n [N m/rad or N/m]
    null_damping_ratio: float  #: zeta_n
    posture: Array  #: (nq,) q_n [rad or m]
    max_force: float  #: [N] (inf: none)
    max_moment: float  #: [N m] (inf: none)
    max_torque_rate: float  #: [N m/s] (inf: none)
    singular_threshold: float  #: J's smallest singular value below which Lambda is damped
    damping: float  #: the largest lambda of that damping
    lower: Array | None = None  #: (nq,) the joint-limit barrier's position limits [rad or m], or None: none
    upper: Array | None = None  #: (nq,)
    limit_margin: float = 0.0  #: the barrier's band inside each limit [rad or m] (0: none)
    limit_frequency: float = 20.0  #: its omega [rad/s] (and the velocity barrier's)
    velocity: Array | None = None  #: (nq,) the velocity barrier's limits [rad/s or m/s] (inf: none), or None: none


class CompliantTick(NamedTuple):
    """What one tick of a compliant law gave (:func:`compliant`)."""

    code: int  #: the engine's status (the caller words it)
    tau: Array  #: (nq,) joint torques [N m or N] (valid when code is OK)
    s_min: float  #: the smallest singular value of the task rows of J below the threshold (else inf)
    singular: bool  #: s_min below the threshold: the task inertia damped


def compliant(model: RobotModel, options: CompliantOptions, q: Array, qd: Array, pose: Array, twist: Array,
              accel: Array | None, tau_prev: Array | None, dt: float) -> CompliantTick:
    """One tick of Cartesian impedance or operational-space control (engine.h's rd_compliant_control):
    the joint torques (nq,) for the measured q, qd (nq,) and the task reference pose (4, 4), twist (6,),
    accel (6,) (base axes; None for the impedance), each joint within ``max_torque_rate dt`` of
    tau_prev (nq,) when given and dt > 0 [s]. Never raises for the law's status: the caller words ``code``.
    """
    tau, info = np.empty(model.nq), np.empty(3)
    o = options
    kd = None if o.kd is None else np.ascontiguousarray(o.kd, dtype=float)
    code = engine().compliant(*_model_data(model), o.law, o.frame, o.rows, *_vectors(o.kp), kd, float(o.damping_ratio),
                              *_vectors(o.null_stiffness), float(o.null_damping_ratio), *_vectors(o.posture),
                              float(o.max_force), float(o.max_moment), float(o.max_torque_rate),
                              float(o.singular_threshold), float(o.damping),
                              *(None if v is None else np.ascontiguousarray(v, dtype=float) for v in (o.lower, o.upper)),
                              float(o.limit_margin), float(o.limit_frequency),
                              None if o.velocity is None else np.ascontiguousarray(o.velocity, dtype=float),
                              *_vectors(q, qd, pose, twist),
                              None if accel is None else np.ascontiguousarray(accel, dtype=float),
                              None if tau_prev is None else np.ascontiguousarray(tau_prev, dtype=float), float(dt),
                              tau, info)
    return CompliantTick(int(code), tau, float(info[0]), bool(info[2]))


def impedance_damping(K: Array, Lambda: Array, zeta: float) -> tuple[int, Array]:
    """The engine's impedance damping design (engine.h's rd_impedance_damping): (status, D (r, r))
    for the stiffness K and task inertia Lambda (r, r) each, r <= 6, and the ratio zeta."""
    K, Lambda = _vectors(K, Lambda)
    D = np.empty(Lambda.shape)
    return int(engine().impedance_damping(K, Lambda, float(zeta), D)), D
