"""Joint <-> actuator maps of a geared robot: G = A xi (seed 000 eq. 22, Khalil [7.33])."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._batch import as_batch
from ..dynamics import aba, rnea
from ..model.robot_model import RobotModel

__all__ = [
    "structure_matrix_of",
    "actuator_torques",
    "joint_torques_from_actuators",
    "actuator_velocities",
    "actuated_aba",
]

Array = NDArray[np.float64]


def structure_matrix_of(model: RobotModel) -> Array:
    """The structure matrix A (nq, nq); the identity for a robot without drive train."""
    dt = model.drivetrain
    return np.eye(model.nq) if dt is None else np.array(dt.A)


def actuator_torques(
    model: RobotModel,
    q: ArrayLike,
    qd: ArrayLike,
    qdd: ArrayLike,
    gravity: ArrayLike | None = None,
    f_ext: Mapping[str, ArrayLike] | None = None,
    *,
    friction: bool = True,
) -> Array:
    """Input torques xi = A^-1 G for a motion (seed 000 eqs. 22-23), shape (..., nq).

    G is the full geared inverse dynamics :func:`robot_dynamics.rnea` (virtual links plus the
    secondary links' M_s, C_s). Without a drive train A = 1 and xi = G.

    Args:
        q, qd, qdd: joint positions, velocities, accelerations, (..., nq).
        gravity, f_ext, friction: as in :func:`robot_dynamics.rnea`.

    Returns:
        xi in ``model.drivetrain.inputs`` order [N m], (..., nq).
    """
    G = rnea(model, q, qd, qdd, gravity, f_ext, friction=friction)
    dt = model.drivetrain
    if dt is None:
        return G
    return G @ dt.A_inv.T


def joint_torques_from_actuators(model: RobotModel, xi: ArrayLike) -> Array:
    """G = A xi (seed 000 eq. 22): joint torques from input torques, (..., nq)."""
    x, batch = as_batch(xi, model.nq, "xi", None)
    return (x @ structure_matrix_of(model).T).reshape(batch + (model.nq,))


def actuator_velocities(model: RobotModel, qd: ArrayLike) -> Array:
    """phidot = A^T thetadot (seed 000 eq. 12): input-link rates from joint rates, (..., nq)."""
    v, batch = as_batch(qd, model.nq, "qd", model.joint_names)
    return (v @ structure_matrix_of(model)).reshape(batch + (model.nq,))


def actuated_aba(
    model: RobotModel,
    q: ArrayLike,
    qd: ArrayLike,
    xi: ArrayLike,
    gravity: ArrayLike | None = None,
    f_ext: Mapping[str, ArrayLike] | None = None,
    *,
    friction: bool = True,
) -> Array:
    """Direct dynamics driven by the input torques: qdd from (M_v + M_s) qdd + C_v + C_s = A xi.

    Args:
        q, qd: (..., nq).
        xi: input torques in ``model.drivetrain.inputs`` order, (..., nq) [N m].

    Returns:
        qdd, (..., nq).
    """
    return aba(model, q, qd, joint_torques_from_actuators(model, xi), gravity, f_ext, friction=friction)
