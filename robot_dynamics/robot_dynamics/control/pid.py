"""Decentralised joint-space PID (Khalil 9.3.1) and its gain design by a triple pole [9.10]."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dynamics import crba
from ..model.robot_model import RobotModel
from .base import ControllerBase, Reference, Status, gain_vector

__all__ = ["JointPID", "max_inertia_diagonal", "sample_configurations"]

Array = NDArray[np.float64]


def sample_configurations(model: RobotModel, n: int = 256, seed: int = 0) -> Array:
    """``n`` joint configurations drawn uniformly inside the joint limits, (n, nq).

    Unlimited joints (continuous, or inf limits) are drawn in [-pi, pi] (revolute) or
    [-1, 1] m (prismatic).
    """
    rng = np.random.default_rng(seed)
    span = np.array([1.0 if model.joint_type[model.body_joint_names.index(j)] == "prismatic" else np.pi for j in model.joint_names])
    lo = np.where(np.isfinite(model.lower), model.lower, -span)
    hi = np.where(np.isfinite(model.upper), model.upper, span)
    return rng.uniform(lo, hi, size=(n, model.nq))


def max_inertia_diagonal(model: RobotModel, samples: int = 256, seed: int = 0) -> Array:
    """Khalil's a_j = max over q of A_jj(q) (used by [9.6]-[9.10]), estimated on samples, (nq,).

    Rotor inertia is part of A_jj. The estimate is a maximum over ``samples`` configurations
    drawn inside the joint limits plus q = 0 (batched CRBA).
    """
    q = np.vstack([np.zeros(model.nq), sample_configurations(model, samples, seed)])
    q = np.clip(q, np.where(np.isfinite(model.lower), model.lower, -np.inf), np.where(np.isfinite(model.upper), model.upper, np.inf))
    A = crba(model, q)
    return np.max(np.diagonal(A, axis1=-2, axis2=-1), axis=0)


class JointPID(ControllerBase):
    """Khalil [9.5]: ``Gamma = Kp (q^d - q) + Kd (qd^d - qd) + KI int (q^d - q) dt``.

    The integral is a backward rectangle over the time between ticks; it is frozen while the
    output saturates (anti-windup by conditional integration) and, with ``integral_zone``,
    while a joint's error is larger than the zone (Khalil's notes after [9.10]).

    Args:
        model: the controller's model (names, limits, gravity for ``gravity_compensation``).
        kp, kd, ki: diagonal gains, scalar or (nq,), >= 0 [N m/rad, N m s/rad, N m/(rad s)].
        gravity_compensation: add the gravity torque Q(q) of the model (not in [9.5]; with it,
            ``ki = 0`` gives the PD + gravity law [9.12]).
        integral_zone: integrate joint j only while |e_j| < zone_j [rad or m]; None = always.
        effort_limit, actuator_limit, fault_action: see :class:`ControllerBase`.
    """

    name = "pid"

    def __init__(
        self,
        model: RobotModel,
        kp: ArrayLike,
        kd: ArrayLike,
        ki: ArrayLike = 0.0,
        *,
        gravity_compensation: bool = False,
        integral_zone: ArrayLike | None = None,
        effort_limit: ArrayLike | None = None,
        actuator_limit: ArrayLike | None = None,
        fault_action: str = "hold",
    ):
        super().__init__(model, effort_limit=effort_limit, actuator_limit=actuator_limit, fault_action=fault_action)
        names = model.joint_names
        self.kp = gain_vector(kp, model.nq, "kp", names)
        self.kd = gain_vector(kd, model.nq, "kd", names)
        self.ki = gain_vector(ki, model.nq, "ki", names)
        self.integral_zone = None if integral_zone is None else gain_vector(integral_zone, model.nq, "integral_zone", names, allow_zero=False)
        self.gravity_compensation = bool(gravity_compensation)
        self.integral = np.zeros(model.nq)
        self._integral_before = self.integral.copy()

    @classmethod
    def from_bandwidth(
        cls, model: RobotModel, omega: ArrayLike, *, inertia: ArrayLike | None = None, **kwargs: Any
    ) -> JointPID:
        """Gains placing a triple real pole at -omega_j for the joint model [9.6] (Khalil [9.10]).

        ``Kp = 3 a w^2``, ``Kd = 3 a w - Fv`` (clipped at 0), ``KI = a w^3`` with
        a_j = max A_jj (:func:`max_inertia_diagonal`) unless ``inertia`` gives it.
        """
        w = gain_vector(omega, model.nq, "omega", model.joint_names, allow_zero=False)
        a = max_inertia_diagonal(model) if inertia is None else gain_vector(inertia, model.nq, "inertia", model.joint_names, allow_zero=False)
        kp = 3.0 * a * w**2
        kd = np.maximum(3.0 * a * w - model.viscous, 0.0)
        ki = a * w**3
        return cls(model, kp, kd, ki, **kwargs)

    def reset(self) -> None:
        super().reset()
        self.integral = np.zeros(self.model.nq)

    def _law(self, t: float, dt: float, q: Array, qd: Array, reference: Reference) -> tuple[Array, Status, str]:
        e = reference.q - q
        ed = reference.qd - qd
        self._integral_before = self.integral.copy()
        active = np.ones(self.model.nq, bool) if self.integral_zone is None else np.abs(e) < self.integral_zone
        self.integral = self.integral + np.where(active, e * dt, 0.0)
        tau = self.kp * e + self.kd * ed + self.ki * self.integral  # Khalil [9.5]
        if self.gravity_compensation:
            tau = tau + self._gravity(q)
        return tau, Status.OK, ""

    def _integrator_feedback(self, saturated: Array) -> None:
        if np.any(saturated):  # conditional integration: do not wind up against the limits
            self.integral = self._integral_before

