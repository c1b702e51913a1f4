"""Weighted least squares on the base parameters, friction and effort offsets (Gautier's IDIM-WLS).

The inverse dynamic model is linear in the base parameters (Khalil 7.5.3 and [7.50]):
``tau = W_b(q, qd, qdd) X + off``, with ``X`` the base inertial parameters, the rotor inertias
``Ia`` and the friction ``FV, FC`` as :func:`robot_dynamics.base_parameters` groups them, and
``off`` one effort offset per joint (the drive's current offset). Stacked over the decimated
rows of a recording (:func:`robot_dynamics.identification.signal.prepare`), it is solved as
Gautier does:

1. each joint's equations alone by ordinary least squares give that joint's residual standard
   deviation ``sigma_j = ||rho_j|| / sqrt(r_j - c_j)`` (rows minus parameters it sees);
2. every row of joint j is divided by ``sigma_j`` and the whole system solved again;
3. the covariance of the estimate is ``sigma^2 (W_w^T W_w)^-1`` with ``sigma^2`` the weighted
   residual variance, and the relative standard deviation of a parameter is
   ``%sigma_i = 100 sigma_Xi / |X_i|``.

Essential parameters (Pham & Gautier): the parameter of largest %sigma is removed and the
system solved again, while that %sigma exceeds a threshold; what remains is what the data sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ..dynamics.base_parameters import BaseParameters, base_parameters
from ..dynamics.regressor import INERTIAL_NAMES, standard_parameters
from ..errors import InputError
from ..model.robot_model import RobotModel
from .signal import Prepared

__all__ = ["Estimate", "identify", "standard_from_base", "model_from_standard", "rank_report"]

Array = NDArray[np.float64]


@dataclass(frozen=True)
class Estimate:
    """An identified parameter set.

    Attributes:
        names: (c,) parameter names: base parameters (Khalil's, e.g. ``ZZR1``, ``FV2``), then
            ``OFF<j>`` effort offsets.
        values: (c,) estimates. sigma: (c,) standard deviations. rel_sigma: (c,) [%].
        kept: (c,) bool, the essential parameters (all True unless essential ones were asked).
        joint_sigma: (nq,) Gautier's per-joint residual standard deviations (the weights).
        residual_rms: (nq,) RMS of the effort residual per joint on the identification rows.
        base: the :class:`BaseParameters` the columns come from.
        rows: number of decimated samples used; condition: condition number of the weighted,
            column-scaled observation matrix.
        covariance: (c, c) of the estimate (zero rows and columns for removed parameters).
        stribeck_speed: (nq,) the chosen B [s/rad] of Khalil [7.26] per joint when the static
            friction excess ``FS<j> = Fst - Fc`` was identified (the last nq parameters).
    """

    names: tuple[str, ...]
    values: Array
    sigma: Array
    rel_sigma: Array
    kept: NDArray[np.bool_]
    joint_sigma: Array
    residual_rms: Array
    base: BaseParameters
    rows: int
    condition: float
    covariance: Array
    offsets: bool = True
    removed: tuple[str, ...] = field(default=())
    stribeck_speed: tuple[float, ...] | None = None

    @property
    def n_base(self) -> int:
        return self.base.n_base

    def base_values(self) -> Array:
        """The base-parameter part of the estimate (zero where a parameter was not kept)."""
        return np.where(self.kept[: self.n_base], self.values[: self.n_base], 0.0)

    def offset_values(self, nq: int) -> Array:
        return self.values[self.n_base:] if self.offsets else np.zeros(nq)

    def predict(self, W: Array, stribeck: dict[float, Array] | None = None) -> Array:
        """Efforts (M, nq) predicted from standard-regressor rows W (M, nq, p) (and, for an
        estimate with Stribeck terms, the prepared Stribeck columns of its B values)."""
        E = None
        if self.stribeck_speed is not None:
            if not stribeck:
                raise InputError("predict: this estimate has Stribeck terms; prepare the data with its B values")
            E = np.column_stack([stribeck[b][:, j] for j, b in enumerate(self.stribeck_speed)])
        A = _observation(self.base, W, self.offsets, E)
        return A @ np.where(self.kept, self.values, 0.0)

    def static_excess(self) -> Array | None:
        """Fst - Fc per joint (Khalil [7.26]) when Stribeck terms were identified."""
        if self.stribeck_speed is None:
            return None
        return self.values[-len(self.stribeck_speed):]


def _observation(base: BaseParameters, W: Array, offsets: bool, stribeck: Array | None = None) -> Array:
    """(M, nq, c) columns: the base regressor, one offset column per joint, then (with
    ``stribeck``, (M, nq)) one Stribeck column per joint."""
    blocks = [W[..., base.independent]]
    M, nq = W.shape[0], W.shape[1]
    if offsets:
        blocks.append(np.broadcast_to(np.eye(nq), (M, nq, nq)))
    if stribeck is not None:
        blocks.append(np.eye(nq)[None, :, :] * stribeck[:, :, None])
    return np.concatenate(blocks, axis=2)


def rank_report(base: BaseParameters, A: Array, names: list[str], tolerance: float = 1e-8) -> list[str]:
    """Names of the columns of A (rows x c) the data cannot separate from the others (QR test)."""
    from scipy.linalg import qr

    norms = np.linalg.norm(A, axis=0)
    scaled = A / np.where(norms > 0, norms, 1.0)
    R = qr(scaled, mode="r")[0]
    d = np.abs(np.diag(R))
    bad = (d <= tolerance * max(d.max(initial=0.0), 1e-300)) | (norms == 0)
    return [names[i] for i in np.flatnonzero(bad)]


def _wls(A: Array, y: Array, valid: NDArray[np.bool_], cols: NDArray[np.bool_]) -> tuple[Array, Array, Array, Array, float]:
    """Gautier's two-step WLS on the columns ``cols``; A (M, nq, c), y and valid (M, nq).

    Returns x, covariance of x, sigma_j (nq,), residual (M, nq) (0 where not valid), condition
    number.
    """
    nq = A.shape[1]
    Ac = A[:, :, cols]
    sig = np.empty(nq)
    for j in range(nq):
        rows = valid[:, j]
        Aj = Ac[rows, j, :]
        seen = np.linalg.norm(Aj, axis=0) > 0
        xj, *_ = np.linalg.lstsq(Aj[:, seen], y[rows, j], rcond=None)
        rho = y[rows, j] - Aj[:, seen] @ xj
        dof = max(int(rows.sum()) - int(np.linalg.matrix_rank(Aj[:, seen])), 1)
        sig[j] = max(float(np.linalg.norm(rho)) / np.sqrt(dof), 1e-12 * (1.0 + float(np.abs(y[:, j]).max())))
    w = np.broadcast_to(1.0 / sig, valid.shape)[valid]
    Aw = Ac[valid] * w[:, None]
    yw = y[valid] * w
    scale = np.linalg.norm(Aw, axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    U, s, Vt = np.linalg.svd(Aw / scale, full_matrices=False)
    x = (Vt.T @ ((U.T @ yw) / s)) / scale
    res = yw - Aw @ x
    var = float(res @ res) / max(Aw.shape[0] - Aw.shape[1], 1)
    cov = (Vt.T / s**2) @ Vt / np.outer(scale, scale) * var
    full = np.where(valid, y - Ac @ x, 0.0)
    return x, cov, sig, full, float(s[0] / s[-1])


def identify(
    model: RobotModel,
    data: Prepared,
    *,
    base: BaseParameters | None = None,
    offsets: bool = True,
    essential: float | None = None,
    stribeck: bool = False,
) -> Estimate:
    """IDIM-WLS estimate of the base parameters, friction and effort offsets.

    Args:
        model: the nominal model (its structure gives the base parameters).
        data: prepared rows.
        base: precomputed base parameters of ``model`` (friction included).
        offsets: estimate one effort offset per joint.
        essential: if given, a %sigma threshold: parameters are removed one at a time, the
            largest %sigma first, while it exceeds the threshold.
        stribeck: also identify Khalil [7.26]'s static friction excess ``Fst - Fc`` per joint:
            linear in it for a given decay constant B, so B is chosen per joint among those
            the data was prepared with (``prepare(..., stribeck=[...])``) by the smallest
            weighted residual (coordinate descent over the joints).

    Raises:
        InputError: the recording does not excite some parameters (named), or has too few rows.
    """
    bp = base if base is not None else base_parameters(model)
    nq = model.nq
    speeds: tuple[float, ...] | None = None
    E = None
    if stribeck:
        speeds, E = _choose_stribeck(bp, data, offsets, nq)
    A = _observation(bp, data.W, offsets, E)
    names = list(bp.names) + ([f"OFF{j + 1}" for j in range(nq)] if offsets else []) + \
        ([f"FS{j + 1}" for j in range(nq)] if stribeck else [])
    c = A.shape[2]
    if int(data.valid.sum()) < 2 * c:
        raise InputError(f"recording too short: {int(data.valid.sum())} usable equations for {c} "
                         "parameters (record at least a few periods of the excitation)")
    blind = rank_report(bp, A[data.valid], names)
    if blind:
        raise InputError(f"the excitation does not identify {blind}: the recorded motion leaves their "
                         "regressor columns (nearly) dependent; use an optimised excitation "
                         "(`robot-dynamics excite`) or fix these parameters to their CAD values")
    cols = np.ones(c, dtype=bool)
    removed: list[str] = []
    while True:
        x, cov, sig, res, cond = _wls(A, data.tau, data.valid, cols)
        sx = np.sqrt(np.maximum(np.diag(cov), 0.0))
        rel = 100.0 * sx / np.maximum(np.abs(x), 1e-300)
        if essential is None:
            break
        worst = int(np.argmax(rel))
        if rel[worst] <= essential or np.count_nonzero(cols) <= 1:
            break
        idx = np.flatnonzero(cols)[worst]
        cols[idx] = False
        removed.append(names[idx])
    values = np.zeros(c)
    sigma = np.zeros(c)
    rels = np.full(c, np.inf)
    values[cols], sigma[cols], rels[cols] = x, sx, rel
    covariance = np.zeros((c, c))
    covariance[np.ix_(cols, cols)] = cov
    rms = np.sqrt((res**2).sum(axis=0) / np.maximum(data.valid.sum(axis=0), 1))
    return Estimate(tuple(names), values, sigma, rels, cols, sig, rms,
                    bp, int(A.shape[0]), cond, covariance, offsets, tuple(removed), speeds)


def _choose_stribeck(bp: BaseParameters, data: Prepared, offsets: bool, nq: int) -> tuple[tuple[float, ...], Array]:
    """B per joint among the prepared candidates, by coordinate descent on the WLS residual."""
    if not data.stribeck:
        raise InputError("stribeck: prepare the data with candidate decay constants, "
                         "e.g. prepare(model, recording, stribeck=[2, 5, 10, 20, 50])")
    grid = sorted(data.stribeck)
    cols = None

    def cost(choice: list[float]) -> float:
        E = np.column_stack([data.stribeck[b][:, j] for j, b in enumerate(choice)])
        A = _observation(bp, data.W, offsets, E)
        c = np.ones(A.shape[2], dtype=bool) if cols is None else cols
        _, _, _, res, _ = _wls(A, data.tau, data.valid, c)
        # the product of the joints' residual sums of squares: each joint's own scale cancels
        return float(np.sum(np.log(np.sum(res**2, axis=0) + 1e-300)))

    choice = [min(grid, key=lambda b: cost([b] * nq))] * nq
    for _ in range(2):
        for j in range(nq):
            choice[j] = min(grid, key=lambda b: cost(choice[:j] + [b] + choice[j + 1:]))
    E = np.column_stack([data.stribeck[b][:, j] for j, b in enumerate(choice)])
    return tuple(choice), E


def standard_from_base(base: BaseParameters, x_base: Array, prior: Array) -> Array:
    """Standard parameters that reproduce ``x_base``, taking the dependent ones from ``prior``.

    ``pi[dependent] = prior[dependent]`` and ``pi[independent] = x_base - K pi[dependent]``,
    so ``base.base_values(pi) == x_base`` exactly: the model gives the identified torques.
    """
    pi = np.array(prior, dtype=float)
    pi[base.independent] = np.asarray(x_base, dtype=float) - base.K @ pi[base.dependent]
    return pi


def model_from_standard(model: RobotModel, pi: Array) -> RobotModel:
    """``model`` with the standard parameters ``pi`` (regressor order): masses, centres of mass,
    inertias about the centres of mass, rotor inertias, viscous and Coulomb friction.

    Raises:
        InputError: a body with a first moment but no positive mass (not representable).
    """
    nb, nq = model.nb, model.nq
    per = np.asarray(pi[: 10 * nb], dtype=float).reshape(nb, 10)
    m = per[:, INERTIAL_NAMES.index("M")]
    ms = per[:, 6:9]
    J = np.empty((nb, 3, 3))
    for k, (r, s) in enumerate(((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))):
        J[:, r, s] = J[:, s, r] = per[:, k]
    bad = [model.body_names[b] for b in range(nb) if m[b] <= 0 and np.any(ms[b] != 0)]
    if bad:
        raise InputError(f"bodies {bad}: a first moment without a positive mass; use the physically "
                         "consistent estimate")
    com = np.where(m[:, None] > 0, ms / np.where(m > 0, m, 1.0)[:, None], 0.0)
    cc = np.einsum("bi,bj->bij", com, com)
    shift = m[:, None, None] * (np.einsum("bi,bi->b", com, com)[:, None, None] * np.eye(3) - cc)
    joint = np.asarray(pi[10 * nb:], dtype=float).reshape(nq, 3)
    return model.replace(mass=m, com=com, inertia_com=J - shift, rotor_inertia=joint[:, 0],
                         viscous=joint[:, 1], coulomb=joint[:, 2])


def true_base(model: RobotModel, base: BaseParameters) -> Array:
    """The base parameter values of a model (for comparisons)."""
    return base.base_values(standard_parameters(model))
