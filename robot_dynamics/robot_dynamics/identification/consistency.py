"""Physically consistent standard parameters from a base-parameter estimate.

A body's ten standard parameters (J about the body origin, MS = m c, m) are physically
consistent when its pseudo-inertia matrix

    P = [[Sigma, MS], [MS^T, m]],  Sigma = tr(J)/2 1 - J   (so J = tr(Sigma) 1 - Sigma)

is positive definite (Wensing, Kim & Slotine 2017): positive mass, positive definite inertia
and the triangle inequalities at once. Writing ``P = L L^T`` with L lower triangular and
``L_ii = exp(alpha_i)`` (the log-Cholesky parameterisation of Rucker & Wensing 2022) makes
every value of the 10 free numbers a consistent body, so the problem becomes an unconstrained
nonlinear least squares (scipy.optimize.least_squares) instead of a semidefinite program:

    min  || C^-1/2 (beta(pi(theta)) - beta_hat) ||^2 + lambda || (pi(theta) - pi_CAD) / s ||^2

with ``beta`` the base parameters (and effort offsets) of the standard ones, ``C`` the
covariance of the IDIM-WLS estimate (so well-determined parameters are kept tight and poorly
determined ones give way), and a small pull toward the CAD values ``pi_CAD`` (scale ``s``) for
the directions the data cannot see. Rotor inertias and friction stay >= 0 (squared
parameters). The exact positive-definiteness (not a relaxation) and the absence of a
conic-solver dependency are why it is done this way; the fit it reaches is checked in the
tests against the unconstrained estimate's residual.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..dynamics.regressor import standard_parameters
from ..errors import InputError
from ..model.robot_model import RobotModel
from .estimation import Estimate

__all__ = ["ConsistentFit", "consistent_parameters", "pseudo_inertia", "is_consistent"]

Array = NDArray[np.float64]
_ENTRIES = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))
_TRIL = np.tril_indices(4)


def pseudo_inertia(per_body: Array) -> Array:
    """(..., 10) standard parameters (XX XY XZ YY YZ ZZ MX MY MZ M) -> (..., 4, 4) pseudo-inertia."""
    x = np.asarray(per_body, dtype=float)
    J = np.zeros(x.shape[:-1] + (3, 3))
    for k, (r, c) in enumerate(_ENTRIES):
        J[..., r, c] = J[..., c, r] = x[..., k]
    P = np.zeros(x.shape[:-1] + (4, 4))
    P[..., :3, :3] = 0.5 * np.trace(J, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - J
    P[..., :3, 3] = P[..., 3, :3] = x[..., 6:9]
    P[..., 3, 3] = x[..., 9]
    return P


def _standard_of(P: Array) -> Array:
    S = P[..., :3, :3]
    J = np.trace(S, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - S
    out = np.empty(P.shape[:-2] + (10,))
    for k, (r, c) in enumerate(_ENTRIES):
        out[..., k] = J[..., r, c]
    out[..., 6:9] = P[..., :3, 3]
    out[..., 9] = P[..., 3, 3]
    return out


def is_consistent(model_or_pi: RobotModel | Array, nb: int | None = None, tolerance: float = 1e-9) -> bool:
    """True when every body's pseudo-inertia is positive semi-definite (smallest eigenvalue
    >= -tolerance [kg m^2]; a massless link that only carries a rotor inertia has P >= 0)."""
    if isinstance(model_or_pi, RobotModel):
        pi, nb = standard_parameters(model_or_pi), model_or_pi.nb
    else:
        pi = np.asarray(model_or_pi, dtype=float)
    assert nb is not None
    P = pseudo_inertia(pi[: 10 * nb].reshape(nb, 10))
    return bool(np.all(np.linalg.eigvalsh(P)[:, 0] >= -tolerance))


@dataclass(frozen=True)
class ConsistentFit:
    """Result of :func:`consistent_parameters`.

    Attributes:
        pi: (10 nb + 3 nq,) consistent standard parameters (regressor order).
        offsets: (nq,) effort offsets.
        min_eigenvalue: (nb,) smallest eigenvalue of each body's pseudo-inertia (> 0).
        mahalanobis: the fit term, ``(beta - beta_hat)^T C^-1 (beta - beta_hat)`` over the kept
            parameters (about the number of parameters when the estimate itself is consistent).
        iterations: function evaluations of the solver.
        static_excess: (nq,) Fst - Fc of Khalil [7.26] when the estimate has Stribeck terms.
    """

    pi: Array
    offsets: Array
    min_eigenvalue: Array
    mahalanobis: float
    iterations: int
    static_excess: Array | None = None


def _whitening(C: Array) -> Array:
    """``W_c`` with ``W_c^T W_c = C^-1`` for a covariance C (k, k), via its eigen-decomposition
    (C may be near singular: its eigenvalues are floored at 1e-12 of the largest)."""
    ev, V = np.linalg.eigh(C)
    ev = np.maximum(ev, 1e-12 * max(float(ev.max()), 1e-300))
    return (V / np.sqrt(ev)).T


def _log_cholesky(pi0: Array, nb: int) -> Array:
    """Log-Cholesky coordinates (10 nb,) of the bodies of the prior ``pi0``: the lower triangle
    of each ``L`` with ``P = L L^T``, ``log(L_ii)`` on the diagonal; P slightly regularised."""
    P0 = pseudo_inertia(pi0[: 10 * nb].reshape(nb, 10))
    P0 = P0 + 1e-6 * np.maximum(np.trace(P0, axis1=1, axis2=2), 1e-9)[:, None, None] * np.eye(4)
    eig0 = np.linalg.eigvalsh(P0)[:, 0]
    if np.any(eig0 <= 0):  # an inconsistent CAD prior: start from a small positive one instead
        P0 = P0 + (np.abs(np.minimum(eig0, 0.0)) * 1.01 + 1e-6)[:, None, None] * np.eye(4)
    L0 = np.linalg.cholesky(P0)
    diag = np.arange(4)
    theta_bodies = []
    for b in range(nb):
        L = L0[b].copy()
        L[diag, diag] = np.log(L[diag, diag])
        theta_bodies.append(L[_TRIL])
    return np.concatenate(theta_bodies)


def _cholesky_factors(theta: Array, nb: int) -> Array:
    """The (nb, 4, 4) lower-triangular ``L`` of each body from the first 10 nb entries of theta."""
    diag = np.arange(4)
    Lb = np.zeros((nb, 4, 4))
    Lb[:, _TRIL[0], _TRIL[1]] = theta[: 10 * nb].reshape(nb, 10)
    Lb[:, diag, diag] = np.exp(np.minimum(Lb[:, diag, diag], 50.0))  # trial steps may overshoot
    return Lb


def _unpack(theta: Array, nb: int, nq: int) -> tuple[Array, Array]:
    """theta -> (standard parameters (10 nb + 3 nq,), the free extras: offsets and the rest)."""
    Lb = _cholesky_factors(theta, nb)
    P = Lb @ np.swapaxes(Lb, 1, 2)
    joint = theta[10 * nb: 10 * nb + 3 * nq] ** 2
    return np.concatenate([_standard_of(P).reshape(-1), joint]), theta[10 * nb + 3 * nq:]


def _base_map(estimate: Estimate, nb: int, nq: int) -> Array:
    """``G``, shape (n_base + no, 10 nb + 3 nq + no): (beta, extras) from (pi, extras), with
    ``no`` extras (effort offsets, static friction excesses)."""
    # beta = B pi (+ offsets): the base parameters are linear in the standard ones.
    bp = estimate.base
    p = 10 * nb + 3 * nq
    B = np.zeros((bp.n_base, p))
    B[np.arange(bp.n_base), bp.independent] = 1.0
    B[:, bp.dependent] = bp.K
    no = len(estimate.values) - bp.n_base
    G = np.zeros((bp.n_base + no, p + no))  # (beta, extras) from (pi, extras)
    G[: bp.n_base, :p] = B
    G[bp.n_base:, p:] = np.eye(no)
    return G


def _unpack_jacobian(theta: Array, nb: int, nq: int, no: int) -> Array:
    """d (pi, extras) / d theta, shape (10 nb + 3 nq + no, theta.size)."""
    # d pi / d theta: per body dP = dL L^T + L dL^T for each free entry of L (times
    # exp(alpha) on the diagonal), mapped to the 10 parameters; 2 theta for the joints.
    p = 10 * nb + 3 * nq
    n = theta.size
    D = np.zeros((p + no, n))
    Lb = _cholesky_factors(theta, nb)
    for k, (i, j) in enumerate(zip(*_TRIL)):
        E = np.zeros((nb, 4, 4))
        E[:, i, j] = Lb[:, i, j] if i == j else 1.0
        dP = E @ np.swapaxes(Lb, 1, 2) + Lb @ np.swapaxes(E, 1, 2)
        dpi = _standard_of(dP)  # (nb, 10), linear in P
        for b in range(nb):
            D[10 * b: 10 * b + 10, 10 * b + k] = dpi[b]
    jj = np.arange(3 * nq)
    D[10 * nb + jj, 10 * nb + jj] = 2.0 * theta[10 * nb: 10 * nb + 3 * nq]
    D[p:, 10 * nb + 3 * nq:] = np.eye(no)
    return D


def consistent_parameters(model: RobotModel, estimate: Estimate, *, prior_weight: float = 1e-3,
                          prior: Array | None = None) -> ConsistentFit:
    """The physically consistent standard parameters closest to ``estimate`` (see module doc).

    Args:
        model: the nominal model; its standard parameters are the CAD prior unless ``prior``.
        estimate: an IDIM-WLS :class:`Estimate` of this model.
        prior_weight: lambda, the weight of the pull toward the prior (relative).

    Raises:
        InputError: prior_weight not a positive number.
    """
    from scipy.optimize import least_squares

    if not (np.isfinite(prior_weight) and prior_weight > 0):
        raise InputError(f"prior_weight: expected a positive number, got {prior_weight!r}")
    nb, nq = model.nb, model.nq
    bp = estimate.base
    pi0 = standard_parameters(model) if prior is None else np.asarray(prior, dtype=float)
    kept = estimate.kept
    xhat = estimate.values[kept]
    Wc = _whitening(estimate.covariance[np.ix_(kept, kept)])
    scale = np.maximum(np.abs(pi0), 1e-3 * max(float(np.abs(pi0).max()), 1e-12))
    joint0 = np.sqrt(np.maximum(pi0[10 * nb:], 0.0))
    off0 = estimate.values[bp.n_base:]  # effort offsets and static friction excesses: free
    theta0 = np.concatenate([_log_cholesky(pi0, nb), joint0, off0])
    p = 10 * nb + 3 * nq
    no = len(estimate.values) - bp.n_base
    Gk = Wc @ _base_map(estimate, nb, nq)[kept]

    def residual(theta: Array) -> Array:
        pi, off = _unpack(theta, nb, nq)
        y = np.concatenate([pi, off])
        return np.concatenate([Gk @ y - Wc @ xhat, np.sqrt(prior_weight) * (pi - pi0) / scale])

    def jacobian(theta: Array) -> Array:
        D = _unpack_jacobian(theta, nb, nq, no)
        return np.vstack([Gk @ D, (np.sqrt(prior_weight) / scale)[:, None] * D[:p]])

    sol = least_squares(residual, theta0, jac=jacobian, method="trf", x_scale="jac", max_nfev=2000)
    pi, off = _unpack(sol.x, nb, nq)
    beta = np.concatenate([bp.base_values(pi), off])
    d = Wc @ (beta[kept] - xhat)
    eig = np.linalg.eigvalsh(pseudo_inertia(pi[: 10 * nb].reshape(nb, 10)))[:, 0]
    offsets = off[:nq] if estimate.offsets else np.zeros(nq)
    excess = off[-nq:] if estimate.stribeck_speed is not None else None
    return ConsistentFit(pi, offsets, eig, float(d @ d), int(sol.nfev), excess)
