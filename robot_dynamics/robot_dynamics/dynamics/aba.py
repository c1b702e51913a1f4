"""Direct dynamics: the articulated body algorithm (Khalil 7.6.2, Featherstone 7.3).

The recursion is the compiled kernel ``kernels._compiled._aba`` (``_aba_joint_space`` for
mimic joints and coupled gear trains, Khalil 7.6.1); this module is its boundary.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import kernels
from ..model.robot_model import RobotModel
from ._common import gravity_vector, joint_inputs

__all__ = ["aba"]

Array = NDArray[np.float64]
_empty = np.empty


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
    if gravity is None and not f_ext:
        try:
            km = model._kernel_model  # type: ignore[attr-defined]  # set by kernels.kernel_model
            out = _empty(km.nq)
            if not _one(km.buffer, q, qd, tau, out, km.work_friction if friction else km.work):
                return out
        except (AttributeError, TypeError, ValueError):  # no kernel model yet, or not float64 vectors
            pass
    (qf, qdf, tauf), batch = joint_inputs(model, q=q, qd=qd, tau=tau)
    g = gravity_vector(model, gravity)
    n = qf.shape[0]
    fx = kernels.wrench_rows(model, f_ext, batch, n)
    out = np.empty((n, model.nq))
    status = np.empty(n, dtype=np.int64)
    km = kernels.kernel_model(model)
    kernels.compiled().aba_batch(km.buffer, qf, qdf, tauf, g, fx, bool(friction), 0.0, out, status, kernels.chunks(n))
    kernels.check_status(model, status if batch else status[0], "aba")
    return out.reshape(batch + (model.nq,))


def _one(*args: object) -> int:
    """The one-state kernel, bound on first use."""
    global _one
    _one = kernels.one_state("aba_one")
    return int(_one(*args))
