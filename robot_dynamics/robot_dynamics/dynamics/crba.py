"""Joint-space inertia matrix: the composite rigid body algorithm (Featherstone 6.2)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..kinematics import body_coordinates, joint_transforms
from ..model.robot_model import RobotModel
from ..spatial import plucker
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


def crba(model: RobotModel, q: ArrayLike) -> Array:
    """Joint-space inertia matrix A(q) (Khalil's A, Featherstone's H), shape (..., nq, nq).

    Symmetric positive definite for a physical robot; includes the rotor inertias Ia on the
    diagonal (Khalil [7.29]).
    """
    (qf,), batch = joint_inputs(model, q=q)
    N, nb = qf.shape[0], model.nb
    E, r = joint_transforms(model, body_coordinates(model, qf))
    X = plucker(E, r)
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
    if model.has_mimic:
        G = model.mimic_matrix
        H = G.T @ H @ G
    H[:, np.arange(model.nq), np.arange(model.nq)] += model.rotor_inertia
    return H.reshape(batch + (model.nq, model.nq))
