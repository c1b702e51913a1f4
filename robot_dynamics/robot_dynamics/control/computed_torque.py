"""Computed torque control in the joint space (Khalil 9.4.2): tracking, position, predictive.

The control law [9.22] ``Gamma = A^(q) w + H^(q, qd)`` is evaluated by the inverse dynamic
Newton-Euler algorithm with the acceleration argument set to w (Khalil 9.4.2.5), so it uses
the controller's model (the estimates A^, H^, friction included) and never forms A or H.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dynamics import crba, rnea
from ..errors import InputError
from ..engine import stages
from ..model.robot_model import RobotModel
from .base import DEFAULT_OMEGA, ControllerBase, Reference, Status, gain_vector

__all__ = ["ComputedTorque", "SCHEMES", "FRICTION_VELOCITY", "gains_from_bandwidth", "model_error_excitation"]

Array = NDArray[np.float64]

#: w(t) of the tracking scheme [9.24] or of the position (regulation) scheme [9.29].
SCHEMES = ("tracking", "position")

#: Velocity at which H^'s friction term is evaluated: the measured one (Khalil [9.22]) or
#: the desired one (friction feed-forward: no sign chatter at rest or with velocity noise).
FRICTION_VELOCITY = ("measured", "desired")


def gains_from_bandwidth(omega: ArrayLike, xi: ArrayLike, n: int, names: Any = None) -> tuple[Array, Array]:
    """Khalil [9.26]: ``Kp = omega^2``, ``Kd = 2 xi omega`` for the error equation [9.25].

    Args:
        omega: control bandwidth [rad/s], scalar or (n,), > 0.
        xi: damping ratio, scalar or (n,), > 0 (1 = critically damped).
    """
    w = gain_vector(omega, n, "omega", names, allow_zero=False)
    z = gain_vector(xi, n, "xi", names, allow_zero=False)
    return w**2, 2.0 * z * w


def model_error_excitation(
    plant: RobotModel, estimate: RobotModel, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, *, friction: bool = True
) -> Array:
    """Right-hand side of Khalil [9.28]: ``A^^-1 [(A - A^) qdd + H - H^]``, shape (..., nq).

    With ``A qdd + H = rnea(plant, q, qd, qdd)`` and the same for the estimate, the bracket is
    the difference of two inverse dynamics calls; the tracking error of computed torque obeys
    ``e'' + Kd e' + Kp e`` equals this excitation.

    Args:
        plant: the true robot; estimate: the controller's model.
        q, qd, qdd: the actual motion, (..., nq).
    """
    diff = rnea(plant, q, qd, qdd, friction=friction) - rnea(estimate, q, qd, qdd, friction=friction)
    A_hat = crba(estimate, q)
    return np.linalg.solve(A_hat, diff[..., None])[..., 0]


class ComputedTorque(ControllerBase):
    """Linearising and decoupling control in the joint space (Khalil 9.4.2).

    * ``scheme="tracking"``: w = qdd^d + Kd (qd^d - qd) + Kp (q^d - q)  [9.24]; with an exact
      model the error obeys e'' + Kd e' + Kp e = 0  [9.25].
    * ``scheme="position"``: w = Kp (q^d - q) - Kd qd  [9.29], closed loop [9.30].
    * ``predictive=True``: A^ and H^ evaluated on the desired motion, Gamma = A^(q^d) w +
      H^(q^d, qd^d)  [9.31] (not corrupted by measurement noise).

    Gains: either ``omega`` (bandwidth [rad/s]) and ``xi`` (damping) through [9.26], or
    ``kp`` and ``kd`` directly.

    Args:
        model: the controller's model (A^, H^: parameter errors are welcome, [9.28]).
        omega, xi: bandwidth and damping (scalar or (nq,), > 0); default omega :data:`~robot_dynamics.control.base.DEFAULT_OMEGA` (20 rad/s), xi 1.
        kp, kd: explicit gains (scalar or (nq,), >= 0); give both or neither, not with omega.
        scheme: one of :data:`SCHEMES`.
        predictive: use the desired state in the model [9.31].
        friction_velocity: one of :data:`FRICTION_VELOCITY`.
        effort_limit, actuator_limit, fault_action: see :class:`ControllerBase`.
    """

    name = "computed-torque"

    def __init__(
        self,
        model: RobotModel,
        *,
        omega: ArrayLike | None = None,
        xi: ArrayLike = 1.0,
        kp: ArrayLike | None = None,
        kd: ArrayLike | None = None,
        scheme: str = "tracking",
        predictive: bool = False,
        friction_velocity: str = "measured",
        effort_limit: ArrayLike | None = None,
        actuator_limit: ArrayLike | None = None,
        fault_action: str = "hold",
    ):
        super().__init__(model, effort_limit=effort_limit, actuator_limit=actuator_limit, fault_action=fault_action)
        names = model.joint_names
        if friction_velocity not in FRICTION_VELOCITY:
            raise InputError(f"friction_velocity: expected one of {list(FRICTION_VELOCITY)}, got {friction_velocity!r}")
        self.friction_velocity = friction_velocity
        if scheme not in SCHEMES:
            raise InputError(f"scheme: expected one of {list(SCHEMES)}, got {scheme!r}")
        if (kp is None) != (kd is None):
            raise InputError("kp and kd: give both, or neither and use omega/xi")
        if kp is not None and omega is not None:
            raise InputError("give either omega/xi or kp/kd, not both")
        if kp is None:
            self.kp, self.kd = gains_from_bandwidth(DEFAULT_OMEGA if omega is None else omega, xi, model.nq, names)
        else:
            self.kp = gain_vector(kp, model.nq, "kp", names)
            self.kd = gain_vector(kd, model.nq, "kd", names)
        self.scheme = scheme
        self.predictive = bool(predictive)
        if predictive:
            self.name = "predictive"

    def _law(self, t: float, dt: float, q: Array, qd: Array, reference: Reference) -> tuple[Array, Status, str]:
        # Khalil [9.24] or [9.29], then [9.22] (or [9.31] on the desired state) by Newton-Euler
        # (9.4.2.5): the engine's stage, the one the compiled loop runs
        tau = stages.computed_torque(self.model, self.kp, self.kd, position=self.scheme == "position",
                                     predictive=self.predictive, desired_friction=self.friction_velocity == "desired",
                                     q=q, qd=qd, qr=reference.q, qdr=reference.qd, qddr=reference.qdd)
        return tau, Status.OK, ""
