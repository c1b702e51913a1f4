"""Direct dynamics: the articulated body algorithm (Khalil 7.6.2, Featherstone 7.3).

The recursion is the engine's ``rd_aba`` (src/engine/algorithms.c; the joint-space solve for
mimic joints and coupled gear trains, Khalil 7.6.1).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import engine
from ..model.robot_model import RobotModel

__all__ = ["aba"]

Array = NDArray[np.float64]


@engine.engine_first("aba")
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
        SingularityError: a joint moves no inertia (a massless subtree without rotor inertia);
            the message names the joint.
        InputError: a wrong shape, a non-finite input, or a result too large to be finite.
    """
    return engine.aba(model, q, qd, tau, gravity, f_ext, friction)
