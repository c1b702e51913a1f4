"""Direct dynamics: the articulated body algorithm (Khalil 7.6.2, Featherstone 7.3)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import SingularityError
from ..kinematics import body_coordinates, forward_recursion, joint_plucker, joint_transforms, transform_coefficients
from ..model.robot_model import RobotModel
from ..spatial import crf, crm
from ._common import base_acceleration, external_body_forces, joint_friction, joint_inputs

__all__ = ["aba"]

Array = NDArray[np.float64]


def aba(
    model: RobotModel,
    q: ArrayLike,
    qd: ArrayLike,
    tau: ArrayLike,
    gravity: ArrayLike | None = None,
    f_ext: Mapping[str, ArrayLike] | None = None,
    *,
    friction: bool = True,
) -> Array:
    """Joint accelerations from joint torques: solves ``A qdd + C qd + Q + Gamma_f + J^T f_en = tau``.

    Args:
        q, qd: joint positions and velocities, (..., nq).
        tau: joint torques/forces [N m or N], (..., nq).
        gravity, f_ext, friction: as in :func:`robot_dynamics.rnea`. Coulomb friction uses
            sign(0) = 0 at rest.

    Returns:
        qdd, shape (..., nq).

    Raises:
        SingularityError: a joint moves no inertia (massless leaf without rotor inertia).
    """
    (qf, qdf, tauf), batch = joint_inputs(model, q=q, qd=qd, tau=tau)
    if friction:
        tauf = tauf - joint_friction(model, qdf)
    if model.has_mimic or (model.drivetrain is not None and model.drivetrain.coupled):
        # Mimic joints and gear trains couple coordinates (a secondary link's b_j may span
        # joints of different branches), which the articulated-body recursion cannot absorb:
        # solve the joint-space equation from the inverse model instead (Khalil 7.6.1).
        from .crba import crba
        from .rnea import rnea

        h = rnea(model, qf, qdf, np.zeros_like(qf), gravity, _flat_wrenches(f_ext, batch), friction=False)
        M = crba(model, qf)
        qdd_joint = np.asarray(np.linalg.solve(M, (tauf - h)[..., None])[..., 0], dtype=np.float64)
        return qdd_joint.reshape(batch + (model.nq,))

    N, nb = qf.shape[0], model.nb
    S = model.S
    qb = body_coordinates(model, qf)
    X = joint_plucker(model, qb)
    alpha, beta = (np.ascontiguousarray(k.T) for k in transform_coefficients(model, qb))
    v = forward_recursion(model, qdf, None, None, alpha, beta)[0].transpose(2, 0, 1)  # (N, nb, 6)
    c = crm(v, S * qdf[..., None])  # velocity-product acceleration c_i = v_i x S_i qd_i
    IA = np.broadcast_to(model.inertia6, (N, nb, 6, 6)).copy()
    pA = crf(v, (model.inertia6 @ v[..., None])[..., 0])
    if f_ext:
        fx = external_body_forces(model, f_ext, batch, *joint_transforms(model, qb))
        if fx is not None:
            pA += fx
    U = np.empty((N, nb, 6))
    D = np.empty((N, nb))
    u = np.empty((N, nb))
    # Backward recursion: articulated inertias and bias forces (Khalil [7.67]-[7.68]).
    for i in range(nb - 1, -1, -1):
        U[:, i] = IA[:, i] @ S[i]
        D[:, i] = U[:, i] @ S[i] + model.rotor_inertia[i]
        if np.any(D[:, i] <= 0.0):
            raise SingularityError(
                f"Joint {model.body_joint_names[i]!r} moves no inertia (its subtree is massless "
                "and it has no rotor inertia): direct dynamics is undefined. Add an <inertial> "
                "to the link or rotor inertia to the joint."
            )
        u[:, i] = tauf[:, i] - pA[:, i] @ S[i]
        p = model.parent[i]
        if p >= 0:
            Ia = IA[:, i] - U[:, i, :, None] * U[:, i, None, :] / D[:, i, None, None]
            pa = pA[:, i] + (Ia @ c[:, i, :, None])[..., 0] + U[:, i] * (u[:, i] / D[:, i])[:, None]
            Xt = np.swapaxes(X[:, i], -1, -2)
            IA[:, p] += Xt @ Ia @ X[:, i]
            pA[:, p] += (Xt @ pa[..., None])[..., 0]
    # Forward recursion: accelerations, gravity as the base acceleration.
    a0 = base_acceleration(model, gravity)
    a = np.empty((N, nb, 6))
    qdd = np.empty((N, nb))
    for i in range(nb):
        p = model.parent[i]
        ap = np.broadcast_to(a0, (N, 6)) if p < 0 else a[:, p]
        ai = np.einsum("nij,nj->ni", X[:, i], ap) + c[:, i]
        qdd[:, i] = (u[:, i] - np.einsum("nk,nk->n", U[:, i], ai)) / D[:, i]
        a[:, i] = ai + S[i] * qdd[:, i, None]
    return qdd.reshape(batch + (model.nq,))


def _flat_wrenches(
    f_ext: Mapping[str, ArrayLike] | None, batch: tuple[int, ...]
) -> dict[str, ArrayLike] | None:
    """Reshape wrenches given for the batch shape to the flattened batch (N, 6)."""
    if not f_ext:
        return None
    n = int(np.prod(batch)) if batch else 1
    return {k: np.broadcast_to(np.asarray(w, float), batch + (6,)).reshape(n, 6) for k, w in f_ext.items()}
