"""Inverse dynamics linear in the standard inertial parameters: ``tau = Y(q, qd, qdd) pi``.

Khalil 7.4.2 ([7.38]-[7.50]): written at the link origins O_j with the link's own constant
parameters (J_j, MS_j, M_j), the Newton-Euler model is linear in them, and so are the rotor
inertia and friction terms of [7.50]. Columns of ``Y`` follow :func:`standard_parameter_names`:

* for every body j (``model.body_names`` order), Khalil's 10 standard parameters in the body
  frame about the body origin: ``XXj XYj XZj YYj YZj ZZj MXj MYj MZj Mj``;
* then for every independent joint k (``model.joint_names`` order): ``Iak FVk FCk``
  (rotor inertia [7.29], viscous and Coulomb friction [7.28]).

The regressor never re-derives the dynamics: it evaluates the core's Newton-Euler force
``f = I a + v x* I v`` (:func:`robot_dynamics.spatial.inertia_times_motion`, ``crf``) on unit
parameter vectors, with the core's forward recursion (:func:`robot_dynamics.kinematics.spatial_motion`),
so ``Y @ standard_parameters(model)`` equals :func:`robot_dynamics.rnea` without ``f_ext``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..kinematics import spatial_motion
from ..errors import ModelError
from ..model.robot_model import RobotModel
from ..spatial import crf, inertia_times_motion, transform_force_to_parent
from ._common import gravity_vector, joint_inputs, to_joint_space

__all__ = [
    "INERTIAL_NAMES",
    "JOINT_PARAMETER_NAMES",
    "standard_parameter_names",
    "standard_parameters",
    "regressor",
    "n_standard_parameters",
    "require_rigid_tree",
]

Array = NDArray[np.float64]

#: Khalil's standard inertial parameters of one link, in this order (about O_j, link axes).
INERTIAL_NAMES = ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M")
#: Per-joint parameters of Khalil [7.50]: rotor inertia, viscous and Coulomb friction.
JOINT_PARAMETER_NAMES = ("Ia", "FV", "FC")

# (row, col) of the symmetric inertia entries XX XY XZ YY YZ ZZ.
_J_ENTRIES = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))


def n_standard_parameters(model: RobotModel) -> int:
    """Number of columns of the full regressor: ``10 nb + 3 nq``."""
    return 10 * model.nb + 3 * model.nq


def standard_parameter_names(model: RobotModel, *, short: bool = True) -> list[str]:
    """Names of the regressor columns, e.g. ``['XX1', 'XY1', ..., 'Ia1', 'FV1', 'FC1', ...]``.

    Args:
        short: number bodies and joints 1..n (Khalil's style); otherwise suffix the link or
            joint name (``XX[link2]``).
    """
    names = []
    for j, body in enumerate(model.body_names):
        tag = str(j + 1) if short else f"[{body}]"
        names += [p + tag for p in INERTIAL_NAMES]
    for k, joint in enumerate(model.joint_names):
        tag = str(k + 1) if short else f"[{joint}]"
        names += [p + tag for p in JOINT_PARAMETER_NAMES]
    return names


def standard_parameters(model: RobotModel) -> Array:
    """The model's standard parameter vector ``pi``, shape (10 nb + 3 nq,).

    Inertias about the body origin (``model.I_origin``), first moments ``MS = m c``
    (``model.h``), masses, then ``Ia, FV, FC`` per joint.
    """
    per_body = np.empty((model.nb, 10))
    for c, (r, s) in enumerate(_J_ENTRIES):
        per_body[:, c] = model.I_origin[:, r, s]
    per_body[:, 6:9] = model.h
    per_body[:, 9] = model.mass
    joint = np.stack([model.rotor_inertia, model.viscous, model.coulomb], axis=1)
    return np.concatenate([per_body.reshape(-1), joint.reshape(-1)])


def _unit_inertias() -> tuple[Array, Array, Array]:
    """(mass, h, I_o) of the 10 unit parameter vectors, shapes (10,), (10, 3), (10, 3, 3)."""
    mass = np.zeros(10)
    h = np.zeros((10, 3))
    I_o = np.zeros((10, 3, 3))
    for c, (r, s) in enumerate(_J_ENTRIES):
        I_o[c, r, s] = I_o[c, s, r] = 1.0
    h[6:9] = np.eye(3)
    mass[9] = 1.0
    return mass, h, I_o


def require_rigid_tree(model: RobotModel) -> None:
    """Raise ModelError for a coupled gear train (its secondary-link terms are not modelled here)."""
    if model.drivetrain is not None and getattr(model.drivetrain, "coupled", False):
        raise ModelError(
            f"Robot {model.name!r} has a coupled gear train (secondary links); the regressor, base "
            "parameters and generated code cover rigid trees with diagonal rotor inertia only"
        )


def regressor(
    model: RobotModel,
    q: ArrayLike,
    qd: ArrayLike,
    qdd: ArrayLike,
    gravity: ArrayLike | None = None,
    *,
    friction: bool = True,
) -> Array:
    """The regressor ``Y`` with ``rnea(model, q, qd, qdd) = Y @ standard_parameters(model)``.

    Khalil [7.48]-[7.50] written linear in the standard parameters.

    Args:
        model: the robot.
        q, qd, qdd: joint positions, velocities, accelerations, shape (..., nq); batch shapes
            broadcast.
        gravity: (3,) [m/s^2] in the base frame; default ``model.gravity``.
        friction: include the columns FV, FC (otherwise they are zero).

    Returns:
        Y, shape (..., nq, 10 nb + 3 nq); columns named by :func:`standard_parameter_names`.
    """
    require_rigid_tree(model)
    (qf, qdf, qddf), batch = joint_inputs(model, q=q, qd=qd, qdd=qdd)
    N, nb, nq = qf.shape[0], model.nb, model.nq
    # Forward recursion (Khalil [7.41]-[7.44], gravity as base acceleration [7.47]).
    E, r, v, a = spatial_motion(model, qf, qdf, qddf, gravity_vector(model, gravity))
    # Newton-Euler force of every body for each unit parameter (Khalil [7.40]):
    # F[n, i, k] = I_k a_i + v_i x* I_k v_i, shape (N, nb, 10, 6).
    m1, h1, I1 = _unit_inertias()
    vb, ab = v[:, :, None, :], a[:, :, None, :]
    F = inertia_times_motion(m1, h1, I1, ab) + crf(vb, inertia_times_motion(m1, h1, I1, vb))
    # Backward recursion [7.48]-[7.49]: the forces of body i's parameters reach every ancestor
    # j; projected on joint j's motion subspace they give tau_j ([7.50]).
    Yb = np.zeros((N, nb, nb, 10))  # (sample, joint body j, parameter body i, parameter)
    for i in range(nb):
        f = F[:, i]  # (N, 10, 6) in body i coordinates
        j = i
        while True:
            Yb[:, j, i] = f @ model.S[j]
            p = int(model.parent[j])
            if p < 0:
                break
            f = transform_force_to_parent(E[:, j, None], r[:, j, None], f)
            j = p
    Y_in = Yb.reshape(N, nb, nb * 10)
    Y_in = np.swapaxes(to_joint_space(model, np.swapaxes(Y_in, 1, 2)), 1, 2)  # G^T Y_b (mimic)
    Y = np.zeros((N, nq, 10 * nb + 3 * nq))
    Y[:, :, : 10 * nb] = Y_in
    k = np.arange(nq)
    base = 10 * nb + 3 * k
    Y[:, k, base] = qddf  # Ia [7.29]
    if friction:
        Y[:, k, base + 1] = qdf  # FV [7.28]
        Y[:, k, base + 2] = np.sign(qdf)  # FC [7.28]
    return Y.reshape(batch + (nq, 10 * nb + 3 * nq))

