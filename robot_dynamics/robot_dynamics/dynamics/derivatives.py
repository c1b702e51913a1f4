"""Analytical derivatives of the dynamics, and the linearisation of a robot for control.

The recursions are the engine's ``rd_rnea_derivatives`` and ``rd_aba_derivatives``
(src/engine/algorithms.c): each line of the recursive Newton-Euler algorithm differentiated
along every coordinate, in body coordinates (the derivatives of Carpentier & Mansard, "Analytical
Derivatives of Rigid Body Dynamics Algorithms", RSS 2018), with rotor inertia, friction, external
wrenches, mimic joints and the secondary links of coupled drive trains (Chen & Wang) included;
direct dynamics through the inverse dynamics identity dqdd/dx = -A^-1 dtau/dx at qdd = aba(...).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import engine
from ..errors import InputError
from ..model.robot_model import RobotModel

__all__ = ["rnea_derivatives", "aba_derivatives", "linearize"]

Array = NDArray[np.float64]


@engine.engine_first("rnea_derivatives")
def rnea_derivatives(
    model: RobotModel,
    q: ArrayLike,
    qd: ArrayLike,
    qdd: ArrayLike,
    gravity: ArrayLike | None = None,
    f_ext: Mapping[str, ArrayLike] | None = None,
    *,
    friction: bool = True,
) -> tuple[Array, Array, Array]:
    """Partial derivatives of inverse dynamics :func:`robot_dynamics.rnea`, analytically.

    Args:
        model: the robot.
        q, qd, qdd: joint positions [rad or m], velocities, accelerations, shape (..., nq);
            batch shapes broadcast.
        gravity, f_ext, friction: as in :func:`robot_dynamics.rnea`. A wrench is fixed in base
            axes at its link's origin: it turns with the link in the link's axes. Coulomb
            friction has no slope (its step at qd = 0 has none: smooth it there yourself).

    Returns:
        ``(dtau_dq, dtau_dqd, M)``, each (..., nq, nq): ``dtau_dq[..., j, k] = d tau_j / d q_k``
        [N m/rad or N/m], ``d tau_j / d qd_k`` [N m s/rad], and the joint-space inertia matrix
        ``M = d tau / d qdd`` (:func:`robot_dynamics.crba`, rotor inertia included).

    Raises:
        InputError: a wrong shape, a non-finite input, or a result too large to be finite.
    """
    return engine.rnea_derivatives(model, q, qd, qdd, gravity, f_ext, friction)


@engine.engine_first("aba_derivatives")
def aba_derivatives(
    model: RobotModel,
    q: ArrayLike,
    qd: ArrayLike,
    tau: ArrayLike,
    gravity: ArrayLike | None = None,
    f_ext: Mapping[str, ArrayLike] | None = None,
    *,
    friction: bool = True,
) -> tuple[Array, Array, Array]:
    """Partial derivatives of direct dynamics :func:`robot_dynamics.aba`, analytically.

    Args:
        q, qd: joint positions and velocities, tau: joint torques/forces [N m or N], (..., nq).
        gravity, f_ext, friction: as in :func:`robot_dynamics.aba`.

    Returns:
        ``(dqdd_dq, dqdd_dqd, Minv)``, each (..., nq, nq): ``d qdd_j / d q_k`` [1/s^2],
        ``d qdd_j / d qd_k`` [1/s] and ``M^-1 = d qdd / d tau``.

    Raises:
        SingularityError: the joint-space inertia matrix is singular (a joint moves no inertia).
        InputError: a wrong shape, a non-finite input, or a result too large to be finite.
    """
    return engine.aba_derivatives(model, q, qd, tau, gravity, f_ext, friction)


def linearize(
    model: RobotModel,
    q: ArrayLike,
    qd: ArrayLike,
    tau: ArrayLike,
    dt: float | None = None,
    *,
    gravity: ArrayLike | None = None,
    friction: bool = True,
) -> tuple[Array, Array]:
    """The state-space linearisation of the robot about (q, qd, tau): ``dx = A x + B u``.

    The state is ``x = (q, qd)`` (2 nq) and the input the joint torques ``u = tau`` (nq):
    ``A = [[0, 1], [dqdd/dq, dqdd/dqd]]`` and ``B = [[0], [M^-1]]`` from
    :func:`aba_derivatives`. With ``dt`` the zero-order-hold discretisation at that step
    (``x[k+1] = Ad x[k] + Bd u[k]``): ``exp([[A, B], [0, 0]] dt) = [[Ad, Bd], [0, 1]]``.

    Args:
        q, qd, tau: the operating point, (..., nq); batch shapes broadcast.
        dt: the sampling period [s] of a discrete-time model; None for the continuous one.
        gravity, friction: as in :func:`robot_dynamics.aba`.

    Returns:
        ``(A, B)``: (..., 2 nq, 2 nq) and (..., 2 nq, nq).

    Raises:
        InputError: a bad ``dt`` or operating point; SingularityError as :func:`aba_derivatives`.
    """
    if dt is not None:
        try:
            ok = isinstance(dt, (int, float, np.floating, np.integer)) and not isinstance(dt, bool) and 0.0 < float(dt) < np.inf
        except OverflowError:  # an integer beyond double range
            ok = False
        if not ok:
            raise InputError(f"dt: expected a sampling period > 0 [s] or None (continuous), got {dt!r:.40}")
        dt = float(dt)
    dq, dqd, Minv = aba_derivatives(model, q, qd, tau, gravity, friction=friction)
    n = model.nq
    batch = dq.shape[:-2]
    A = np.zeros(batch + (2 * n, 2 * n))
    B = np.zeros(batch + (2 * n, n))
    A[..., :n, n:] = np.eye(n)
    A[..., n:, :n] = dq
    A[..., n:, n:] = dqd
    B[..., n:, :] = Minv
    if dt is None:
        return A, B
    S = np.zeros(batch + (3 * n, 3 * n))
    S[..., : 2 * n, : 2 * n] = A * dt
    S[..., : 2 * n, 2 * n :] = B * dt
    with np.errstate(over="ignore", invalid="ignore"):  # a dt too long overflows: refused below
        E = expm(S)
    if not np.all(np.isfinite(E)):
        raise InputError(f"dt: {dt!r} s is too long for this operating point: the discretisation is not finite")
    return np.ascontiguousarray(E[..., : 2 * n, : 2 * n]), np.ascontiguousarray(E[..., : 2 * n, 2 * n :])


# Higham (2005), "The scaling and squaring method for the matrix exponential revisited": the
# [13/13] Pade approximant's coefficients b_0..b_13 and the 1-norm below which it is accurate to
# double precision without scaling (theta_13).
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
           10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def expm(S: Array) -> Array:
    """The matrix exponential of S, (..., m, m), by scaling and squaring with the [13/13] Pade
    approximant (Higham 2005, the method of scipy.linalg.expm, which the tests compare): numpy
    alone, so that the first discretisation of a process does not pay scipy.linalg's import
    (about 0.3 s). Non-finite where S's exponential overflows."""
    S = np.asarray(S, dtype=float)
    norm = np.max(np.sum(np.abs(S), axis=-2), axis=-1)  # the 1-norm of each matrix
    with np.errstate(divide="ignore"):
        s = np.where(norm > _THETA13, np.ceil(np.log2(np.maximum(norm, 1e-300) / _THETA13)), 0.0)
    s = np.clip(np.nan_to_num(s, nan=0.0, posinf=1100.0), 0, 1100).astype(int)
    A = S / np.ldexp(1.0, s)[..., None, None]
    b = _PADE13
    eye = np.broadcast_to(np.eye(S.shape[-1]), S.shape)
    A2 = A @ A
    A4 = A2 @ A2
    A6 = A4 @ A2
    U = A @ (A6 @ (b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * eye)
    V = A6 @ (b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * eye
    E = np.linalg.solve(V - U, V + U)  # r_13(A) = (V - U)^-1 (V + U)
    for k in range(int(np.max(s, initial=0))):  # undo the scaling: E <- E^2, s times per matrix
        squared = E @ E
        E = np.where((s > k)[..., None, None], squared, E)
    return E
