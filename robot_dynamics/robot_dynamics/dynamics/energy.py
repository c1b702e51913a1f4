"""Kinetic and potential energy (Khalil [7.10], [7.19]), from the compiled kernel ``_energy``."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import kernels
from ..model.robot_model import RobotModel
from ._common import gravity_vector, joint_inputs

__all__ = ["kinetic_energy", "potential_energy", "mechanical_energy"]

Array = NDArray[np.float64]


def _energies(model: RobotModel, q: ArrayLike, qd: ArrayLike | None, gravity: ArrayLike | None) -> tuple[Array, tuple[int, ...]]:
    if qd is None:
        (qf,), batch = joint_inputs(model, q=q)
        qdf = np.zeros_like(qf)
    else:
        (qf, qdf), batch = joint_inputs(model, q=q, qd=qd)
    g = gravity_vector(model, gravity)
    out = np.empty((qf.shape[0], 2))
    status = np.empty(qf.shape[0], dtype=np.int64)
    kernels.compiled().energy_batch(kernels.kernel_model(model).buffer, qf, qdf, g, out, status, kernels.chunks(qf.shape[0]))
    kernels.check_status(model, status if batch else status[0], "energy")
    return out, batch


def kinetic_energy(model: RobotModel, q: ArrayLike, qd: ArrayLike) -> Array:
    """Kinetic energy [J], shape (...): sum of 1/2 v_i^T I_i v_i plus the rotors' 1/2 Ia qd^2
    and the drive train's secondary links (their spin relative to the carriers, Chen & Wang eq. 14)."""
    out, batch = _energies(model, q, qd, None)
    return out[:, 0].reshape(batch)


def potential_energy(model: RobotModel, q: ArrayLike, gravity: ArrayLike | None = None) -> Array:
    """Gravitational potential energy [J], shape (...): U = -sum m_i g . p_Gi (zero at the base origin)."""
    out, batch = _energies(model, q, None, gravity)
    return out[:, 1].reshape(batch)


def mechanical_energy(model: RobotModel, q: ArrayLike, qd: ArrayLike, gravity: ArrayLike | None = None) -> Array:
    """Kinetic plus potential energy [J], shape (...)."""
    out, batch = _energies(model, q, qd, gravity)
    return out.sum(axis=1).reshape(batch)
