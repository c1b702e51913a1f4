"""Symbolic coupling terms of a gear train (Chen & Wang, seed 000, eqs. 14-23 and 44).

The generalized inertia force of a geared robot splits as ``G = G_v + G_s`` (eq. 23): ``G_v``
is the open chain of virtual links (every gear lumped into its carrier as a rigid body,
:func:`robot_dynamics.drivetrain.virtual_chain_model`), ``G_s = M_s(q) qdd + C_s(q, qd)`` is
what the gears' spin relative to their carriers adds. This module writes ``M_s`` and ``C_s``
in closed form with sympy, as a second derivation of what rnea/crba evaluate numerically:

* secondary link j turns about its axis e_j (fixed in its carrier i) at ``b_j . qd``
  relative to the carrier (eq. 11), and the carrier turns at ``omega_i = J_i(q) qd`` (body
  axes), so its axial spin is ``e_j . omega_i + b_j . qd``. The virtual chain already holds
  ``1/2 I_j (e_j . omega_i)^2``; the rest of its kinetic energy is
  ``1/2 qd^T M_s qd`` with ``M_s = sum_j I_j (a_j b_j^T + b_j a_j^T + b_j b_j^T)``,
  ``a_j = J_i^T e_j`` (eqs. 17-18; eq. 44's matrix for the 3-dof example);
* ``C_s`` are the Christoffel terms of ``M_s``:
  ``C_s,i = sum_jk 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i) qd_j qd_k`` (eqs. 19-21).

The carriers' angular velocities come from the model's joint frames (``E_tree`` and the joint
axes), built symbolically; the numbers of the model (b_jk, e_j, the frames) enter as exact
rationals where they are integers or simple fractions, the gear inertias as symbols ``I_<name>``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ..errors import InputError

if TYPE_CHECKING:
    from ..model import RobotModel

__all__ = ["SymbolicCoupling", "symbolic_coupling", "format_coupling"]


class SymbolicCoupling(NamedTuple):
    """M_s (nq x nq sympy Matrix), C_s (nq sympy column), and the symbols they use.

    Attributes:
        q, qd: joint position and velocity symbols, in ``model.joint_names`` order.
        inertia: gear inertia symbol per secondary link name, with its value [kg m^2].
    """

    M_s: Any
    C_s: Any
    q: tuple[Any, ...]
    qd: tuple[Any, ...]
    inertia: dict[str, tuple[Any, float]]


def _exact(x: float) -> Any:
    """A float of the model as an exact number where it is one (0, +/-1, a simple fraction)."""
    import sympy as sp

    if abs(x) < 1e-12:
        return sp.Integer(0)
    r = sp.nsimplify(x, tolerance=1e-12, rational=True)
    if r.q <= 1000 and abs(float(r) - x) < 1e-12:
        return r
    return sp.Float(x)


def _exact_matrix(a: np.ndarray) -> Any:
    import sympy as sp

    return sp.Matrix(a.shape[0], a.shape[1], [_exact(float(v)) for v in a.ravel()])


def symbolic_coupling(model: RobotModel) -> SymbolicCoupling:
    """M_s(q) and C_s(q, qd) of the model's gear train, as sympy expressions.

    Raises:
        InputError: the model has no gear train, or mimic joints (not covered here).
    """
    from .._extras import require

    require("symbolic", "the symbolic gear-train terms")
    import sympy as sp

    dt = model.drivetrain
    if dt is None or dt.n_secondary == 0:
        raise InputError(f"robot {model.name!r} has no secondary links: nothing to write symbolically")
    if model.has_mimic:
        raise InputError("symbolic drive-train terms: mimic joints are not supported")
    n = model.nq
    q = sp.symbols(f"q1:{n + 1}", real=True)
    qd = sp.symbols(f"qd1:{n + 1}", real=True)
    joint_of_body = [model.joint_names.index(j) if j in model.joint_names else -1 for j in model.body_joint_names]
    # body-frame angular velocity Jacobians J_i (3 x n): omega_i = iR_p omega_p + axis_i qd_i
    J: list[Any] = []
    for b in range(model.nb):
        p = int(model.parent[b])
        k = joint_of_body[b]
        axis = sp.Matrix([_exact(float(v)) for v in model.axis[b]])
        E = _exact_matrix(np.asarray(model.E_tree[b]))
        if k >= 0 and not model.is_prismatic[b]:
            # body_R_parent = R(axis, q)^T E_tree (RobotModel: joint rotation after the fixed frame)
            K = sp.Matrix([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
            R = sp.eye(3) + sp.sin(q[k]) * K + (1 - sp.cos(q[k])) * K * K
            X = R.T * E
        else:
            X = E
        Jp = J[p] if p >= 0 else sp.zeros(3, n)
        Jb = X * Jp
        if k >= 0 and not model.is_prismatic[b]:
            Jb[:, k] += axis
        J.append(Jb.applyfunc(sp.simplify))
    M = sp.zeros(n, n)
    inertia: dict[str, tuple[Any, float]] = {}
    for j, name in enumerate(dt.names):
        Ij = sp.Symbol(f"I_{name}", positive=True)
        inertia[name] = (Ij, float(dt.inertia[j]))
        b = sp.Matrix([_exact(float(v)) for v in dt.B[j]])
        e = sp.Matrix([_exact(float(v)) for v in dt.axis_body[j]])
        c = int(dt.carrier_body[j])
        a = (J[c].T * e) if c >= 0 else sp.zeros(n, 1)
        M += Ij * (a * b.T + b * a.T + b * b.T)  # eqs. (17)-(18)
    M = M.applyfunc(lambda x: sp.trigsimp(sp.expand(x)))
    C = sp.zeros(n, 1)
    for i in range(n):  # eqs. (19)-(21): Christoffel symbols of M_s
        s = 0
        for j in range(n):
            for k in range(n):
                s += sp.Rational(1, 2) * (M[i, j].diff(q[k]) + M[i, k].diff(q[j]) - M[j, k].diff(q[i])) * qd[j] * qd[k]
        C[i] = sp.factor_terms(sp.trigsimp(sp.expand(s)))
    return SymbolicCoupling(M, C, q, qd, inertia)


def format_coupling(model: RobotModel, sc: SymbolicCoupling) -> str:
    """Readable text: the symbols, G's split (eq. 23), M_s entries and C_s rows."""
    import sympy as sp

    lines = [
        f"{model.name}: G = G_v + G_s (Chen & Wang eq. 23), G_s = M_s(q) qdd + C_s(q, qd) (eq. 44)",
        "G_v: the virtual chain, each gear lumped into its carrier (robot_dynamics.drivetrain.virtual_chain_model)",
        "joints: " + ", ".join(f"q{i + 1} = {n}" for i, n in enumerate(model.joint_names)),
        "gears:  " + ", ".join(f"{s} = {v:.6g} kg m^2 (on {model.drivetrain.carrier[model.drivetrain.index(k)]})"
                               for k, (s, v) in sc.inertia.items()),
        "M_s (symmetric; zero entries omitted):",
    ]
    n = model.nq
    for i in range(n):
        for j in range(i, n):
            if sc.M_s[i, j] != 0:
                lines.append(f"  M_s[{i + 1},{j + 1}] = {sp.sstr(sc.M_s[i, j])}")
    lines.append("C_s:")
    for i in range(n):
        lines.append(f"  C_s[{i + 1}] = {sp.sstr(sc.C_s[i])}")
    return "\n".join(lines)
