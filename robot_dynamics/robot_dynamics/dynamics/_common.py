"""Input handling shared by the dynamics algorithms (validated once, at the boundary)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import kernels
from .._batch import as_batch, broadcast_batch
from ..errors import InputError
from ..model.robot_model import RobotModel

__all__ = ["joint_inputs", "gravity_vector", "joint_friction", "body_velocities_of", "to_joint_space"]

Array = NDArray[np.float64]


def joint_inputs(
    model: RobotModel, **arrays: ArrayLike
) -> tuple[list[Array], tuple[int, ...]]:
    """Validate joint-space arrays of shape (..., nq) and broadcast them to one batch (N, nq)."""
    parsed = [as_batch(a, model.nq, name, model.joint_names) for name, a in arrays.items()]
    try:
        return broadcast_batch(parsed)
    except ValueError:
        shapes = {name: np.shape(a) for name, a in arrays.items()}
        raise InputError(f"Batch shapes do not broadcast: {shapes}") from None


def gravity_vector(model: RobotModel, gravity: ArrayLike | None) -> Array:
    """The gravity vector to use, (3,) [m/s^2] in the base frame: ``model.gravity`` by default."""
    if gravity is None:
        return np.array(model.gravity, dtype=float)  # a writeable copy: the kernels' one array type
    try:
        g = np.asarray(gravity, dtype=float)
    except (TypeError, ValueError):
        g = np.zeros(0)
    if g.shape != (3,) or not np.all(np.isfinite(g)):
        raise InputError(f"gravity: expected 3 finite numbers [m/s^2] in the base frame, got {gravity!r}")
    return np.array(g)  # a writeable C copy, whatever the caller passed


def joint_friction(model: RobotModel, qd: ArrayLike, *, smoothing: float = 0.0) -> Array:
    """Joint friction torques, Khalil [7.26], shape (..., nq).

    ``Gamma_f = Fc sign(qd) + Fv qd + (Fst - Fc) sign(qd) exp(-|qd| B)``; without static
    friction on the model this is [7.27]-[7.28]. With ``smoothing = v_s > 0`` [rad/s or m/s],
    sign(qd) becomes tanh(qd / v_s) (a smooth law for integrators; 0 keeps sign(0) = 0).
    """
    qdf, batch = as_batch(qd, model.nq, "qd", model.joint_names)
    if not (np.isfinite(smoothing) and smoothing >= 0):
        raise InputError(f"smoothing: expected a velocity >= 0 [rad/s], got {smoothing!r}")
    out = np.empty_like(qdf)
    kernels.compiled().friction_batch(kernels.kernel_model(model).buffer, qdf, float(smoothing), out)
    return out.reshape(batch + (model.nq,))


def body_velocities_of(model: RobotModel, qd: Array) -> Array:
    """Body joint velocities from independent ones, (N, nq) -> (N, nb)."""
    return qd @ model.mimic_matrix.T if model.has_mimic else qd


def to_joint_space(model: RobotModel, tau_body: Array) -> Array:
    """Body joint forces to independent-joint forces (G^T tau_b), (N, nb) -> (N, nq)."""
    return tau_body @ model.mimic_matrix if model.has_mimic else tau_body
