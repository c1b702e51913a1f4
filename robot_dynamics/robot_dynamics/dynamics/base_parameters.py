"""Base inertial parameters: the standard parameters that have no effect, and those that regroup.

Khalil 7.5.3: the dynamic model depends on a reduced set of *base* (minimum) inertial
parameters, obtained from the standard ones by eliminating those with no effect and grouping
others. Two ways are given here:

* numerically, for any robot (Gautier's method): the regressor ``W`` stacked over random states
  is factored by QR without pivoting, in the column order of
  :func:`~robot_dynamics.dynamics.regressor.standard_parameter_names`. A column whose
  diagonal of R vanishes lies in the span of the earlier columns: it is *dependent*, and
  ``W_dep = W_ind K``, so ``Y pi = Y_ind (pi_ind + K pi_dep)``. That column order eliminates
  ``YYj, MZj, Mj`` of a revolute link first, as Khalil's grouping rules do, and names the
  regrouped parameters as he does (``XXR2 = XX2 - YY2``).
* symbolically, with Khalil's grouping rules for revolute joints about a coordinate axis and
  for prismatic joints (:func:`grouping_rules`), written as sympy expressions; the numerical
  result then agrees with the rules wherever they apply (a test checks it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import InputError
from ..model.robot_model import RobotModel
from ..spatial import skew
from .regressor import INERTIAL_NAMES, regressor, standard_parameter_names

__all__ = [
    "BaseParameters",
    "base_parameters",
    "random_states",
    "grouping_rules",
    "regrouped_name",
]

Array = NDArray[np.float64]


def random_states(model: RobotModel, n: int, rng: np.random.Generator) -> tuple[Array, Array, Array]:
    """Random (q, qd, qdd), each (n, nq), q uniform in [-pi, pi] for every joint.

    Limits are ignored on purpose: the relations between regressor columns are algebraic in
    q, and a narrow range (a prismatic joint, or a revolute joint that a prismatic one mimics)
    makes independent columns look dependent to the rank test.
    """
    q = rng.uniform(-np.pi, np.pi, size=(n, model.nq))
    return q, rng.normal(size=(n, model.nq)), rng.normal(size=(n, model.nq))


def _fmt_coef(c: float) -> str:
    s = f"{abs(c):.10g}"
    return s


def _expression(name: str, terms: list[tuple[float, str]]) -> str:
    out = name
    for c, n in terms:
        sign = " - " if c < 0 else " + "
        mag = abs(c)
        out += sign + (n if np.isclose(mag, 1.0, rtol=0, atol=1e-12) else f"{_fmt_coef(mag)}*{n}")
    return out


@dataclass(frozen=True)
class BaseParameters:
    """The base inertial parameters of a model (Khalil 7.5.3).

    Attributes:
        standard_names: names of the standard parameters (regressor columns), (p,).
        independent: indices of the standard parameters kept as base columns, (b,).
        dependent: indices of the parameters grouped into base ones, (d,).
        unidentifiable: indices of the parameters with no effect on the model (zero columns),
            a subset of ``dependent`` with an all-zero column of ``K``.
        K: grouping matrix, ``pi_base = pi[independent] + K @ pi[dependent]``, (b, d).
        names: base parameter names: the kept name, with Khalil's ``R`` (XXR2) when regrouped.
        rank: rank of the full regressor over the sampled states (= b).
    """

    standard_names: tuple[str, ...]
    independent: NDArray[np.int_]
    dependent: NDArray[np.int_]
    unidentifiable: NDArray[np.int_]
    K: Array
    names: tuple[str, ...]
    rank: int

    @property
    def n_base(self) -> int:
        """Number of base parameters."""
        return int(self.independent.size)

    def base_values(self, pi: ArrayLike) -> Array:
        """Base parameter values from standard ones, (..., p) -> (..., b)."""
        pi = np.asarray(pi, dtype=float)
        return pi[..., self.independent] + pi[..., self.dependent] @ self.K.T

    def reduced_regressor(self, Y: ArrayLike) -> Array:
        """The base regressor: the independent columns of Y, (..., nq, p) -> (..., nq, b)."""
        return np.asarray(Y)[..., self.independent]

    def embedded(self, pi: ArrayLike) -> Array:
        """Standard-size vector with base values at the independent slots and 0 elsewhere.

        ``Y @ embedded(pi) == Y @ pi``: a Newton-Euler model fed these "inertias" gives the
        same torques with fewer non-zero parameters (Khalil 7.5.3).
        """
        pi = np.asarray(pi, dtype=float)
        out = np.zeros(pi.shape)
        out[..., self.independent] = self.base_values(pi)
        return out

    def expressions(self) -> list[str]:
        """Readable grouping relations, one per base parameter, e.g. ``XXR2 = XX2 - YY2``."""
        lines = []
        for r, name in enumerate(self.names):
            terms = [(1.0, self.standard_names[self.independent[r]])]
            terms += [
                (float(c), self.standard_names[d])
                for c, d in zip(self.K[r], self.dependent)
                if c != 0.0
            ]
            first = terms[0][1]
            lines.append(_expression(f"{name} = {first}", terms[1:]))
        return lines

    def sympy_expressions(self) -> dict[str, object]:
        """The relations as sympy expressions ``{base name: expression}`` (symbols named as the
        standard parameters, coefficients as floats)."""
        from .._extras import require

        require("symbolic", "sympy expressions")
        import sympy

        syms = {n: sympy.Symbol(n) for n in self.standard_names}
        out = {}
        for r, name in enumerate(self.names):
            e = syms[self.standard_names[self.independent[r]]]
            for c, d in zip(self.K[r], self.dependent):
                if c != 0.0:
                    e = e + sympy.Float(float(c), 12) * syms[self.standard_names[d]]
            out[name] = e
        return out


def _clean(K: Array) -> Array:
    """Drop round-off: zero tiny coefficients and snap near-integers (full precision kept)."""
    K = np.where(np.abs(K) < 1e-10, 0.0, K)
    snapped = np.round(K)
    return np.where(np.abs(K - snapped) < 1e-10, snapped, K)


def base_parameters(
    model: RobotModel,
    *,
    n_samples: int | None = None,
    seed: int = 0,
    tolerance: float = 1e-9,
    friction: bool = True,
) -> BaseParameters:
    """Base inertial parameters by QR of the regressor over random states (Gautier's method).

    Args:
        model: the robot (any tree, revolute and prismatic joints, mimic joints).
        n_samples: number of random states stacked (default ``max(40, 4 p / nq)``).
        seed: seed of the random states (the result does not depend on it, short of a
            degenerate draw).
        tolerance: a column is dependent when ``|R_jj| <= tolerance * max |R_ii|``.
        friction: include the friction parameters FV, FC (else they are unidentifiable).

    Returns:
        :class:`BaseParameters`.
    """
    if tolerance <= 0 or not np.isfinite(tolerance):
        raise InputError(f"tolerance: expected a positive number, got {tolerance!r}")
    names = standard_parameter_names(model)
    p = len(names)
    n = n_samples or max(40, int(np.ceil(4 * p / max(model.nq, 1))))
    q, qd, qdd = random_states(model, n, np.random.default_rng(seed))
    W = regressor(model, q, qd, qdd, friction=friction).reshape(-1, p)
    # Scale columns to unit norm so that the rank test does not depend on units.
    norms = np.linalg.norm(W, axis=0)
    zero = norms <= 1e-12 * max(float(norms.max(initial=0.0)), 1.0)
    Ws = W / np.where(zero, 1.0, norms)
    from scipy.linalg import qr

    if W.shape[0] < p:
        raise InputError(f"n_samples={n} gives fewer rows ({W.shape[0]}) than parameters ({p})")
    # QR of the non-zero columns only: after an exactly zero column, R_jj no longer measures a
    # column's distance to the span of the earlier ones (the zero column's Householder step is
    # the identity, so part of the next column stays above the diagonal), and an independent
    # column would be taken for a dependent one (the TH8's MZ3 after link 1's zero columns).
    nonzero = np.flatnonzero(~zero)
    diag = np.zeros(p)
    if nonzero.size:
        R = qr(Ws[:, nonzero], mode="r")[0]
        diag[nonzero] = np.abs(np.diag(R[: nonzero.size, :]))
    indep = np.nonzero((diag > tolerance * max(float(diag.max()), 1e-300)) & ~zero)[0]
    dep = np.setdiff1d(np.arange(p), indep)
    # W_dep = W_ind K (exact, since the dependent columns lie in the span of the kept ones).
    K, *_ = np.linalg.lstsq(W[:, indep], W[:, dep], rcond=None)
    K = _clean(K)
    unident = dep[~np.any(K != 0, axis=0)] if dep.size else dep
    base_names = tuple(
        regrouped_name(names[i]) if np.any(K[r] != 0) else names[i] for r, i in enumerate(indep)
    )
    return BaseParameters(
        standard_names=tuple(names),
        independent=indep,
        dependent=dep,
        unidentifiable=unident,
        K=K,
        names=base_names,
        rank=int(indep.size),
    )


def regrouped_name(name: str) -> str:
    """Khalil's name of a regrouped parameter: XX2 -> XXR2, Ia1 -> IaR1."""
    i = len(name.rstrip("0123456789"))
    return name[:i] + "R" + name[i:]


# -- Khalil's grouping rules, symbolically -----------------------------------------------


def _inertia_in_parent(R: Array, p: Array, J: object, h: object, m: object) -> tuple[object, object]:
    """Rigid inertia (J about the body origin, h = MS, m) expressed in the parent frame.

    With x' = R x + p: ``J' = R J R^T - skew(p) skew(h') - skew(h') skew(p) - m skew(p)^2``,
    ``h' = R h + m p`` (parallel-axis theorem for an origin-based inertia, linear in J, h, m).
    """
    import sympy

    Rm, P = sympy.Matrix(R), sympy.Matrix(skew(p))
    hp = Rm * h
    Jp = Rm * J * Rm.T - P * _sym_skew(hp) - _sym_skew(hp) * P - m * P * P
    return Jp, hp + m * sympy.Matrix(p)


def _sym_skew(v: object) -> object:
    import sympy

    return sympy.Matrix([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])  # type: ignore[index]


def _symbolic_inertias(model: RobotModel, sym: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
    """Per body: J (3x3 symmetric, about the body origin), h = MS (3,) and m, as sympy objects
    initialised to the standard-parameter symbols ``sym`` (10 per body)."""
    import sympy

    Js, hs, ms = [], [], []
    for b in range(model.nb):
        s = sym[10 * b : 10 * b + 10]
        Js.append(sympy.Matrix([[s[0], s[1], s[2]], [s[1], s[3], s[4]], [s[2], s[4], s[5]]]))
        hs.append(sympy.Matrix(s[6:9]))
        ms.append(s[9])
    return Js, hs, ms


def _group_tip_to_base(model: RobotModel, Js: list[Any], hs: list[Any], ms: list[Any]) -> list[str]:
    """Apply the grouping rules from the tip to the base, updating ``Js, hs, ms`` in place;
    returns the names of the grouped (eliminated) parameters."""
    import sympy

    grouped: list[str] = []
    for j in range(model.nb - 1, -1, -1):
        parent = int(model.parent[j])
        R = model.E_tree[j].T  # parent_R_body at q = 0
        p = model.r_tree[j]
        ax = model.axis[j]
        k = int(np.argmax(np.abs(ax)))
        if not np.isclose(abs(ax[k]), 1.0, atol=1e-12):
            continue  # oblique axis: no rule
        if model.is_prismatic[j]:
            if parent < 0:
                continue
            Jp = sympy.Matrix(R) * Js[j] * sympy.Matrix(R).T
            Js[parent] = Js[parent] + Jp
            Js[j] = sympy.zeros(3, 3)
            grouped += [INERTIAL_NAMES[c] + str(j + 1) for c in range(6)]
            continue
        u, w = (k + 1) % 3, (k + 2) % 3  # the two axes across the joint axis
        Iww = Js[j][w, w]
        inv_J = sympy.zeros(3, 3)
        inv_J[u, u] = Iww
        inv_J[w, w] = Iww
        inv_h = sympy.zeros(3, 1)
        inv_h[k] = hs[j][k]
        inv_m = ms[j]
        if parent >= 0:
            Jp, hp = _inertia_in_parent(R, p, inv_J, inv_h, inv_m)
            Js[parent] = Js[parent] + Jp
            hs[parent] = hs[parent] + hp
            ms[parent] = ms[parent] + inv_m
        Js[j] = Js[j] - inv_J
        hs[j] = hs[j] - inv_h
        ms[j] = 0
        grouped += [_entry_name(w, w, j), ["MX", "MY", "MZ"][k] + str(j + 1), f"M{j + 1}"]
    return grouped


def grouping_rules(model: RobotModel) -> tuple[dict[str, object], list[str]]:
    """Khalil's grouping rules applied symbolically from the tip to the base.

    Rules (Khalil and Dombre, base inertial parameters by grouping; here for any body frame):

    * revolute joint j about a coordinate axis z_k of its body (k = x, y or z; in Khalil's
      frames k = z): an inertia that is invariant under rotation about the axis moves with
      link j-1. So ``YYj`` (the second moment across the axis, written for k = z),
      ``MZj`` (first moment along the axis) and ``Mj`` are grouped into link j-1 through the
      constant transform of joint j, and ``XXRj = XXj - YYj``;
    * prismatic joint j: link j does not rotate relative to link j-1, so its inertia tensor
      ``Jj`` (6 parameters) is grouped into ``Jj-1``, rotated by the constant ``j-1 R j``.

    Joints with oblique axes and mimic joints are left to the numerical method.

    Returns:
        ``(expressions, grouped)``: ``{standard name: sympy expression of its regrouped value}``
        for every parameter that received a contribution (names as in
        :func:`standard_parameter_names`), and the names of the parameters that were grouped
        (eliminated).
    """
    from .._extras import require

    require("symbolic", "Khalil's symbolic grouping rules")
    import sympy

    names = standard_parameter_names(model)
    sym = [sympy.Symbol(n) for n in names]
    Js, hs, ms = _symbolic_inertias(model, sym)
    grouped: list[str] = []
    if not model.has_mimic:
        grouped = _group_tip_to_base(model, Js, hs, ms)
    exprs: dict[str, object] = {}
    for b in range(model.nb):
        vals = [Js[b][r, c] for r, c in ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))]
        vals += list(hs[b]) + [ms[b]]
        for c, v in enumerate(vals):
            name = names[10 * b + c]
            if name in grouped:
                continue
            v = _round_expr(sympy.expand(v))
            if v != sym[10 * b + c]:
                exprs[name] = v
    return exprs, grouped


def _entry_name(r: int, c: int, j: int) -> str:
    return "XYZ"[min(r, c)] + "XYZ"[max(r, c)] + str(j + 1)


def _round_expr(e: object) -> object:
    """Drop round-off in the numeric coefficients of a linear expression."""
    import sympy

    e = sympy.sympify(e)
    out = sympy.Integer(0)
    for term, coef in e.as_coefficients_dict().items():  # type: ignore[attr-defined]
        c = float(coef)
        if abs(c) < 1e-12:
            continue
        c = float(_clean(np.array([c]))[0])
        out += (sympy.Integer(int(c)) if c == int(c) else sympy.Float(c, 15)) * term
    return out
