"""Joint-space inertia matrix: the composite rigid body algorithm (Featherstone 6.2).

The recursion is the compiled kernel ``kernels._compiled._crba``; this module is its boundary.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import kernels
from ..model.robot_model import RobotModel
from ._common import joint_inputs

__all__ = ["crba"]

Array = NDArray[np.float64]
_empty = np.empty


def crba(model: RobotModel, q: ArrayLike) -> Array:
    """Joint-space inertia matrix A(q) (Khalil's A, Featherstone's H), shape (..., nq, nq).

    Symmetric positive definite for a physical robot; includes the rotor inertias Ia on the
    diagonal (Khalil [7.29]) and, for a geared robot, the secondary links' M_s (seed 000
    eq. 18) on top of the virtual links' M_v.
    """
    try:
        km = model._kernel_model  # type: ignore[attr-defined]  # set by kernels.kernel_model
        H = _empty((km.nq, km.nq))
        if not _one(km.buffer, q, H, km.work):
            return H
    except (AttributeError, TypeError, ValueError):  # no kernel model yet, or not float64 vectors
        pass
    (qf,), batch = joint_inputs(model, q=q)
    n = qf.shape[0]
    H = np.empty((n, model.nq, model.nq))
    status = np.empty(n, dtype=np.int64)
    kernels.compiled().crba_batch(kernels.kernel_model(model).buffer, qf, H, status, kernels.chunks(n))
    kernels.check_status(model, status if batch else status[0], "crba")
    return H.reshape(batch + (model.nq, model.nq))


def _one(*args: object) -> int:
    """The one-state kernel, bound on first use."""
    global _one
    _one = kernels.one_state("crba_one")
    return int(_one(*args))
