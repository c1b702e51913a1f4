"""Inverse dynamics: the recursive Newton-Euler algorithm (Khalil 7.5, Featherstone's ID).

The recursion itself is the compiled kernel ``kernels._compiled._rnea``; this module is its
boundary: one state with the least overhead, batches in parallel, inputs and outputs checked.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import kernels
from .._batch import real_array
from ..model.robot_model import RobotModel
from ._common import gravity_vector, joint_inputs

__all__ = ["rnea", "gravity_torques", "bias_torques"]

Array = NDArray[np.float64]
_empty = np.empty


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
    if gravity is None and not f_ext:
        # One state of float64 vectors: straight into the kernel (its dispatch refuses anything
        # else with a TypeError, and a bad size or value comes back as a status).
        try:
            km = model._kernel_model  # type: ignore[attr-defined]  # set by kernels.kernel_model
            out = _empty(km.nq)
            if not _one(km.buffer, q, qd, qdd, out, km.work_friction if friction else km.work):
                return out
        except (AttributeError, TypeError, ValueError):  # no kernel model yet, or not float64 vectors
            pass
    return _general(model, q, qd, qdd, gravity, f_ext, friction)


def _one(*args: object) -> int:
    """The one-state kernel, bound on first use (numba is imported then, not at import time)."""
    global _one
    _one = kernels.one_state("rnea_one")
    return int(_one(*args))


def _general(
    model: RobotModel,
    q: ArrayLike,
    qd: ArrayLike,
    qdd: ArrayLike,
    gravity: ArrayLike | None,
    f_ext: Mapping[str, ArrayLike] | None,
    friction: bool,
) -> Array:
    (qf, qdf, qddf), batch = joint_inputs(model, q=q, qd=qd, qdd=qdd)
    g = gravity_vector(model, gravity)
    n = qf.shape[0]
    fx = kernels.wrench_rows(model, f_ext, batch, n)
    out = np.empty((n, model.nq))
    status = np.empty(n, dtype=np.int64)
    km = kernels.kernel_model(model)
    kernels.compiled().rnea_batch(km.buffer, qf, qdf, qddf, g, fx, bool(friction), 0.0, out, status, kernels.chunks(n))
    kernels.check_status(model, status if batch else status[0], "rnea")
    return out.reshape(batch + (model.nq,))


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
