"""The customised symbolic Newton-Euler model of one robot, recorded on a :class:`Tape`.

Khalil 7.4.3 (practical form, link coordinates) customised as in 7.5.2 and fed the base
inertial parameters of 7.5.3. Forward recursion, for each body j with parent p:

* ``jw_p = jR_p pw_p``                                    Khalil [7.51]
* revolute: ``w_j = jw_p + qd_j a_j``                     [7.52]
  ``dw_j = jR_p dw_p + qdd_j a_j + jw_p x qd_j a_j``      [7.53]
* ``dV_j = jR_p (dV_p + U_p P_j)`` (+ ``qdd a + 2 jw_p x qd a`` if prismatic)  [7.54]
* ``U_j = skew(dw_j) + skew(w_j) skew(w_j)``              [7.57]
* ``F_j = M_j dV_j + U_j MS_j``,  ``M_j = J_j dw_j + w_j x (J_j w_j) + MS_j x dV_j``  [7.55]-[7.56]

with ``dV_0 = -g`` [7.47]; ``J dw + w x (J w)`` is written on the entries of ``U_j`` (see
:func:`_moment_on_U`), which saves 5 multiplications per link; backward recursion [7.58]-[7.61] over children c:
``f_j = F_j + sum jR_c f_c``, ``m_j = M_j + sum (jR_c m_c + P_c x jR_c f_c)``,
``tau_j = m_j . a_j`` (revolute) or ``f_j . a_j`` (prismatic), then rotor inertia and
friction of [7.50] and the mimic-joint fold ``G^T``.

Rotations are applied as two factors, ``jR_p = Rot(a_j, theta_j)^T R_rest^T``, where the
joint axis is a coordinate axis: a constant rotation (free when it is a signed permutation,
as for alpha = 0 or +-pi/2 in Khalil's frames) and an elementary rotation by
``theta = q + const`` that costs 4 multiplications and 2 additions. Oblique axes use the
full rotation matrix.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..model.robot_model import RobotModel
from .tape import Ref, Tape, Value

__all__ = ["NewtonEulerProgram", "build_program", "build_cheapest"]

Vec = list[Value]
Array = NDArray[np.float64]
_SNAP = 1e-12


def _snap(x: float, scale: float = 1.0) -> float:
    """Make a constant exact: |x| < tol -> 0, near +-1 -> +-1 (Khalil's zero/unit elimination)."""
    x = float(x)
    if abs(x) < _SNAP * scale:
        return 0.0
    for one in (1.0, -1.0):
        if abs(x - one) < _SNAP:
            return one
    return x


def _const_matvec(t: Tape, A: Array, v: Vec) -> Vec:
    return [t.dot([float(a) for a in A[i]], v) for i in range(3)]


def _cross(t: Tape, a: Vec, b: Vec) -> Vec:
    return [
        t.sub(t.mul(a[1], b[2]), t.mul(a[2], b[1])),
        t.sub(t.mul(a[2], b[0]), t.mul(a[0], b[2])),
        t.sub(t.mul(a[0], b[1]), t.mul(a[1], b[0])),
    ]


def _vadd(t: Tape, a: Vec, b: Vec) -> Vec:
    return [t.add(x, y) for x, y in zip(a, b)]


class _Rotation:
    """``E = jR_p`` of one body as a constant factor and an elementary (or full) rotation."""

    def __init__(self, t: Tape, model: RobotModel, j: int, theta: Value | None):
        self.t = t
        R_tree = np.asarray(model.E_tree[j]).T  # parent_R_joint
        ax = np.asarray(model.axis[j], dtype=float)
        self.kind = "const"
        self.k = int(np.argmax(np.abs(ax)))
        coordinate = abs(abs(ax[self.k]) - 1.0) < 1e-12
        if theta is None:  # prismatic: E = E_tree, constant
            self.Rt = np.vectorize(_snap)(R_tree.T)
            return
        if coordinate:
            k = self.k
            u, w = (k + 1) % 3, (k + 2) % 3
            # R_tree = R_rest Rot_k(c) with (R_rest)[u, w] = 0 (an X-Y-Z Euler split): the
            # constant c joins the joint angle, as Khalil's theta_j offset does.
            c = math.atan2(-R_tree[u, w], R_tree[u, u])
            c = 0.0 if abs(c) < 1e-12 else c
            Rk = _rot_k(k, -c)
            R_rest = R_tree @ Rk
            self.Rt = np.vectorize(_snap)(R_rest.T)
            sgn = 1.0 if ax[k] > 0 else -1.0
            angle = t.add(t.mul(theta, sgn), _snap(c))
            self.s, self.c = t.func("sin", angle), t.func("cos", angle)
            self.kind = "axis"
            self.u, self.w = u, w
        else:
            # Rodrigues: Rot(a, theta) = c I + s [a]x + (1 - c) a a^T; E = Rot^T E_tree.
            s, c = t.func("sin", theta), t.func("cos", theta)
            one_c = t.sub(1.0, c)
            a = [_snap(x) for x in ax]
            Rot = [[0.0] * 3 for _ in range(3)]
            K = [[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]]
            for r in range(3):
                for q in range(3):
                    v = t.add(t.mul(s, K[r][q]), t.mul(one_c, a[r] * a[q]))
                    Rot[r][q] = t.add(v, c) if r == q else v
            E_tree = np.vectorize(_snap)(np.asarray(model.E_tree[j]))
            # E[r][q] = sum_m Rot[m][r] E_tree[m][q]
            self.E = [[t.dot([Rot[m][r] for m in range(3)], [float(E_tree[m, q]) for m in range(3)]) for q in range(3)] for r in range(3)]
            self.kind = "full"

    def apply(self, v: Vec) -> Vec:
        """``E v``: parent coordinates -> body coordinates."""
        t = self.t
        if self.kind == "full":
            return [t.dot(self.E[r], v) for r in range(3)]
        w = _const_matvec(t, self.Rt, v)
        if self.kind == "const":
            return w
        out = list(w)
        u, ww = self.u, self.w
        # Rot_k(theta)^T w
        out[u] = t.add(t.mul(self.c, w[u]), t.mul(self.s, w[ww]))
        out[ww] = t.sub(t.mul(self.c, w[ww]), t.mul(self.s, w[u]))
        return out

    def wrench_to_parent(self, f: Vec, n: Vec, P: Vec) -> tuple[Vec, Vec]:
        """``(E^T f, E^T n + P x E^T f)`` for the backward recursion [7.59]-[7.60].

        With ``E^T = R_rest Rot_k``: ``R_rest (Rot_k n + P' x Rot_k f)``, ``P' = R_rest^T P``;
        the cross product is taken before the constant rotation, where ``P'`` is sparser
        (``[d, 0, r]`` in Khalil's frames), which saves operations.
        """
        t = self.t
        const_P = all(isinstance(x, float) for x in P)
        Pp = [_snap(x) for x in self.Rt @ np.array(P, dtype=float)] if const_P and self.kind == "axis" else P
        if self.kind != "axis" or sum(x != 0.0 for x in Pp) >= sum(x != 0.0 for x in P):
            fp = self.apply_transpose(f)
            return fp, _vadd(t, self.apply_transpose(n), _cross(t, P, fp))
        g, h = self._rot_k(f), self._rot_k(n)
        inner = _vadd(t, h, _cross(t, Pp, g))
        return _const_matvec(t, self.Rt.T, g), _const_matvec(t, self.Rt.T, inner)

    def _rot_k(self, f: Vec) -> Vec:
        t = self.t
        g = list(f)
        u, ww = self.u, self.w
        g[u] = t.sub(t.mul(self.c, f[u]), t.mul(self.s, f[ww]))
        g[ww] = t.add(t.mul(self.s, f[u]), t.mul(self.c, f[ww]))
        return g

    def apply_transpose(self, f: Vec) -> Vec:
        """``E^T f``: body coordinates -> parent coordinates."""
        t = self.t
        if self.kind == "full":
            return [t.dot([self.E[r][q] for r in range(3)], f) for q in range(3)]
        g = list(f)
        if self.kind == "axis":
            u, ww = self.u, self.w
            g[u] = t.sub(t.mul(self.c, f[u]), t.mul(self.s, f[ww]))
            g[ww] = t.add(t.mul(self.s, f[u]), t.mul(self.c, f[ww]))
        return _const_matvec(t, self.Rt.T, g)


def _rot_k(k: int, angle: float) -> Array:
    c, s = math.cos(angle), math.sin(angle)
    u, w = (k + 1) % 3, (k + 2) % 3
    R = np.eye(3)
    R[u, u], R[u, w], R[w, u], R[w, w] = c, -s, s, c
    return R


def _origin_in_parent(t: Tape, model: RobotModel, j: int, qj: Value) -> Vec:
    """``j-1P_j``: origin of body j's frame in its parent's [m], ``r_tree + q E^T a`` for a prismatic joint."""
    P = [_snap(x) for x in model.r_tree[j]]
    if model.is_prismatic[j]:
        ap = np.asarray(model.E_tree[j]).T @ np.asarray(model.axis[j])
        P = [t.add(P[i], t.mul(qj, _snap(ap[i]))) for i in range(3)]
    return P


class NewtonEulerProgram:
    """The recorded model: a tape, its inputs and its torque outputs."""

    def __init__(self, tape: Tape, nq: int, outputs: list[Value]):
        self.tape = tape
        self.nq = nq
        self.outputs = outputs

    def count(self):  # noqa: ANN201 - OpCount
        """Operation counts after dead-code elimination."""
        return self.tape.count(self.outputs)


def _snapped_parameters(pi: Array) -> list[float]:
    """The parameters ``pi`` with zeros and units made exact relative to its largest entry (:func:`_snap`)."""
    scale = float(np.max(np.abs(pi))) if pi.size else 1.0
    return [_snap(x, scale) for x in pi]


def _inputs(t: Tape, names: tuple[str, ...], nq: int) -> list[list[Ref]]:
    """Record the inputs ``{name}0`` .. ``{name}{nq-1}`` of each name in turn, one list per name."""
    return [[t.input(f"{name}{k}") for k in range(nq)] for name in names]


def _body_value(t: Tape, model: RobotModel, vals: list[Ref], b: int, offset: bool) -> Value:
    """Body b's joint coordinate from the joint inputs ``vals``: ``G[b] vals`` (+ the mimic offset)."""
    acc: Value = _snap(model.mimic_offset[b]) if offset else 0.0
    for k in np.nonzero(model.mimic_matrix[b])[0]:
        acc = t.add(acc, t.mul(vals[int(k)], _snap(model.mimic_matrix[b, k])))
    return acc


def _U_matrix(t: Tape, wj: Vec, dwj: Vec) -> list[Vec]:
    """``U_j`` (3x3) of [7.57] from ``w_j`` [rad/s] and ``dw_j`` [rad/s^2]."""
    # U_j = skew(dw) + skew(w) skew(w) [7.57]: off-diagonal w_i w_k, diagonal -(w_k^2 + w_l^2)
    sq = [t.mul(wj[i], wj[i]) for i in range(3)]
    Uj = [[0.0] * 3 for _ in range(3)]
    for i in range(3):
        for k in range(3):
            if i == k:
                Uj[i][k] = t.neg(t.add(sq[(i + 1) % 3], sq[(i + 2) % 3]))
            else:
                s_dw = _skew_entry(dwj, i, k)
                Uj[i][k] = t.add(s_dw, t.mul(wj[i], wj[k]))
    return Uj


class _Kinematics(NamedTuple):
    """The forward recursion's values, one entry per body, in body coordinates."""

    w: list[Vec]  # w_j [rad/s]
    dw: list[Vec]  # dw_j [rad/s^2]
    dV: list[Vec]  # dV_j [m/s^2], gravity included
    U: list[list[Vec] | None]  # U_j, 3x3 [7.57]
    rots: list[_Rotation]  # jR_p
    Pj: list[Vec]  # pP_j [m]


def _forward(t: Tape, model: RobotModel, q: list[Ref], qd: list[Ref], qdd: list[Ref]) -> _Kinematics:
    """Forward recursion [7.51]-[7.57] from the joint inputs, with ``dV_0 = -g``."""
    zero: Vec = [0.0, 0.0, 0.0]
    g = [_snap(-x) for x in model.gravity]  # dV_0 = -g, Khalil [7.47]
    kin = _Kinematics([], [], [], [], [], [])
    w, dw, dV, U = kin.w, kin.dw, kin.dV, kin.U
    for j in range(model.nb):
        p = int(model.parent[j])
        a = [_snap(x) for x in model.axis[j]]
        qb = _body_value(t, model, q, j, True)
        qdb, qddb = _body_value(t, model, qd, j, False), _body_value(t, model, qdd, j, False)
        prismatic = bool(model.is_prismatic[j])
        rot = _Rotation(t, model, j, None if prismatic else qb)
        kin.rots.append(rot)
        r = _origin_in_parent(t, model, j, qb)
        kin.Pj.append(r)
        w_p, dw_p, dV_p = (zero, zero, g) if p < 0 else (w[p], dw[p], dV[p])
        jw_p = rot.apply(w_p)  # [7.51]
        qda = [t.mul(qdb, x) for x in a]
        # dV_p + U_p P_j, then rotate [7.54]
        if p >= 0:
            Up = U[p]
            assert Up is not None
            acc = [t.add(dV_p[i], t.dot(Up[i], r)) for i in range(3)]
        else:
            acc = list(dV_p)
        dVj = rot.apply(acc)
        jdw_p = rot.apply(dw_p)
        if prismatic:
            wj, dwj = jw_p, jdw_p
            cor = _cross(t, jw_p, qda)
            dVj = [t.add(dVj[i], t.add(t.mul(qddb, a[i]), t.mul(cor[i], 2.0))) for i in range(3)]
        else:
            wj = _vadd(t, jw_p, qda)  # [7.52]
            dwj = _vadd(t, _vadd(t, jdw_p, [t.mul(qddb, x) for x in a]), _cross(t, jw_p, qda))  # [7.53]
        w.append(wj)
        dw.append(dwj)
        dV.append(dVj)
        U.append(_U_matrix(t, wj, dwj))
    return kin


def _wrenches(
    t: Tape, P: list[float], kin: _Kinematics, gyroscopic: list[bool] | None
) -> tuple[list[Vec], list[Vec]]:
    """Newton-Euler wrenches ``(F_j, M_j)`` [7.55]-[7.56] with the body's parameters, per body."""
    w, dw, dV = kin.w, kin.dw, kin.dV
    f: list[Vec] = []
    n: list[Vec] = []
    for j in range(len(kin.U)):
        XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M = P[10 * j : 10 * j + 10]
        J = [[XX, XY, XZ], [XY, YY, YZ], [XZ, YZ, ZZ]]
        MS: Vec = [MX, MY, MZ]
        Uj = kin.U[j]
        assert Uj is not None
        F = [t.add(t.mul(dV[j][i], M), t.dot(Uj[i], MS)) for i in range(3)]
        if gyroscopic is None or gyroscopic[j]:
            rot_moment = _moment_on_U(t, J, w[j], dw[j], Uj)
        else:
            Jdw = _const_matvec(t, np.array(J), dw[j])
            rot_moment = _vadd(t, Jdw, _cross(t, w[j], _const_matvec(t, np.array(J), w[j])))
        Mj = _vadd(t, rot_moment, _cross(t, MS, dV[j]))
        f.append(F)
        n.append(Mj)
    return f, n


def _body_torques(t: Tape, model: RobotModel, kin: _Kinematics, f: list[Vec], n: list[Vec]) -> list[Value]:
    """Backward recursion [7.58]-[7.61]: each body's joint torque (f and n are summed in place)."""
    # children have larger indices
    tau_b: list[Value] = [0.0] * model.nb
    for j in range(model.nb - 1, -1, -1):
        a = [_snap(x) for x in model.axis[j]]
        tau_b[j] = t.dot(f[j] if model.is_prismatic[j] else n[j], a)  # [7.61]
        p = int(model.parent[j])
        if p >= 0:
            fp, np_ = kin.rots[j].wrench_to_parent(f[j], n[j], kin.Pj[j])
            f[p] = _vadd(t, f[p], fp)
            n[p] = _vadd(t, n[p], np_)
    return tau_b


def _joint_torques(
    t: Tape, model: RobotModel, P: list[float], tau_b: list[Value], qd: list[Ref], qdd: list[Ref], friction: bool
) -> list[Value]:
    """Joint torques: the mimic fold ``G^T tau_b``, then rotor inertia and friction [7.28]-[7.29]."""
    out: list[Value] = []
    base = 10 * model.nb
    for k in range(model.nq):
        tau: Value = 0.0
        for b in np.nonzero(model.mimic_matrix[:, k])[0]:
            tau = t.add(tau, t.mul(tau_b[int(b)], _snap(model.mimic_matrix[b, k])))
        Ia, FV, FC = P[base + 3 * k : base + 3 * k + 3]
        tau = t.add(tau, t.mul(qdd[k], Ia))  # rotor inertia [7.29]
        if friction:
            tau = t.add(tau, t.mul(qd[k], FV))  # [7.28]
            if FC != 0.0:
                tau = t.add(tau, t.mul(t.func("sign", qd[k]), FC))
        out.append(tau)
    return out


def build_program(
    model: RobotModel, pi: Array, *, friction: bool = True, gyroscopic: list[bool] | None = None
) -> NewtonEulerProgram:
    """Record the customised Newton-Euler model of ``model`` with inertial parameters ``pi``.

    Args:
        model: the robot (gravity is ``model.gravity``, baked in).
        pi: standard-size parameter vector (10 nb + 3 nq,), usually the base parameters
            embedded by :meth:`BaseParameters.embedded`: its zeros cost nothing.
        friction: include the viscous and Coulomb terms.
        gyroscopic: per body, write ``J dw + w x (J w)`` on the entries of ``U_j`` (True) or
            as matrix products and a cross product (False); default: True for every body.

    Returns:
        :class:`NewtonEulerProgram` with outputs tau_0..tau_{nq-1}.
    """
    t = Tape()
    nq = model.nq
    P = _snapped_parameters(pi)
    q, qd, qdd = _inputs(t, ("q", "qd", "qdd"), nq)
    kin = _forward(t, model, q, qd, qdd)
    f, n = _wrenches(t, P, kin, gyroscopic)
    tau_b = _body_torques(t, model, kin, f, n)
    return NewtonEulerProgram(t, nq, _joint_torques(t, model, P, tau_b, qd, qdd, friction))


def _moment_on_U(t: Tape, J: list[list[float]], w: Vec, dw: Vec, U: list[list[Value]]) -> Vec:
    """``J dw + w x (J w)`` written on the entries of ``U_j`` [7.57], which F_j needs anyway.

    Expanding both terms, every coefficient of an inertia constant is an entry of
    ``U = skew(dw) + skew(w)^2``, a product ``w_i w_k`` or a difference of squares, e.g.
    ``n_x = XX dw_x - XY U_20 + XZ U_10 + (ZZ - YY) w_y w_z + YZ (w_y^2 - w_z^2)``: 5
    multiplications per component instead of 3 + 6 for ``J dw`` then ``w x (J w)``
    (checked against the plain form by the agreement tests).
    """
    (XX, XY, XZ), (_, YY, YZ), (_, _, ZZ) = J
    p01, p02, p12 = t.mul(w[0], w[1]), t.mul(w[0], w[2]), t.mul(w[1], w[2])
    s0, s1, s2 = (t.mul(x, x) for x in w)

    def lin(*terms: tuple[Value, float]) -> Value:
        acc: Value = 0.0
        for v, c in terms:
            acc = t.add(acc, t.mul(v, _snap(c)))
        return acc

    return [
        lin((dw[0], XX), (U[2][0], -XY), (U[1][0], XZ), (p12, ZZ - YY), (t.sub(s1, s2), YZ)),
        lin((p02, XX - ZZ), (U[2][1], XY), (t.sub(s2, s0), XZ), (dw[1], YY), (U[0][1], -YZ)),
        lin((p01, YY - XX), (t.sub(s0, s1), XY), (U[1][2], -XZ), (U[0][2], YZ), (dw[2], ZZ)),
    ]


def _skew_entry(v: Vec, i: int, k: int) -> Value:
    """Entry (i, k) of skew(v)."""
    if (i, k) == (0, 1):
        return -v[2] if isinstance(v[2], Ref) else -float(v[2])
    if (i, k) == (1, 0):
        return v[2]
    if (i, k) == (0, 2):
        return v[1]
    if (i, k) == (2, 0):
        return -v[1] if isinstance(v[1], Ref) else -float(v[1])
    if (i, k) == (1, 2):
        return -v[0] if isinstance(v[0], Ref) else -float(v[0])
    return v[0]  # (2, 1)


def build_cheapest(model: RobotModel, pi: Array, *, friction: bool = True) -> NewtonEulerProgram:
    """:func:`build_program` with, per body, the cheaper way to write ``J dw + w x (J w)``.

    A greedy pass over the bodies keeps a change when it lowers the multiplications (then the
    additions) (Khalil's "good choice of the intermediate variables", 7.5.2).
    """
    choice = [True] * model.nb
    best = build_program(model, pi, friction=friction, gyroscopic=choice)
    c = best.count()
    cost = (c.multiplications, c.additions)
    for j in range(model.nb):
        trial = list(choice)
        trial[j] = False
        prog = build_program(model, pi, friction=friction, gyroscopic=trial)
        ct = prog.count()
        tcost = (ct.multiplications, ct.additions)
        if tcost < cost:
            choice, best, cost = trial, prog, tcost
    return best
