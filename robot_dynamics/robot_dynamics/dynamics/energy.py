"""Kinetic and potential energy (Khalil [7.10], [7.19])."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..kinematics import _poses_from_transforms, body_coordinates, spatial_motion
from ..model.robot_model import RobotModel
from ._common import body_velocities_of, joint_inputs, secondary_link_kinetic_energy

__all__ = ["kinetic_energy", "potential_energy", "mechanical_energy"]

Array = NDArray[np.float64]


def kinetic_energy(model: RobotModel, q: ArrayLike, qd: ArrayLike) -> Array:
    """Kinetic energy [J], shape (...): sum of 1/2 v_i^T I_i v_i plus the rotors' 1/2 Ia qd^2
    and the drive train's secondary links (their spin relative to the carriers)."""
    (qf, qdf), batch = joint_inputs(model, q=q, qd=qd)
    _, _, v, _ = spatial_motion(model, body_coordinates(model, qf), body_velocities_of(model, qdf), None, None)
    Iv = (model.inertia6 @ v[..., None])[..., 0]
    T = 0.5 * np.einsum("nbk,nbk->n", v, Iv) + 0.5 * (model.rotor_inertia * qdf**2).sum(-1)
    if model.drivetrain is not None and model.drivetrain.coupled:
        T = T + secondary_link_kinetic_energy(model, v, qdf)  # Chen & Wang eq. (14)
    return T.reshape(batch)


def potential_energy(model: RobotModel, q: ArrayLike, gravity: ArrayLike | None = None) -> Array:
    """Gravitational potential energy [J], shape (...): U = -sum m_i g . p_Gi (zero at the base origin)."""
    (qf,), batch = joint_inputs(model, q=q)
    g = model.gravity if gravity is None else np.asarray(gravity, dtype=float)
    from ..kinematics import joint_transforms

    E, r = joint_transforms(model, body_coordinates(model, qf))
    T = _poses_from_transforms(model, E, r)
    p_com = (T[..., :3, :3] @ model.com[..., None])[..., 0] + T[..., :3, 3]
    U = -np.einsum("nbk,k,b->n", p_com, g, model.mass)
    return U.reshape(batch)


def mechanical_energy(model: RobotModel, q: ArrayLike, qd: ArrayLike, gravity: ArrayLike | None = None) -> Array:
    """Kinetic plus potential energy [J], shape (...)."""
    return kinetic_energy(model, q, qd) + potential_energy(model, q, gravity)
