"""Inverse dynamics: the recursive Newton-Euler algorithm (Khalil 7.4, Featherstone ID)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..kinematics import apply_basis, body_coordinates, forward_recursion, joint_transforms, transform_coefficients
from ..model.robot_model import RobotModel
from ..spatial import crf
from ._common import (
    base_acceleration,
    body_velocities_of,
    external_body_forces,
    joint_friction,
    joint_inputs,
    secondary_link_forces,
    to_joint_space,
)

__all__ = ["rnea", "gravity_torques", "bias_torques"]

Array = NDArray[np.float64]


def rnea(
    model: RobotModel,
    q: ArrayLike,
    qd: ArrayLike,
    qdd: ArrayLike,
    gravity: ArrayLike | None = None,
    f_ext: Mapping[str, ArrayLike] | None = None,
    *,
    friction: bool = True,
) -> Array:
    """Joint torques for a motion: ``tau = A(q) qdd + C(q, qd) qd + Q(q) + Gamma_f + J^T f_en``.

    Args:
        model: the robot.
        q, qd, qdd: joint positions [rad or m], velocities, accelerations, shape (..., nq)
            in ``model.joint_names`` order; batch shapes broadcast.
        gravity: (3,) [m/s^2] in the base frame; default ``model.gravity``.
        f_ext: ``{link: wrench}``, wrench (..., 6) = [force; moment] that the link exerts on the
            environment (Khalil's f_en), base axes, moment about the link origin.
        friction: include joint friction (Khalil [7.28]).

    Returns:
        Joint torques/forces [N m or N], shape (..., nq), rotor inertia (Ia qdd) included.
    """
    (qf, qdf, qddf), batch = joint_inputs(model, q=q, qd=qd, qdd=qdd)
    a0 = base_acceleration(model, gravity)
    qdb, qddb = body_velocities_of(model, qdf), body_velocities_of(model, qddf)
    qb = body_coordinates(model, qf)
    alpha, beta = (np.ascontiguousarray(c.T) for c in transform_coefficients(model, qb))
    # Forward recursion: body velocities and accelerations (Khalil [7.43]-[7.45]), batch-last.
    v, a = forward_recursion(model, qdb, qddb, a0, alpha, beta)
    assert a is not None
    # Newton-Euler equations of every body at once: f = I a + v x* I v (Khalil [7.46]-[7.47]).
    I6 = model.inertia6
    f = I6 @ a + crf(v, I6 @ v, axis=-2)  # (nb, 6, N)
    if f_ext:
        E, r = joint_transforms(model, qb)
        fx = external_body_forces(model, f_ext, batch, E, r)
        if fx is not None:
            f += fx.transpose(1, 2, 0)  # the environment pushes back with -f_en
    geared = model.drivetrain is not None and model.drivetrain.coupled
    if geared:
        # Secondary links' spin about their carriers (Chen & Wang eqs. 14-21): couples on the
        # carriers, propagated by the same backward pass, plus their own coordinates' torques.
        tau_s = secondary_link_forces(
            model, v.transpose(2, 0, 1), a.transpose(2, 0, 1), qdf, qddf, f.transpose(2, 0, 1)
        )
    # Backward recursion: f_parent += X^T f (Khalil [7.48]-[7.49]).
    for i in range(model.nb - 1, -1, -1):
        p = model.parent[i]
        if p >= 0:
            f[p] += apply_basis(model.XT_rows[i], f[i], alpha[i], beta[i])
    tau = to_joint_space(model, np.einsum("bkn,bk->nb", f, model.S))
    if geared:
        tau += tau_s
    # Rotor inertia (Khalil [7.29]) and friction (Khalil [7.28]).
    tau += model.rotor_inertia * qddf
    if friction:
        tau += joint_friction(model, qdf)
    return tau.reshape(batch + (model.nq,))


def gravity_torques(model: RobotModel, q: ArrayLike, gravity: ArrayLike | None = None) -> Array:
    """Gravity torques Q(q) (Khalil's Q), shape (..., nq)."""
    qa = np.asarray(q, dtype=float)
    zero = np.zeros(qa.shape)
    return rnea(model, qa, zero, zero, gravity=gravity, friction=False)


def bias_torques(
    model: RobotModel, q: ArrayLike, qd: ArrayLike, gravity: ArrayLike | None = None, *, friction: bool = True
) -> Array:
    """Everything but the inertial term: ``C(q, qd) qd + Q(q) (+ friction)``, shape (..., nq)."""
    qa = np.asarray(q, dtype=float)
    return rnea(model, qa, qd, np.zeros(qa.shape), gravity=gravity, friction=friction)
