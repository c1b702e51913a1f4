/* The spatial algebra and the recursions of rnea and aba (trees), written once over a scalar type.
 *
 * internal.h includes this file with RD_REAL = double for one state (every algorithm's spatial
 * algebra, the forward recursion, rnea, aba), and recursions_x4.h with RD_REAL = rd_x4, four doubles
 * in one vector register, for four states at once (the batches, path.c's coefficients): each lane
 * performs the one-state operations in the same order, so a batch equals a loop of one-state calls
 * bit for bit.
 * derivatives.c includes it a third time, with RD_REAL = rd_x2 (internal.h) where the compiler
 * has vector types, for the spatial algebra of two vectors of one state at once.
 *
 * Before including it, define RD_REAL (the scalar), RD_NAME(x) (the instance's names), RD_LOAD(x, j)
 * and RD_STORE(x, j, value) (joint j of the state x: rows of m->nq values, one per lane; `nq` in
 * scope), RD_SPLAT(c) (a model constant in every lane), RD_WIDTH (the lanes) and RD_AT(x, l) (lane l of
 * x, an lvalue), RD_FRICTION(m, k, qd,
 * smooth) (joint k's friction at each lane's velocity) and RD_ALL_POSITIVE(x) (every lane > 0);
 * the file undefines them at its end. Arrays hold RD_REAL elements: E (9), r (3),
 * motion and force vectors (6) per body, as engine.h's rd_work describes them.
 */

/* The arrays one instance's recursions work in (RD_NAME(rd_arrays): rd_arrays for one state, bound
 * to rd_work's arrays of the same names; rd_arrays_x4 for four, in rd_work.x4), RD_REAL elements, per
 * body unless said: */
typedef struct {
    RD_REAL *E, *r;     /* the joint transform X_i: E_i = body_R_parent (9), r_i the body origin in parent coordinates (3) [m] */
    RD_REAL *v, *a;     /* body velocities and accelerations (6 each; nb + 1 rows, row nb the base's, a_0 = [0; -g]) */
    RD_REAL *c;         /* velocity-product accelerations v_i x S_i qd_i (6) */
    RD_REAL *f;         /* body forces (6) [N m; N] (rnea) */
    RD_REAL *IA, *pA;   /* articulated inertias (36, symmetric) and bias forces (6) (aba) */
    RD_REAL *U, *D, *u; /* U_i = IA_i S_i (6), D_i = S_i^T U_i + Ia (1), u_i = tau_i - S_i^T pA_i (1) (aba) */
} RD_NAME(rd_arrays);

/* sin and cos of x in each lane, within 1.4 units in the last place of the exact values (measured
 * against 120-bit mpmath for |x| < 1e4; libm's are within 0.5): x reduced by the nearest multiple
 * j of pi/2 (Cody and Waite's three-part pi/2, exact for |j| < 2^20), the Taylor polynomials of
 * degree 17 and 16 on |z| <= pi/4 (their remainders below 1e-18), the quadrant j mod 4 choosing
 * and signing them; |x| >= 1e4 (and NaN, inf) from libm. One code for one state and for four: the
 * lanes give the one-state values, without a libm call per joint and state. */
static RD_INLINE void RD_NAME(sin_cos)(const RD_REAL *x, RD_REAL *s, RD_REAL *c)
{
    const double shift = 6755399441055744.0; /* 1.5 * 2^52: adding and subtracting it rounds to an integer */
    const RD_REAL j = (*x * 0.63661977236758134308 + shift) - shift;
    const RD_REAL z = ((*x - j * 1.5707963267341256) - j * 6.077100506303966e-11) - j * 2.0222662487959506e-21;
    const RD_REAL zz = z * z;
    const RD_REAL sz =
        z + z * zz * (-1.6666666666666666e-01 +
                      zz * (8.3333333333333333e-03 +
                            zz * (-1.9841269841269841e-04 +
                                  zz * (2.7557319223985893e-06 +
                                        zz * (-2.5052108385441720e-08 +
                                              zz * (1.6059043836821613e-10 +
                                                    zz * (-7.6471637318198165e-13 + zz * 2.8114572543455206e-15)))))));
    const RD_REAL cz =
        1.0 - (0.5 * zz - zz * zz * (4.1666666666666664e-02 +
                                     zz * (-1.3888888888888889e-03 +
                                           zz * (2.4801587301587302e-05 +
                                                 zz * (-2.7557319223985888e-07 +
                                                       zz * (2.0876756987868100e-09 +
                                                             zz * (-1.1470745597729725e-11 + zz * 4.7794773323873853e-14)))))));
#if RD_WIDTH == 4
    /* four lanes (vector types): the quadrant k = j mod 4 from the low bits of j + shift, exact for
     * |j| < 2^51, chooses and signs by masks, without a branch per lane (the same doubles) */
    typedef unsigned long long rd_u4 __attribute__((vector_size(32)));
    const rd_u4 k = (rd_u4)(j + shift) & 3, swap = -(k & 1), sb = (rd_u4)sz, cb = (rd_u4)cz;
    *s = (RD_REAL)(((cb & swap) | (sb & ~swap)) ^ ((k & 2) << 62));
    *c = (RD_REAL)(((sb & swap) | (cb & ~swap)) ^ (((k ^ (k >> 1)) & 1) << 63));
    for (int l = 0; l < RD_WIDTH; ++l)
        if (!(fabs(RD_AT(*x, l)) < 1e4))
            RD_AT(*s, l) = sin(RD_AT(*x, l)), RD_AT(*c, l) = cos(RD_AT(*x, l));
#else
    for (int l = 0; l < RD_WIDTH; ++l) {
        const double xl = RD_AT(*x, l);
        if (!(fabs(xl) < 1e4)) {
            RD_AT(*s, l) = sin(xl), RD_AT(*c, l) = cos(xl);
            continue;
        }
        const long k = (long)RD_AT(j, l) & 3;
        const double sl = RD_AT(sz, l), cl = RD_AT(cz, l);
        RD_AT(*s, l) = k == 0 ? sl : (k == 1 ? cl : (k == 2 ? -sl : -cl));
        RD_AT(*c, l) = k == 0 ? cl : (k == 1 ? -sl : (k == 2 ? -cl : sl));
    }
#endif
}

/* Joint transform of body b at its joint's angle or travel *qb: E (9) and r (3); *s, *c: sin and
 * cos of *qb (revolute joints). */
static RD_INLINE void RD_NAME(joint_placement)(const rd_body *b, const RD_REAL *qb, const RD_REAL *sp, const RD_REAL *cp,
                                               RD_REAL *E, RD_REAL *r)
{
    const RD_REAL s = *sp, c = *cp;
    if (b->type == RD_REVOLUTE) {
        /* E = R(a, qb)^T E0 = c E0 - s [a]x E0 + (1 - c) a a^T E0 (Rodrigues) */
        const RD_REAL c1 = 1.0 - c;
        for (int k = 0; k < 9; ++k)
            E[k] = c * b->E0[k] - s * b->KE0[k] + c1 * b->AE0[k];
        for (int k = 0; k < 3; ++k)
            r[k] = RD_SPLAT(b->r0[k]);
    } else {
        /* prismatic: the origin slides along d = E0^T a in parent coordinates */
        for (int k = 0; k < 9; ++k)
            E[k] = RD_SPLAT(b->E0[k]);
        for (int k = 0; k < 3; ++k)
            r[k] = b->r0[k] + *qb * b->d[k];
    }
}

/* Joint transform of body b at the state q (nq joints): E (9) and r (3). */
static RD_INLINE void RD_NAME(joint_transform)(const rd_body *b, const double *q, int nq, RD_REAL *E, RD_REAL *r)
{
    const RD_REAL qb = b->mult * RD_LOAD(q, b->joint) + b->offset; /* mimic joints: q_body = mult q[k] + offset */
    RD_REAL s = RD_SPLAT(0.0), c = RD_SPLAT(1.0);
    (void)nq;
    if (b->type == RD_REVOLUTE)
        RD_NAME(sin_cos)(&qb, &s, &c);
    RD_NAME(joint_placement)(b, &qb, &s, &c, E, r);
}

/* y = X x: a motion vector from parent to body coordinates, [E w; E (v - r x w)]. */
static RD_INLINE void RD_NAME(x_motion)(const RD_REAL *E, const RD_REAL *r, const RD_REAL *x, RD_REAL *y)
{
    const RD_REAL wx = x[0], wy = x[1], wz = x[2];
    const RD_REAL ux = x[3] - (r[1] * wz - r[2] * wy);
    const RD_REAL uy = x[4] - (r[2] * wx - r[0] * wz);
    const RD_REAL uz = x[5] - (r[0] * wy - r[1] * wx);
    y[0] = E[0] * wx + E[1] * wy + E[2] * wz;
    y[1] = E[3] * wx + E[4] * wy + E[5] * wz;
    y[2] = E[6] * wx + E[7] * wy + E[8] * wz;
    y[3] = E[0] * ux + E[1] * uy + E[2] * uz;
    y[4] = E[3] * ux + E[4] * uy + E[5] * uz;
    y[5] = E[6] * ux + E[7] * uy + E[8] * uz;
}

/* y (+)= X^T x: a force from body to parent coordinates, [E^T n + r x E^T f; E^T f]. */
static RD_INLINE void RD_NAME(xt_force)(const RD_REAL *E, const RD_REAL *r, const RD_REAL *x, RD_REAL *y, int accumulate)
{
    const RD_REAL fx = E[0] * x[3] + E[3] * x[4] + E[6] * x[5];
    const RD_REAL fy = E[1] * x[3] + E[4] * x[4] + E[7] * x[5];
    const RD_REAL fz = E[2] * x[3] + E[5] * x[4] + E[8] * x[5];
    const RD_REAL nx = E[0] * x[0] + E[3] * x[1] + E[6] * x[2] + r[1] * fz - r[2] * fy;
    const RD_REAL ny = E[1] * x[0] + E[4] * x[1] + E[7] * x[2] + r[2] * fx - r[0] * fz;
    const RD_REAL nz = E[2] * x[0] + E[5] * x[1] + E[8] * x[2] + r[0] * fy - r[1] * fx;
    if (accumulate) {
        y[0] += nx, y[1] += ny, y[2] += nz, y[3] += fx, y[4] += fy, y[5] += fz;
    } else {
        y[0] = nx, y[1] = ny, y[2] = nz, y[3] = fx, y[4] = fy, y[5] = fz;
    }
}

/* y = I x for a rigid-body inertia (Featherstone 2.63): [Io w + h x l; m l - h x w]. */
static RD_INLINE void RD_NAME(inertia_times)(const rd_inertia *I, const RD_REAL *x, RD_REAL *y)
{
    const RD_REAL ax = x[0], ay = x[1], az = x[2], lx = x[3], ly = x[4], lz = x[5];
    const double hx = I->h[0], hy = I->h[1], hz = I->h[2];
    const double *Io = I->Io;
    y[0] = Io[0] * ax + Io[1] * ay + Io[2] * az + hy * lz - hz * ly;
    y[1] = Io[3] * ax + Io[4] * ay + Io[5] * az + hz * lx - hx * lz;
    y[2] = Io[6] * ax + Io[7] * ay + Io[8] * az + hx * ly - hy * lx;
    y[3] = I->m * lx - (hy * az - hz * ay);
    y[4] = I->m * ly - (hz * ax - hx * az);
    y[5] = I->m * lz - (hx * ay - hy * ax);
}

/* y += v x* F = [w x n + vl x f; w x f] (Featherstone 2.32). */
static RD_INLINE void RD_NAME(cross_force_add)(const RD_REAL *v, const RD_REAL *F, RD_REAL *y)
{
    const RD_REAL wx = v[0], wy = v[1], wz = v[2], vx = v[3], vy = v[4], vz = v[5];
    const RD_REAL nx = F[0], ny = F[1], nz = F[2], fx = F[3], fy = F[4], fz = F[5];
    y[0] += wy * nz - wz * ny + vy * fz - vz * fy;
    y[1] += wz * nx - wx * nz + vz * fx - vx * fz;
    y[2] += wx * ny - wy * nx + vx * fy - vy * fx;
    y[3] += wy * fz - wz * fy;
    y[4] += wz * fx - wx * fz;
    y[5] += wx * fy - wy * fx;
}

/* y = v x x, the motion cross product (Featherstone 2.31): [w x xw; w x xu + u x xw]. */
static RD_INLINE void RD_NAME(cross_motion)(const RD_REAL *v, const RD_REAL *x, RD_REAL *y)
{
    const RD_REAL wx = v[0], wy = v[1], wz = v[2], ux = v[3], uy = v[4], uz = v[5];
    y[0] = wy * x[2] - wz * x[1], y[1] = wz * x[0] - wx * x[2], y[2] = wx * x[1] - wy * x[0];
    y[3] = wy * x[5] - wz * x[4] + uy * x[2] - uz * x[1];
    y[4] = wz * x[3] - wx * x[5] + uz * x[0] - ux * x[2];
    y[5] = wx * x[4] - wy * x[3] + ux * x[1] - uy * x[0];
}

/* y += B x for an inertia rate B kept as (X, c) (derivatives.c's inertia_rate): [X xw + c x xu;
 * -(c x xw)] (B is symmetric: also y += B^T x). */
static RD_INLINE void RD_NAME(rate_times_add)(const double *B, const RD_REAL *x, RD_REAL *y)
{
    const double *X = B, *c = B + 9;
    const RD_REAL *xw = x, *xu = x + 3;
    for (int k = 0; k < 3; ++k)
        y[k] += X[3 * k] * xw[0] + X[3 * k + 1] * xw[1] + X[3 * k + 2] * xw[2];
    y[0] += c[1] * xu[2] - c[2] * xu[1], y[1] += c[2] * xu[0] - c[0] * xu[2], y[2] += c[0] * xu[1] - c[1] * xu[0];
    y[3] -= c[1] * xw[2] - c[2] * xw[1], y[4] -= c[2] * xw[0] - c[0] * xw[2], y[5] -= c[0] * xw[1] - c[1] * xw[0];
}

/* S_i . F: the component of a force along body i's joint (S = [a; 0] or [0; a]). */
static RD_INLINE RD_REAL RD_NAME(s_dot)(const rd_body *b, const RD_REAL *F)
{
    const RD_REAL *x = b->type == RD_REVOLUTE ? F : F + 3;
    return b->axis[0] * x[0] + b->axis[1] * x[1] + b->axis[2] * x[2];
}

/* Joint transforms E, r, body velocities v, velocity products c and (with qdd) accelerations a
 * (Khalil [7.43]-[7.45]); v and a have nb + 1 rows, the last the base's. Gravity enters as the
 * base acceleration a_0 = [0; -g]. */
static RD_INLINE void RD_NAME(forward)(const rd_model *m, const double *q, const double *qd, const double *qdd,
                                       const double *g, const RD_NAME(rd_arrays) *ar)
{
    const int nb = m->nb, nq = m->nq;
    RD_REAL *Es = ar->E, *rs = ar->r, *vs = ar->v, *as = ar->a, *cs = ar->c;
    RD_REAL *v0 = vs + 6 * nb, *a0 = as + 6 * nb;
    (void)nq;
    for (int k = 0; k < 6; ++k)
        v0[k] = RD_SPLAT(0.0), a0[k] = RD_SPLAT(0.0);
    a0[3] = RD_SPLAT(-g[0]), a0[4] = RD_SPLAT(-g[1]), a0[5] = RD_SPLAT(-g[2]);
    for (int i = 0; i < nb; ++i) {
        const rd_body *b = &m->body[i];
        RD_REAL *E = Es + 9 * i, *r = rs + 3 * i, *v = vs + 6 * i, *a = as + 6 * i, *c = cs + 6 * i;
        const int p = b->parent < 0 ? nb : b->parent;
        RD_NAME(joint_transform)(b, q, nq, E, r);
        const RD_REAL qdi = b->mult * RD_LOAD(qd, b->joint);
        const RD_REAL sx = b->axis[0] * qdi, sy = b->axis[1] * qdi, sz = b->axis[2] * qdi;
        RD_NAME(x_motion)(E, r, vs + 6 * p, v); /* v_i = X_i v_p + S_i qd_i                          [7.43] */
        if (b->type == RD_REVOLUTE) {
            v[0] += sx, v[1] += sy, v[2] += sz;
            /* c_i = v_i x S_i qd_i = [w x s; vl x s]                                                   [7.45] */
            c[0] = v[1] * sz - v[2] * sy, c[1] = v[2] * sx - v[0] * sz, c[2] = v[0] * sy - v[1] * sx;
            c[3] = v[4] * sz - v[5] * sy, c[4] = v[5] * sx - v[3] * sz, c[5] = v[3] * sy - v[4] * sx;
        } else {
            v[3] += sx, v[4] += sy, v[5] += sz;
            /* v x [0; s] = [0; w x s] */
            c[0] = RD_SPLAT(0.0), c[1] = RD_SPLAT(0.0), c[2] = RD_SPLAT(0.0);
            c[3] = v[1] * sz - v[2] * sy, c[4] = v[2] * sx - v[0] * sz, c[5] = v[0] * sy - v[1] * sx;
        }
        if (qdd) {
            const RD_REAL qddi = b->mult * RD_LOAD(qdd, b->joint);
            RD_NAME(x_motion)(E, r, as + 6 * p, a); /* a_i = X_i a_p + S_i qdd_i + c_i              [7.44] */
            for (int k = 0; k < 6; ++k)
                a[k] += c[k];
            RD_REAL *s = b->type == RD_REVOLUTE ? a : a + 3;
            s[0] += b->axis[0] * qddi, s[1] += b->axis[1] * qddi, s[2] += b->axis[2] * qddi;
        }
    }
}

/* Newton-Euler equations of each body: f_i = I_i a_i + v_i x* I_i v_i              [7.46]-[7.47] */
static RD_INLINE void RD_NAME(body_forces)(const rd_model *m, const RD_NAME(rd_arrays) *ar)
{
    const RD_REAL *vs = ar->v, *as = ar->a;
    RD_REAL *fs = ar->f;
    for (int i = 0; i < m->nb; ++i) {
        RD_REAL Iv[6];
        const RD_REAL *v = vs + 6 * i;
        RD_REAL *f = fs + 6 * i;
        RD_NAME(inertia_times)(&m->body[i].inertia, v, Iv);
        RD_NAME(inertia_times)(&m->body[i].inertia, as + 6 * i, f);
        RD_NAME(cross_force_add)(v, Iv, f);
    }
}

/* The joint torques of the body forces ar->f (changed: the backward recursion accumulates them),
 * the secondary links and the rotor inertia, into tau (nq); friction is the caller's. */
#if RD_WIDTH == 1 && defined(__GNUC__)
#define RD_TORQUES_INLINE __attribute__((noinline, unused)) /* one state: out of line (measured: rd_rnea 5 % faster) */
#else
#define RD_TORQUES_INLINE RD_INLINE
#endif
static RD_TORQUES_INLINE void RD_NAME(joint_torques)(const rd_model *m, const double *qd, const double *qdd,
                                             const RD_NAME(rd_arrays) *ar, RD_REAL *tau)
{
    const int nb = m->nb, nq = m->nq;
    const RD_REAL *Es = ar->E, *rs = ar->r, *vs = ar->v, *as = ar->a;
    RD_REAL *fs = ar->f;
    for (int k = 0; k < nq; ++k)
        tau[k] = RD_SPLAT(0.0);
    /* Secondary links (Chen & Wang eqs. 14-21): the spin beta_s = b_s . theta of a gear or rotor
     * about its carrier adds the couple n_s = I_s (e_s betadd_s + w_c x e_s betad_s) to the
     * carrier, and I_s (e_s . alpha_c + betadd_s) along its own coordinate, which reaches the
     * joints as b_s^T times it (virtual work). */
    for (int s = 0; s < m->nr; ++s) {
        const rd_secondary *sl = &m->secondary[s];
        RD_REAL bd = RD_SPLAT(0.0), bdd = RD_SPLAT(0.0);
        for (int k = 0; k < nq; ++k)
            bd += sl->b[k] * RD_LOAD(qd, k), bdd += sl->b[k] * RD_LOAD(qdd, k);
        const double hx = sl->inertia * sl->axis[0], hy = sl->inertia * sl->axis[1], hz = sl->inertia * sl->axis[2];
        RD_REAL ts = sl->inertia * bdd;
        if (sl->carrier >= 0) {
            const RD_REAL *v = vs + 6 * sl->carrier, *a = as + 6 * sl->carrier;
            RD_REAL *f = fs + 6 * sl->carrier;
            f[0] += hx * bdd + (v[1] * hz - v[2] * hy) * bd;
            f[1] += hy * bdd + (v[2] * hx - v[0] * hz) * bd;
            f[2] += hz * bdd + (v[0] * hy - v[1] * hx) * bd;
            ts += hx * a[0] + hy * a[1] + hz * a[2];
        }
        for (int k = 0; k < nq; ++k)
            tau[k] += sl->b[k] * ts;
    }
    /* Backward recursion: tau_i = S_i . f_i, f_p += X_i^T f_i                   [7.48]-[7.49] */
    for (int i = nb - 1; i >= 0; --i) {
        const rd_body *b = &m->body[i];
        tau[b->joint] += b->mult * RD_NAME(s_dot)(b, fs + 6 * i);
        if (b->parent >= 0)
            RD_NAME(xt_force)(Es + 9 * i, rs + 3 * i, fs + 6 * i, fs + 6 * b->parent, 1);
    }
    /* Rotor inertia Ia qdd (Khalil [7.29]) */
    for (int k = 0; k < nq; ++k)
        tau[k] += m->joint[k].Ia * RD_LOAD(qdd, k);
}
#undef RD_TORQUES_INLINE

/* The articulated-body inertias IA_i = I_i and bias forces pA_i = v_i x* I_i v_i of each body, before
 * the backward recursion (Featherstone 7.3). */
static RD_INLINE void RD_NAME(articulated_init)(const rd_model *m, const RD_NAME(rd_arrays) *ar)
{
    const RD_REAL *vs = ar->v;
    RD_REAL *IAs = ar->IA, *pAs = ar->pA;
    for (int i = 0; i < m->nb; ++i) {
        const rd_inertia *I = &m->body[i].inertia;
        RD_REAL *IA = IAs + 36 * i, Iv[6];
        /* IA_i = I_i = [[Io, [h]x], [[h]x^T, m 1]] (Featherstone 2.62, [angular; linear] order) */
        const double h0 = I->h[0], h1 = I->h[1], h2 = I->h[2];
        for (int x = 0; x < 3; ++x)
            for (int y = 0; y < 3; ++y) {
                IA[6 * x + y] = RD_SPLAT(I->Io[3 * x + y]);
                IA[6 * (3 + x) + 3 + y] = RD_SPLAT(x == y ? I->m : 0.0);
            }
        const double hx[9] = {0.0, -h2, h1, h2, 0.0, -h0, -h1, h0, 0.0};
        for (int x = 0; x < 3; ++x)
            for (int y = 0; y < 3; ++y)
                IA[6 * x + 3 + y] = RD_SPLAT(hx[3 * x + y]), IA[6 * (3 + y) + x] = RD_SPLAT(hx[3 * x + y]);
        /* pA_i = v_i x* I_i v_i */
        RD_REAL *pA = pAs + 6 * i;
        RD_NAME(inertia_times)(I, vs + 6 * i, Iv);
        for (int k = 0; k < 6; ++k)
            pA[k] = RD_SPLAT(0.0);
        RD_NAME(cross_force_add)(vs + 6 * i, Iv, pA);
    }
}

/* IA_p += X^T Ia X (Featherstone 7.3: the articulated inertia moved to the parent) for a symmetric
 * 6x6 Ia, by its 3x3 blocks: E^T A E, E^T B E, E^T C E, then the translation by r. */
static RD_INLINE void RD_NAME(articulated_to_parent)(const RD_REAL *E, const RD_REAL *r, const RD_REAL *Ia, RD_REAL *IAp)
{
    RD_REAL A[9], B[9], C[9], T[9];
    /* T = P E, then E^T T, for P = A, B, C (rows 0-2 / 3-5 and columns 0-2 / 3-5 of Ia) */
    for (int blk = 0; blk < 3; ++blk) {
        const RD_REAL *P = Ia + (blk == 2 ? 21 : 0) + (blk == 1 ? 3 : 0);
        RD_REAL *out = blk == 0 ? A : (blk == 1 ? B : C);
        for (int x = 0; x < 3; ++x)
            for (int y = 0; y < 3; ++y)
                T[3 * x + y] = P[6 * x] * E[y] + P[6 * x + 1] * E[3 + y] + P[6 * x + 2] * E[6 + y];
        for (int x = 0; x < 3; ++x)
            for (int y = (blk == 1 ? 0 : x); y < 3; ++y)
                out[3 * x + y] = E[x] * T[y] + E[3 + x] * T[3 + y] + E[6 + x] * T[6 + y];
    }
    C[3] = C[1], C[6] = C[2], C[7] = C[5];
    const RD_REAL r0 = r[0], r1 = r[1], r2 = r[2];
    /* RC = [r]x C', BR = B' [r]x */
    RD_REAL RC[9], BR[9];
    for (int y = 0; y < 3; ++y) {
        RC[y] = r1 * C[6 + y] - r2 * C[3 + y];
        RC[3 + y] = r2 * C[y] - r0 * C[6 + y];
        RC[6 + y] = r0 * C[3 + y] - r1 * C[y];
    }
    for (int x = 0; x < 3; ++x) {
        const RD_REAL b0 = B[3 * x], b1 = B[3 * x + 1], b2 = B[3 * x + 2];
        BR[3 * x] = b1 * r2 - b2 * r1;
        BR[3 * x + 1] = b2 * r0 - b0 * r2;
        BR[3 * x + 2] = b0 * r1 - b1 * r0;
    }
    for (int x = 0; x < 3; ++x) {
        for (int y = 0; y < 3; ++y) {
            const RD_REAL top = B[3 * x + y] + RC[3 * x + y]; /* B' + [r]x C' */
            IAp[6 * x + 3 + y] += top;
            IAp[6 * (3 + y) + x] += top;
        }
        for (int y = x; y < 3; ++y) {
            /* RCR = [r]x C' [r]x = RC [r]x */
            const RD_REAL *rc = RC + 3 * x;
            const RD_REAL rcr = y == 0 ? rc[1] * r2 - rc[2] * r1 : (y == 1 ? rc[2] * r0 - rc[0] * r2 : rc[0] * r1 - rc[1] * r0);
            const RD_REAL ang = A[3 * x + y] - BR[3 * x + y] - BR[3 * y + x] - rcr; /* [r]x B'^T = -(B' [r]x)^T */
            const RD_REAL lin = C[3 * x + y];
            IAp[6 * x + y] += ang;
            IAp[6 * (3 + x) + 3 + y] += lin;
            if (y != x) {
                IAp[6 * y + x] += ang;
                IAp[6 * (3 + y) + 3 + x] += lin;
            }
        }
    }
}

/* The articulated body algorithm's backward and forward recursions (Featherstone 7.3, Khalil 7.6.2,
 * [7.67]-[7.68]) after the forward recursion (E, r, v, c) and articulated_init (and any wrenches in
 * pA): qdd (nq), friction as o says (o->gravity is not read: it is in a). Returns -1, or the first
 * body (from the leaves) whose D_i <= 0 in some lane (qdd then unset). */
static RD_INLINE int RD_NAME(articulated_solve)(const rd_model *m, const double *qd, const double *tau,
                                                const rd_options *o, const RD_NAME(rd_arrays) *ar, double *qdd)
{
    const int nb = m->nb, nq = m->nq, friction = o->friction;
    const double smooth = o->smooth;
    const RD_REAL *Es = ar->E, *rs = ar->r, *cs = ar->c;
    RD_REAL *as = ar->a, *IAs = ar->IA, *pAs = ar->pA, *Us = ar->U, *Ds = ar->D, *us = ar->u;
    (void)nq;
    for (int i = nb - 1; i >= 0; --i) {
        const rd_body *b = &m->body[i];
        const int k = b->joint, col = b->type == RD_REVOLUTE ? 0 : 3;
        const double ex = b->axis[0], ey = b->axis[1], ez = b->axis[2];
        RD_REAL *IA = IAs + 36 * i, *U = Us + 6 * i, *pA = pAs + 6 * i;
        /* U_i = IA_i S_i, D_i = S_i^T U_i + Ia (the rotor's inertia about its own axis) */
        for (int x = 0; x < 6; ++x)
            U[x] = IA[6 * x + col] * ex + IA[6 * x + col + 1] * ey + IA[6 * x + col + 2] * ez;
        const RD_REAL D = U[col] * ex + U[col + 1] * ey + U[col + 2] * ez + m->joint[k].Ia;
        Ds[i] = D;
        if (!RD_ALL_POSITIVE(D))
            return i;
        /* u_i = tau_i - Gamma_f - S_i^T pA_i */
        RD_REAL tk = RD_LOAD(tau, k);
        if (friction)
            tk -= RD_FRICTION(m, k, qd, smooth);
        const RD_REAL u = tk - RD_NAME(s_dot)(b, pA);
        us[i] = u;
        if (b->parent < 0)
            continue;
        /* Ia = IA - U U^T / D, pa = pA + Ia c + U u / D; then IA_p += X^T Ia X, pA_p += X^T pa */
        const RD_REAL inv = 1.0 / D;
        const RD_REAL *c = cs + 6 * i;
        RD_REAL Ia[36], pa[6];
        for (int x = 0; x < 6; ++x) {
            const RD_REAL ux = U[x] * inv;
            for (int y = x; y < 6; ++y)
                Ia[6 * x + y] = Ia[6 * y + x] = IA[6 * x + y] - ux * U[y];
        }
        for (int x = 0; x < 6; ++x) {
            RD_REAL acc = pA[x] + U[x] * u * inv;
            for (int y = 0; y < 6; ++y)
                acc += Ia[6 * x + y] * c[y];
            pa[x] = acc;
        }
        const RD_REAL *E = Es + 9 * i, *r = rs + 3 * i;
        RD_NAME(xt_force)(E, r, pa, pAs + 6 * b->parent, 1);
        RD_NAME(articulated_to_parent)(E, r, Ia, IAs + 36 * b->parent);
    }
    /* Forward recursion: accelerations from a_0 = [0; -g] (gravity as the base acceleration) */
    for (int i = 0; i < nb; ++i) {
        const rd_body *b = &m->body[i];
        const int p = b->parent < 0 ? nb : b->parent;
        RD_REAL *a = as + 6 * i;
        const RD_REAL *c = cs + 6 * i, *U = Us + 6 * i;
        /* a'_i = X_i a_p + c_i; qdd_i = (u_i - U_i^T a'_i) / D_i; a_i = a'_i + S_i qdd_i */
        RD_NAME(x_motion)(Es + 9 * i, rs + 3 * i, as + 6 * p, a);
        RD_REAL s = RD_SPLAT(0.0);
        for (int x = 0; x < 6; ++x) {
            a[x] += c[x];
            s += U[x] * a[x];
        }
        const RD_REAL qi = (us[i] - s) / Ds[i];
        RD_STORE(qdd, b->joint, qi);
        RD_REAL *sa = b->type == RD_REVOLUTE ? a : a + 3;
        sa[0] += b->axis[0] * qi, sa[1] += b->axis[1] * qi, sa[2] += b->axis[2] * qi;
    }
    return -1;
}

/* The parameters are this instance's only. */
#undef RD_INLINE
#undef RD_REAL
#undef RD_NAME
#undef RD_LOAD
#undef RD_STORE
#undef RD_SPLAT
#undef RD_WIDTH
#undef RD_AT
#undef RD_FRICTION
#undef RD_ALL_POSITIVE
