"""Joint-space inertia matrix: the composite rigid body algorithm (Featherstone 6.2).

The recursion is the engine's ``rd_crba`` (src/engine/algorithms.c).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import engine
from ..model.robot_model import RobotModel

__all__ = ["crba"]

Array = NDArray[np.float64]


@engine.engine_first("crba", fixed=2, friction=False)
def crba(model: RobotModel, q: ArrayLike) -> Array:
    """Joint-space inertia matrix A(q) (Khalil's A, Featherstone's H), shape (..., nq, nq).

    Symmetric positive definite for a physical robot; includes the rotor inertias Ia on the
    diagonal (Khalil [7.29]) and, for a geared robot, the secondary links' M_s (seed 000
    eq. 18) on top of the virtual links' M_v.
    """
    return engine.crba(model, q)
