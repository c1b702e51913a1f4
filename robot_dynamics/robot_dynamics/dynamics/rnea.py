"""Inverse dynamics: the recursive Newton-Euler algorithm (Khalil 7.5, Featherstone's ID).

The recursion itself is the engine's ``rd_rnea`` (src/engine/algorithms.c); one clean state goes
straight to the engine (:func:`robot_dynamics.engine.engine_first`), everything else through the
engine's boundary (robot_dynamics.engine).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import engine
from .._batch import real_array
from ..model.robot_model import RobotModel

__all__ = ["rnea", "gravity_torques", "bias_torques"]

Array = NDArray[np.float64]


@engine.engine_first("rnea")
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
        friction: include joint friction (Khalil [7.26]-[7.28]).

    Returns:
        Joint torques/forces [N m or N], shape (..., nq), rotor inertia (Ia qdd) included.

    Raises:
        InputError: a wrong shape, a non-finite input, or a result too large to be finite.
    """
    return engine.rnea(model, q, qd, qdd, gravity, f_ext, friction)


def gravity_torques(model: RobotModel, q: ArrayLike, gravity: ArrayLike | None = None) -> Array:
    """Gravity torques Q(q) (Khalil's Q), shape (..., nq)."""
    qa = real_array(q, "q", f"numbers of shape (..., {model.nq})")
    zero = np.zeros(qa.shape)
    return rnea(model, qa, zero, zero, gravity=gravity, friction=False)


def bias_torques(
    model: RobotModel, q: ArrayLike, qd: ArrayLike, gravity: ArrayLike | None = None, *, friction: bool = True
) -> Array:
    """Everything but the inertial term: ``C(q, qd) qd + Q(q) (+ friction)``, shape (..., nq)."""
    qa = real_array(q, "q", f"numbers of shape (..., {model.nq})")
    return rnea(model, qa, qd, np.zeros(qa.shape), gravity=gravity, friction=friction)
