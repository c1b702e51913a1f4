"""The recursions, compiled (numba): one implementation of each algorithm, per state.

Every algorithm is a ``_name(m, ..., w, o)`` function on ONE state that reads the flat model
``m`` (layout.py) and keeps its intermediate quantities in a flat workspace ``w`` from offset
``o`` on, written as the book's forward and backward loops over ``parent[i] < i`` with
Featherstone's spatial vectors [angular; linear] in body coordinates (spatial_v2's ID, HandC
and FDab, MuJoCo's mj_rne are the models). A 6-vector of body i is the six floats of ``w``
from a row offset (``v + 6 * i``); transforms are the rotation E = body_R_parent (9 floats,
row-major) and the body origin r in parent coordinates (3 floats). Indexing one flat array
instead of slicing views keeps numba from reference-counting a view per access, which cost
more than the arithmetic. The entry points at the bottom call the algorithms for one state
(least overhead from Python) or for a batch, in parallel over samples (``prange``, one
workspace per chunk).

Kernels check what is cheap to check here rather than in Python: the sizes, the finiteness of
inputs and outputs, singular articulated inertias; they return a status that the Python
wrappers turn into the package's errors (``kernels.check_status``). Never raise in here.

Everything lives in this one file on purpose: numba's on-disk cache is invalidated by changes
to the file of the compiled function only, so a callee in another file could go stale.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .layout import (
    B_AE0,
    B_AXIS,
    B_D,
    B_E0,
    B_H,
    B_IO,
    B_JOINT,
    B_KE0,
    B_MASS,
    B_MULT,
    B_OFFSET,
    B_PARENT,
    B_R0,
    B_TYPE,
    BODY,
    F_BODY,
    F_P,
    F_R,
    FRAME,
    H_COUPLED,
    H_GRAVITY,
    H_MIMIC,
    H_NB,
    H_NQ,
    H_NR,
    HEADER,
    J_FC,
    J_FS,
    J_FV,
    J_IA,
    J_STRIBECK,
    JOINT,
    S_AXIS,
    S_B,
    S_CARRIER,
    S_INERTIA,
    SECONDARY,
    W_FRICTION,
)

OK = 0
BAD_SIZE = 1
BAD_INPUT = 2
BAD_OUTPUT = 3
NOT_POSITIVE_DEFINITE = 4
SINGULAR = 1000  # + the body whose articulated inertia about its joint is not positive

_NO_WRENCH = np.zeros((0, 10))

# contract: fused multiply-add allowed (results move by an ulp); no other fast-math licence, so
# NaN and infinity checks stay exact. error_model numpy: a division by zero gives inf, no raise.
_jit = njit(cache=True, error_model="numpy", fastmath={"contract"})
_inline = njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always")
_parallel = njit(cache=True, error_model="numpy", fastmath={"contract"}, parallel=True)


# -- sizes of the workspaces (floats per state) ------------------------------------------------------
@_inline
def rnea_work(nb):
    return 48 * nb + 24


@_inline
def crba_work(nb, nq):
    return 25 * nb + nq + 16


@_inline
def aba_work(nb, nq):
    return 92 * nb + 128 + nq * nq + nq + rnea_work(nb) + crba_work(nb, nq)


@_inline
def kinematics_work(nb, nq):
    return 42 * nb + 12 + nq


@_jit
def one_state_work(nb, nq):
    """Floats of a model's one-state workspace (KernelModel.work): the friction slot, the
    largest algorithm's scratch (aba's holds rnea's and crba's) and a joint-space matrix."""
    return 1 + aba_work(nb, nq) + nq * nq


# -- the flat model ---------------------------------------------------------------------------------
@_inline
def _joint_offset(m):
    return HEADER + int(m[H_NB]) * BODY


@_inline
def _secondary_offset(m):
    return HEADER + int(m[H_NB]) * BODY + int(m[H_NQ]) * JOINT


@_inline
def _frame_offset(m):
    return _secondary_offset(m) + int(m[H_NR]) * (SECONDARY + int(m[H_NQ]))


@_inline
def _finite(x):
    for k in range(x.shape[0]):
        if not np.isfinite(x[k]):
            return False
    return True


# -- spatial algebra on the flat workspace ------------------------------------------------------------
@_inline
def _transform(m, i, qb, w, e, r):
    """Joint transform of body i at body coordinate qb into w[e:e+9] (E) and w[r:r+3] (r)."""
    o = HEADER + i * BODY
    if m[o + B_TYPE] == 0.0:
        # revolute: E = R(a, q)^T E0 = c E0 - s [a]x E0 + (1 - c) a a^T E0 (Rodrigues)
        c = np.cos(qb)
        s = np.sin(qb)
        c1 = 1.0 - c
        for k in range(9):
            w[e + k] = c * m[o + B_E0 + k] - s * m[o + B_KE0 + k] + c1 * m[o + B_AE0 + k]
        for k in range(3):
            w[r + k] = m[o + B_R0 + k]
    else:
        # prismatic: the origin slides along the axis, d = E0^T a in parent coordinates
        for k in range(9):
            w[e + k] = m[o + B_E0 + k]
        for k in range(3):
            w[r + k] = m[o + B_R0 + k] + qb * m[o + B_D + k]


@_inline
def _x_motion(w, e, r, s, d):
    """w[d] = X w[s]: a motion vector from parent to body coordinates, [E w; E (v - r x w)]."""
    wx, wy, wz = w[s], w[s + 1], w[s + 2]
    ux = w[s + 3] - (w[r + 1] * wz - w[r + 2] * wy)
    uy = w[s + 4] - (w[r + 2] * wx - w[r] * wz)
    uz = w[s + 5] - (w[r] * wy - w[r + 1] * wx)
    w[d] = w[e] * wx + w[e + 1] * wy + w[e + 2] * wz
    w[d + 1] = w[e + 3] * wx + w[e + 4] * wy + w[e + 5] * wz
    w[d + 2] = w[e + 6] * wx + w[e + 7] * wy + w[e + 8] * wz
    w[d + 3] = w[e] * ux + w[e + 1] * uy + w[e + 2] * uz
    w[d + 4] = w[e + 3] * ux + w[e + 4] * uy + w[e + 5] * uz
    w[d + 5] = w[e + 6] * ux + w[e + 7] * uy + w[e + 8] * uz


@_inline
def _xt_force(w, e, r, s, d, accumulate):
    """w[d] (+)= X^T w[s]: a force from body to parent coordinates, [E^T n + r x E^T f; E^T f]."""
    fx = w[e] * w[s + 3] + w[e + 3] * w[s + 4] + w[e + 6] * w[s + 5]
    fy = w[e + 1] * w[s + 3] + w[e + 4] * w[s + 4] + w[e + 7] * w[s + 5]
    fz = w[e + 2] * w[s + 3] + w[e + 5] * w[s + 4] + w[e + 8] * w[s + 5]
    nx = w[e] * w[s] + w[e + 3] * w[s + 1] + w[e + 6] * w[s + 2] + w[r + 1] * fz - w[r + 2] * fy
    ny = w[e + 1] * w[s] + w[e + 4] * w[s + 1] + w[e + 7] * w[s + 2] + w[r + 2] * fx - w[r] * fz
    nz = w[e + 2] * w[s] + w[e + 5] * w[s + 1] + w[e + 8] * w[s + 2] + w[r] * fy - w[r + 1] * fx
    if accumulate:
        w[d] += nx
        w[d + 1] += ny
        w[d + 2] += nz
        w[d + 3] += fx
        w[d + 4] += fy
        w[d + 5] += fz
    else:
        w[d] = nx
        w[d + 1] = ny
        w[d + 2] = nz
        w[d + 3] = fx
        w[d + 4] = fy
        w[d + 5] = fz


@_inline
def _inertia_times(m, ob, w, s, d):
    """w[d] = I w[s] for the rigid inertia at m[ob] (mass, h = m c, Io about the origin),
    Featherstone 2.63: [Io w + h x l; m l - h x w]."""
    ax, ay, az = w[s], w[s + 1], w[s + 2]
    lx, ly, lz = w[s + 3], w[s + 4], w[s + 5]
    mass = m[ob + B_MASS]
    hx, hy, hz = m[ob + B_H], m[ob + B_H + 1], m[ob + B_H + 2]
    o = ob + B_IO
    w[d] = m[o] * ax + m[o + 1] * ay + m[o + 2] * az + hy * lz - hz * ly
    w[d + 1] = m[o + 3] * ax + m[o + 4] * ay + m[o + 5] * az + hz * lx - hx * lz
    w[d + 2] = m[o + 6] * ax + m[o + 7] * ay + m[o + 8] * az + hx * ly - hy * lx
    w[d + 3] = mass * lx - (hy * az - hz * ay)
    w[d + 4] = mass * ly - (hz * ax - hx * az)
    w[d + 5] = mass * lz - (hx * ay - hy * ax)


@_inline
def _cross_force_add(w, v, F, d):
    """w[d] += w[v] x* w[F] = [w x n + vl x f; w x f] (Featherstone 2.32)."""
    wx, wy, wz = w[v], w[v + 1], w[v + 2]
    vx, vy, vz = w[v + 3], w[v + 4], w[v + 5]
    nx, ny, nz = w[F], w[F + 1], w[F + 2]
    fx, fy, fz = w[F + 3], w[F + 4], w[F + 5]
    w[d] += wy * nz - wz * ny + vy * fz - vz * fy
    w[d + 1] += wz * nx - wx * nz + vz * fx - vx * fz
    w[d + 2] += wx * ny - wy * nx + vx * fy - vy * fx
    w[d + 3] += wy * fz - wz * fy
    w[d + 4] += wz * fx - wx * fz
    w[d + 5] += wx * fy - wy * fx


@_inline
def _joint_motion(m, i, w, v, a, c, qd, qdd):
    """w[v] += S qd; w[c] = w[v] x S qd (velocity-product acceleration); w[a] += S qdd + w[c].

    Khalil [7.43]-[7.45]: the joint's own motion added to the transported parent motion.
    """
    o = HEADER + i * BODY
    ex, ey, ez = m[o + B_AXIS], m[o + B_AXIS + 1], m[o + B_AXIS + 2]
    sx, sy, sz = ex * qd, ey * qd, ez * qd
    if m[o + B_TYPE] == 0.0:
        w[v] += sx
        w[v + 1] += sy
        w[v + 2] += sz
        # v x [s; 0] = [w x s; vl x s]
        w[c] = w[v + 1] * sz - w[v + 2] * sy
        w[c + 1] = w[v + 2] * sx - w[v] * sz
        w[c + 2] = w[v] * sy - w[v + 1] * sx
        w[c + 3] = w[v + 4] * sz - w[v + 5] * sy
        w[c + 4] = w[v + 5] * sx - w[v + 3] * sz
        w[c + 5] = w[v + 3] * sy - w[v + 4] * sx
        w[a] += ex * qdd + w[c]
        w[a + 1] += ey * qdd + w[c + 1]
        w[a + 2] += ez * qdd + w[c + 2]
        w[a + 3] += w[c + 3]
        w[a + 4] += w[c + 4]
        w[a + 5] += w[c + 5]
    else:
        w[v + 3] += sx
        w[v + 4] += sy
        w[v + 5] += sz
        # v x [0; s] = [0; w x s]
        w[c] = 0.0
        w[c + 1] = 0.0
        w[c + 2] = 0.0
        w[c + 3] = w[v + 1] * sz - w[v + 2] * sy
        w[c + 4] = w[v + 2] * sx - w[v] * sz
        w[c + 5] = w[v] * sy - w[v + 1] * sx
        w[a + 3] += ex * qdd + w[c + 3]
        w[a + 4] += ey * qdd + w[c + 4]
        w[a + 5] += ez * qdd + w[c + 5]


@_inline
def _s_dot(m, i, w, F):
    """S_i . w[F]: the component of a force along body i's joint."""
    o = HEADER + i * BODY
    col = F if m[o + B_TYPE] == 0.0 else F + 3
    return m[o + B_AXIS] * w[col] + m[o + B_AXIS + 1] * w[col + 1] + m[o + B_AXIS + 2] * w[col + 2]


@_inline
def _friction(m, k, qd, smooth):
    """Khalil [7.26]: Fv qd + sign(qd) (Fc + (Fst - Fc) exp(-|qd| B)); sign -> tanh(qd / v_s) when smooth > 0."""
    o = _joint_offset(m) + k * JOINT
    if smooth > 0.0:
        sg = np.tanh(qd / smooth)
    elif qd > 0.0:
        sg = 1.0
    elif qd < 0.0:
        sg = -1.0
    else:
        sg = 0.0
    tau = m[o + J_FV] * qd + sg * m[o + J_FC]
    if m[o + J_FS] != 0.0:
        tau += sg * m[o + J_FS] * np.exp(-abs(qd) * m[o + J_STRIBECK])
    return tau


@_inline
def _world_poses(m, w, oE, oR, oW, oP):
    """w[oW + 9 i] = base_R_body (row-major), w[oP + 3 i] = body origin in the base frame."""
    nb = int(m[H_NB])
    for i in range(nb):
        par = int(m[HEADER + i * BODY + B_PARENT])
        e, r, R, p = oE + 9 * i, oR + 3 * i, oW + 9 * i, oP + 3 * i
        if par < 0:
            for x in range(3):
                for y in range(3):
                    w[R + 3 * x + y] = w[e + 3 * y + x]
                w[p + x] = w[r + x]
        else:
            # R_i = R_p E_i^T, p_i = p_p + R_p r_i
            Rp, pp = oW + 9 * par, oP + 3 * par
            for x in range(3):
                for y in range(3):
                    w[R + 3 * x + y] = (
                        w[Rp + 3 * x] * w[e + 3 * y] + w[Rp + 3 * x + 1] * w[e + 3 * y + 1] + w[Rp + 3 * x + 2] * w[e + 3 * y + 2]
                    )
                w[p + x] = w[pp + x] + w[Rp + 3 * x] * w[r] + w[Rp + 3 * x + 1] * w[r + 1] + w[Rp + 3 * x + 2] * w[r + 2]


@_inline
def _add_wrenches(w, oW, fx, of):
    """w[of + 6 b] += the wrenches links exert on the environment (Khalil's f_en [7.30]), body axes.

    Each row of fx: body b, point (3, body frame), force (3), moment about the point (3), base axes.
    """
    for k in range(fx.shape[0]):
        b = int(fx[k, 0])
        R = oW + 9 * b
        f = of + 6 * b
        Fx = w[R] * fx[k, 4] + w[R + 3] * fx[k, 5] + w[R + 6] * fx[k, 6]
        Fy = w[R + 1] * fx[k, 4] + w[R + 4] * fx[k, 5] + w[R + 7] * fx[k, 6]
        Fz = w[R + 2] * fx[k, 4] + w[R + 5] * fx[k, 5] + w[R + 8] * fx[k, 6]
        px, py, pz = fx[k, 1], fx[k, 2], fx[k, 3]
        # moment about the body origin: R^T M + p x (R^T F)
        w[f] += w[R] * fx[k, 7] + w[R + 3] * fx[k, 8] + w[R + 6] * fx[k, 9] + py * Fz - pz * Fy
        w[f + 1] += w[R + 1] * fx[k, 7] + w[R + 4] * fx[k, 8] + w[R + 7] * fx[k, 9] + pz * Fx - px * Fz
        w[f + 2] += w[R + 2] * fx[k, 7] + w[R + 5] * fx[k, 8] + w[R + 8] * fx[k, 9] + px * Fy - py * Fx
        w[f + 3] += Fx
        w[f + 4] += Fy
        w[f + 5] += Fz


@_inline
def _forward(m, q, qd, qdd, g0, g1, g2, w, oE, oR, ov, oa, oc):
    """Forward recursion: joint transforms, body velocities and accelerations (Khalil [7.43]-[7.45]).

    Gravity enters as the base acceleration a_0 = [0; -g] (Featherstone's trick, Khalil's
    dV_0 = -g); row nb of v and a holds the base. Mimic joints: q_body = mult q[k] + offset.
    """
    nb = int(m[H_NB])
    vb, ab = ov + 6 * nb, oa + 6 * nb
    for k in range(6):
        w[vb + k] = 0.0
        w[ab + k] = 0.0
    w[ab + 3] = -g0
    w[ab + 4] = -g1
    w[ab + 5] = -g2
    for i in range(nb):
        o = HEADER + i * BODY
        j = int(m[o + B_JOINT])
        mult = m[o + B_MULT]
        e, r = oE + 9 * i, oR + 3 * i
        _transform(m, i, mult * q[j] + m[o + B_OFFSET], w, e, r)
        par = int(m[o + B_PARENT])
        if par < 0:
            par = nb
        v, a = ov + 6 * i, oa + 6 * i
        _x_motion(w, e, r, ov + 6 * par, v)  # v_i = X_i v_p + S_i qd_i                       [7.43]
        _x_motion(w, e, r, oa + 6 * par, a)  # a_i = X_i a_p + S_i qdd_i + v_i x S_i qd_i      [7.44]-[7.45]
        _joint_motion(m, i, w, v, a, oc + 6 * i, mult * qd[j], mult * qdd[j])


# -- the algorithms, one state each ----------------------------------------------------------------
@_inline
def _rnea(m, q, qd, qdd, g0, g1, g2, fx, friction, smooth, out, w, o):
    """Inverse dynamics (Khalil 7.5, Featherstone's ID): tau = A qdd + C qd + Q + Gamma_f + J^T f_en."""
    nb, nq, nr = int(m[H_NB]), int(m[H_NQ]), int(m[H_NR])
    oE = o
    oR = oE + 9 * nb
    ov = oR + 3 * nb
    oa = ov + 6 * (nb + 1)
    of = oa + 6 * (nb + 1)
    oc = of + 6 * (nb + 1)
    oW = oc + 6 * nb
    oP = oW + 9 * nb
    _forward(m, q, qd, qdd, g0, g1, g2, w, oE, oR, ov, oa, oc)
    # Newton-Euler equations of each body: f_i = I_i a_i + v_i x* I_i v_i (Khalil [7.46]-[7.47])
    for i in range(nb):
        ob = HEADER + i * BODY
        _inertia_times(m, ob, w, ov + 6 * i, oc + 6 * i)  # c_i = I v (c is free again)
        _inertia_times(m, ob, w, oa + 6 * i, of + 6 * i)
        _cross_force_add(w, ov + 6 * i, oc + 6 * i, of + 6 * i)
    if fx.shape[0] > 0:
        _world_poses(m, w, oE, oR, oW, oP)
        _add_wrenches(w, oW, fx, of)
    for k in range(nq):
        out[k] = 0.0
    if nr > 0:
        # Secondary links (Chen & Wang eqs. 14-21): the spin beta_s = b_s . theta of a gear or
        # rotor about its carrier adds the couple n_s = I_s (e_s betadd_s + w_c x e_s betad_s) to
        # the carrier, and I_s (e_s . alpha_c + betadd_s) along its own coordinate, which reaches
        # the joints as b_s^T times it (virtual work).
        os_ = _secondary_offset(m)
        for s in range(nr):
            ob = os_ + s * (SECONDARY + nq)
            cb = int(m[ob + S_CARRIER])
            inertia = m[ob + S_INERTIA]
            bd = 0.0
            bdd = 0.0
            for k in range(nq):
                bd += m[ob + S_B + k] * qd[k]
                bdd += m[ob + S_B + k] * qdd[k]
            hx, hy, hz = inertia * m[ob + S_AXIS], inertia * m[ob + S_AXIS + 1], inertia * m[ob + S_AXIS + 2]
            ts = inertia * bdd
            if cb >= 0:
                v, a, f = ov + 6 * cb, oa + 6 * cb, of + 6 * cb
                wx, wy, wz = w[v], w[v + 1], w[v + 2]
                w[f] += hx * bdd + (wy * hz - wz * hy) * bd
                w[f + 1] += hy * bdd + (wz * hx - wx * hz) * bd
                w[f + 2] += hz * bdd + (wx * hy - wy * hx) * bd
                ts += hx * w[a] + hy * w[a + 1] + hz * w[a + 2]
            for k in range(nq):
                out[k] += m[ob + S_B + k] * ts
    # Backward recursion: tau_i = S_i . f_i, f_p += X_i^T f_i (Khalil [7.48]-[7.49])
    for i in range(nb - 1, -1, -1):
        ob = HEADER + i * BODY
        out[int(m[ob + B_JOINT])] += m[ob + B_MULT] * _s_dot(m, i, w, of + 6 * i)
        par = int(m[ob + B_PARENT])
        if par >= 0:
            _xt_force(w, oE + 9 * i, oR + 3 * i, of + 6 * i, of + 6 * par, True)
    # Rotor inertia Ia qdd (Khalil [7.29]) and friction (Khalil [7.26])
    oj = _joint_offset(m)
    for k in range(nq):
        out[k] += m[oj + k * JOINT + J_IA] * qdd[k]
    if friction:
        for k in range(nq):
            out[k] += _friction(m, k, qd[k], smooth)
    if not _finite(out):
        return BAD_OUTPUT
    return OK


@_inline
def _composite_column(m, i, w, ic, F):
    """w[F] = Ic_i S_i for the composite inertia at w[ic] (mass, h, Io): the force that
    accelerates body i's subtree at unit joint rate."""
    ob = HEADER + i * BODY
    ex, ey, ez = m[ob + B_AXIS], m[ob + B_AXIS + 1], m[ob + B_AXIS + 2]
    mass = w[ic]
    hx, hy, hz = w[ic + 1], w[ic + 2], w[ic + 3]
    if m[ob + B_TYPE] == 0.0:
        # I [e; 0] = [Io e; e x h]
        for x in range(3):
            w[F + x] = w[ic + 4 + 3 * x] * ex + w[ic + 5 + 3 * x] * ey + w[ic + 6 + 3 * x] * ez
        w[F + 3] = ey * hz - ez * hy
        w[F + 4] = ez * hx - ex * hz
        w[F + 5] = ex * hy - ey * hx
    else:
        # I [0; e] = [h x e; m e]
        w[F] = hy * ez - hz * ey
        w[F + 1] = hz * ex - hx * ez
        w[F + 2] = hx * ey - hy * ex
        w[F + 3] = mass * ex
        w[F + 4] = mass * ey
        w[F + 5] = mass * ez


@_inline
def _crba(m, q, H, w, o):
    """Joint-space inertia matrix A(q): composite rigid bodies (Featherstone 6.2, Khalil [7.64]).

    Rotor inertias on the diagonal (Khalil [7.29]); a geared robot's secondary links add
    M_s = B^T diag(I) B + U B + (U B)^T (Chen & Wang eq. 18), U from their spin momenta.
    """
    nb, nq, nr = int(m[H_NB]), int(m[H_NQ]), int(m[H_NR])
    oE = o
    oR = oE + 9 * nb
    oI = oR + 3 * nb  # composite inertias: mass, h (3), Io (9) per body
    F = oI + 13 * nb  # two force rows
    oU = F + 12
    for i in range(nb):
        ob = HEADER + i * BODY
        _transform(m, i, m[ob + B_MULT] * q[int(m[ob + B_JOINT])] + m[ob + B_OFFSET], w, oE + 9 * i, oR + 3 * i)
        ic = oI + 13 * i
        w[ic] = m[ob + B_MASS]
        for k in range(3):
            w[ic + 1 + k] = m[ob + B_H + k]
        for k in range(9):
            w[ic + 4 + k] = m[ob + B_IO + k]
    # Composite inertias from the leaves down: Ic_p += X_i^T Ic_i X_i (Featherstone 6.7), as a
    # rigid-body inertia moved by R = E^T and r: h_p += R h + m r,
    # Io_p += R Io R^T + m (|r|^2 1 - r r^T) + 2 (r . Rh) 1 - Rh r^T - r Rh^T.
    for i in range(nb - 1, -1, -1):
        par = int(m[HEADER + i * BODY + B_PARENT])
        if par < 0:
            continue
        e, r, ic, ip = oE + 9 * i, oR + 3 * i, oI + 13 * i, oI + 13 * par
        mc = w[ic]
        h0 = w[e] * w[ic + 1] + w[e + 3] * w[ic + 2] + w[e + 6] * w[ic + 3]
        h1 = w[e + 1] * w[ic + 1] + w[e + 4] * w[ic + 2] + w[e + 7] * w[ic + 3]
        h2 = w[e + 2] * w[ic + 1] + w[e + 5] * w[ic + 2] + w[e + 8] * w[ic + 3]
        r0, r1, r2 = w[r], w[r + 1], w[r + 2]
        rr = r0 * r0 + r1 * r1 + r2 * r2
        rh = r0 * h0 + r1 * h1 + r2 * h2
        w[ip] += mc
        w[ip + 1] += h0 + mc * r0
        w[ip + 2] += h1 + mc * r1
        w[ip + 3] += h2 + mc * r2
        IE = F  # the two force rows are free here: Io E, 9 floats
        for x in range(3):
            for y in range(3):
                w[IE + 3 * x + y] = w[ic + 4 + 3 * x] * w[e + y] + w[ic + 5 + 3 * x] * w[e + 3 + y] + w[ic + 6 + 3 * x] * w[e + 6 + y]
        for x in range(3):
            rx = r0 if x == 0 else (r1 if x == 1 else r2)
            hx = h0 if x == 0 else (h1 if x == 1 else h2)
            for y in range(3):
                ry = r0 if y == 0 else (r1 if y == 1 else r2)
                hy = h0 if y == 0 else (h1 if y == 1 else h2)
                # (E^T Io E)_xy - m r_x r_y - Rh_x r_y - r_x Rh_y (+ m |r|^2 + 2 r.Rh on the diagonal)
                val = w[e + x] * w[IE + y] + w[e + 3 + x] * w[IE + 3 + y] + w[e + 6 + x] * w[IE + 6 + y]
                val += -mc * rx * ry - hx * ry - rx * hy
                if x == y:
                    val += mc * rr + 2.0 * rh
                w[ip + 4 + 3 * x + y] += val
    for a in range(nq):
        for b in range(nq):
            H[a, b] = 0.0
    # H_ij = S_i . X^T ... Ic_i S_i, walking from each body to the base (Featherstone 6.2)
    for i in range(nb):
        ob = HEADER + i * BODY
        _composite_column(m, i, w, oI + 13 * i, F)
        ji = int(m[ob + B_JOINT])
        mi = m[ob + B_MULT]
        H[ji, ji] += mi * mi * _s_dot(m, i, w, F)
        j = i
        while True:
            par = int(m[HEADER + j * BODY + B_PARENT])
            if par < 0:
                break
            _xt_force(w, oE + 9 * j, oR + 3 * j, F, F + 6, False)
            for k in range(6):
                w[F + k] = w[F + 6 + k]
            j = par
            oj = HEADER + j * BODY
            jj = int(m[oj + B_JOINT])
            val = mi * m[oj + B_MULT] * _s_dot(m, j, w, F)
            H[ji, jj] += val
            H[jj, ji] += val
    if nr > 0:
        os_ = _secondary_offset(m)
        for s in range(nr):
            ob = os_ + s * (SECONDARY + nq)
            inertia = m[ob + S_INERTIA]
            # U_k = S_k . X^T...[I_s e_s; 0]: the spin momentum seen by every joint below the
            # carrier (eq. 18b/18c), with mimic joints folded in (G^T U)
            for k in range(nq):
                w[oU + k] = 0.0
            for k in range(3):
                w[F + k] = inertia * m[ob + S_AXIS + k]
                w[F + 3 + k] = 0.0
            j = int(m[ob + S_CARRIER])
            while j >= 0:
                oj = HEADER + j * BODY
                w[oU + int(m[oj + B_JOINT])] += m[oj + B_MULT] * _s_dot(m, j, w, F)
                _xt_force(w, oE + 9 * j, oR + 3 * j, F, F + 6, False)
                for k in range(6):
                    w[F + k] = w[F + 6 + k]
                j = int(m[oj + B_PARENT])
            for a in range(nq):
                ba = m[ob + S_B + a]
                for b in range(nq):
                    bb = m[ob + S_B + b]
                    H[a, b] += inertia * ba * bb + w[oU + a] * bb + ba * w[oU + b]  # eq. (18d) + (18b) + (18c)
    oj = _joint_offset(m)
    for k in range(nq):
        H[k, k] += m[oj + k * JOINT + J_IA]
    for a in range(nq):
        for b in range(nq):
            if not np.isfinite(H[a, b]):
                return BAD_OUTPUT
    return OK


@_inline
def _congruence_add(w, e, r, S, T, d):
    """w[d] += X^T S X for a symmetric 6x6 S at w[S] (row-major), X = [[E, 0], [-E [r]x, E]].

    By blocks (Featherstone 2.66, an articulated inertia carried to the parent): rotate
    S = [[A, B], [B^T, C]] into A' = E^T A E, B' = E^T B E, C' = E^T C E, then shift by
    R = [r]x: [[A' - B'R - (B'R)^T - R C' R, B' + R C'], [(B' + R C')^T, C']].
    T is 36 floats of scratch.
    """
    for blk in range(3):
        row = 0 if blk < 2 else 3
        col = 0 if blk == 0 else 3
        for a in range(3):
            for b in range(3):
                acc = 0.0
                for z in range(3):
                    acc += w[S + 6 * (row + a) + col + z] * w[e + 3 * z + b]
                w[T + 27 + 3 * a + b] = acc  # P E
        for a in range(3):
            for b in range(3):
                w[T + 9 * blk + 3 * a + b] = (
                    w[e + a] * w[T + 27 + b] + w[e + 3 + a] * w[T + 30 + b] + w[e + 6 + a] * w[T + 33 + b]
                )
    r0, r1, r2 = w[r], w[r + 1], w[r + 2]
    Rm = (0.0, -r2, r1, r2, 0.0, -r0, -r1, r0, 0.0)
    A, B, C = T, T + 9, T + 18
    for a in range(3):
        for b in range(3):
            br = 0.0  # (B' R)_ab
            rc = 0.0  # (R C')_ab
            for z in range(3):
                br += w[B + 3 * a + z] * Rm[3 * z + b]
                rc += Rm[3 * a + z] * w[C + 3 * z + b]
            w[T + 27 + 3 * a + b] = rc  # keep R C' for R C' R
            w[d + 6 * a + 3 + b] += w[B + 3 * a + b] + rc
            w[d + 6 * (3 + b) + a] += w[B + 3 * a + b] + rc
            w[d + 6 * (3 + a) + 3 + b] += w[C + 3 * a + b]
            w[d + 6 * a + b] += w[A + 3 * a + b] - br
            w[d + 6 * b + a] -= br
    for a in range(3):
        for b in range(3):
            rcr = 0.0
            for z in range(3):
                rcr += w[T + 27 + 3 * a + z] * Rm[3 * z + b]
            w[d + 6 * a + b] -= rcr


@_inline
def _aba(m, q, qd, tau, g0, g1, g2, fx, friction, smooth, out, w, o):
    """Direct dynamics: the articulated body algorithm (Featherstone 7.3, Khalil 7.6.2).

    For a tree without mimic joints or coupled gear trains; the others go to ``_aba_joint_space``.
    """
    nb = int(m[H_NB])
    oE = o
    oR = oE + 9 * nb
    ov = oR + 3 * nb
    oa = ov + 6 * (nb + 1)
    oc = oa + 6 * (nb + 1)
    opA = oc + 6 * nb
    oU = opA + 6 * nb
    oIA = oU + 6 * nb
    oD = oIA + 36 * nb
    ou = oD + nb
    X = ou + nb  # two 6x6 scratch matrices: the congruence's blocks, and Ia
    Ia = X + 36
    oW = Ia + 72
    oP = oW + 9 * nb
    # Forward recursion: velocities and velocity-product accelerations c_i = v_i x S_i qd_i
    # (a is scratch until the last pass)
    _forward(m, q, qd, qd, 0.0, 0.0, 0.0, w, oE, oR, ov, oa, oc)
    oj = _joint_offset(m)
    for i in range(nb):
        ob = HEADER + i * BODY
        mass = m[ob + B_MASS]
        h0, h1, h2 = m[ob + B_H], m[ob + B_H + 1], m[ob + B_H + 2]
        IA = oIA + 36 * i
        # IA_i = I_i = [[Io, [h]x], [[h]x^T, m 1]] (Featherstone 2.62, [angular; linear] order)
        for x in range(3):
            for y in range(3):
                w[IA + 6 * x + y] = m[ob + B_IO + 3 * x + y]
                w[IA + 6 * (3 + x) + 3 + y] = mass if x == y else 0.0
        w[IA + 3], w[IA + 4], w[IA + 5] = 0.0, -h2, h1
        w[IA + 9], w[IA + 10], w[IA + 11] = h2, 0.0, -h0
        w[IA + 15], w[IA + 16], w[IA + 17] = -h1, h0, 0.0
        for x in range(3):
            for y in range(3):
                w[IA + 6 * (3 + y) + x] = w[IA + 6 * x + 3 + y]
        # pA_i = v_i x* I_i v_i
        pA = opA + 6 * i
        _inertia_times(m, ob, w, ov + 6 * i, oa + 6 * i)
        for k in range(6):
            w[pA + k] = 0.0
        _cross_force_add(w, ov + 6 * i, oa + 6 * i, pA)
    if fx.shape[0] > 0:
        _world_poses(m, w, oE, oR, oW, oP)
        _add_wrenches(w, oW, fx, opA)
    # Backward recursion: articulated inertias and bias forces (Khalil [7.67]-[7.68])
    for i in range(nb - 1, -1, -1):
        ob = HEADER + i * BODY
        k = int(m[ob + B_JOINT])
        col = 0 if m[ob + B_TYPE] == 0.0 else 3
        ex, ey, ez = m[ob + B_AXIS], m[ob + B_AXIS + 1], m[ob + B_AXIS + 2]
        IA, U, pA = oIA + 36 * i, oU + 6 * i, opA + 6 * i
        for x in range(6):
            w[U + x] = w[IA + 6 * x + col] * ex + w[IA + 6 * x + col + 1] * ey + w[IA + 6 * x + col + 2] * ez
        D = w[U + col] * ex + w[U + col + 1] * ey + w[U + col + 2] * ez + m[oj + k * JOINT + J_IA]
        w[oD + i] = D
        if not D > 0.0:
            return SINGULAR + i
        tk = tau[k]
        if friction:
            tk -= _friction(m, k, qd[k], smooth)
        u = tk - _s_dot(m, i, w, pA)
        w[ou + i] = u
        par = int(m[ob + B_PARENT])
        if par < 0:
            continue
        # Ia = IA - U U^T / D; pa = pA + Ia c + U u / D (pa kept in the row of a)
        inv = 1.0 / D
        for x in range(6):
            ux = w[U + x] * inv
            for y in range(6):
                w[Ia + 6 * x + y] = w[IA + 6 * x + y] - ux * w[U + y]
        pa, c = oa + 6 * i, oc + 6 * i
        for x in range(6):
            acc = w[pA + x] + w[U + x] * u * inv
            for y in range(6):
                acc += w[Ia + 6 * x + y] * w[c + y]
            w[pa + x] = acc
        e, r = oE + 9 * i, oR + 3 * i
        _xt_force(w, e, r, pa, opA + 6 * par, True)
        _congruence_add(w, e, r, Ia, X, oIA + 36 * par)
    # Forward recursion: accelerations, gravity as the base acceleration a_0 = [0; -g]
    ab = oa + 6 * nb
    for k in range(6):
        w[ab + k] = 0.0
    w[ab + 3] = -g0
    w[ab + 4] = -g1
    w[ab + 5] = -g2
    for i in range(nb):
        ob = HEADER + i * BODY
        par = int(m[ob + B_PARENT])
        if par < 0:
            par = nb
        a, c, U = oa + 6 * i, oc + 6 * i, oU + 6 * i
        _x_motion(w, oE + 9 * i, oR + 3 * i, oa + 6 * par, a)
        s = 0.0
        for x in range(6):
            w[a + x] += w[c + x]
            s += w[U + x] * w[a + x]
        qdd = (w[ou + i] - s) / w[oD + i]
        out[int(m[ob + B_JOINT])] = qdd
        col = a if m[ob + B_TYPE] == 0.0 else a + 3
        for x in range(3):
            w[col + x] += m[ob + B_AXIS + x] * qdd
    if not _finite(out):
        return BAD_OUTPUT
    return OK


@_inline
def _aba_joint_space(m, q, qd, tau, g0, g1, g2, fx, friction, smooth, out, H, w, o):
    """Direct dynamics from the inverse model (Khalil 7.6.1): A qdd = tau - Gamma_f - h(q, qd).

    Mimic joints and gear trains couple coordinates (a secondary link's b_s may span joints of
    different branches), which the articulated-body recursion cannot absorb.
    """
    nb, nq = int(m[H_NB]), int(m[H_NQ])
    zero = w[o : o + nq]
    for k in range(nq):
        zero[k] = 0.0
    st = rnea_state(m, q, qd, zero, g0, g1, g2, fx, False, smooth, out, w, o + nq)
    if st != OK:
        return st
    st = crba_state(m, q, H, w, o + nq + rnea_work(nb))
    if st != OK:
        return st
    for k in range(nq):
        out[k] = tau[k] - out[k]
        if friction:
            out[k] -= _friction(m, k, qd[k], smooth)
    # Cholesky factor H = L L^T in place, then two triangular solves
    for j in range(nq):
        d = H[j, j]
        for k in range(j):
            d -= H[j, k] * H[j, k]
        if not d > 0.0:
            return NOT_POSITIVE_DEFINITE
        d = np.sqrt(d)
        H[j, j] = d
        for i in range(j + 1, nq):
            s = H[i, j]
            for k in range(j):
                s -= H[i, k] * H[j, k]
            H[i, j] = s / d
    for i in range(nq):
        s = out[i]
        for k in range(i):
            s -= H[i, k] * out[k]
        out[i] = s / H[i, i]
    for i in range(nq - 1, -1, -1):
        s = out[i]
        for k in range(i + 1, nq):
            s -= H[k, i] * out[k]
        out[i] = s / H[i, i]
    if not _finite(out):
        return BAD_OUTPUT
    return OK


@_inline
def _body_poses(m, q, w):
    """Body poses into w: E at 0, r at 9 nb, base_R_body at 12 nb, origins at 21 nb."""
    nb = int(m[H_NB])
    for i in range(nb):
        ob = HEADER + i * BODY
        _transform(m, i, m[ob + B_MULT] * q[int(m[ob + B_JOINT])] + m[ob + B_OFFSET], w, 9 * i, 9 * nb + 3 * i)
    _world_poses(m, w, 0, 9 * nb, 12 * nb, 21 * nb)


@_inline
def _frame_pose(m, w, oW, oP, k, T):
    """T (4, 4) = T_base_frame of frame k from the body poses at w[oW], w[oP]."""
    of = _frame_offset(m) + k * FRAME
    b = int(m[of + F_BODY])
    for x in range(4):
        for y in range(4):
            T[x, y] = 0.0
    T[3, 3] = 1.0
    if b < 0:
        for x in range(3):
            for y in range(3):
                T[x, y] = m[of + F_R + 3 * x + y]
            T[x, 3] = m[of + F_P + x]
        return
    R, p = oW + 9 * b, oP + 3 * b
    for x in range(3):
        for y in range(3):
            T[x, y] = w[R + 3 * x] * m[of + F_R + y] + w[R + 3 * x + 1] * m[of + F_R + 3 + y] + w[R + 3 * x + 2] * m[of + F_R + 6 + y]
        T[x, 3] = w[p + x] + w[R + 3 * x] * m[of + F_P] + w[R + 3 * x + 1] * m[of + F_P + 1] + w[R + 3 * x + 2] * m[of + F_P + 2]


@_inline
def _jacobian(m, w, oW, oP, k, T, J):
    """Geometric Jacobian of frame k, rows [linear; angular] in base axes (Khalil's J_n in frame 0)."""
    nq = int(m[H_NQ])
    for x in range(6):
        for y in range(nq):
            J[x, y] = 0.0
    _frame_pose(m, w, oW, oP, k, T)
    j = int(m[_frame_offset(m) + k * FRAME + F_BODY])
    while j >= 0:
        ob = HEADER + j * BODY
        col = int(m[ob + B_JOINT])
        mult = m[ob + B_MULT]
        R, p = oW + 9 * j, oP + 3 * j
        e0, e1, e2 = m[ob + B_AXIS], m[ob + B_AXIS + 1], m[ob + B_AXIS + 2]
        zx = w[R] * e0 + w[R + 1] * e1 + w[R + 2] * e2
        zy = w[R + 3] * e0 + w[R + 4] * e1 + w[R + 5] * e2
        zz = w[R + 6] * e0 + w[R + 7] * e1 + w[R + 8] * e2
        if m[ob + B_TYPE] == 0.0:
            dx, dy, dz = T[0, 3] - w[p], T[1, 3] - w[p + 1], T[2, 3] - w[p + 2]
            J[0, col] += mult * (zy * dz - zz * dy)
            J[1, col] += mult * (zz * dx - zx * dz)
            J[2, col] += mult * (zx * dy - zy * dx)
            J[3, col] += mult * zx
            J[4, col] += mult * zy
            J[5, col] += mult * zz
        else:
            J[0, col] += mult * zx
            J[1, col] += mult * zy
            J[2, col] += mult * zz
        j = int(m[ob + B_PARENT])


@_inline
def _point_motion(m, q, qd, k, vel, acc, w):
    """Twist [v; w] of frame k's origin and its acceleration at qdd = 0 without gravity (Jdot qd)."""
    nb, nq = int(m[H_NB]), int(m[H_NQ])
    oE = 0
    oR = 9 * nb
    ov = 12 * nb
    oa = ov + 6 * (nb + 1)
    oc = oa + 6 * (nb + 1)
    oW = oc + 6 * nb
    oP = oW + 9 * nb
    oz = oP + 3 * nb
    zero = w[oz : oz + nq]
    for x in range(nq):
        zero[x] = 0.0
    _forward(m, q, qd, zero, 0.0, 0.0, 0.0, w, oE, oR, ov, oa, oc)
    _world_poses(m, w, oE, oR, oW, oP)
    of = _frame_offset(m) + k * FRAME
    b = int(m[of + F_BODY])
    for x in range(6):
        vel[x] = 0.0
        acc[x] = 0.0
    if b < 0:
        return
    px, py, pz = m[of + F_P], m[of + F_P + 1], m[of + F_P + 2]
    v, a, R = ov + 6 * b, oa + 6 * b, oW + 9 * b
    wx, wy, wz = w[v], w[v + 1], w[v + 2]
    lx, ly, lz = w[a], w[a + 1], w[a + 2]
    # velocity of the body-fixed point: v_o + w x p (spatial shift)
    vpx = w[v + 3] + wy * pz - wz * py
    vpy = w[v + 4] + wz * px - wx * pz
    vpz = w[v + 5] + wx * py - wy * px
    # classical acceleration of the point: a_o + alpha x p + w x v_p
    apx = w[a + 3] + ly * pz - lz * py + wy * vpz - wz * vpy
    apy = w[a + 4] + lz * px - lx * pz + wz * vpx - wx * vpz
    apz = w[a + 5] + lx * py - ly * px + wx * vpy - wy * vpx
    for x in range(3):
        r0, r1, r2 = w[R + 3 * x], w[R + 3 * x + 1], w[R + 3 * x + 2]
        vel[x] = r0 * vpx + r1 * vpy + r2 * vpz
        vel[3 + x] = r0 * wx + r1 * wy + r2 * wz
        acc[x] = r0 * apx + r1 * apy + r2 * apz
        acc[3 + x] = r0 * lx + r1 * ly + r2 * lz


@_inline
def _energy(m, q, qd, g0, g1, g2, out, w):
    """out = [kinetic, potential] (Khalil [7.10], [7.19]): 1/2 v.Iv + 1/2 Ia qd^2 + the gears'
    spin (Chen & Wang eq. 14); U = -sum m_i g . p_Gi (zero at the base origin)."""
    nb, nq, nr = int(m[H_NB]), int(m[H_NQ]), int(m[H_NR])
    oE = 0
    oR = 9 * nb
    ov = 12 * nb
    oa = ov + 6 * (nb + 1)
    oc = oa + 6 * (nb + 1)
    oW = oc + 6 * nb
    oP = oW + 9 * nb
    _forward(m, q, qd, qd, 0.0, 0.0, 0.0, w, oE, oR, ov, oa, oc)
    _world_poses(m, w, oE, oR, oW, oP)
    kin = 0.0
    pot = 0.0
    for i in range(nb):
        ob = HEADER + i * BODY
        v, c = ov + 6 * i, oc + 6 * i
        _inertia_times(m, ob, w, v, c)
        for x in range(6):
            kin += 0.5 * w[v + x] * w[c + x]
        # potential of the body: -g . (R h + m p), the world first moment of its mass
        R, p = oW + 9 * i, oP + 3 * i
        mass = m[ob + B_MASS]
        h0, h1, h2 = m[ob + B_H], m[ob + B_H + 1], m[ob + B_H + 2]
        for x in range(3):
            gx = g0 if x == 0 else (g1 if x == 1 else g2)
            pot -= gx * (w[R + 3 * x] * h0 + w[R + 3 * x + 1] * h1 + w[R + 3 * x + 2] * h2 + mass * w[p + x])
    oj = _joint_offset(m)
    for k in range(nq):
        kin += 0.5 * m[oj + k * JOINT + J_IA] * qd[k] * qd[k]
    os_ = _secondary_offset(m)
    for s in range(nr):
        ob = os_ + s * (SECONDARY + nq)
        bd = 0.0
        for k in range(nq):
            bd += m[ob + S_B + k] * qd[k]
        cb = int(m[ob + S_CARRIER])
        proj = 0.0
        if cb >= 0:
            v = ov + 6 * cb
            proj = m[ob + S_AXIS] * w[v] + m[ob + S_AXIS + 1] * w[v + 1] + m[ob + S_AXIS + 2] * w[v + 2]
        kin += m[ob + S_INERTIA] * (0.5 * bd * bd + bd * proj)  # K_s, eq. (14), less the virtual link
    out[0] = kin
    out[1] = pot
    if not (np.isfinite(kin) and np.isfinite(pot)):
        return BAD_OUTPUT
    return OK


# -- one state as a compiled function of its own (what the batches and the coupled cases call) --------
# The batches call these rather than inlining the algorithms into their parallel loops: that keeps
# their compilation short (numba's parallel passes are slow on large loop bodies).
@_jit
def rnea_state(m, q, qd, qdd, g0, g1, g2, fx, friction, smooth, out, w, o):
    return _rnea(m, q, qd, qdd, g0, g1, g2, fx, friction, smooth, out, w, o)


@_jit
def crba_state(m, q, H, w, o):
    return _crba(m, q, H, w, o)


@_jit
def aba_tree_state(m, q, qd, tau, g0, g1, g2, fx, friction, smooth, out, w):
    return _aba(m, q, qd, tau, g0, g1, g2, fx, friction, smooth, out, w, 0)


@_jit
def aba_coupled_state(m, q, qd, tau, g0, g1, g2, fx, friction, smooth, out, H, w):
    return _aba_joint_space(m, q, qd, tau, g0, g1, g2, fx, friction, smooth, out, H, w, 0)


@_jit
def direct_state(m, q, qd, tau, g0, g1, g2, fx, friction, smooth, out, H, w):
    """Direct dynamics of one state: articulated bodies for a tree, the joint-space solve for
    mimic joints or a coupled gear train."""
    if m[H_MIMIC] != 0.0 or m[H_COUPLED] != 0.0:
        return aba_coupled_state(m, q, qd, tau, g0, g1, g2, fx, friction, smooth, out, H, w)
    return aba_tree_state(m, q, qd, tau, g0, g1, g2, fx, friction, smooth, out, w)


# -- entry points: one state --------------------------------------------------------------------------
@_inline
def _check_state(m, a, b, c, out):
    nq = int(m[H_NQ])
    if a.shape[0] != nq or b.shape[0] != nq or c.shape[0] != nq or out.shape[0] != nq:
        return BAD_SIZE
    if not (_finite(a) and _finite(b) and _finite(c)):
        return BAD_INPUT
    return OK


# w is the model's workspace (KernelModel.work or work_friction): w[W_FRICTION] says whether
# friction is on, the rest is scratch; nothing is allocated per call but the caller's result.
@_jit
def rnea_one(m, q, qd, qdd, out, w):
    """tau of one state with the model's gravity, no external wrench. Returns a status."""
    st = _check_state(m, q, qd, qdd, out)
    if st != OK:
        return st
    g = H_GRAVITY
    friction = w[W_FRICTION] != 0.0
    return _rnea(m, q, qd, qdd, m[g], m[g + 1], m[g + 2], _NO_WRENCH, friction, 0.0, out, w, 1)


@_jit
def aba_one(m, q, qd, tau, out, w):
    """qdd of one state with the model's gravity, no external wrench. Returns a status."""
    st = _check_state(m, q, qd, tau, out)
    if st != OK:
        return st
    nb, nq = int(m[H_NB]), int(m[H_NQ])
    g = H_GRAVITY
    friction = w[W_FRICTION] != 0.0
    if m[H_MIMIC] != 0.0 or m[H_COUPLED] != 0.0:
        H = w[1 : 1 + nq * nq].reshape((nq, nq))
        return aba_coupled_state(m, q, qd, tau, m[g], m[g + 1], m[g + 2], _NO_WRENCH, friction, 0.0, out, H,
                                 w[1 + nq * nq :])
    return _aba(m, q, qd, tau, m[g], m[g + 1], m[g + 2], _NO_WRENCH, friction, 0.0, out, w, 1)


@_jit
def crba_one(m, q, H, w):
    """A(q) of one state into H (nq, nq). Returns a status."""
    nq = int(m[H_NQ])
    if q.shape[0] != nq or H.shape[0] != nq or H.shape[1] != nq:
        return BAD_SIZE
    if not _finite(q):
        return BAD_INPUT
    return _crba(m, q, H, w, 1)


# -- entry points: batches ------------------------------------------------------------------------------
# X_batch(..., nc) runs N states cut into nc chunks (a few per thread; kernels.chunks), one
# workspace per chunk: _X_parallel over the thread pool, or _X_rows in the calling thread when
# nc is 1 (a small batch: waking the pool costs more than its work). Two compiled functions
# rather than one with both branches, which compiled three times as long.
@_jit
def _rnea_rows(m, Q, QD, QDD, g, FX, friction, smooth, OUT, status, lo, hi):
    w = np.empty(rnea_work(int(m[H_NB])))
    for n in range(lo, hi):
        status[n] = rnea_state(m, Q[n], QD[n], QDD[n], g[0], g[1], g[2], FX[n], friction, smooth, OUT[n], w, 0)


@_jit
def _aba_rows(m, Q, QD, TAU, g, FX, friction, smooth, OUT, status, lo, hi):
    nb, nq = int(m[H_NB]), int(m[H_NQ])
    w = np.empty(aba_work(nb, nq))
    H = np.empty((nq, nq))
    for n in range(lo, hi):
        status[n] = direct_state(m, Q[n], QD[n], TAU[n], g[0], g[1], g[2], FX[n], friction, smooth, OUT[n], H, w)


@_jit
def _crba_rows(m, Q, H, status, lo, hi):
    w = np.empty(crba_work(int(m[H_NB]), int(m[H_NQ])))
    for n in range(lo, hi):
        status[n] = crba_state(m, Q[n], H[n], w, 0)


@_jit
def _frame_poses_rows(m, Q, frames, T, lo, hi):
    nb, nq = int(m[H_NB]), int(m[H_NQ])
    w = np.empty(kinematics_work(nb, nq))
    for n in range(lo, hi):
        _body_poses(m, Q[n], w)
        for f in range(frames.shape[0]):
            _frame_pose(m, w, 12 * nb, 21 * nb, frames[f], T[n, f])


@_jit
def _jacobian_rows(m, Q, k, J, lo, hi):
    nb, nq = int(m[H_NB]), int(m[H_NQ])
    w = np.empty(kinematics_work(nb, nq))
    T = np.empty((4, 4))
    for n in range(lo, hi):
        _body_poses(m, Q[n], w)
        _jacobian(m, w, 12 * nb, 21 * nb, k, T, J[n])


@_jit
def _point_motion_rows(m, Q, QD, k, VEL, ACC, lo, hi):
    w = np.empty(kinematics_work(int(m[H_NB]), int(m[H_NQ])) + 12)
    for n in range(lo, hi):
        _point_motion(m, Q[n], QD[n], k, VEL[n], ACC[n], w)


@_jit
def _energy_rows(m, Q, QD, g, OUT, status, lo, hi):
    w = np.empty(kinematics_work(int(m[H_NB]), int(m[H_NQ])) + 12)
    for n in range(lo, hi):
        status[n] = _energy(m, Q[n], QD[n], g[0], g[1], g[2], OUT[n], w)


@_jit
def _motion_rows(m, Q, QD, QDD, g, E, r, V, A, lo, hi):
    nb, nq = int(m[H_NB]), int(m[H_NQ])
    w = np.empty(kinematics_work(nb, nq) + 12)
    oR, ov = 9 * nb, 12 * nb
    oa = ov + 6 * (nb + 1)
    oc = oa + 6 * (nb + 1)
    for n in range(lo, hi):
        _forward(m, Q[n], QD[n], QDD[n], g[0], g[1], g[2], w, 0, oR, ov, oa, oc)
        for i in range(nb):
            for x in range(9):
                E[n, i, x] = w[9 * i + x]
            for x in range(3):
                r[n, i, x] = w[oR + 3 * i + x]
        for i in range(nb + 1):
            for x in range(6):
                V[n, i, x] = w[ov + 6 * i + x]
                A[n, i, x] = w[oa + 6 * i + x]


@_parallel
def _rnea_parallel(m, Q, QD, QDD, g, FX, friction, smooth, OUT, status, nc):
    """rnea of N states: Q, QD, QDD, OUT (N, nq); FX (N, k, 10) wrenches; status (N,)."""
    N = Q.shape[0]
    for ch in prange(nc):
        _rnea_rows(m, Q, QD, QDD, g, FX, friction, smooth, OUT, status, ch * N // nc, (ch + 1) * N // nc)


@_parallel
def _aba_parallel(m, Q, QD, TAU, g, FX, friction, smooth, OUT, status, nc):
    """Direct dynamics of N states (articulated bodies, or the joint-space solve when coupled)."""
    N = Q.shape[0]
    for ch in prange(nc):
        _aba_rows(m, Q, QD, TAU, g, FX, friction, smooth, OUT, status, ch * N // nc, (ch + 1) * N // nc)


@_parallel
def _crba_parallel(m, Q, H, status, nc):
    """A(q) of N states into H (N, nq, nq)."""
    N = Q.shape[0]
    for ch in prange(nc):
        _crba_rows(m, Q, H, status, ch * N // nc, (ch + 1) * N // nc)


@_parallel
def _frame_poses_parallel(m, Q, frames, T, nc):
    """T (N, len(frames), 4, 4): poses of the listed frames."""
    N = Q.shape[0]
    for ch in prange(nc):
        _frame_poses_rows(m, Q, frames, T, ch * N // nc, (ch + 1) * N // nc)


@_parallel
def _jacobian_parallel(m, Q, k, J, nc):
    """J (N, 6, nq): geometric Jacobians of frame k."""
    N = Q.shape[0]
    for ch in prange(nc):
        _jacobian_rows(m, Q, k, J, ch * N // nc, (ch + 1) * N // nc)


@_parallel
def _point_motion_parallel(m, Q, QD, k, VEL, ACC, nc):
    """Twist (N, 6) of frame k and Jdot qd (N, 6)."""
    N = Q.shape[0]
    for ch in prange(nc):
        _point_motion_rows(m, Q, QD, k, VEL, ACC, ch * N // nc, (ch + 1) * N // nc)


@_parallel
def _energy_parallel(m, Q, QD, g, OUT, status, nc):
    """OUT (N, 2): kinetic and potential energy."""
    N = Q.shape[0]
    for ch in prange(nc):
        _energy_rows(m, Q, QD, g, OUT, status, ch * N // nc, (ch + 1) * N // nc)


@_parallel
def _motion_parallel(m, Q, QD, QDD, g, E, r, V, A, nc):
    """The forward recursion's E (N, nb, 9), r (N, nb, 3), v and a (N, nb + 1, 6) of N states."""
    N = Q.shape[0]
    for ch in prange(nc):
        _motion_rows(m, Q, QD, QDD, g, E, r, V, A, ch * N // nc, (ch + 1) * N // nc)


def _batch(rows, parallel):
    """The batch entry point over a serial and a parallel kernel of the same arguments."""

    def run(*args):
        if args[-1] == 1:
            rows(*args[:-1], 0, args[1].shape[0])
        else:
            parallel(*args)

    run.__doc__ = parallel.__doc__
    return run


rnea_batch = _batch(_rnea_rows, _rnea_parallel)
aba_batch = _batch(_aba_rows, _aba_parallel)
crba_batch = _batch(_crba_rows, _crba_parallel)
frame_poses_batch = _batch(_frame_poses_rows, _frame_poses_parallel)
jacobian_batch = _batch(_jacobian_rows, _jacobian_parallel)
point_motion_batch = _batch(_point_motion_rows, _point_motion_parallel)
energy_batch = _batch(_energy_rows, _energy_parallel)
motion_batch = _batch(_motion_rows, _motion_parallel)


@_jit
def friction_batch(m, QD, smooth, OUT):
    """Joint friction (Khalil [7.26]) of N velocity vectors, (N, nq)."""
    nq = int(m[H_NQ])
    for n in range(QD.shape[0]):
        for k in range(nq):
            OUT[n, k] = _friction(m, k, QD[n, k], smooth)
