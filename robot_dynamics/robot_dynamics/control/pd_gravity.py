"""PD control with gravity compensation for regulation to a fixed goal (Khalil 9.3.2)."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dynamics import rnea_derivatives
from ..errors import InputError
from ..engine import stages
from ..model.robot_model import RobotModel
from .base import DEFAULT_OMEGA, ControllerBase, Reference, Status, gain_vector
from .pid import max_inertia_diagonal, sample_configurations

__all__ = ["PDGravity", "gravity_stiffness_bound", "GRAVITY_MODES"]

Array = NDArray[np.float64]

logger = logging.getLogger("robot_dynamics.control")
# `import launch` (ROS 2) installs a logger class that does not propagate; a library logger must
# reach the application's handlers whatever was imported first.
logger.propagate = True

#: Where the gravity compensation is evaluated: the measured q (Q(q), [9.12]) or the goal (Q(q^d)).
GRAVITY_MODES = ("current", "desired")


def gravity_stiffness_bound(model: RobotModel, samples: int = 64, seed: int = 0) -> float:
    """max over q of ||dQ/dq||_2, the bound Kp_j must exceed for PD + Q(q^d) (Khalil 9.3.2).

    dQ/dq is the analytical derivative of the inverse dynamics at rest without friction
    (``rnea_derivatives(model, q, 0, 0, friction=False)[0]``, gravity alone), on
    configurations drawn inside the joint limits (one batched call).
    """
    q = sample_configurations(model, samples, seed)
    rest = np.zeros_like(q)
    dQdq = rnea_derivatives(model, q, rest, rest, friction=False)[0]  # (S, n, n)
    return float(np.max(np.linalg.norm(dQdq, ord=2, axis=(-2, -1))))


def bandwidth_gains(model: RobotModel, omega: ArrayLike, xi: ArrayLike = 1.0,
                    inertia: ArrayLike | None = None) -> tuple[Array, Array]:
    """PD gains (Kp, Kd), each (nq,), placing each joint's poles at those of
    ``s^2 + 2 xi omega s + omega^2`` (see :meth:`PDGravity.from_bandwidth`)."""
    w = float(gain_vector(omega, 1, "omega", allow_zero=False)[0])
    z = float(gain_vector(xi, 1, "xi", allow_zero=False)[0])
    a = max_inertia_diagonal(model) if inertia is None else gain_vector(inertia, model.nq, "inertia", model.joint_names, allow_zero=False)
    a = np.maximum(a, model.viscous / (2.0 * z * w))
    return a * w**2, np.maximum(2.0 * z * a * w - model.viscous, 1e-9 * a * w)


class PDGravity(ControllerBase):
    """Khalil [9.12]: ``Gamma = Kp e - Kd qd + Q``, e = q^d - q, for a constant goal q^d.

    With ``gravity="current"``, Q = Q(q): the Lyapunov function [9.11] decreases as [9.16]
    and La Salle's theorem gives asymptotic stability for any Kp, Kd > 0. With
    ``gravity="desired"``, Q = Q(q^d) is constant (computed once per goal); stability then
    asks Kp_j > ||dQ/dq|| (Khalil 9.3.2), which the constructor checks and logs.

    The derivative term is ``Kd (qd^d - qd)``, equal to [9.12]'s ``-Kd qd`` for a fixed goal.

    Gains, as for :class:`~robot_dynamics.control.ComputedTorque`: either ``kp`` and ``kd``, or
    ``omega`` (bandwidth [rad/s], default :data:`~robot_dynamics.control.base.DEFAULT_OMEGA`, 20) and ``xi`` (damping, default 1) through
    :meth:`from_bandwidth`.

    Args:
        model: the controller's model (gravity torques come from it).
        kp, kd: diagonal gains, scalar or (nq,), > 0; give both or neither.
        omega, xi: bandwidth [rad/s] and damping (> 0), instead of kp and kd.
        gravity: one of :data:`GRAVITY_MODES`.
        effort_limit, actuator_limit, fault_action: see :class:`ControllerBase`.
    """

    name = "pd-gravity"

    def __init__(
        self,
        model: RobotModel,
        kp: ArrayLike | None = None,
        kd: ArrayLike | None = None,
        *,
        omega: ArrayLike | None = None,
        xi: ArrayLike = 1.0,
        gravity: str = "current",
        effort_limit: ArrayLike | None = None,
        actuator_limit: ArrayLike | None = None,
        fault_action: str = "hold",
    ):
        super().__init__(model, effort_limit=effort_limit, actuator_limit=actuator_limit, fault_action=fault_action)
        names = model.joint_names
        if (kp is None) != (kd is None):
            raise InputError("kp and kd: give both, or neither and use omega/xi")
        if kp is not None and omega is not None:
            raise InputError("give either omega/xi or kp/kd, not both")
        if kp is None:
            kp, kd = bandwidth_gains(model, DEFAULT_OMEGA if omega is None else omega, xi)
        self.kp = gain_vector(kp, model.nq, "kp", names, allow_zero=False)
        self.kd = gain_vector(kd, model.nq, "kd", names, allow_zero=False)
        if gravity not in GRAVITY_MODES:
            raise InputError(f"gravity: expected one of {list(GRAVITY_MODES)}, got {gravity!r}")
        self.gravity = gravity
        self._goal: Array | None = None
        self._Q_goal: Array | None = None
        if gravity == "desired":
            bound = gravity_stiffness_bound(model)
            if np.min(self.kp) <= bound:
                logger.warning(
                    "pd-gravity with Q(q^d): min Kp %.3g <= ||dQ/dq|| bound %.3g; convergence is not guaranteed",
                    float(np.min(self.kp)),
                    bound,
                )

    @classmethod
    def from_bandwidth(
        cls, model: RobotModel, omega: float, xi: float = 1.0, *, inertia: ArrayLike | None = None, **kwargs: Any
    ) -> PDGravity:
        """Gains giving each joint, seen as ``a_j s^2 + (Kd_j + Fv_j) s + Kp_j``, the poles of
        ``s^2 + 2 xi omega s + omega^2`` (the second-order analogue of Khalil [9.6]-[9.10]).

        a_j is ``inertia`` or :func:`max_inertia_diagonal`, raised to ``Fv_j / (2 xi omega)`` so
        that viscous friction alone never damps a light joint beyond ``xi`` (which would make it
        creep to the goal): ``Kp = a omega^2``, ``Kd = max(2 xi a omega - Fv, 0)``.
        """
        return cls(model, *bandwidth_gains(model, omega, xi, inertia), **kwargs)

    def _law(self, t: float, dt: float, q: Array, qd: Array, reference: Reference) -> tuple[Array, Status, str]:
        if self.gravity == "current":  # Khalil [9.12] with Q(q): the engine's stage
            return stages.pd_gravity(self.model, self.kp, self.kd, q, qd, reference.q, reference.qd), Status.OK, ""
        if self._goal is None or not np.array_equal(self._goal, reference.q):
            self._goal = reference.q.copy()
            self._Q_goal = self._gravity(reference.q)
        e = reference.q - q
        ed = reference.qd - qd
        return self.kp * e + self.kd * ed + self._Q_goal, Status.OK, ""  # Khalil [9.12] with Q(q^d)
