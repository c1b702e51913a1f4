"""Input handling shared by the dynamics algorithms (validated once, at the engine's boundary: robot_dynamics.engine)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import engine
from ..engine import gravity_vector, joint_inputs
from ..model.robot_model import RobotModel

__all__ = ["joint_inputs", "gravity_vector", "joint_friction", "body_velocities_of", "to_joint_space"]

Array = NDArray[np.float64]


def joint_friction(model: RobotModel, qd: ArrayLike, *, smoothing: float = 0.0) -> Array:
    """Joint friction torques, Khalil [7.26], shape (..., nq).

    ``Gamma_f = Fc sign(qd) + Fv qd + (Fst - Fc) sign(qd) exp(-|qd| B)``; without static
    friction on the model this is [7.27]-[7.28]. With ``smoothing = v_s > 0`` [rad/s or m/s],
    sign(qd) becomes tanh(qd / v_s) (a smooth law for integrators; 0 keeps sign(0) = 0).
    """
    return engine.friction(model, qd, smoothing)


def body_velocities_of(model: RobotModel, qd: Array) -> Array:
    """Body joint velocities from independent ones, (N, nq) -> (N, nb)."""
    return qd @ model.mimic_matrix.T if model.has_mimic else qd


def to_joint_space(model: RobotModel, tau_body: Array) -> Array:
    """Body joint forces to independent-joint forces (G^T tau_b), (N, nb) -> (N, nq)."""
    return tau_body @ model.mimic_matrix if model.has_mimic else tau_body
