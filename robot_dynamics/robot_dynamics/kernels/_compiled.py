"""The recursions, compiled (numba): one implementation of each algorithm, per state.

Every algorithm is a ``_name(m, ..., ws)`` function on ONE state that reads the flat model
``m`` (layout.py) and a scratch workspace ``ws``, written as the book's forward and backward
loops over ``parent[i] < i`` with Featherstone's spatial vectors [angular; linear] in body
coordinates (spatial_v2's ID/HandC/FDab, MuJoCo's mj_rne are the models). The entry points
at the bottom call them for one state (least overhead from Python) or for a batch, in
parallel over samples (``prange``, one workspace per chunk).

Kernels check what is cheap to check here rather than in Python: the sizes, the finiteness of
inputs and outputs, singular articulated inertias; they return a status that the Python
wrappers turn into the package's errors (``status_error``). Never raise in here.

Everything lives in this one file on purpose: numba's on-disk cache is invalidated by changes
to the file of the compiled function only, so a callee in another file could go stale.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .layout import (
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
    B_AE0,
    BODY,
    F_BODY,
    F_P,
    F_R,
    FRAME,
    H_GRAVITY,
    H_NB,
    H_NF,
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
)

OK = 0
BAD_SIZE = 1
BAD_INPUT = 2
BAD_OUTPUT = 3
NOT_POSITIVE_DEFINITE = 4
SINGULAR = 1000  # + the body whose articulated inertia about its joint is not positive

_NO_WRENCH = np.zeros((0, 10))


# -- the flat model ---------------------------------------------------------------------------
@njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _joint_offset(m):
    return HEADER + int(m[H_NB]) * BODY


@njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _secondary_offset(m):
    return HEADER + int(m[H_NB]) * BODY + int(m[H_NQ]) * JOINT


@njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _frame_offset(m):
    nq = int(m[H_NQ])
    return _secondary_offset(m) + int(m[H_NR]) * (SECONDARY + nq)


@njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _finite(x):
    for k in range(x.shape[0]):
        if not np.isfinite(x[k]):
            return False
    return True


# -- spatial algebra on rows of (n, 6) arrays ------------------------------------------------------
@njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _transform(m, i, qb, E, r):
    """Joint transform of body i at body coordinate qb: E = body_R_parent (row-major), r = origin."""
    o = HEADER + i * BODY
    if m[o + B_TYPE] == 0.0:
        # revolute: E = R(a, q)^T E0 = c E0 - s [a]x E0 + (1 - c) a a^T E0 (Rodrigues)
        c = np.cos(qb)
        s = np.sin(qb)
        c1 = 1.0 - c
        for k in range(9):
            E[i, k] = c * m[o + B_E0 + k] - s * m[o + B_KE0 + k] + c1 * m[o + B_AE0 + k]
        for k in range(3):
            r[i, k] = m[o + B_R0 + k]
    else:
        # prismatic: the origin slides along the axis, d = E0^T a in parent coordinates
        for k in range(9):
            E[i, k] = m[o + B_E0 + k]
        for k in range(3):
            r[i, k] = m[o + B_R0 + k] + qb * m[o + B_D + k]


@njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _x_motion(E, r, i, src, p, dst):
    """dst[i] = X_i src[p]: a motion vector from parent to body coordinates (Featherstone 2.24)."""
    wx, wy, wz = src[p, 0], src[p, 1], src[p, 2]
    ux = src[p, 3] - (r[i, 1] * wz - r[i, 2] * wy)
    uy = src[p, 4] - (r[i, 2] * wx - r[i, 0] * wz)
    uz = src[p, 5] - (r[i, 0] * wy - r[i, 1] * wx)
    dst[i, 0] = E[i, 0] * wx + E[i, 1] * wy + E[i, 2] * wz
    dst[i, 1] = E[i, 3] * wx + E[i, 4] * wy + E[i, 5] * wz
    dst[i, 2] = E[i, 6] * wx + E[i, 7] * wy + E[i, 8] * wz
    dst[i, 3] = E[i, 0] * ux + E[i, 1] * uy + E[i, 2] * uz
    dst[i, 4] = E[i, 3] * ux + E[i, 4] * uy + E[i, 5] * uz
    dst[i, 5] = E[i, 6] * ux + E[i, 7] * uy + E[i, 8] * uz


@njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _xt_force(E, r, i, src, s, dst, d, accumulate):
    """dst[d] (+)= X_i^T src[s]: a force from body i's coordinates to its parent's."""
    fx = E[i, 0] * src[s, 3] + E[i, 3] * src[s, 4] + E[i, 6] * src[s, 5]
    fy = E[i, 1] * src[s, 3] + E[i, 4] * src[s, 4] + E[i, 7] * src[s, 5]
    fz = E[i, 2] * src[s, 3] + E[i, 5] * src[s, 4] + E[i, 8] * src[s, 5]
    nx = E[i, 0] * src[s, 0] + E[i, 3] * src[s, 1] + E[i, 6] * src[s, 2] + r[i, 1] * fz - r[i, 2] * fy
    ny = E[i, 1] * src[s, 0] + E[i, 4] * src[s, 1] + E[i, 7] * src[s, 2] + r[i, 2] * fx - r[i, 0] * fz
    nz = E[i, 2] * src[s, 0] + E[i, 5] * src[s, 1] + E[i, 8] * src[s, 2] + r[i, 0] * fy - r[i, 1] * fx
    if accumulate:
        dst[d, 0] += nx
        dst[d, 1] += ny
        dst[d, 2] += nz
        dst[d, 3] += fx
        dst[d, 4] += fy
        dst[d, 5] += fz
    else:
        dst[d, 0] = nx
        dst[d, 1] = ny
        dst[d, 2] = nz
        dst[d, 3] = fx
        dst[d, 4] = fy
        dst[d, 5] = fz


@njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _inertia_times(m, ob, src, s, dst, d):
    """dst[d] = I src[s] for the rigid inertia at m[ob] (mass, h = m c, Io about the origin),
    Featherstone 2.63: [Io w + h x l; m l - h x w]."""
    ax, ay, az = src[s, 0], src[s, 1], src[s, 2]
    lx, ly, lz = src[s, 3], src[s, 4], src[s, 5]
    mass = m[ob + B_MASS]
    hx, hy, hz = m[ob + B_H], m[ob + B_H + 1], m[ob + B_H + 2]
    o = ob + B_IO
    dst[d, 0] = m[o] * ax + m[o + 1] * ay + m[o + 2] * az + hy * lz - hz * ly
    dst[d, 1] = m[o + 3] * ax + m[o + 4] * ay + m[o + 5] * az + hz * lx - hx * lz
    dst[d, 2] = m[o + 6] * ax + m[o + 7] * ay + m[o + 8] * az + hx * ly - hy * lx
    dst[d, 3] = mass * lx - (hy * az - hz * ay)
    dst[d, 4] = mass * ly - (hz * ax - hx * az)
    dst[d, 5] = mass * lz - (hx * ay - hy * ax)


@njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _cross_force_add(v, i, F, k, dst, d):
    """dst[d] += v[i] x* F[k] = [w x n + vl x f; w x f] (Featherstone 2.32)."""
    wx, wy, wz = v[i, 0], v[i, 1], v[i, 2]
    vx, vy, vz = v[i, 3], v[i, 4], v[i, 5]
    nx, ny, nz = F[k, 0], F[k, 1], F[k, 2]
    fx, fy, fz = F[k, 3], F[k, 4], F[k, 5]
    dst[d, 0] += wy * nz - wz * ny + vy * fz - vz * fy
    dst[d, 1] += wz * nx - wx * nz + vz * fx - vx * fz
    dst[d, 2] += wx * ny - wy * nx + vx * fy - vy * fx
    dst[d, 3] += wy * fz - wz * fy
    dst[d, 4] += wz * fx - wx * fz
    dst[d, 5] += wx * fy - wy * fx


@njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _joint_motion(m, i, v, qd, qdd, a, c):
    """v[i] += S qd; a[i] += S qdd; c[i] = v[i] x S qd (the velocity-product acceleration).

    Khalil [7.43]-[7.45]: the joint's own motion added to the transported parent motion.
    """
    o = HEADER + i * BODY
    ex, ey, ez = m[o + B_AXIS], m[o + B_AXIS + 1], m[o + B_AXIS + 2]
    sx, sy, sz = ex * qd, ey * qd, ez * qd
    if m[o + B_TYPE] == 0.0:
        v[i, 0] += sx
        v[i, 1] += sy
        v[i, 2] += sz
        a[i, 0] += ex * qdd
        a[i, 1] += ey * qdd
        a[i, 2] += ez * qdd
        # v x [s; 0] = [w x s; vl x s]
        c[i, 0] = v[i, 1] * sz - v[i, 2] * sy
        c[i, 1] = v[i, 2] * sx - v[i, 0] * sz
        c[i, 2] = v[i, 0] * sy - v[i, 1] * sx
        c[i, 3] = v[i, 4] * sz - v[i, 5] * sy
        c[i, 4] = v[i, 5] * sx - v[i, 3] * sz
        c[i, 5] = v[i, 3] * sy - v[i, 4] * sx
    else:
        v[i, 3] += sx
        v[i, 4] += sy
        v[i, 5] += sz
        a[i, 3] += ex * qdd
        a[i, 4] += ey * qdd
        a[i, 5] += ez * qdd
        # v x [0; s] = [0; w x s]
        c[i, 0] = 0.0
        c[i, 1] = 0.0
        c[i, 2] = 0.0
        c[i, 3] = v[i, 1] * sz - v[i, 2] * sy
        c[i, 4] = v[i, 2] * sx - v[i, 0] * sz
        c[i, 5] = v[i, 0] * sy - v[i, 1] * sx


@njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _s_dot(m, i, F, k):
    """S_i . F[k]: the component of a force along body i's joint."""
    o = HEADER + i * BODY
    col = 0 if m[o + B_TYPE] == 0.0 else 3
    return m[o + B_AXIS] * F[k, col] + m[o + B_AXIS + 1] * F[k, col + 1] + m[o + B_AXIS + 2] * F[k, col + 2]


@njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always")
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


@njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _world_poses(m, E, r, R, p):
    """R[i] = base_R_body (row-major), p[i] = body origin in the base frame (forward kinematics)."""
    nb = int(m[H_NB])
    for i in range(nb):
        par = int(m[HEADER + i * BODY + B_PARENT])
        if par < 0:
            for a in range(3):
                for b in range(3):
                    R[i, 3 * a + b] = E[i, 3 * b + a]
                p[i, a] = r[i, a]
        else:
            # R_i = R_p E_i^T, p_i = p_p + R_p r_i
            for a in range(3):
                for b in range(3):
                    R[i, 3 * a + b] = (
                        R[par, 3 * a] * E[i, 3 * b] + R[par, 3 * a + 1] * E[i, 3 * b + 1] + R[par, 3 * a + 2] * E[i, 3 * b + 2]
                    )
                p[i, a] = p[par, a] + R[par, 3 * a] * r[i, 0] + R[par, 3 * a + 1] * r[i, 1] + R[par, 3 * a + 2] * r[i, 2]


@njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _add_wrenches(R, fx, f):
    """f[body] += the wrenches links exert on the environment (Khalil's f_en [7.30]), body axes.

    Each row of fx: body, point (3, body frame), force (3), moment about the point (3), base axes.
    """
    for w in range(fx.shape[0]):
        b = int(fx[w, 0])
        Fb = np.empty(3)
        for a in range(3):
            Fb[a] = R[b, a] * fx[w, 4] + R[b, 3 + a] * fx[w, 5] + R[b, 6 + a] * fx[w, 6]
        for a in range(3):
            f[b, 3 + a] += Fb[a]
        px, py, pz = fx[w, 1], fx[w, 2], fx[w, 3]
        # moment about the body origin: R^T M + p x (R^T F)
        f[b, 0] += R[b, 0] * fx[w, 7] + R[b, 3] * fx[w, 8] + R[b, 6] * fx[w, 9] + py * Fb[2] - pz * Fb[1]
        f[b, 1] += R[b, 1] * fx[w, 7] + R[b, 4] * fx[w, 8] + R[b, 7] * fx[w, 9] + pz * Fb[0] - px * Fb[2]
        f[b, 2] += R[b, 2] * fx[w, 7] + R[b, 5] * fx[w, 8] + R[b, 8] * fx[w, 9] + px * Fb[1] - py * Fb[0]


# -- the algorithms, one state each ------------------------------------------------------------------
@njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _forward(m, q, qd, qdd, g, E, r, v, a, c):
    """Forward recursion: joint transforms, body velocities and accelerations (Khalil [7.43]-[7.45]).

    Gravity enters as the base acceleration a_0 = [0; -g] (Featherstone's trick, Khalil's
    dV_0 = -g). Rows nb of v and a hold the base. Mimic joints: q_body = mult q[k] + offset.
    """
    nb = int(m[H_NB])
    for k in range(6):
        v[nb, k] = 0.0
        a[nb, k] = 0.0
    a[nb, 3] = -g[0]
    a[nb, 4] = -g[1]
    a[nb, 5] = -g[2]
    for i in range(nb):
        o = HEADER + i * BODY
        j = int(m[o + B_JOINT])
        mult = m[o + B_MULT]
        _transform(m, i, mult * q[j] + m[o + B_OFFSET], E, r)
        par = int(m[o + B_PARENT])
        if par < 0:
            par = nb
        _x_motion(E, r, i, v, par, v)  # v_i = X_i v_p + S_i qd_i       [7.43]
        _x_motion(E, r, i, a, par, a)  # a_i = X_i a_p + S_i qdd_i + v_i x S_i qd_i   [7.44]-[7.45]
        _joint_motion(m, i, v, mult * qd[j], mult * qdd[j], a, c)
        for k in range(6):
            a[i, k] += c[i, k]


@njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _rnea(m, q, qd, qdd, g, fx, friction, smooth, out, ws):
    """Inverse dynamics (Khalil 7.5, Featherstone's ID): tau = A qdd + C qd + Q + Gamma_f + J^T f_en."""
    nb, nq, nr = int(m[H_NB]), int(m[H_NQ]), int(m[H_NR])
    E = ws[0 : 9 * nb].reshape((nb, 9))
    o = 9 * nb
    r = ws[o : o + 3 * nb].reshape((nb, 3))
    o += 3 * nb
    v = ws[o : o + 6 * (nb + 1)].reshape((nb + 1, 6))
    o += 6 * (nb + 1)
    a = ws[o : o + 6 * (nb + 1)].reshape((nb + 1, 6))
    o += 6 * (nb + 1)
    f = ws[o : o + 6 * (nb + 1)].reshape((nb + 1, 6))
    o += 6 * (nb + 1)
    c = ws[o : o + 6 * nb].reshape((nb, 6))
    o += 6 * nb
    _forward(m, q, qd, qdd, g, E, r, v, a, c)
    # Newton-Euler equations of each body: f_i = I_i a_i + v_i x* I_i v_i (Khalil [7.46]-[7.47])
    for i in range(nb):
        ob = HEADER + i * BODY
        _inertia_times(m, ob, v, i, c, i)  # c[i] = I v (c is free again)
        _inertia_times(m, ob, a, i, f, i)
        _cross_force_add(v, i, c, i, f, i)
    if fx.shape[0] > 0:
        R = ws[o : o + 9 * nb].reshape((nb, 9))
        o += 9 * nb
        P = ws[o : o + 3 * nb].reshape((nb, 3))
        o += 3 * nb
        _world_poses(m, E, r, R, P)
        _add_wrenches(R, fx, f)
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
                wx, wy, wz = v[cb, 0], v[cb, 1], v[cb, 2]
                f[cb, 0] += hx * bdd + (wy * hz - wz * hy) * bd
                f[cb, 1] += hy * bdd + (wz * hx - wx * hz) * bd
                f[cb, 2] += hz * bdd + (wx * hy - wy * hx) * bd
                ts += hx * a[cb, 0] + hy * a[cb, 1] + hz * a[cb, 2]
            for k in range(nq):
                out[k] += m[ob + S_B + k] * ts
    # Backward recursion: tau_i = S_i . f_i, f_p += X_i^T f_i (Khalil [7.48]-[7.49])
    for i in range(nb - 1, -1, -1):
        ob = HEADER + i * BODY
        out[int(m[ob + B_JOINT])] += m[ob + B_MULT] * _s_dot(m, i, f, i)
        par = int(m[ob + B_PARENT])
        if par >= 0:
            _xt_force(E, r, i, f, i, f, par, True)
    # Rotor inertia Ia qdd (Khalil [7.29]) and friction (Khalil [7.26])
    oj = _joint_offset(m)
    for k in range(nq):
        out[k] += m[oj + k * JOINT + J_IA] * qdd[k]
        if friction:
            out[k] += _friction(m, k, qd[k], smooth)
    if not _finite(out):
        return BAD_OUTPUT
    return OK


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _crba(m, q, H, ws):
    """Joint-space inertia matrix A(q): composite rigid bodies (Featherstone 6.2, Khalil [7.64]).

    Rotor inertias on the diagonal (Khalil [7.29]); a geared robot's secondary links add
    M_s = B^T diag(I) B + U B + (U B)^T (Chen & Wang eq. 18), U from their spin momenta.
    """
    nb, nq, nr = int(m[H_NB]), int(m[H_NQ]), int(m[H_NR])
    E = ws[0 : 9 * nb].reshape((nb, 9))
    o = 9 * nb
    r = ws[o : o + 3 * nb].reshape((nb, 3))
    o += 3 * nb
    Ic = ws[o : o + 13 * nb].reshape((nb, 13))  # composite inertia: mass, h (3), Io (9)
    o += 13 * nb
    F = ws[o : o + 12].reshape((2, 6))
    o += 12
    for i in range(nb):
        ob = HEADER + i * BODY
        mult = m[ob + B_MULT]
        _transform(m, i, mult * q[int(m[ob + B_JOINT])] + m[ob + B_OFFSET], E, r)
        Ic[i, 0] = m[ob + B_MASS]
        for k in range(3):
            Ic[i, 1 + k] = m[ob + B_H + k]
        for k in range(9):
            Ic[i, 4 + k] = m[ob + B_IO + k]
    # Composite inertias from the leaves down: Ic_p += X_i^T Ic_i X_i (Featherstone 6.7), as a
    # rigid-body inertia moved by R = E^T and r: h_p += R h + m r,
    # Io_p += R Io R^T + m (|r|^2 1 - r r^T) + 2 (r . Rh) 1 - Rh r^T - r Rh^T.
    for i in range(nb - 1, -1, -1):
        par = int(m[HEADER + i * BODY + B_PARENT])
        if par < 0:
            continue
        mc = Ic[i, 0]
        hr = np.empty(3)
        for a in range(3):
            hr[a] = E[i, a] * Ic[i, 1] + E[i, 3 + a] * Ic[i, 2] + E[i, 6 + a] * Ic[i, 3]
        rr = r[i, 0] * r[i, 0] + r[i, 1] * r[i, 1] + r[i, 2] * r[i, 2]
        rh = r[i, 0] * hr[0] + r[i, 1] * hr[1] + r[i, 2] * hr[2]
        Ic[par, 0] += mc
        for a in range(3):
            Ic[par, 1 + a] += hr[a] + mc * r[i, a]
        # IE = Io E, then E^T IE
        IE = np.empty(9)
        for a in range(3):
            for b in range(3):
                IE[3 * a + b] = Ic[i, 4 + 3 * a] * E[i, b] + Ic[i, 5 + 3 * a] * E[i, 3 + b] + Ic[i, 6 + 3 * a] * E[i, 6 + b]
        for a in range(3):
            for b in range(3):
                val = E[i, a] * IE[b] + E[i, 3 + a] * IE[3 + b] + E[i, 6 + a] * IE[6 + b]
                val += -mc * r[i, a] * r[i, b] - hr[a] * r[i, b] - r[i, a] * hr[b]
                if a == b:
                    val += mc * rr + 2.0 * rh
                Ic[par, 4 + 3 * a + b] += val
    for a in range(nq):
        for b in range(nq):
            H[a, b] = 0.0
    # H_ij = S_i^T X^T ... Ic_j S_j, walking from each body to the base (Featherstone 6.2)
    for i in range(nb):
        ob = HEADER + i * BODY
        _composite_column(m, i, Ic, F)
        ji = int(m[ob + B_JOINT])
        mi = m[ob + B_MULT]
        H[ji, ji] += mi * mi * _s_dot(m, i, F, 0)
        j = i
        while True:
            par = int(m[HEADER + j * BODY + B_PARENT])
            if par < 0:
                break
            _xt_force(E, r, j, F, 0, F, 1, False)
            for k in range(6):
                F[0, k] = F[1, k]
            j = par
            ob = HEADER + j * BODY
            jj = int(m[ob + B_JOINT])
            val = mi * m[ob + B_MULT] * _s_dot(m, j, F, 0)
            H[ji, jj] += val
            H[jj, ji] += val
    if nr > 0:
        os_ = _secondary_offset(m)
        U = ws[o : o + nq].reshape((nq,))
        for s in range(nr):
            ob = os_ + s * (SECONDARY + nq)
            inertia = m[ob + S_INERTIA]
            # U_k = S_k . X^T...[I_s e_s; 0]: the spin momentum seen by every joint below the
            # carrier (eq. 18b/18c); with mimic joints folded in (G^T U)
            for k in range(nq):
                U[k] = 0.0
            for k in range(6):
                F[0, k] = 0.0
            for k in range(3):
                F[0, k] = inertia * m[ob + S_AXIS + k]
            j = int(m[ob + S_CARRIER])
            while j >= 0:
                oj = HEADER + j * BODY
                U[int(m[oj + B_JOINT])] += m[oj + B_MULT] * _s_dot(m, j, F, 0)
                _xt_force(E, r, j, F, 0, F, 1, False)
                for k in range(6):
                    F[0, k] = F[1, k]
                j = int(m[oj + B_PARENT])
            for a in range(nq):
                ba = m[ob + S_B + a]
                for b in range(nq):
                    bb = m[ob + S_B + b]
                    H[a, b] += inertia * ba * bb + U[a] * bb + ba * U[b]  # eq. (18d) + (18b) + (18c)
    oj = _joint_offset(m)
    for k in range(nq):
        H[k, k] += m[oj + k * JOINT + J_IA]
    for a in range(nq):
        for b in range(nq):
            if not np.isfinite(H[a, b]):
                return BAD_OUTPUT
    return OK


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _composite_column(m, i, Ic, F):
    """F[0] = Ic_i S_i: the force that accelerates body i's subtree at unit joint rate."""
    ob = HEADER + i * BODY
    ex, ey, ez = m[ob + B_AXIS], m[ob + B_AXIS + 1], m[ob + B_AXIS + 2]
    mass = Ic[i, 0]
    hx, hy, hz = Ic[i, 1], Ic[i, 2], Ic[i, 3]
    if m[ob + B_TYPE] == 0.0:
        # I [e; 0] = [Io e; e x h]
        for a in range(3):
            F[0, a] = Ic[i, 4 + 3 * a] * ex + Ic[i, 5 + 3 * a] * ey + Ic[i, 6 + 3 * a] * ez
        F[0, 3] = ey * hz - ez * hy
        F[0, 4] = ez * hx - ex * hz
        F[0, 5] = ex * hy - ey * hx
    else:
        # I [0; e] = [h x e; m e]
        F[0, 0] = hy * ez - hz * ey
        F[0, 1] = hz * ex - hx * ez
        F[0, 2] = hx * ey - hy * ex
        F[0, 3] = mass * ex
        F[0, 4] = mass * ey
        F[0, 5] = mass * ez


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _aba(m, q, qd, tau, g, fx, friction, smooth, out, ws):
    """Direct dynamics: the articulated body algorithm (Featherstone 7.3, Khalil 7.6.2).

    For a tree without mimic joints or coupled gear trains; others go to ``_aba_joint_space``.
    """
    nb, nq = int(m[H_NB]), int(m[H_NQ])
    E = ws[0 : 9 * nb].reshape((nb, 9))
    o = 9 * nb
    r = ws[o : o + 3 * nb].reshape((nb, 3))
    o += 3 * nb
    v = ws[o : o + 6 * (nb + 1)].reshape((nb + 1, 6))
    o += 6 * (nb + 1)
    a = ws[o : o + 6 * (nb + 1)].reshape((nb + 1, 6))
    o += 6 * (nb + 1)
    c = ws[o : o + 6 * nb].reshape((nb, 6))
    o += 6 * nb
    pA = ws[o : o + 6 * nb].reshape((nb, 6))
    o += 6 * nb
    U = ws[o : o + 6 * nb].reshape((nb, 6))
    o += 6 * nb
    IA = ws[o : o + 36 * nb].reshape((nb, 36))
    o += 36 * nb
    D = ws[o : o + nb]
    o += nb
    u = ws[o : o + nb]
    o += nb
    T = ws[o : o + 36 * 3].reshape((3, 36))  # X, Ia, Ia X
    o += 108
    # Forward recursion: velocities and velocity-product accelerations c_i = v_i x S_i qd_i
    # (a holds X a_p + c with a_0 = 0 here; the accelerations are recomputed below)
    _forward(m, q, qd, qd, np.zeros(3), E, r, v, a, c)
    oj = _joint_offset(m)
    for i in range(nb):
        ob = HEADER + i * BODY
        mass = m[ob + B_MASS]
        h0, h1, h2 = m[ob + B_H], m[ob + B_H + 1], m[ob + B_H + 2]
        # IA_i = I_i (Featherstone 2.62 in [angular; linear] order), pA_i = v_i x* I_i v_i
        for x in range(3):
            for y in range(3):
                IA[i, 6 * x + y] = m[ob + B_IO + 3 * x + y]
                IA[i, 6 * (3 + x) + 3 + y] = mass if x == y else 0.0
        # [[Io, [h]x], [[h]x^T, m 1]]
        IA[i, 0 * 6 + 4], IA[i, 0 * 6 + 5] = -h2, h1
        IA[i, 1 * 6 + 3], IA[i, 1 * 6 + 5] = h2, -h0
        IA[i, 2 * 6 + 3], IA[i, 2 * 6 + 4] = -h1, h0
        IA[i, 0 * 6 + 3], IA[i, 1 * 6 + 4], IA[i, 2 * 6 + 5] = 0.0, 0.0, 0.0
        for x in range(3):
            for y in range(3):
                IA[i, 6 * (3 + y) + x] = IA[i, 6 * x + 3 + y]
        _inertia_times(m, ob, v, i, pA, i)
        for k in range(6):
            a[i, k] = pA[i, k]
        for k in range(6):
            pA[i, k] = 0.0
        _cross_force_add(v, i, a, i, pA, i)
    if fx.shape[0] > 0:
        R = ws[o : o + 9 * nb].reshape((nb, 9))
        o += 9 * nb
        P = ws[o : o + 3 * nb].reshape((nb, 3))
        o += 3 * nb
        _world_poses(m, E, r, R, P)
        _add_wrenches(R, fx, pA)
    # Backward recursion: articulated inertias and bias forces (Khalil [7.67]-[7.68])
    for i in range(nb - 1, -1, -1):
        ob = HEADER + i * BODY
        k = int(m[ob + B_JOINT])
        col = 0 if m[ob + B_TYPE] == 0.0 else 3
        ex, ey, ez = m[ob + B_AXIS], m[ob + B_AXIS + 1], m[ob + B_AXIS + 2]
        for x in range(6):
            U[i, x] = IA[i, 6 * x + col] * ex + IA[i, 6 * x + col + 1] * ey + IA[i, 6 * x + col + 2] * ez
        D[i] = U[i, col] * ex + U[i, col + 1] * ey + U[i, col + 2] * ez + m[oj + k * JOINT + J_IA]
        if not D[i] > 0.0:
            return SINGULAR + i
        tk = tau[k]
        if friction:
            tk -= _friction(m, k, qd[k], smooth)
        u[i] = tk - _s_dot(m, i, pA, i)
        par = int(m[ob + B_PARENT])
        if par < 0:
            continue
        # Ia = IA - U U^T / D; pa = pA + Ia c + U u / D
        for x in range(6):
            for y in range(6):
                T[1, 6 * x + y] = IA[i, 6 * x + y] - U[i, x] * U[i, y] / D[i]
        for x in range(6):
            acc = pA[i, x] + U[i, x] * u[i] / D[i]
            for y in range(6):
                acc += T[1, 6 * x + y] * c[i, y]
            a[i, x] = acc  # a is scratch until the forward pass below
        _xt_force(E, r, i, a, i, pA, par, True)
        # IA_p += X^T Ia X, X = [[E, 0], [-E [r]x, E]]
        for x in range(36):
            T[0, x] = 0.0
        for x in range(3):
            for y in range(3):
                e = E[i, 3 * x + y]
                T[0, 6 * x + y] = e
                T[0, 6 * (3 + x) + 3 + y] = e
        for x in range(3):
            # row x of -E [r]x: -(E_x0 [r]x_0y + E_x1 [r]x_1y + E_x2 [r]x_2y)
            e0, e1, e2 = E[i, 3 * x], E[i, 3 * x + 1], E[i, 3 * x + 2]
            T[0, 6 * (3 + x) + 0] = -(e1 * r[i, 2] - e2 * r[i, 1])
            T[0, 6 * (3 + x) + 1] = -(e2 * r[i, 0] - e0 * r[i, 2])
            T[0, 6 * (3 + x) + 2] = -(e0 * r[i, 1] - e1 * r[i, 0])
        for x in range(6):
            for y in range(6):
                acc = 0.0
                for z in range(6):
                    acc += T[1, 6 * x + z] * T[0, 6 * z + y]
                T[2, 6 * x + y] = acc
        for x in range(6):
            for y in range(6):
                acc = 0.0
                for z in range(6):
                    acc += T[0, 6 * z + x] * T[2, 6 * z + y]
                IA[par, 6 * x + y] += acc
    # Forward recursion: accelerations, gravity as the base acceleration a_0 = [0; -g]
    for k in range(6):
        a[nb, k] = 0.0
    a[nb, 3] = -g[0]
    a[nb, 4] = -g[1]
    a[nb, 5] = -g[2]
    for i in range(nb):
        ob = HEADER + i * BODY
        par = int(m[ob + B_PARENT])
        if par < 0:
            par = nb
        _x_motion(E, r, i, a, par, a)
        for x in range(6):
            a[i, x] += c[i, x]
        qdd = (u[i] - (U[i, 0] * a[i, 0] + U[i, 1] * a[i, 1] + U[i, 2] * a[i, 2]
                       + U[i, 3] * a[i, 3] + U[i, 4] * a[i, 4] + U[i, 5] * a[i, 5])) / D[i]
        out[int(m[ob + B_JOINT])] = qdd
        col = 0 if m[ob + B_TYPE] == 0.0 else 3
        for x in range(3):
            a[i, col + x] += m[ob + B_AXIS + x] * qdd
    if not _finite(out):
        return BAD_OUTPUT
    return OK


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _aba_joint_space(m, q, qd, tau, g, fx, friction, smooth, out, ws):
    """Direct dynamics from the inverse model (Khalil 7.6.1): A qdd = tau - Gamma_f - h(q, qd).

    Mimic joints and gear trains couple coordinates (a secondary link's b_s may span joints of
    different branches), which the articulated-body recursion cannot absorb.
    """
    nq = int(m[H_NQ])
    H = ws[0 : nq * nq].reshape((nq, nq))
    o = nq * nq
    zero = ws[o : o + nq]
    o += nq
    for k in range(nq):
        zero[k] = 0.0
    st = _rnea(m, q, qd, zero, g, fx, False, smooth, out, ws[o:])
    if st != OK:
        return st
    st = _crba(m, q, H, ws[o:])
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


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _direct(m, q, qd, tau, g, fx, friction, smooth, out, ws):
    if m[3] != 0.0 or m[4] != 0.0:  # mimic joints or a coupled gear train
        return _aba_joint_space(m, q, qd, tau, g, fx, friction, smooth, out, ws)
    return _aba(m, q, qd, tau, g, fx, friction, smooth, out, ws)


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _body_poses(m, q, ws):
    nb = int(m[H_NB])
    E = ws[0 : 9 * nb].reshape((nb, 9))
    r = ws[9 * nb : 12 * nb].reshape((nb, 3))
    R = ws[12 * nb : 21 * nb].reshape((nb, 9))
    P = ws[21 * nb : 24 * nb].reshape((nb, 3))
    for i in range(nb):
        ob = HEADER + i * BODY
        _transform(m, i, m[ob + B_MULT] * q[int(m[ob + B_JOINT])] + m[ob + B_OFFSET], E, r)
    _world_poses(m, E, r, R, P)
    return E, r, R, P


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _frame_pose(m, R, P, k, T):
    """T (4, 4) = T_base_frame of frame k from the body poses."""
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
    for x in range(3):
        for y in range(3):
            T[x, y] = R[b, 3 * x] * m[of + F_R + y] + R[b, 3 * x + 1] * m[of + F_R + 3 + y] + R[b, 3 * x + 2] * m[of + F_R + 6 + y]
        T[x, 3] = P[b, x] + R[b, 3 * x] * m[of + F_P] + R[b, 3 * x + 1] * m[of + F_P + 1] + R[b, 3 * x + 2] * m[of + F_P + 2]


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _jacobian(m, R, P, k, T, J):
    """Geometric Jacobian of frame k, rows [linear; angular] in base axes (Khalil's J_n in frame 0)."""
    nq = int(m[H_NQ])
    for x in range(6):
        for y in range(nq):
            J[x, y] = 0.0
    _frame_pose(m, R, P, k, T)
    j = int(m[_frame_offset(m) + k * FRAME + F_BODY])
    while j >= 0:
        ob = HEADER + j * BODY
        e = m[ob + B_AXIS : ob + B_AXIS + 3]
        col = int(m[ob + B_JOINT])
        mult = m[ob + B_MULT]
        zx = R[j, 0] * e[0] + R[j, 1] * e[1] + R[j, 2] * e[2]
        zy = R[j, 3] * e[0] + R[j, 4] * e[1] + R[j, 5] * e[2]
        zz = R[j, 6] * e[0] + R[j, 7] * e[1] + R[j, 8] * e[2]
        if m[ob + B_TYPE] == 0.0:
            dx, dy, dz = T[0, 3] - P[j, 0], T[1, 3] - P[j, 1], T[2, 3] - P[j, 2]
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


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _point_motion(m, q, qd, k, vel, acc, ws):
    """Twist [v; w] of frame k's origin and its acceleration at qdd = 0 without gravity (Jdot qd)."""
    nb = int(m[H_NB])
    E = ws[0 : 9 * nb].reshape((nb, 9))
    o = 9 * nb
    r = ws[o : o + 3 * nb].reshape((nb, 3))
    o += 3 * nb
    v = ws[o : o + 6 * (nb + 1)].reshape((nb + 1, 6))
    o += 6 * (nb + 1)
    a = ws[o : o + 6 * (nb + 1)].reshape((nb + 1, 6))
    o += 6 * (nb + 1)
    c = ws[o : o + 6 * nb].reshape((nb, 6))
    o += 6 * nb
    R = ws[o : o + 9 * nb].reshape((nb, 9))
    o += 9 * nb
    P = ws[o : o + 3 * nb].reshape((nb, 3))
    o += 3 * nb
    zero = ws[o : o + q.shape[0]]
    for x in range(q.shape[0]):
        zero[x] = 0.0
    _forward(m, q, qd, zero, np.zeros(3), E, r, v, a, c)
    _world_poses(m, E, r, R, P)
    of = _frame_offset(m) + k * FRAME
    b = int(m[of + F_BODY])
    for x in range(6):
        vel[x] = 0.0
        acc[x] = 0.0
    if b < 0:
        return
    pb = m[of + F_P : of + F_P + 3]
    w = v[b, 0:3]
    al = a[b, 0:3]
    # velocity of the body-fixed point: v_o + w x p (spatial shift)
    vp = np.empty(3)
    vp[0] = v[b, 3] + w[1] * pb[2] - w[2] * pb[1]
    vp[1] = v[b, 4] + w[2] * pb[0] - w[0] * pb[2]
    vp[2] = v[b, 5] + w[0] * pb[1] - w[1] * pb[0]
    # classical acceleration of the point: a_o + alpha x p + w x v_p
    ap = np.empty(3)
    ap[0] = a[b, 3] + al[1] * pb[2] - al[2] * pb[1] + w[1] * vp[2] - w[2] * vp[1]
    ap[1] = a[b, 4] + al[2] * pb[0] - al[0] * pb[2] + w[2] * vp[0] - w[0] * vp[2]
    ap[2] = a[b, 5] + al[0] * pb[1] - al[1] * pb[0] + w[0] * vp[1] - w[1] * vp[0]
    for x in range(3):
        vel[x] = R[b, 3 * x] * vp[0] + R[b, 3 * x + 1] * vp[1] + R[b, 3 * x + 2] * vp[2]
        vel[3 + x] = R[b, 3 * x] * w[0] + R[b, 3 * x + 1] * w[1] + R[b, 3 * x + 2] * w[2]
        acc[x] = R[b, 3 * x] * ap[0] + R[b, 3 * x + 1] * ap[1] + R[b, 3 * x + 2] * ap[2]
        acc[3 + x] = R[b, 3 * x] * al[0] + R[b, 3 * x + 1] * al[1] + R[b, 3 * x + 2] * al[2]


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _energy(m, q, qd, g, out, ws):
    """out = [kinetic, potential] (Khalil [7.10], [7.19]): 1/2 v.Iv + 1/2 Ia qd^2 + the gears'
    spin (Chen & Wang eq. 14); U = -sum m_i g . p_Gi (zero at the base origin)."""
    nb, nq, nr = int(m[H_NB]), int(m[H_NQ]), int(m[H_NR])
    E = ws[0 : 9 * nb].reshape((nb, 9))
    o = 9 * nb
    r = ws[o : o + 3 * nb].reshape((nb, 3))
    o += 3 * nb
    v = ws[o : o + 6 * (nb + 1)].reshape((nb + 1, 6))
    o += 6 * (nb + 1)
    a = ws[o : o + 6 * (nb + 1)].reshape((nb + 1, 6))
    o += 6 * (nb + 1)
    c = ws[o : o + 6 * nb].reshape((nb, 6))
    o += 6 * nb
    R = ws[o : o + 9 * nb].reshape((nb, 9))
    o += 9 * nb
    P = ws[o : o + 3 * nb].reshape((nb, 3))
    o += 3 * nb
    _forward(m, q, qd, qd, np.zeros(3), E, r, v, a, c)
    _world_poses(m, E, r, R, P)
    kin = 0.0
    pot = 0.0
    for i in range(nb):
        ob = HEADER + i * BODY
        mass = m[ob + B_MASS]
        _inertia_times(m, ob, v, i, c, i)
        for x in range(6):
            kin += 0.5 * v[i, x] * c[i, x]
        # world first moment R h + m p
        for x in range(3):
            wh = R[i, 3 * x] * m[ob + B_H] + R[i, 3 * x + 1] * m[ob + B_H + 1] + R[i, 3 * x + 2] * m[ob + B_H + 2] + mass * P[i, x]
            pot -= g[x] * wh
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
            proj = m[ob + S_AXIS] * v[cb, 0] + m[ob + S_AXIS + 1] * v[cb, 1] + m[ob + S_AXIS + 2] * v[cb, 2]
        kin += m[ob + S_INERTIA] * (0.5 * bd * bd + bd * proj)  # K_s, eq. (14), less the virtual link
    out[0] = kin
    out[1] = pot
    if not (np.isfinite(kin) and np.isfinite(pot)):
        return BAD_OUTPUT
    return OK


# -- entry points: one state ------------------------------------------------------------------------
@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _check_state(m, a, b, c, out):
    nq = int(m[H_NQ])
    if a.shape[0] != nq or b.shape[0] != nq or c.shape[0] != nq or out.shape[0] != nq:
        return BAD_SIZE
    if not (_finite(a) and _finite(b) and _finite(c)):
        return BAD_INPUT
    return OK


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def rnea_one(m, q, qd, qdd, out, friction):
    """tau of one state with the model's gravity, no external wrench. Returns a status."""
    st = _check_state(m, q, qd, qdd, out)
    if st != OK:
        return st
    nb = int(m[H_NB])
    ws = np.empty(40 * (nb + 1))
    return _rnea(m, q, qd, qdd, m[H_GRAVITY : H_GRAVITY + 3], _NO_WRENCH, friction, 0.0, out, ws)


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def aba_one(m, q, qd, tau, out, friction):
    """qdd of one state with the model's gravity, no external wrench. Returns a status."""
    st = _check_state(m, q, qd, tau, out)
    if st != OK:
        return st
    nb, nq = int(m[H_NB]), int(m[H_NQ])
    ws = np.empty(80 * (nb + 1) + 2 * nq * nq + 4 * nq + 128)
    return _direct(m, q, qd, tau, m[H_GRAVITY : H_GRAVITY + 3], _NO_WRENCH, friction, 0.0, out, ws)


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def crba_one(m, q, H):
    """A(q) of one state into H (nq, nq). Returns a status."""
    nb, nq = int(m[H_NB]), int(m[H_NQ])
    if q.shape[0] != nq or H.shape[0] != nq or H.shape[1] != nq:
        return BAD_SIZE
    if not _finite(q):
        return BAD_INPUT
    ws = np.empty(25 * nb + nq + 16)
    return _crba(m, q, H, ws)


# -- entry points: batches, parallel over samples ------------------------------------------------------
# Each takes nc, the number of chunks of the batch (a few per thread): one workspace per chunk.
@njit(cache=True, parallel=True, error_model="numpy", fastmath={"contract"})
def rnea_batch(m, Q, QD, QDD, g, FX, friction, smooth, OUT, status, nc):
    """rnea of N states: Q, QD, QDD, OUT (N, nq); FX (N, k, 10) wrenches; status (N,)."""
    N = Q.shape[0]
    nb = int(m[H_NB])
    for ch in prange(nc):
        ws = np.empty(60 * (nb + 1))
        for n in range(ch * N // nc, (ch + 1) * N // nc):
            status[n] = _rnea(m, Q[n], QD[n], QDD[n], g, FX[n], friction, smooth, OUT[n], ws)


@njit(cache=True, parallel=True, error_model="numpy", fastmath={"contract"})
def aba_batch(m, Q, QD, TAU, g, FX, friction, smooth, OUT, status, nc):
    """Direct dynamics of N states (articulated bodies, or the joint-space solve when coupled)."""
    N = Q.shape[0]
    nb, nq = int(m[H_NB]), int(m[H_NQ])
    for ch in prange(nc):
        ws = np.empty(100 * (nb + 1) + 2 * nq * nq + 4 * nq + 256)
        for n in range(ch * N // nc, (ch + 1) * N // nc):
            status[n] = _direct(m, Q[n], QD[n], TAU[n], g, FX[n], friction, smooth, OUT[n], ws)


@njit(cache=True, parallel=True, error_model="numpy", fastmath={"contract"})
def crba_batch(m, Q, H, status, nc):
    """A(q) of N states into H (N, nq, nq)."""
    N = Q.shape[0]
    nb, nq = int(m[H_NB]), int(m[H_NQ])
    for ch in prange(nc):
        ws = np.empty(25 * nb + nq + 16)
        for n in range(ch * N // nc, (ch + 1) * N // nc):
            status[n] = _crba(m, Q[n], H[n], ws)


@njit(cache=True, parallel=True, error_model="numpy", fastmath={"contract"})
def frame_poses_batch(m, Q, frames, T, nc):
    """T (N, len(frames), 4, 4): poses of the listed frames."""
    N = Q.shape[0]
    nb = int(m[H_NB])
    for ch in prange(nc):
        ws = np.empty(24 * nb + 1)
        for n in range(ch * N // nc, (ch + 1) * N // nc):
            _, _, R, P = _body_poses(m, Q[n], ws)
            for f in range(frames.shape[0]):
                _frame_pose(m, R, P, frames[f], T[n, f])


@njit(cache=True, parallel=True, error_model="numpy", fastmath={"contract"})
def jacobian_batch(m, Q, k, J, nc):
    """J (N, 6, nq): geometric Jacobians of frame k."""
    N = Q.shape[0]
    nb = int(m[H_NB])
    for ch in prange(nc):
        ws = np.empty(24 * nb + 1)
        T = np.empty((4, 4))
        for n in range(ch * N // nc, (ch + 1) * N // nc):
            _, _, R, P = _body_poses(m, Q[n], ws)
            _jacobian(m, R, P, k, T, J[n])


@njit(cache=True, parallel=True, error_model="numpy", fastmath={"contract"})
def point_motion_batch(m, Q, QD, k, VEL, ACC, nc):
    """Twist (N, 6) of frame k and Jdot qd (N, 6)."""
    N = Q.shape[0]
    nb, nq = int(m[H_NB]), int(m[H_NQ])
    for ch in prange(nc):
        ws = np.empty(48 * (nb + 1) + nq)
        for n in range(ch * N // nc, (ch + 1) * N // nc):
            _point_motion(m, Q[n], QD[n], k, VEL[n], ACC[n], ws)


@njit(cache=True, parallel=True, error_model="numpy", fastmath={"contract"})
def energy_batch(m, Q, QD, g, OUT, status, nc):
    """OUT (N, 2): kinetic and potential energy."""
    N = Q.shape[0]
    nb = int(m[H_NB])
    for ch in prange(nc):
        ws = np.empty(48 * (nb + 1))
        for n in range(ch * N // nc, (ch + 1) * N // nc):
            status[n] = _energy(m, Q[n], QD[n], g, OUT[n], ws)


@njit(cache=True, parallel=True, error_model="numpy", fastmath={"contract"})
def motion_batch(m, Q, QD, QDD, g, E, r, V, A, nc):
    """The forward recursion's E (N, nb, 9), r (N, nb, 3), v and a (N, nb + 1, 6) of N states."""
    N = Q.shape[0]
    nb = int(m[H_NB])
    for ch in prange(nc):
        c = np.empty((nb, 6))
        for n in range(ch * N // nc, (ch + 1) * N // nc):
            _forward(m, Q[n], QD[n], QDD[n], g, E[n], r[n], V[n], A[n], c)


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def friction_batch(m, QD, smooth, OUT):
    """Joint friction (Khalil [7.26]) of N velocity vectors, (N, nq)."""
    nq = int(m[H_NQ])
    for n in range(QD.shape[0]):
        for k in range(nq):
            OUT[n, k] = _friction(m, k, QD[n, k], smooth)
