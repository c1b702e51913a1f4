"""The customised recursive direct dynamic model of one robot (Khalil 7.6.2), on a :class:`Tape`.

Khalil's O(n) algorithm written as he writes it, with his spatial notation: screws and
wrenches are ``[linear; angular]``, the spatial inertia of body j about ``O_j`` is
``jJ_j = [[M I3, -skew(MS)], [skew(MS), J]]`` and the screw transformation of [2.34] is
``jT_{j-1} = [[E, -E skew(P)], [0, E]]`` with ``E = jR_{j-1}`` and ``P = j-1P_j``.
``a_j = [sigma_j a; sigma_bar_j a]`` is the joint's screw axis ([7.23b], ``a`` the unit axis).

i) first forward recursion, j = 1..n (velocities, and the accelerations and wrenches that
   ``qdd = 0`` would give):

   * ``w_j = E w_{j-1} + sigma_bar_j qd_j a``                                      [7.52]
   * ``gamma_j = [E (w_{j-1} x (w_{j-1} x P)) + 2 sigma_j (E w_{j-1} x qd_j a);
     sigma_bar_j (E w_{j-1} x qd_j a)]``                                              [7.68]
     (the extracted text of [7.68] prints ``- sigma_j`` in the angular row: the bar of
     sigma_bar_j was lost; a revolute joint adds ``jw_{j-1} x qd_j a`` as [7.53] says)
   * ``beta_j = -[w_j x (w_j x MS_j); w_j x (J_j w_j)]`` (no end-effector wrench)    [7.70]

ii) backward recursion, j = n..1, from ``J*_j = J_j`` and ``beta*_j = beta_j``:

   * ``H_j = a_j^T J*_j a_j + Ia_j``                                                 [7.71]
   * ``K_j = J*_j - J*_j a_j H_j^-1 a_j^T J*_j``                                      [7.72]
   * ``alpha_j = K_j gamma_j + J*_j a_j H_j^-1 (tau_j + a_j^T beta*_j) - beta*_j``    [7.73]
   * ``beta*_{j-1} = beta_{j-1} - jT_{j-1}^T alpha_j``                                [7.74]
   * ``J*_{j-1} = J_{j-1} + jT_{j-1}^T K_j jT_{j-1}``                                 [7.75]

   with ``tau_j = Gamma_j - Fc_j sign(qd_j) - Fv_j qd_j`` [7.82].

iii) second forward recursion, j = 1..n, from ``dV_0 = [-g; 0]``:

   * ``dV_{j-1,j} = jT_{j-1} dV_{j-1}``                                               [7.76]
   * ``qdd_j = H_j^-1 (-a_j^T J*_j (dV_{j-1,j} + gamma_j) + tau_j + a_j^T beta*_j)``  [7.77]
   * ``dV_j = dV_{j-1,j} + a_j qdd_j + gamma_j``                                      [7.79]

(``jf_j``, [7.78], is not needed for the accelerations and is not recorded.)

Customisation is the tape's (Khalil 7.5.2): operations on constants are folded, products by
0 and +-1 and sums with 0 vanish, common subexpressions are shared and the backward scan
keeps only what the accelerations need. ``J*_n`` and ``K_n`` are therefore constants, and the
base inertial parameters (7.5.3) zero most entries of ``J_j``. A division counts as a
multiplication (``H_j^-1`` is one division per joint, its products then multiplications).
Symmetric 6x6 matrices (``J*``, ``K``, ``T^T K T``) are computed on their upper triangle;
``T^T K T`` is ``L^T (D^T K D) L`` with ``D = diag(E, E)`` (each 3x3 block rotated with the
joint's elementary rotation, free for a constant signed permutation) and
``L = [[I, -skew(P)], [0, I]]`` (the constant translation).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import InputError
from ..model.robot_model import RobotModel
from .newton_euler import _cross, _inputs, _origin_in_parent, _Rotation, _snap, _snapped_parameters, _vadd
from .tape import OpCount, Tape, Value

__all__ = ["DirectDynamicsProgram", "build_direct_program", "direct_operation_counts", "direct_program"]

Vec = list[Value]
Mat = list[list[Value]]
Array = NDArray[np.float64]


class DirectDynamicsProgram:
    """The recorded direct model: a tape, inputs ``q{k}``, ``qd{k}``, ``tau{k}`` and outputs qdd."""

    def __init__(self, tape: Tape, nq: int, outputs: list[Value]):
        self.tape = tape
        self.nq = nq
        self.outputs = outputs

    def count(self) -> OpCount:
        """Operation counts after the backward scan (a division counts as a multiplication)."""
        return self.tape.count(self.outputs)

    def __call__(self, q: ArrayLike, qd: ArrayLike, tau: ArrayLike) -> Array:
        """Evaluate the recorded program: joint accelerations, shape (..., nq), from q, qd
        [rad or m, rad/s or m/s] and joint torques/forces tau [N m or N], shapes (..., nq)."""
        q, qd, tau = (np.asarray(x, dtype=float) for x in (q, qd, tau))
        shape = np.broadcast_shapes(q.shape, qd.shape, tau.shape)
        q, qd, tau = (np.broadcast_to(x, shape) for x in (q, qd, tau))
        inputs: dict[str, object] = {}
        for k in range(self.nq):
            inputs[f"q{k}"], inputs[f"qd{k}"], inputs[f"tau{k}"] = q[..., k], qd[..., k], tau[..., k]
        vals = self.tape.evaluate(inputs, self.outputs)
        return np.stack([np.broadcast_to(np.asarray(v, dtype=float), shape[:-1]) for v in vals], axis=-1)


def _sym(n: int) -> Mat:
    return [[0.0] * n for _ in range(n)]


def _spatial_inertia(params: list[float]) -> Mat:
    """``jJ_j`` (6x6, [linear; angular]) from ``XX XY XZ YY YZ ZZ MX MY MZ M``."""
    XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M = params
    J: Mat = _sym(6)
    for i in range(3):
        J[i][i] = M
    up = [[0.0, MZ, -MY], [-MZ, 0.0, MX], [MY, -MX, 0.0]]  # -skew(MS)
    for i in range(3):
        for k in range(3):
            J[i][3 + k] = up[i][k]
            J[3 + k][i] = up[i][k]
    inner = [[XX, XY, XZ], [XY, YY, YZ], [XZ, YZ, ZZ]]
    for i in range(3):
        for k in range(3):
            J[3 + i][3 + k] = inner[i][k]
    return J


def _matvec(t: Tape, A: Mat, v: Vec) -> Vec:
    return [t.dot(row, v) for row in A]


def _rotation_matrix(rot: _Rotation) -> Mat:
    """``E = jR_{j-1}`` as tape values: its column q is ``E e_q`` (free for the unit vectors)."""
    cols = [rot.apply([1.0 if i == q else 0.0 for i in range(3)]) for q in range(3)]
    return [[cols[q][r] for q in range(3)] for r in range(3)]


def _congruence(t: Tape, E: Mat, S: Mat, symmetric: bool) -> Mat:
    """``E^T S E`` (3x3); on the upper triangle when ``S`` is symmetric."""
    X = [[t.dot(S[i], [E[m][k] for m in range(3)]) for k in range(3)] for i in range(3)]  # S E
    Y: Mat = _sym(3)
    for i in range(3):
        for k in range(i if symmetric else 0, 3):
            Y[i][k] = t.dot([E[m][i] for m in range(3)], [X[m][k] for m in range(3)])
            if symmetric:
                Y[k][i] = Y[i][k]
    return Y


def _transform_inertia(t: Tape, E: Mat, P: Vec, K: Mat) -> Mat:
    """``jT_{j-1}^T K jT_{j-1}`` for a symmetric 6x6 ``K`` ([7.75]), on its upper triangle."""
    A = [row[:3] for row in K[:3]]
    B = [row[3:] for row in K[:3]]
    C = [row[3:] for row in K[3:]]
    A1, B1, C1 = _congruence(t, E, A, True), _congruence(t, E, B, False), _congruence(t, E, C, True)
    Pm: Mat = [[0.0, t.neg(P[2]), P[1]], [P[2], 0.0, t.neg(P[0])], [t.neg(P[1]), P[0], 0.0]]  # skew(P)
    # L^T [[A1, B1], [B1^T, C1]] L = [[A1, X], [X^T, C1 + skew(P) X + (skew(P) B1)^T]], X = B1 - A1 skew(P)
    X = [[t.sub(B1[i][k], t.dot(A1[i], [Pm[m][k] for m in range(3)])) for k in range(3)] for i in range(3)]
    out: Mat = _sym(6)
    for i in range(3):
        for k in range(3):
            out[i][k] = A1[i][k]
            out[i][3 + k] = X[i][k]
            out[3 + k][i] = X[i][k]
    for i in range(3):
        for k in range(i, 3):
            PX = t.dot(Pm[i], [X[m][k] for m in range(3)])
            PB = t.dot(Pm[k], [B1[m][i] for m in range(3)])  # (skew(P) B1)[k][i]
            out[3 + i][3 + k] = t.add(C1[i][k], t.add(PX, PB))
            out[3 + k][3 + i] = out[3 + i][3 + k]
    return out


class _FirstForward(NamedTuple):
    """What the first forward recursion leaves for the two others, one entry per body."""

    rots: list[_Rotation]  # jR_{j-1} as factors
    Es: list[Mat]  # jR_{j-1} as a 3x3 matrix
    Ps: list[Vec]  # j-1P_j [m]
    axes: list[list[float]]  # a_j, 6-vector [7.23b]
    w: list[Vec]  # w_j [rad/s]
    gamma: list[Vec]  # gamma_j, 6-vector [7.68]
    beta: list[Vec]  # beta_j, 6-vector [7.70]
    Jsp: list[Mat]  # jJ_j, 6x6


def _check_direct_model(model: RobotModel, pi: Array) -> Array:
    """``pi`` as a float array, shape (10 nb + 3 nq,), once the model is checked for the direct model.

    Raises:
        InputError: the model has mimic joints, or ``pi`` has the wrong size.
    """
    nq, nb = model.nq, model.nb
    if nb != nq or not np.array_equal(model.mimic_matrix, np.eye(nq)) or np.any(model.mimic_offset):
        raise InputError(
            f"the recursive direct model needs one joint per body and no mimic joints; "
            f"{model.name} has {nq} joints for {nb} bodies"
        )
    pi = np.asarray(pi, dtype=float)
    if pi.shape != (10 * nb + 3 * nq,):
        raise InputError(f"pi: expected shape ({10 * nb + 3 * nq},) (10 nb + 3 nq), got {pi.shape}")
    return pi


def _first_forward(t: Tape, model: RobotModel, par: list[float], q: Vec, qd: Vec) -> _FirstForward:
    """i) first forward recursion, j = 1..n: velocities, ``gamma_j`` and ``beta_j`` ([7.52]-[7.70])."""
    zero: Vec = [0.0, 0.0, 0.0]
    fw = _FirstForward([], [], [], [], [], [], [], [])
    for j in range(model.nb):
        p = int(model.parent[j])
        prismatic = bool(model.is_prismatic[j])
        a = [_snap(x) for x in model.axis[j]]
        rot = _Rotation(t, model, j, None if prismatic else q[j])
        P = _origin_in_parent(t, model, j, q[j])
        w_p = zero if p < 0 else fw.w[p]
        jw_p = rot.apply(w_p)  # [7.51]
        qda = [t.mul(qd[j], x) for x in a]
        rot_lin = rot.apply(_cross(t, w_p, _cross(t, w_p, P)))
        cor = _cross(t, jw_p, qda)
        if prismatic:
            wj = jw_p
            g6 = [t.add(rot_lin[i], t.mul(cor[i], 2.0)) for i in range(3)] + [0.0, 0.0, 0.0]
        else:
            wj = _vadd(t, jw_p, qda)  # [7.52]
            g6 = rot_lin + cor  # [7.68], revolute
        J6 = _spatial_inertia(par[10 * j : 10 * j + 10])
        MS: Vec = list(par[10 * j + 6 : 10 * j + 9])
        Jin = [row[3:] for row in J6[3:]]
        lin = _cross(t, wj, _cross(t, wj, MS))
        ang = _cross(t, wj, _matvec(t, Jin, wj))
        fw.beta.append([t.neg(x) for x in lin + ang])  # [7.70], f_ej = 0
        fw.rots.append(rot)
        fw.Es.append(_rotation_matrix(rot))
        fw.Ps.append(P)
        fw.axes.append([x if prismatic else 0.0 for x in a] + [0.0 if prismatic else x for x in a])
        fw.w.append(wj)
        fw.gamma.append(g6)
        fw.Jsp.append(J6)
    return fw


def _joint_torque(t: Tape, par: list[float], base: int, j: int, Gam: Vec, qd: Vec, friction: bool) -> Value:
    """``tau_j = Gamma_j - Fc_j sign(qd_j) - Fv_j qd_j`` [7.82] (``Gamma_j`` alone without friction)."""
    tau = Gam[j]
    if friction:  # [7.82]
        tau = t.sub(tau, t.mul(qd[j], par[base + 3 * j + 1]))
        if par[base + 3 * j + 2] != 0.0:
            tau = t.sub(tau, t.mul(t.func("sign", qd[j]), par[base + 3 * j + 2]))
    return tau


def _backward(
    t: Tape, model: RobotModel, par: list[float], qd: Vec, Gam: Vec, fw: _FirstForward, friction: bool
) -> tuple[list[Vec], list[Value], list[Value]]:
    """ii) backward recursion, j = n..1 ([7.71]-[7.75]).

    Returns:
        ``(u, invH, e)`` per body: ``u_j = J*_j a_j`` (6-vector), ``H_j^-1`` and
        ``e_j = tau_j + a_j^T beta*_j``, what the second forward recursion needs.
    """
    nb = model.nb
    base = 10 * nb
    Jstar = [[row[:] for row in J6] for J6 in fw.Jsp]
    bstar = [list(b) for b in fw.beta]
    u: list[Vec] = [[]] * nb
    invH: list[Value] = [0.0] * nb
    e: list[Value] = [0.0] * nb
    for j in range(nb - 1, -1, -1):
        a6 = fw.axes[j]
        Js = Jstar[j]
        uj = _matvec(t, Js, a6)  # J*_j a_j
        H = t.add(t.dot(a6, uj), par[base + 3 * j])  # [7.71]
        iH = t.div(1.0, H)
        tau = _joint_torque(t, par, base, j, Gam, qd, friction)
        ej = t.add(tau, t.dot(a6, bstar[j]))
        u[j], invH[j], e[j] = uj, iH, ej
        p = int(model.parent[j])
        if p < 0:
            continue
        wv = [t.mul(x, iH) for x in uj]  # J*_j a_j H_j^-1
        K: Mat = _sym(6)
        for i in range(6):
            for k in range(i, 6):
                K[i][k] = t.sub(Js[i][k], t.mul(wv[i], uj[k]))  # [7.72]
                K[k][i] = K[i][k]
        Kg = _matvec(t, K, fw.gamma[j])
        alpha = [t.sub(t.add(Kg[i], t.mul(wv[i], ej)), bstar[j][i]) for i in range(6)]  # [7.73]
        f_p, m_p = fw.rots[j].wrench_to_parent(alpha[:3], alpha[3:], fw.Ps[j])  # jT_{j-1}^T alpha_j
        bstar[p] = [t.sub(bstar[p][i], x) for i, x in enumerate(f_p + m_p)]  # [7.74]
        TKT = _transform_inertia(t, fw.Es[j], fw.Ps[j], K)
        for i in range(6):
            for k in range(i, 6):
                Jstar[p][i][k] = t.add(Jstar[p][i][k], TKT[i][k])  # [7.75]
                Jstar[p][k][i] = Jstar[p][i][k]
    return u, invH, e


def _second_forward(
    t: Tape, model: RobotModel, fw: _FirstForward, u: list[Vec], invH: list[Value], e: list[Value]
) -> list[Value]:
    """iii) second forward recursion, j = 1..n, from ``dV_0 = [-g; 0]``: the accelerations qdd ([7.76]-[7.79])."""
    zero: Vec = [0.0, 0.0, 0.0]
    g = [_snap(-x) for x in model.gravity]
    dV: list[Vec] = []
    qdd: list[Value] = [0.0] * model.nq
    for j in range(model.nb):
        p = int(model.parent[j])
        if p < 0:
            lin_p, ang_p = g, zero
        else:
            lin_p, ang_p = dV[p][:3], dV[p][3:]
        # jT_{j-1} dV_{j-1} = [E (dV + dw x P); E dw]  [7.76]
        dVpj = fw.rots[j].apply(_vadd(t, lin_p, _cross(t, ang_p, fw.Ps[j]))) + fw.rots[j].apply(ang_p)
        s = _vadd(t, dVpj, fw.gamma[j])
        qdd[j] = t.mul(invH[j], t.sub(e[j], t.dot(u[j], s)))  # [7.77]
        dV.append([t.add(s[i], t.mul(fw.axes[j][i], qdd[j])) for i in range(6)])  # [7.79]
    return qdd


def build_direct_program(model: RobotModel, pi: Array, *, friction: bool = True) -> DirectDynamicsProgram:
    """Record Khalil's recursive direct dynamic model of ``model`` (7.6.2) with parameters ``pi``.

    Args:
        model: a robot whose joints are its bodies' joints (no mimic joints); gravity
            ``model.gravity`` is baked in.
        pi: standard-size parameter vector (10 nb + 3 nq,), usually the base parameters
            embedded by :meth:`BaseParameters.embedded` (their zeros cost nothing).
        friction: subtract the viscous and Coulomb torques from the input torques ([7.82]).

    Returns:
        :class:`DirectDynamicsProgram` with outputs qdd_0..qdd_{nq-1}.

    Raises:
        InputError: the model has mimic joints, or ``pi`` has the wrong size.
    """
    nq = model.nq
    pi = _check_direct_model(model, pi)
    t = Tape()
    par = _snapped_parameters(pi)
    q, qd, Gam = _inputs(t, ("q", "qd", "tau"), nq)
    fw = _first_forward(t, model, par, q, qd)
    u, invH, e = _backward(t, model, par, qd, Gam, fw, friction)
    qdd = _second_forward(t, model, fw, u, invH, e)
    return DirectDynamicsProgram(t, nq, qdd)


def direct_operation_counts(
    model: RobotModel, *, base: bool = True, friction: bool = False
) -> tuple[OpCount, int]:
    """Counts of the customised direct model: (counts, number of inertial parameters used)."""
    program, n = direct_program(model, base=base, friction=friction)
    return program.count(), n


def direct_program(
    model: RobotModel, *, base: bool = True, friction: bool = False
) -> tuple[DirectDynamicsProgram, int]:
    """The recorded direct model with the model's standard or (embedded) base parameters."""
    from .generated import counted_parameters

    pi, n = counted_parameters(model, base=base, friction=friction)
    return build_direct_program(model, pi, friction=friction), n
