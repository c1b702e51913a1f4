"""De Luca's generalized momentum observer: the external joint torques, collision detection and
isolation, and the contact wrench, without the joint accelerations.

The residual (De Luca and Mattone 2005; Haddadin, De Luca and Albu-Schaeffer 2017, "Robot
Collisions: A Survey on Detection, Isolation, and Identification", IEEE T-RO 33(6))

    r(t) = K_O [p(t) - p(0) - integral_0^t (tau - Gamma_f + C^T(q, qd) qd - Q(q) + r) ds],  p = A(q) qd,

obeys ``dr/dt = K_O (tau_ext - r)`` with an exact model: each r_j follows the external joint
torque through a first-order lag of bandwidth K_O,j. A(q) holds the rotor inertias and a geared
robot's secondary links; C^T qd is the gradient of the kinetic energy in q (``dA/dt = C + C^T``),
computed with p by one recursion; Gamma_f is the model's friction (Khalil [7.26]: viscous,
Coulomb, Stribeck). Each update runs in the engine (``src/engine/observer.c``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._batch import real_array
from ..control.base import gain_vector
from ..control.task_space import damped_pseudo_inverse
from ..engine import check_status, engine, stages
from ..errors import InputError
from ..kinematics import jacobian
from ..model.robot_model import RobotModel

__all__ = ["MomentumObserver", "ObserverOutput", "DEFAULT_GAIN", "DEFAULT_THRESHOLD_FRACTION", "DEFAULT_RELATIVE",
           "TORQUE_INPUTS", "generalized_momentum"]

Array = NDArray[np.float64]

#: The residual's bandwidth K_O [1/s] by default: a time constant of 10 ms.
DEFAULT_GAIN = 100.0
#: The threshold's fixed part by default, as a fraction of each joint's effort limit (1 N m or N
#: where the joint has none).
DEFAULT_THRESHOLD_FRACTION = 0.02
#: The threshold's part that grows with the model torque by default [-].
DEFAULT_RELATIVE = 0.05
#: Torques the observer integrates: "held" (each update's tau held until the next: a command under
#: a zero-order hold, as the simulation and ros2_control apply it) or "measured" (the trapezoidal rule).
TORQUE_INPUTS = ("held", "measured")


def generalized_momentum(model: RobotModel, q: ArrayLike, qd: ArrayLike) -> tuple[Array, Array]:
    """``p = A(q) qd`` and ``C^T(q, qd) qd``, each (nq,) [N m s and N m, or N s and N], exactly
    (Christoffel symbols: ``(C^T qd)_i = qd^T (dA/dq_i) qd / 2``, so that ``dp/dt = tau - Gamma_f
    + C^T qd - Q + tau_ext``); q [rad or m] and qd [rad/s or m/s] of nq values."""
    qv = _joint_vector(q, model, "q")
    qdv = _joint_vector(qd, model, "qd")
    return stages.momentum(model, qv, qdv)


@dataclass(frozen=True)
class ObserverOutput:
    """One update of a :class:`MomentumObserver`.

    Attributes:
        t: the update's time [s].
        external_torque: the residual r, the estimated external joint torques (nq,) [N m or N].
        threshold: the threshold of each joint at this update (nq,) [N m or N].
        collision: True when some ``|r_j| > threshold_j``.
        joint: the isolated joint: the last joint (in model order) whose residual passes its
            threshold, a name of ``model.joint_names``, or None.
        joint_index: its index in ``model.joint_names``, or -1.
        momentum: the generalized momentum ``A(q) qd`` (nq,).
    """

    t: float
    external_torque: Array
    threshold: Array
    collision: bool
    joint: str | None
    joint_index: int
    momentum: Array


def _joint_vector(x: ArrayLike, model: RobotModel, what: str) -> Array:
    arr = real_array(x, what, f"{model.nq} numbers")
    if arr.shape != (model.nq,):
        raise InputError(f"{what}: expected {model.nq} values ordered as {list(model.joint_names)}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = [model.joint_names[j] for j in np.flatnonzero(~np.isfinite(arr))]
        raise InputError(f"{what}: expected finite values, got NaN or infinite on {bad}")
    return np.ascontiguousarray(arr)


def _default_threshold(model: RobotModel) -> Array:
    limit = np.asarray(model.effort_limit, dtype=float)
    return np.where(np.isfinite(limit) & (limit > 0), DEFAULT_THRESHOLD_FRACTION * limit, 1.0)


class MomentumObserver:
    """The generalized momentum observer of ``model``: ``update(t, q, qd, tau)`` per tick.

    Detection uses a threshold per joint made of a fixed part and a part that grows with the
    torque the model explains (the time-varying threshold of Sotoudehnejad, Takhmar, Kermani and
    Polushin 2012, "Counteracting modeling errors for sensitive observer-based manipulator
    collision detection", IEEE/RSJ IROS)::

        threshold_j = threshold_fixed_j + relative_j s_j,   ds_j/dt = K_O,j (|tau_j - r_j| - s_j)

    A model whose inertial parameters are off by a fraction e leaves a residual of about
    e |A qdd + C qd + Q| through the residual's own lag, which ``relative >= e`` covers since s is
    |tau - r| (the torque the model explains) through that same lag. The fixed part covers what
    does not scale with the torque: velocity noise (its residual is about ``K_O A(q) sigma_qd``,
    unfiltered, since p = A qd), friction left out of the model, sensor offsets. Isolation: a contact
    on link i leaves the residuals of the joints after i at zero (``r = J_i^T F``), so the last
    joint whose residual passes its threshold names the link touched (the survey's isolation).

    Args:
        model: the robot's model (its friction, rotor inertia and drive train included).
        gain: K_O [1/s], scalar or (nq,), > 0: the residual's bandwidth (:data:`DEFAULT_GAIN`).
        threshold: the fixed part [N m or N], scalar or (nq,), >= 0; None: :data:`DEFAULT_THRESHOLD_FRACTION`
            of each joint's effort limit (1 where there is none).
        relative: the part that grows with the model torque [-], scalar or (nq,), >= 0.
        friction: take the model's friction from tau (Khalil [7.26]); False: none.
        coulomb_smoothing: v_s [rad/s or m/s] of a Coulomb friction ``Fc tanh(qd / v_s)`` (>= 0; 0:
            the sign): a smoothed sign keeps velocity noise at rest from flipping the friction.
        gravity: (3,) [m/s^2] in base axes; None: the model's.
        torque: one of :data:`TORQUE_INPUTS`: "held" (the tau given at an update is the command held
            until the next one) or "measured" (torques measured at each update).

    Raises:
        InputError: a bad model, gain, threshold, option; ``update`` names a bad input.
    """

    def __init__(self, model: RobotModel, *, gain: ArrayLike = DEFAULT_GAIN, threshold: ArrayLike | None = None,
                 relative: ArrayLike = DEFAULT_RELATIVE, friction: bool = True, coulomb_smoothing: float = 0.0,
                 gravity: ArrayLike | None = None, torque: str = "held"):
        if not isinstance(model, RobotModel):
            raise InputError(f"model: expected a RobotModel, got {type(model).__name__}")
        n, names = model.nq, model.joint_names
        self.model = model
        self.gain = gain_vector(gain, n, "gain", names, allow_zero=False)
        self.threshold = _default_threshold(model) if threshold is None else gain_vector(threshold, n, "threshold", names)
        self.relative = gain_vector(relative, n, "relative", names)
        if not (isinstance(coulomb_smoothing, (int, float)) and math.isfinite(coulomb_smoothing) and coulomb_smoothing >= 0):
            raise InputError(f"coulomb_smoothing: expected a velocity >= 0 [rad/s or m/s], got {coulomb_smoothing!r}")
        if torque not in TORQUE_INPUTS:
            raise InputError(f"torque: expected one of {list(TORQUE_INPUTS)}, got {torque!r}")
        g = None
        if gravity is not None:
            g = real_array(gravity, "gravity", "3 numbers")
            if g.shape != (3,) or not np.all(np.isfinite(g)):
                raise InputError(f"gravity: expected 3 finite values [m/s^2], got {gravity!r}")
            g = np.ascontiguousarray(g)
        self.friction, self.coulomb_smoothing, self.torque = bool(friction), float(coulomb_smoothing), torque
        self.gravity = g
        self._options = (self.gain, self.threshold, self.relative, g, self.friction, self.coulomb_smoothing,
                         torque == "held")
        self._state = np.zeros((8, n))
        self._clock = np.array([0.0, 0.0, 0.0, -1.0])
        self._q: Array | None = None

    def reset(self) -> None:
        """Forget the past: the next update starts the observer (r = 0, p(0) its momentum)."""
        self._state[:] = 0.0
        self._clock[:] = (0.0, 0.0, 0.0, -1.0)
        self._q = None

    @property
    def started(self) -> bool:
        """True once an update has started the observer."""
        return bool(self._clock[1])

    @property
    def external_torque(self) -> Array:
        """The residual of the last update (nq,) [N m or N] (zeros before the first)."""
        return self._state[0].copy()

    def update(self, t: float, q: ArrayLike, qd: ArrayLike, tau: ArrayLike) -> ObserverOutput:
        """One tick at time t [s] (after the last update's) with the measured q [rad or m], qd
        [rad/s or m/s] and the joint torques tau [N m or N] (nq each; with ``torque="held"`` the
        command applied from t until the next update).

        Raises:
            InputError: a non-finite t, a t not after the last update's, a vector of the wrong
                length or with NaN (named); the observer is then unchanged.
        """
        m = self.model
        qv, qdv, tv = _joint_vector(q, m, "q"), _joint_vector(qd, m, "qd"), _joint_vector(tau, m, "tau")
        if not (isinstance(t, (int, float, np.floating, np.integer)) and math.isfinite(t)):
            raise InputError(f"t: expected a finite time [s], got {t!r}")
        if self.started and not t > self._clock[0]:
            raise InputError(f"t: expected a time after the last update's {self._clock[0]!r} s, got {t!r}")
        code = stages.momentum_observer_update(m, self._options, self._state, self._clock, float(t), qv, qdv, tv)
        if code != engine().OK:
            check_status(m, code, "momentum observer")
        self._q = qv.copy()
        return self._output()

    def _output(self) -> ObserverOutput:
        j = int(self._clock[3])
        return ObserverOutput(t=float(self._clock[0]), external_torque=self._state[0].copy(),
                              threshold=self._state[6].copy(), collision=bool(self._clock[2]),
                              joint=self.model.joint_names[j] if j >= 0 else None, joint_index=j,
                              momentum=self._state[1].copy())

    def wrench(self, frame: str | None = None, *, point_force: bool = False, singular_threshold: float = 0.02,
               damping: float = 0.05) -> Array:
        """The contact wrench at ``frame``'s origin that explains the last residual: ``F = (J^T)^# r``.

        J is the frame's geometric Jacobian (rows [linear; angular], base axes) at the last
        update's q; ``(J^T)^#`` its transpose's pseudo-inverse, damped near singularities
        (:func:`~robot_dynamics.control.damped_pseudo_inverse`, with ``singular_threshold`` and
        ``damping``). With J of rank 6 (nq >= 6) the wrench is determined (the survey's
        identification; a residual J^T does not explain is fitted in least squares); with fewer
        joints it is the smallest wrench that explains r. With ``point_force`` the contact is a
        force at the origin, no moment: ``F = (J_v^T)^# r``, 3 components, determined when the
        Jacobian's linear rows J_v have rank 3.

        Returns:
            [force (3) [N]; moment about the frame's origin (3) [N m]] in base axes, (6,); or the
            force (3,) with ``point_force``.

        Raises:
            InputError: no update yet. UnknownNameError: an unknown frame.
        """
        if self._q is None:
            raise InputError("wrench: no update yet: call update(t, q, qd, tau) first")
        J = jacobian(self.model, self._q, frame)
        if point_force:
            J = J[:3]
        pinv, _, _ = damped_pseudo_inverse(J.T, threshold=singular_threshold, damping=damping)
        return pinv @ self._state[0]

    def __repr__(self) -> str:
        return f"MomentumObserver({self.model.name!r}, gain={self.gain.tolist()}, torque={self.torque!r})"
