"""Kinetic and potential energy (Khalil [7.10], [7.19]), computed by the engine (``rd_energy``)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import engine
from ..model.robot_model import RobotModel

__all__ = ["kinetic_energy", "potential_energy", "mechanical_energy"]

Array = NDArray[np.float64]


def _energies(model: RobotModel, q: ArrayLike, qd: ArrayLike | None, gravity: ArrayLike | None) -> tuple[Array, tuple[int, ...]]:
    return engine.energies(model, q, qd, gravity)


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
