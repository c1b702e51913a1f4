"""The Coriolis/centrifugal matrix C(q, qd) of Christoffel symbols (Khalil [7.7])."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..model.robot_model import RobotModel
from ._common import joint_inputs
from .rnea import rnea

__all__ = ["coriolis_matrix"]

Array = NDArray[np.float64]


def coriolis_matrix(model: RobotModel, q: ArrayLike, qd: ArrayLike) -> Array:
    """C(q, qd) with ``C qd`` = the velocity-product torques and ``Mdot - 2C`` skew-symmetric.

    ``C_ij = sum_k c_ijk qd_k`` with Christoffel symbols c_ijk = 1/2 (dA_ij/dq_k + dA_ik/dq_j
    - dA_jk/dq_i) (Khalil [7.7]). The velocity-product torque h(qd) = C(q, qd) qd is a
    quadratic form in qd whose symmetric bilinear form is exactly B(x, y) = sum c_ijk x_j y_k,
    so by polarisation the j-th column is ``C e_j = (h(qd + e_j) - h(qd - e_j)) / 4``: exact
    (no finite-difference step), from 2 nq inverse-dynamics calls batched into one.

    Args:
        q, qd: (..., nq).

    Returns:
        C, shape (..., nq, nq).
    """
    (qf, qdf), batch = joint_inputs(model, q=q, qd=qd)
    n = model.nq
    eye = np.eye(n)
    qd_pm = np.concatenate([qdf[:, None, :] + eye, qdf[:, None, :] - eye], axis=1)  # (N, 2n, n)
    q_pm = np.broadcast_to(qf[:, None, :], qd_pm.shape)
    h = rnea(model, q_pm, qd_pm, np.zeros_like(qd_pm), gravity=np.zeros(3), friction=False)
    C = (h[:, :n, :] - h[:, n:, :]) / 4.0  # (N, j, i)
    return np.swapaxes(C, -1, -2).reshape(batch + (n, n))
