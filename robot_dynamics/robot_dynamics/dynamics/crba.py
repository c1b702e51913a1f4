"""Joint-space inertia matrix: the composite rigid body algorithm (Featherstone 6.2)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..kinematics import body_coordinates, joint_plucker
from ..model.robot_model import RobotModel
from ._common import joint_inputs

__all__ = ["crba", "composite_inertias"]

Array = NDArray[np.float64]


def composite_inertias(model: RobotModel, X: Array) -> Array:
    """Composite inertia of every subtree in its root body's frame, (N, nb, 6, 6).

    ``Ic_p += X_i^T Ic_i X_i`` from the leaves down (Featherstone eq. 6.7).
    """
    N = X.shape[0]
    Ic = np.broadcast_to(model.inertia6, (N, model.nb, 6, 6)).copy()
    for i in range(model.nb - 1, -1, -1):
        p = model.parent[i]
        if p >= 0:
            Ic[:, p] += np.swapaxes(X[:, i], -1, -2) @ Ic[:, i] @ X[:, i]
    return Ic


def _secondary_link_momenta(model: RobotModel, X: Array) -> Array:
    """U[k, j] = S_k . (I_j e_j) seen from body k, for every ancestor k of j's carrier, (N, nb, nr).

    The unit spin of secondary link j has the momentum [I_j e_j; 0] (a pure couple), so
    U[k, j] = I_j e_j . z_k, the projections of seed 000 eq. (18b)/(18c), walked from the
    carrier to the base as the composite-inertia columns are.
    """
    dt = model.drivetrain
    N = X.shape[0]
    U = np.zeros((N, model.nb, dt.n_secondary))
    for j in range(dt.n_secondary):
        c = int(dt.carrier_body[j])
        F = np.zeros((N, 6))
        F[:, :3] = dt.inertia[j] * dt.axis_body[j]
        while c >= 0:
            U[:, c, j] = F @ model.S[c]
            F = (np.swapaxes(X[:, c], -1, -2) @ F[..., None])[..., 0]
            c = int(model.parent[c])
    return U


def crba(model: RobotModel, q: ArrayLike) -> Array:
    """Joint-space inertia matrix A(q) (Khalil's A, Featherstone's H), shape (..., nq, nq).

    Symmetric positive definite for a physical robot; includes the rotor inertias Ia on the
    diagonal (Khalil [7.29]) and, for a geared robot, the secondary links' M_s (seed 000
    eq. 21) on top of the virtual links' M_v.
    """
    (qf,), batch = joint_inputs(model, q=q)
    N, nb = qf.shape[0], model.nb
    X = joint_plucker(model, body_coordinates(model, qf))
    Ic = composite_inertias(model, X)
    S = model.S
    H = np.zeros((N, nb, nb))
    for i in range(nb):
        F = Ic[:, i] @ S[i]
        H[:, i, i] = F @ S[i]
        j = i
        while model.parent[j] >= 0:
            F = (np.swapaxes(X[:, j], -1, -2) @ F[..., None])[..., 0]
            j = model.parent[j]
            H[:, i, j] = H[:, j, i] = F @ S[j]
    geared = model.drivetrain is not None and model.drivetrain.coupled
    if geared:
        U = _secondary_link_momenta(model, X)
    if model.has_mimic:
        G = model.mimic_matrix
        H = G.T @ H @ G
        if geared:
            U = G.T @ U
    if geared:
        # Chen & Wang eq. (18): M_s = B^T diag(I) B (18d) + U B + (U B)^T (18b, 18c).
        dt = model.drivetrain
        UB = U @ dt.B
        H = H + (dt.B.T * dt.inertia) @ dt.B + UB + np.swapaxes(UB, -1, -2)
    H[:, np.arange(model.nq), np.arange(model.nq)] += model.rotor_inertia
    return H.reshape(batch + (model.nq, model.nq))
