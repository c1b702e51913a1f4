"""Operation counts of the Stewart platform's Coriolis/centripetal matrices (Lopes 2009, Table 1).

Table 1 counts the additions (subtractions included), multiplications and divisions needed for
the Coriolis and centripetal terms matrices ``J_k^T d/dt(I_k J_k T)`` of the platform (eq. 28),
a translating/rotating cylinder (eqs. 46, 58) and a translating/rotating piston (eqs. 68, 76).

:func:`operation_counts` counts our implementation: the hand-derived time derivatives of
:mod:`robot_dynamics.closedchain.stewart` written as a straight-line program on symbols (each
intermediate assigned once; structural zeros and ones cost nothing; sines and cosines of the
Euler angles are inputs; square roots are counted apart). :func:`coriolis_expressions` builds
the paper's definitions by symbolic differentiation (chain rule ``d/dt A = sum_j dA/dx_j
x_dot_j``), a second derivation that checks the implementation; :func:`count_operations`
counts any expressions after common-subexpression elimination (slow on the leg bodies).
Table 1 was made with Maple, so the counts are comparable in size, not identical.

Run ``python -m robot_dynamics.closedchain.stewart_opcount`` to print the table.
"""

from __future__ import annotations

from typing import Any, NamedTuple


__all__ = ["KINDS", "PAPER_TABLE1", "PAPER_TABLE1_ALL", "OpCount", "count_operations", "coriolis_expressions", "operation_counts", "format_counts"]


#: Lopes (2009) Table 1, generalized momentum columns: (additions, multiplications, divisions).
PAPER_TABLE1 = {
    "platform": (182, 326, 0),
    "translating cylinder": (238, 533, 4),
    "rotating cylinder": (471, 942, 8),
    "translating piston": (241, 533, 4),
    "rotating piston": (471, 942, 8),
    "total": (8708, 18026, 144),
}

#: All three columns of Table 1, (additions, multiplications, divisions) per row. The rows
#: add up to the printed totals (platform + 6 x the four leg bodies) except the Lagrange
#: divisions: the table prints 80 where its rows give 6 x (7 + 8 + 7 + 8) = 180 (the
#: Lagrange-Koditschek column, with the same rows, prints 180).
PAPER_TABLE1_ALL = {
    "Lagrange": {
        "platform": (485, 719, 0),
        "translating cylinder": (2982, 5483, 7),
        "rotating cylinder": (5433, 9215, 8),
        "translating piston": (2985, 5483, 7),
        "rotating piston": (5433, 9215, 8),
        "total": (101_483, 177_095, 80),
    },
    "Lagrange-Koditschek": {
        "platform": (474, 735, 0),
        "translating cylinder": (2389, 4283, 7),
        "rotating cylinder": (3908, 6765, 8),
        "translating piston": (2392, 4283, 7),
        "rotating piston": (3908, 6765, 8),
        "total": (76_056, 133_311, 180),
    },
    "generalized momentum": PAPER_TABLE1,
}


class OpCount(NamedTuple):
    """Scalar operations: additions (and subtractions), multiplications, divisions, square roots."""

    add: int
    mul: int
    div: int
    sqrt: int

    def __add__(self, other: Any) -> OpCount:  # type: ignore[override]
        return OpCount(*(a + b for a, b in zip(self, other)))

    def scaled(self, k: int) -> OpCount:
        return OpCount(*(k * a for a in self))


def _count_expr(e: Any) -> OpCount:
    """Operations of one expression tree: n-ary sums cost n-1 additions, products n-1
    multiplications (a factor -1 is a sign, a rational constant one factor), ``x^-k`` inside
    a product one division, ``x^k`` k-1 multiplications, ``x^(1/2)`` a square root."""
    import sympy as sp

    if e.is_Atom:
        return OpCount(0, 0, 0, 0)
    if isinstance(e, sp.Add):
        out = OpCount(len(e.args) - 1, 0, 0, 0)
        for a in e.args:
            out = out + _count_expr(a)
        return out
    if isinstance(e, sp.Mul):
        num, den = [], []
        for f in e.args:
            if f == -1:
                continue
            if isinstance(f, sp.Pow) and f.exp.is_Number and f.exp < 0:
                den.append(sp.Pow(f.base, -f.exp))
            else:
                num.append(f)
        out = OpCount(0, max(len(num) - 1, 0) + max(len(den) - 1, 0), 1 if den else 0, 0)
        for f in num + den:
            out = out + _count_expr(f)
        return out
    if isinstance(e, sp.Pow):
        base = _count_expr(e.base)
        k = e.exp
        if k.is_Number and k < 0:  # 1/x^k alone
            return _count_expr(sp.Pow(e.base, -k)) + OpCount(0, 0, 1, 0)
        if k.is_Integer:
            return base + OpCount(0, int(k) - 1, 0, 0)
        if k.is_Rational and k.q == 2:  # x^(p/2) = sqrt(x)^p
            return base + OpCount(0, int(k.p) - 1, 0, 1)
        raise ValueError(f"cannot count the power {e}")
    # a function call (none after the trigonometric substitution): count its arguments
    out = OpCount(0, 0, 0, 0)
    for a in e.args:
        out = out + _count_expr(a)
    return out


def count_operations(exprs: list[Any]) -> OpCount:
    """Operations to evaluate ``exprs`` (sympy expressions) after common-subexpression elimination."""
    import sympy as sp

    repl, reduced = sp.cse(exprs, optimizations="basic")
    total = OpCount(0, 0, 0, 0)
    for _, e in repl:
        total = total + _count_expr(e)
    for e in reduced:
        total = total + _count_expr(e)
    return total


KINDS = ("platform", "translating cylinder", "rotating cylinder", "translating piston", "rotating piston")


def _tilde(v: Any) -> Any:  # eq. (38)
    """The cross-product matrix of a 3-vector of sympy expressions, (3, 3)."""
    import sympy as sp

    return sp.Matrix([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def coriolis_expressions(kinds: tuple[str, ...] = KINDS) -> tuple[dict[str, Any], dict[str, Any]]:
    """Symbolic V matrices of one body of each kind, and the symbols they depend on.

    Returns:
        (matrices, symbols): ``matrices[kind]`` is a 6x6 sympy Matrix (the Coriolis and
        centripetal terms matrix of eqs. 28, 46, 58, 68, 76) in terms of the pose ``x``, the rate
        ``xd``, the leg geometry ``b = (bx, by, 0)``, ``p = (px, py, 0)`` and the parameters;
        ``symbols`` maps names to the sympy symbols.
    """
    import sympy as sp

    x = sp.symbols("x_P y_P z_P psi theta phi", real=True)
    xd = sp.symbols("xd_P yd_P zd_P psid thetad phid", real=True)
    bx, by, px, py = sp.symbols("b_x b_y p_x p_y", real=True)
    mP, mC, mS, bC, bS = sp.symbols("m_P m_C m_S b_C b_S", positive=True)
    IP = sp.symbols("I_Pxx I_Pyy I_Pzz", real=True)
    IC = sp.symbols("I_Cxx I_Cyy I_Czz", real=True)
    IS = sp.symbols("I_Sxx I_Syy I_Szz", real=True)
    psi, th, ph = x[3], x[4], x[5]
    c, s = sp.cos, sp.sin

    def Rz(a: Any) -> Any:
        return sp.Matrix([[c(a), -s(a), 0], [s(a), c(a), 0], [0, 0, 1]])

    def Ry(a: Any) -> Any:
        return sp.Matrix([[c(a), 0, s(a)], [0, 1, 0], [-s(a), 0, c(a)]])

    def Rx(a: Any) -> Any:
        return sp.Matrix([[1, 0, 0], [0, c(a), -s(a)], [0, s(a), c(a)]])

    R = Rz(psi) * Ry(th) * Rx(ph)  # eq. (4)
    JA = sp.Matrix([[0, -s(psi), c(th) * c(psi)], [0, c(psi), c(th) * s(psi)], [1, 0, -s(th)]])  # eq. (9)
    T = sp.diag(sp.eye(3), JA)  # eq. (23)
    Pp = R * sp.Matrix([px, py, 0])
    l = sp.Matrix(x[:3]) + Pp - sp.Matrix([bx, by, 0])  # eq. (31)
    n2 = (l.T * l)[0]
    n = sp.sqrt(n2)
    lhat, lbar = l / n, l / n2  # eqs. (30), (37)
    J_D = _tilde(lbar).row_join(_tilde(lbar) * _tilde(Pp).T)  # eq. (36)
    J_B = bC * _tilde(lhat).T * J_D  # eq. (40)
    Pm = sp.eye(3) - bS * _tilde(lhat).T * _tilde(lbar)
    J_G = Pm.row_join(Pm * _tilde(Pp).T)  # eq. (62)
    rho = sp.sqrt(l[0] ** 2 + l[1] ** 2)
    yC = sp.Matrix([-l[1], l[0], 0]) / rho  # eq. (51), numerators restored
    RC = lhat.row_join(yC).row_join(lhat.cross(yC))  # eqs. (49), (50), (52)
    Irot_P = R * sp.diag(*IP) * R.T  # eq. (17)
    IPB = sp.diag(mP * sp.eye(3), Irot_P)  # eq. (19)

    def ddt(A: Any) -> Any:
        return sum((A.diff(xj) * xdj for xj, xdj in zip(x, xd)), sp.zeros(*A.shape))

    build = {
        "platform": lambda: ddt(IPB * T),  # eq. (28)
        "translating cylinder": lambda: mC * J_B.T * ddt(J_B * T),  # eq. (46)
        "rotating cylinder": lambda: J_D.T * ddt(RC * sp.diag(*IC) * RC.T * J_D * T),  # eq. (58)
        "translating piston": lambda: mS * J_G.T * ddt(J_G * T),  # eq. (68)
        "rotating piston": lambda: J_D.T * ddt(RC * sp.diag(*IS) * RC.T * J_D * T),  # eq. (76)
    }
    mats = {k: build[k]() for k in kinds}
    syms = {"x": x, "xd": xd, "b": (bx, by), "p": (px, py), "masses": (mP, mC, mS), "b_C": bC, "b_S": bS,
            "I_P": IP, "I_C": IC, "I_S": IS}
    return mats, syms


def _trig_as_inputs(mats: dict[str, Any], syms: dict[str, Any]) -> dict[str, Any]:
    import sympy as sp

    psi, th, ph = syms["x"][3:]
    sub = {}
    for a, name in ((psi, "psi"), (th, "theta"), (ph, "phi")):
        sub[sp.sin(a)] = sp.Symbol(f"S{name}", real=True)
        sub[sp.cos(a)] = sp.Symbol(f"C{name}", real=True)
    return {k: m.xreplace(sub) for k, m in mats.items()}


class _Program:
    """A straight-line program: each intermediate is assigned once and its operations counted."""

    def __init__(self) -> None:
        self.ops = OpCount(0, 0, 0, 0)
        self._k = 0
        #: (symbol, expression) in program order, so that the counted program can also be run
        self.assignments: list[tuple[Any, Any]] = []

    def let(self, value: Any, name: str) -> Any:
        import sympy as sp

        def one(e: Any) -> Any:
            if e.is_Atom or (isinstance(e, sp.Mul) and len(e.args) == 2 and e.args[0] == -1 and e.args[1].is_Atom):
                return e
            self.ops = self.ops + _count_expr(e)
            self._k += 1
            sym = sp.Symbol(f"{name}_{self._k}", real=True)
            self.assignments.append((sym, e))
            return sym

        if isinstance(value, sp.MatrixBase):
            return value.applyfunc(one)
        return one(sp.sympify(value))


def _euler_kinematics(prog: _Program, trig: tuple[Any, ...]) -> tuple[Any, Any]:
    """The platform's rotation R (eq. 4) and Euler-rate Jacobian JA (eq. 9), each (3, 3),
    assigned in ``prog`` from the sines and cosines ``(Spsi, Cpsi, Stheta, Ctheta, Sphi, Cphi)``."""
    import sympy as sp

    Sps, Cps, Sth, Cth, Sph, Cph = trig
    L = prog.let
    R = L(sp.Matrix([[Cps * Cth, Cps * Sth * Sph - Sps * Cph, Cps * Sth * Cph + Sps * Sph],
                     [Sps * Cth, Sps * Sth * Sph + Cps * Cph, Sps * Sth * Cph - Cps * Sph],
                     [-Sth, Cth * Sph, Cth * Cph]]), "R")  # eq. (4)
    JA = L(sp.Matrix([[0, -Sps, Cth * Cps], [0, Cps, Cth * Sps], [1, 0, -Sth]]), "JA")  # eq. (9)
    return R, JA


class _PlatformMotion(NamedTuple):
    """The platform's pose and rates as program symbols (eqs. 4, 8, 9, 23)."""

    xp: Any  # (3, 1) position of P [m]
    R: Any  # (3, 3) R_S^P, eq. (4)
    T: Any  # (6, 6) x_dot to twist, eq. (23)
    Td: Any  # (6, 6) its time derivative
    v: Any  # (3, 1) velocity of P [m/s]
    w: Any  # (3, 1) angular velocity, eq. (8) [rad/s]


def _platform_motion(prog: _Program) -> _PlatformMotion:
    """R, JA, JA_dot and the angular velocity of the platform, assigned in ``prog``."""
    import sympy as sp

    xp = sp.Matrix(sp.symbols("x_P y_P z_P", real=True))
    trig = sp.symbols("Spsi Cpsi Stheta Ctheta Sphi Cphi", real=True)
    Sps, Cps, Sth, Cth, Sph, Cph = trig
    xd = sp.symbols("xd_P yd_P zd_P psid thetad phid", real=True)
    L = prog.let
    R, JA = _euler_kinematics(prog, trig)
    JAd = L(sp.Matrix([[0, -Cps * xd[3], -Sth * Cps * xd[4] - Cth * Sps * xd[3]],
                       [0, -Sps * xd[3], -Sth * Sps * xd[4] + Cth * Cps * xd[3]],
                       [0, 0, -Cth * xd[4]]]), "JAd")
    T = sp.diag(sp.eye(3), JA)
    Td = sp.diag(sp.zeros(3), JAd)
    v = sp.Matrix(xd[:3])
    w = L(JA * sp.Matrix(xd[3:]), "w")
    return _PlatformMotion(xp, R, T, Td, v, w)


def _leg_programs(prog: _Program, pm: _PlatformMotion, kinds: tuple[str, ...], i: int) -> dict[str, Any]:
    """The V matrices of leg i's bodies among ``kinds`` (keys ``'<kind> <i>'``), from the leg
    vector, its length and their rates (eqs. 30-37), assigned in ``prog``."""
    import sympy as sp

    mC, mS, bC, bS = sp.symbols("m_C m_S b_C b_S", positive=True)
    IC = sp.symbols("I_Cxx I_Cyy I_Czz", real=True)
    IS = sp.symbols("I_Sxx I_Syy I_Szz", real=True)
    L = prog.let
    R, T, Td, v, w = pm.R, pm.T, pm.Td, pm.v, pm.w
    out: dict[str, Any] = {}
    bx, by, px, py = sp.symbols(f"b_x{i} b_y{i} p_x{i} p_y{i}", real=True)
    Pp = L(R * sp.Matrix([px, py, 0]), "Pp")
    Ppd = L(w.cross(Pp), "Ppd")
    l = L(pm.xp + Pp - sp.Matrix([bx, by, 0]), "l")  # eq. (31)
    ld = L(v + Ppd, "ld")
    n2 = L((l.T * l)[0], "n2")
    n = L(sp.sqrt(n2), "n")
    nd = L((l.T * ld)[0] / n, "nd")
    lh = L(l / n, "lh")  # eq. (30)
    lhd = L((ld - lh * nd) / n, "lhd")
    lb = L(l / n2, "lb")  # eq. (37)
    lbd = L(ld / n2 - 2 * nd * lb / n, "lbd")
    PpT, PpdT = _tilde(Pp).T, _tilde(Ppd).T
    J_D = L(_tilde(lb).row_join(_tilde(lb) * PpT), "JD")  # eq. (36)
    J_Dd = L(_tilde(lbd).row_join(_tilde(lbd) * PpT + _tilde(lb) * PpdT), "JDd")
    if "translating cylinder" in kinds:
        J_B = L(bC * _tilde(lh).T * J_D, "JB")  # eq. (40)
        J_Bd = L(bC * (_tilde(lhd).T * J_D + _tilde(lh).T * J_Dd), "JBd")
        out[f"translating cylinder {i}"] = L(mC * J_B.T * (J_Bd * T + J_B * Td), "VCt")  # eq. (46)
    if "translating piston" in kinds:
        Pm = L(sp.eye(3) - bS * _tilde(lh).T * _tilde(lb), "Pm")  # eq. (62)
        Pmd = L(-bS * (_tilde(lhd).T * _tilde(lb) + _tilde(lh).T * _tilde(lbd)), "Pmd")
        J_G = Pm.row_join(L(Pm * PpT, "JG"))
        J_Gd = Pmd.row_join(L(Pmd * PpT + Pm * PpdT, "JGd"))
        out[f"translating piston {i}"] = L(mS * J_G.T * (J_Gd * T + J_G * Td), "VSt")  # eq. (68)
    rot = [k for k in ("rotating cylinder", "rotating piston") if k in kinds]
    if rot:
        rho = L(sp.sqrt(l[0] ** 2 + l[1] ** 2), "rho")  # eq. (51)
        rhod = L((l[0] * ld[0] + l[1] * ld[1]) / rho, "rhod")
        yC = L(sp.Matrix([-l[1], l[0], 0]) / rho, "yC")
        yCd = L(sp.Matrix([-ld[1], ld[0], 0]) / rho - yC * rhod / rho, "yCd")
        zC = L(lh.cross(yC), "zC")  # eq. (52)
        zCd = L(lhd.cross(yC) + lh.cross(yCd), "zCd")
        RC, RCd = lh.row_join(yC).row_join(zC), lhd.row_join(yCd).row_join(zCd)
        for k, D in (("rotating cylinder", IC), ("rotating piston", IS)):
            if k not in rot:
                continue
            Ib = L(RC * sp.diag(*D) * RC.T, "Ib")  # eqs. (48), (70)
            Ibd = L(RCd * sp.diag(*D) * RC.T + RC * sp.diag(*D) * RCd.T, "Ibd")
            IJ = L(Ib * J_D, "IJ")
            IJd = L(Ibd * J_D + Ib * J_Dd, "IJd")
            out[f"{k} {i}"] = L(J_D.T * (IJd * T + IJ * Td), "VR")  # eqs. (58), (76)
    return out


def _implementation_program(prog: _Program, kinds: tuple[str, ...], legs: int = 1) -> dict[str, Any]:
    """The hand-derived formulas of :mod:`stewart` (``_platform_terms``, ``_leg_terms``) as a
    straight-line program on symbols; returns the V matrices (symbols) per kind (and leg)."""
    import sympy as sp

    mP = sp.Symbol("m_P", positive=True)
    IP = sp.symbols("I_Pxx I_Pyy I_Pzz", real=True)
    L = prog.let
    pm = _platform_motion(prog)
    out: dict[str, Any] = {}
    if "platform" in kinds:
        Irot = L(pm.R * sp.diag(*IP) * pm.R.T, "IP")  # eq. (17)
        Irot_d = L(_tilde(pm.w) * Irot - Irot * _tilde(pm.w), "IPd")
        IPB = sp.diag(mP * sp.eye(3), Irot)
        IPBd = sp.diag(sp.zeros(3), Irot_d)
        out["platform"] = L(IPBd * pm.T + IPB * pm.Td, "VP")  # eq. (28)
    for i in range(legs):
        if not set(kinds) - {"platform"}:
            break
        out.update(_leg_programs(prog, pm, kinds, i))
    return out


def operation_counts(kinds: tuple[str, ...] = KINDS) -> dict[str, OpCount]:
    """Operations of our implementation's formulas for each Coriolis/centripetal matrix.

    Each body's count is self-contained (its share of the kinematics included, as in Table 1);
    ``total`` is the platform plus six times the four leg bodies, as Table 1 adds its rows;
    ``shared program`` evaluates everything once, sharing the kinematics between bodies and
    summing the 25 matrices.
    """
    from .._extras import require

    require("symbolic", "the operation counts of the Stewart platform")
    out: dict[str, OpCount] = {}
    for k in kinds:
        prog = _Program()
        _implementation_program(prog, (k,))
        out[k] = prog.ops
    if tuple(kinds) == KINDS:
        legs = sum((out[k] for k in KINDS[1:]), OpCount(0, 0, 0, 0))
        out["total"] = out["platform"] + legs.scaled(6)
        prog = _Program()
        mats = _implementation_program(prog, KINDS, legs=6)
        import sympy as sp

        prog.let(sum(mats.values(), sp.zeros(6, 6)), "V")
        out["shared program"] = prog.ops
    return out


def format_counts(ours: dict[str, OpCount]) -> str:
    """A text table beside the paper's Table 1 (generalized momentum columns)."""
    lines = [f"{'Coriolis/centripetal matrix of':<24} {'paper Add':>9} {'Mul':>6} {'Div':>4}   "
             f"{'ours Add':>8} {'Mul':>6} {'Div':>4} {'Sqrt':>4}"]
    for k, c in ours.items():
        pa = PAPER_TABLE1.get(k, ("-",) * 3)
        lines.append(f"{k:<24} {pa[0]:>9} {pa[1]:>6} {pa[2]:>4}   {c.add:>8} {c.mul:>6} {c.div:>4} {c.sqrt:>4}")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    print(format_counts(operation_counts()))
