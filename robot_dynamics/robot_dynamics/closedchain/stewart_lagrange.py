"""The Stewart platform's Coriolis/centripetal matrices by Lagrange and by Koditschek's form
(the two other columns of Lopes 2009, Table 1), as counted straight-line programs that run.

Lopes compares his generalized-momentum matrices with "the Lagrange method, both directly from
Lagrangian equation and using the Koditschek representation [10]" without writing the two
out; these are their standard forms, per body k (the platform, each cylinder and piston in its
translation and rotation, as the rows of Table 1), in the coordinates ``x`` of eq. (3):

* the body's inertia matrix in x: ``M_k(x) = G_k^T I_k G_k`` with ``G_k = J_k T`` the map from
  x_dot to the body's velocity (``T`` for the platform, ``J_B T``, ``J_D T``, ``J_G T``, ``J_D T``
  of eqs. 40, 36, 62) and ``I_k`` its inertia (``diag(m_P, R I_P R^T)``, ``m_C``,
  ``R_C I_C R_C^T``, ``m_S``, ``R_C I_S R_C^T``, eqs. 19, 48, 70), so that the kinetic energy is
  ``K_k = x_dot^T M_k x_dot / 2``;
* its partial derivatives ``dM_k/dx_j`` (j = 1..6), each the derivative along the unit rate
  ``e_j`` of the hand-derived formulas of :mod:`stewart` (the same ones that give d/dt there);
* Lagrange, from ``d/dt(dK/dx_dot) - dK/dx = M x_ddot + V_L x_dot``:
  ``M_dot = sum_j dM/dx_j x_dot_j`` (chain rule) and ``V_L = M_dot - 1/2 [x_dot^T dM/dx_j]_j``
  (row j is half the gradient of the kinetic energy);
* Lagrange-Koditschek: ``C_kj = sum_i c_ijk x_dot_i`` with the Christoffel symbols
  ``c_ijk = 1/2 (dM_kj/dx_i + dM_ki/dx_j - dM_ij/dx_k)`` (``c_ijk = c_jik``, computed once), for
  which ``M_dot - 2 C`` is skew-symmetric.

Both give ``V x_dot = T^T V_E x_dot`` body by body, where ``V_E`` is the generalized-momentum
matrix of eqs. (28), (46), (58), (68), (76) (``T^T`` maps its twist-coordinate wrench to a
generalized force in x). Each program is written with the existing counter
(:class:`stewart_opcount._Program`: every intermediate assigned once, structural zeros and ones
free, sines and cosines of the Euler angles inputs, square roots counted apart), and the same
assignments are compiled to a numpy function, so what is counted is what runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .stewart import StewartParameters
from .stewart_opcount import KINDS, PAPER_TABLE1_ALL, OpCount, _euler_kinematics, _Program, _tilde

__all__ = ["FORMS", "lagrange_program", "lagrange_operation_counts", "coriolis_matrices", "format_lagrange_counts"]

Array = NDArray[np.float64]
#: The two formulations: Table 1's "Lagrange" and "Lagrange-Koditschek representation" columns.
FORMS = ("Lagrange", "Lagrange-Koditschek")


def _symbols() -> dict[str, Any]:
    import sympy as sp

    return {
        "xp": sp.Matrix(sp.symbols("x_P y_P z_P", real=True)),
        "trig": sp.symbols("Spsi Cpsi Stheta Ctheta Sphi Cphi", real=True),
        "xd": sp.symbols("xd_P yd_P zd_P psid thetad phid", real=True),
        "masses": sp.symbols("m_P m_C m_S", positive=True),
        "b_C": sp.Symbol("b_C", positive=True),
        "b_S": sp.Symbol("b_S", positive=True),
        "I_P": sp.symbols("I_Pxx I_Pyy I_Pzz", real=True),
        "I_C": sp.symbols("I_Cxx I_Cyy I_Czz", real=True),
        "I_S": sp.symbols("I_Sxx I_Syy I_Szz", real=True),
        "leg": sp.symbols("b_x b_y p_x p_y", real=True),
    }


def _sym_let(prog: _Program, entry: Callable[[int, int], Any], n: int, name: str) -> Any:
    """A symmetric n x n matrix assigned on its upper triangle (each entry counted once)."""
    import sympy as sp

    M = sp.zeros(n, n)
    for i in range(n):
        for k in range(i, n):
            M[i, k] = prog.let(entry(i, k), name)
            M[k, i] = M[i, k]
    return M


def _unit_rates(prog: _Program, sy: dict[str, Any], JA: Any) -> tuple[list[Any], list[Any], list[Any]]:
    """Per unit rate e_j (j = 0..5): dT/dx_j (6, 6) of eq. (23), and the translation v_j (3, 1)
    and angular velocity w_j (3, 1) that e_j gives the platform (eq. 8)."""
    import sympy as sp

    L = prog.let
    Sps, Cps, Sth, Cth, _, _ = sy["trig"]
    # derivatives along the unit rates e_j: d/dx_j of JA (psi: j = 3, theta: j = 4), and the
    # translation and angular velocity (v_j, w_j) that the rate e_j gives the platform (eq. 8)
    dJA = [sp.zeros(3, 3) for _ in range(6)]
    dJA[3] = L(sp.Matrix([[0, -Cps, -Cth * Sps], [0, -Sps, Cth * Cps], [0, 0, 0]]), "dJA")
    dJA[4] = L(sp.Matrix([[0, 0, -Sth * Cps], [0, 0, -Sth * Sps], [0, 0, -Cth]]), "dJA")
    dT = [sp.diag(sp.zeros(3, 3), dJA[j]) for j in range(6)]
    v = [sp.Matrix([1 if i == j else 0 for i in range(3)]) for j in range(6)]
    w = [sp.zeros(3, 1) if j < 3 else JA[:, j - 3] for j in range(6)]
    return dT, v, w


def _platform_body(
    prog: _Program, sy: dict[str, Any], R: Any, T: Any, dT: list[Any], w: list[Any]
) -> tuple[Any, Any, list[Any], list[Any]]:
    """The platform's inertia I (6, 6), G = T (6, 6), and per unit rate dG/dx_j and dI/dx_j."""
    import sympy as sp

    mP = sy["masses"][0]
    Irot = _sym_let(prog, lambda i, k: (R * sp.diag(*sy["I_P"]) * R.T)[i, k], 3, "IP")  # eq. (17)
    I6 = sp.diag(mP * sp.eye(3), Irot)  # eq. (19)
    dI = []
    for j in range(6):
        S = _tilde(w[j]) * Irot
        dIr = _sym_let(prog, lambda i, k: S[i, k] + S[k, i], 3, "dIP")  # ~w I - I ~w = S + S^T
        dI.append(sp.diag(sp.zeros(3, 3), dIr))
    return I6, T, dT, dI


def _leg_body(
    prog: _Program, sy: dict[str, Any], kind: str, R: Any, T: Any, dT: list[Any], v: list[Any], w: list[Any]
) -> tuple[Any, Any, list[Any], list[Any]]:
    """A leg body's inertia I (a mass, or (3, 3) for a rotating body), G = J T (3, 6) with J of
    eqs. (36), (40), (62), and per unit rate dG/dx_j and dI/dx_j (None for a translating body)."""
    import sympy as sp

    L = prog.let
    _, mC, mS = sy["masses"]
    bC, bS = sy["b_C"], sy["b_S"]
    bx, by, px, py = sy["leg"]
    Pp = L(R * sp.Matrix([px, py, 0]), "Pp")
    l = L(sy["xp"] + Pp - sp.Matrix([bx, by, 0]), "l")  # eq. (31)
    n2 = L((l.T * l)[0], "n2")
    n = L(sp.sqrt(n2), "n")
    lh = L(l / n, "lh")  # eq. (30)
    lb = L(l / n2, "lb")  # eq. (37)
    PpT = _tilde(Pp).T
    J_D = L(_tilde(lb).row_join(_tilde(lb) * PpT), "JD")  # eq. (36)
    if kind in ("rotating cylinder", "rotating piston"):
        rho = L(sp.sqrt(l[0] ** 2 + l[1] ** 2), "rho")  # eq. (51)
        yC = L(sp.Matrix([-l[1], l[0], 0]) / rho, "yC")
        zC = L(lh.cross(yC), "zC")  # eq. (52)
        RC = lh.row_join(yC).row_join(zC)
        D = sp.diag(*(sy["I_C"] if kind == "rotating cylinder" else sy["I_S"]))
        RCD = L(RC * D, "RCD")
        Ib = _sym_let(prog, lambda i, k: (RCD * RC.T)[i, k], 3, "Ib")  # eqs. (48), (70)
    elif kind == "translating cylinder":
        J_B = L(bC * _tilde(lh).T * J_D, "JB")  # eq. (40)
    else:
        Pm = L(sp.eye(3) - bS * _tilde(lh).T * _tilde(lb), "Pm")  # eq. (62)
        J_G = Pm.row_join(L(Pm * PpT, "JG"))
    J = J_B if kind == "translating cylinder" else J_G if kind == "translating piston" else J_D
    G = L(J * T, "G")
    dG, dI = [], []
    for j in range(6):
        dPp = L(w[j].cross(Pp), "dPp")
        dl = L(v[j] + dPp, "dl")
        dn = L((l.T * dl)[0] / n, "dn")
        dlh = L((dl - lh * dn) / n, "dlh")
        dlb = L(dl / n2 - 2 * dn * lb / n, "dlb")
        dPpT = _tilde(dPp).T
        dJ_D = L(_tilde(dlb).row_join(_tilde(dlb) * PpT + _tilde(lb) * dPpT), "dJD")
        if kind == "translating cylinder":
            dJ = L(bC * (_tilde(dlh).T * J_D + _tilde(lh).T * dJ_D), "dJB")
            dI.append(None)
        elif kind == "translating piston":
            dPm = L(-bS * (_tilde(dlh).T * _tilde(lb) + _tilde(lh).T * _tilde(dlb)), "dPm")
            dJ = dPm.row_join(L(dPm * PpT + Pm * dPpT, "dJG"))
            dI.append(None)
        else:
            drho = L((l[0] * dl[0] + l[1] * dl[1]) / rho, "drho")
            dyC = L(sp.Matrix([-dl[1], dl[0], 0]) / rho - yC * drho / rho, "dyC")
            dzC = L(dlh.cross(yC) + lh.cross(dyC), "dzC")
            dRC = dlh.row_join(dyC).row_join(dzC)
            X = dRC * RCD.T
            dI.append(_sym_let(prog, lambda i, k: X[i, k] + X[k, i], 3, "dIb"))
            dJ = dJ_D
        dG.append(L(dJ * T + J * dT[j], "dG"))
    I6 = mC if kind == "translating cylinder" else mS if kind == "translating piston" else Ib
    return I6, G, dG, dI


def _mass_derivatives(
    prog: _Program, I6: Any, G: Any, dG: list[Any], dI: list[Any], with_mass: bool
) -> tuple[Any, list[Any]]:
    """The body's M = G^T I G (6, 6; None unless ``with_mass``) and dM/dx_j (6, 6) per j."""
    import sympy as sp

    L = prog.let
    IG = L(I6 * G, "IG")
    M = _sym_let(prog, lambda i, k: (G.T * IG)[i, k], 6, "M") if with_mass else None
    dM = []
    for j in range(6):
        X = G.T * L(I6 * dG[j], "IdG")  # G^T I dG_j; dM_j = X + X^T + G^T dI_j G
        Y = G.T * L(dI[j] * G, "dIG") if dI[j] is not None else sp.zeros(6, 6)
        dM.append(_sym_let(prog, lambda i, k: X[i, k] + X[k, i] + Y[i, k], 6, "dM"))
    return M, dM


def _coriolis_matrix(prog: _Program, form: str, dM: list[Any], xd: tuple[Any, ...]) -> Any:
    """V (6, 6) from dM/dx_j: ``M_dot - 1/2 [x_dot^T dM/dx_j]_j`` (Lagrange) or
    ``C_kj = sum_i c_ijk x_dot_i`` (Lagrange-Koditschek)."""
    import sympy as sp

    L = prog.let
    xdv = sp.Matrix(xd)
    if form == "Lagrange":
        Md = _sym_let(prog, lambda i, k: sum((dM[j][i, k] * xd[j] for j in range(6)), sp.S.Zero), 6, "Md")
        half_grad = [L((xdv.T * dM[j]), "gK") for j in range(6)]  # row j: x_dot^T dM/dx_j
        return L(sp.Matrix(6, 6, lambda r, c: Md[r, c] - sp.Rational(1, 2) * half_grad[r][c]), "VL")
    c: dict[tuple[int, int, int], Any] = {}
    for i in range(6):
        for j in range(i, 6):
            for k in range(6):
                c[i, j, k] = L(sp.Rational(1, 2) * (dM[i][k, j] + dM[j][k, i] - dM[k][i, j]), "c")
    return L(sp.Matrix(6, 6, lambda r, q: sum((c[min(i, q), max(i, q), r] * xd[i] for i in range(6)), sp.S.Zero)), "VK")


def lagrange_program(kind: str, form: str, *, with_mass: bool = False) -> tuple[_Program, Any, Any, dict[str, Any]]:
    """The straight-line program of one body's Coriolis/centripetal matrix in x coordinates.

    Args:
        kind: a row of Table 1 (:data:`stewart_opcount.KINDS`).
        form: 'Lagrange' or 'Lagrange-Koditschek'.
        with_mass: also assign the body's M_k (for the numeric checks; not counted by Table 1).

    Returns:
        (program, V, M, symbols): V the 6x6 matrix of symbols (``V x_dot`` is the body's
        Coriolis/centripetal generalized force), M the 6x6 inertia matrix (None unless
        ``with_mass``), symbols the inputs.
    """
    import sympy as sp

    if kind not in KINDS:
        raise ValueError(f"kind: expected one of {KINDS}, got {kind!r}")
    if form not in FORMS:
        raise ValueError(f"form: expected one of {FORMS}, got {form!r}")
    sy = _symbols()
    prog = _Program()
    R, JA = _euler_kinematics(prog, sy["trig"])
    T = sp.diag(sp.eye(3), JA)  # eq. (23)
    dT, v, w = _unit_rates(prog, sy, JA)
    if kind == "platform":
        I6, G, dG, dI = _platform_body(prog, sy, R, T, dT, w)
    else:
        I6, G, dG, dI = _leg_body(prog, sy, kind, R, T, dT, v, w)
    M, dM = _mass_derivatives(prog, I6, G, dG, dI, with_mass)
    return prog, _coriolis_matrix(prog, form, dM, sy["xd"]), M, sy


def lagrange_operation_counts(form: str) -> dict[str, OpCount]:
    """Our counts per row of Table 1 for ``form``, and ``total`` = platform + 6 x the legs."""
    from .._extras import require

    require("symbolic", "the Lagrange and Koditschek operation counts")
    out = {k: _counted(k, form) for k in KINDS}
    legs = sum((out[k] for k in KINDS[1:]), OpCount(0, 0, 0, 0))
    out["total"] = out["platform"] + legs.scaled(6)
    return out


@functools.lru_cache(maxsize=None)
def _counted(kind: str, form: str) -> OpCount:
    return lagrange_program(kind, form)[0].ops


@functools.lru_cache(maxsize=None)
def _compiled(kind: str, form: str) -> Callable[..., tuple[list[Any], list[Any]]]:
    """The counted program with the mass matrix, compiled to a numpy function of its inputs."""
    from sympy.printing.numpy import NumPyPrinter

    prog, V, M, sy = lagrange_program(kind, form, with_mass=True)
    pr = NumPyPrinter({"fully_qualified_modules": True})
    names = [str(s) for s in (*sy["xp"], *sy["trig"], *sy["xd"], *sy["masses"], sy["b_C"], sy["b_S"],
                              *sy["I_P"], *sy["I_C"], *sy["I_S"], *sy["leg"])]
    lines = [f"def f({', '.join(names)}):"]
    lines += [f"    {s} = {pr.doprint(e)}" for s, e in prog.assignments]
    lines.append(f"    return [{', '.join(pr.doprint(e) for e in V)}], [{', '.join(pr.doprint(e) for e in M)}]")
    ns: dict[str, Any] = {"numpy": np}
    exec(compile("\n".join(lines), f"<stewart {form} {kind}>", "exec"), ns)  # noqa: S102 - our own program
    return ns["f"]  # type: ignore[no-any-return]


def coriolis_matrices(
    params: StewartParameters, x: ArrayLike, xd: ArrayLike, form: str = "Lagrange"
) -> tuple[dict[str, Array], dict[str, Array]]:
    """Run the counted programs: per body kind, the Coriolis/centripetal matrix and the inertia
    matrix in x coordinates, summed over the six legs.

    Args:
        params: the platform (Table 2 or a variant).
        x: poses ``[x_P, y_P, z_P, psi, theta, phi]`` [m, rad], shape (..., 6).
        xd: their rates, shape (..., 6).
        form: 'Lagrange' or 'Lagrange-Koditschek'.

    Returns:
        (V, M): dicts keyed by :data:`KINDS` and 'total' of arrays (..., 6, 6); ``V x_dot`` is
        the Coriolis/centripetal generalized force [N, N m] and ``M`` the inertia matrix.
    """
    x = np.asarray(x, dtype=float)
    xd = np.asarray(xd, dtype=float)
    shape = np.broadcast_shapes(x.shape, xd.shape)
    x, xd = np.broadcast_to(x, shape), np.broadcast_to(xd, shape)
    trig = []
    for k in (3, 4, 5):
        trig += [np.sin(x[..., k]), np.cos(x[..., k])]
    common = [x[..., 0], x[..., 1], x[..., 2], *trig, *(xd[..., k] for k in range(6)),
              params.m_P, params.m_C, params.m_S, params.b_C, params.b_S, *params.I_P, *params.I_C, *params.I_S]
    Vs: dict[str, Array] = {}
    Ms: dict[str, Array] = {}
    for kind in KINDS:
        f = _compiled(kind, form)
        legs = [(0.0, 0.0, 0.0, 0.0)] if kind == "platform" else [
            (b[0], b[1], p[0], p[1]) for b, p in zip(params.b, params.p)
        ]
        V = np.zeros((*shape[:-1], 6, 6))
        M = np.zeros((*shape[:-1], 6, 6))
        for leg in legs:
            v, m = f(*common, *leg)
            V += np.stack([np.broadcast_to(np.asarray(e, dtype=float), shape[:-1]) for e in v], -1).reshape(V.shape)
            M += np.stack([np.broadcast_to(np.asarray(e, dtype=float), shape[:-1]) for e in m], -1).reshape(M.shape)
        Vs[kind], Ms[kind] = V, M
    Vs["total"] = np.sum([Vs[k] for k in KINDS], axis=0)
    Ms["total"] = np.sum([Ms[k] for k in KINDS], axis=0)
    return Vs, Ms


def format_lagrange_counts(counts: dict[str, dict[str, OpCount]]) -> str:
    """Per row, ours beside Table 1's Lagrange and Lagrange-Koditschek columns (add/mul/div)."""
    lines = [f"{'Coriolis/centripetal matrix of':<22} {'form':<20} {'paper Add':>9} {'Mul':>7} {'Div':>4}   "
             f"{'ours Add':>8} {'Mul':>7} {'Div':>4} {'Sqrt':>4}"]
    for form, rows in counts.items():
        for k, c in rows.items():
            pa = PAPER_TABLE1_ALL[form].get(k, ("-",) * 3)
            lines.append(f"{k:<22} {form:<20} {pa[0]:>9} {pa[1]:>7} {pa[2]:>4}   {c.add:>8} {c.mul:>7} {c.div:>4} {c.sqrt:>4}")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    print(format_lagrange_counts({f: lagrange_operation_counts(f) for f in FORMS}))
