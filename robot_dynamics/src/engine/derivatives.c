/* The derivatives of inverse and direct dynamics, one state each (engine.h's rd_rnea_derivatives,
 * rd_aba_derivatives): the recursion's tangents along each coordinate (any model), and for trees
 * the base-frame formulas of Carpentier & Mansard (2018), derived again here.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

#if defined(__GNUC__)
#define RD_COLD __attribute__((noinline, cold))
#define RD_NOINLINE __attribute__((noinline))
#else
#define RD_COLD
#define RD_NOINLINE
#endif

/* The spatial algebra of two vectors of one state at once (tree_fill): recursions.h for rd_x2
 * where the compiler has vector types, else each lane by the one-state functions. */
#if RD_PAIRS
#define RD_INLINE inline
#define RD_REAL rd_x2
#define RD_NAME(x) x##_x2
#define RD_LOAD(x, j) ((rd_x2){(x)[j], (x)[nq + (j)]})
#define RD_SPLAT(c) ((rd_x2){(c), (c)})
#define RD_WIDTH 2
#define RD_AT(x, l) ((x)[l])
#define RD_STORE(x, j, value) ((x)[j] = (value)[0], (x)[nq + (j)] = (value)[1])
#define RD_FRICTION(m, k, qd, smooth) ((rd_x2){rd_friction(m, k, (qd)[k], smooth), rd_friction(m, k, (qd)[nq + (k)], smooth)})
#define RD_ALL_POSITIVE(x) ((x)[0] > 0.0 && (x)[1] > 0.0)
#include "recursions.h"
#else
/* six pairs into their two lanes, and back */
static void lanes_split(const rd_x2 *x, double *a, double *b)
{
    for (int k = 0; k < 6; ++k)
        a[k] = rd_x2_lane(x[k], 0), b[k] = rd_x2_lane(x[k], 1);
}

static void lanes_join(const double *a, const double *b, rd_x2 *x)
{
    for (int k = 0; k < 6; ++k)
        x[k] = rd_x2_set(a[k], b[k]);
}

static void cross_motion_x2(const rd_x2 *v, const rd_x2 *x, rd_x2 *y)
{
    double va[6], vb[6], xa[6], xb[6], ya[6], yb[6];
    lanes_split(v, va, vb), lanes_split(x, xa, xb);
    cross_motion(va, xa, ya), cross_motion(vb, xb, yb);
    lanes_join(ya, yb, y);
}

static void inertia_times_x2(const rd_inertia *I, const rd_x2 *x, rd_x2 *y)
{
    double xa[6], xb[6], ya[6], yb[6];
    lanes_split(x, xa, xb);
    inertia_times(I, xa, ya), inertia_times(I, xb, yb);
    lanes_join(ya, yb, y);
}

static void cross_force_add_x2(const rd_x2 *v, const rd_x2 *F, rd_x2 *y)
{
    double va[6], vb[6], Fa[6], Fb[6], ya[6], yb[6];
    lanes_split(v, va, vb), lanes_split(F, Fa, Fb), lanes_split(y, ya, yb);
    cross_force_add(va, Fa, ya), cross_force_add(vb, Fb, yb);
    lanes_join(ya, yb, y);
}

static void rate_times_add_x2(const double *B, const rd_x2 *x, rd_x2 *y)
{
    double xa[6], xb[6], ya[6], yb[6];
    lanes_split(x, xa, xb), lanes_split(y, ya, yb);
    rate_times_add(B, xa, ya), rate_times_add(B, xb, yb);
    lanes_join(ya, yb, y);
}
#endif

/* 1: every derivative by the tangents of the recursion (rnea_tangent), the base-frame formulas
 * of rnea_derivatives_tree off: a test switch, to compare the two derivations. */
int rd_tangent_derivatives = 0;

/* -- derivatives of the dynamics ------------------------------------------------------------------- */

/* y += s (x x S_b): the motion cross product with body b's joint axis (Featherstone 2.31),
 * [w; u] x [e; 0] = [w x e; u x e] and [w; u] x [0; e] = [0; w x e]. */
static inline void cross_axis_add(const rd_body *b, const double *x, double s, double *y)
{
    const double ex = b->axis[0] * s, ey = b->axis[1] * s, ez = b->axis[2] * s;
    if (b->type == RD_REVOLUTE) {
        y[0] += x[1] * ez - x[2] * ey, y[1] += x[2] * ex - x[0] * ez, y[2] += x[0] * ey - x[1] * ex;
        y[3] += x[4] * ez - x[5] * ey, y[4] += x[5] * ex - x[3] * ez, y[5] += x[3] * ey - x[4] * ex;
    } else {
        y[3] += x[1] * ez - x[2] * ey, y[4] += x[2] * ex - x[0] * ez, y[5] += x[0] * ey - x[1] * ex;
    }
}

/* y += s (S_b x* f) (Featherstone 2.32): [e; 0] x* [n; f] = [e x n; e x f], [0; e] x* [n; f] = [e x f; 0]. */
static inline void axis_cross_force_add(const rd_body *b, const double *f, double s, double *y)
{
    const double ex = b->axis[0] * s, ey = b->axis[1] * s, ez = b->axis[2] * s;
    if (b->type == RD_REVOLUTE) {
        y[0] += ey * f[2] - ez * f[1], y[1] += ez * f[0] - ex * f[2], y[2] += ex * f[1] - ey * f[0];
        y[3] += ey * f[5] - ez * f[4], y[4] += ez * f[3] - ex * f[5], y[5] += ex * f[4] - ey * f[3];
    } else {
        y[0] += ey * f[5] - ez * f[4], y[1] += ez * f[3] - ex * f[5], y[2] += ex * f[4] - ey * f[3];
    }
}

/* d Gamma_f / d qd of rd_friction: Fv + sg' (Fc + Fs e) - sg sign(qd) B Fs e, e = exp(-|qd| B);
 * sg' = (1 - tanh^2) / v_s when smoothed, 0 off qd = 0 otherwise (the Coulomb step has no slope). */
static double friction_slope(const rd_model *m, int k, double qd, double smooth)
{
    const rd_joint *j = &m->joint[k];
    const double sign = (qd > 0.0) - (qd < 0.0);
    double sg = sign, dsg = 0.0;
    if (smooth > 0.0) {
        sg = tanh(qd / smooth);
        dsg = (1.0 - sg * sg) / smooth;
    }
    double d = j->Fv + dsg * j->Fc;
    if (j->Fs != 0.0) {
        const double e = exp(-fabs(qd) * j->B);
        d += j->Fs * e * (dsg - sg * sign * j->B);
    }
    return d;
}

/* The forward pass of rnea_tangent: dv, da, df (and drho, the frames' rotation) of the bodies
 * coordinate k moves, zero elsewhere; dtau cleared. */
static void tangent_forward(const rd_model *m, const double *qd, const double *qdd, int k, int wrt_qd, rd_work *w)
{
    const int nb = m->nb, nq = m->nq;
    double *dv = w->dv, *da = w->da, *df = w->df, *dr = w->drho, *dtau = w->dtau;
    int *moved = w->moved;
    for (int x = 0; x < 6; ++x)
        dv[6 * nb + x] = 0.0, da[6 * nb + x] = 0.0;
    dr[3 * nb] = dr[3 * nb + 1] = dr[3 * nb + 2] = 0.0;
    for (int j = 0; j < nq; ++j)
        dtau[j] = 0.0;
    for (int i = 0; i < nb; ++i) {
        const rd_body *b = &m->body[i];
        double *dvi = dv + 6 * i, *dai = da + 6 * i, *dfi = df + 6 * i, *dri = dr + 3 * i;
        const int own = b->joint == k;
        moved[i] = own || (b->parent >= 0 && moved[b->parent]);
        if (!moved[i]) {
            for (int x = 0; x < 6; ++x)
                dvi[x] = 0.0, dai[x] = 0.0, dfi[x] = 0.0;
            dri[0] = dri[1] = dri[2] = 0.0;
            continue;
        }
        const int p = b->parent < 0 ? nb : b->parent;
        const double *E = w->E + 9 * i, *r = w->r + 3 * i, *v = w->v + 6 * i;
        const double s = own ? b->mult : 0.0, thd = b->mult * qd[b->joint];
        const double *drp = dr + 3 * p;
        x_motion(E, r, dv + 6 * p, dvi);
        x_motion(E, r, da + 6 * p, dai);
        for (int x = 0; x < 3; ++x) /* the frame's rotation: drho_i = E_i drho_p + dth_i a_i (revolute) */
            dri[x] = E[3 * x] * drp[0] + E[3 * x + 1] * drp[1] + E[3 * x + 2] * drp[2];
        if (own) {
            if (wrt_qd) {
                double *sv = b->type == RD_REVOLUTE ? dvi : dvi + 3;
                sv[0] += b->axis[0] * s, sv[1] += b->axis[1] * s, sv[2] += b->axis[2] * s;
                cross_axis_add(b, v, s, dai);
            } else {
                /* X_i a_p = a_i - c_i - S_i thdd_i */
                const double *a = w->a + 6 * i, *c = w->c + 6 * i, thdd = b->mult * qdd[b->joint];
                double xa[6];
                for (int x = 0; x < 6; ++x)
                    xa[x] = a[x] - c[x];
                double *sa = b->type == RD_REVOLUTE ? xa : xa + 3;
                sa[0] -= b->axis[0] * thdd, sa[1] -= b->axis[1] * thdd, sa[2] -= b->axis[2] * thdd;
                cross_axis_add(b, v, s, dvi);
                cross_axis_add(b, xa, s, dai);
                if (b->type == RD_REVOLUTE)
                    dri[0] += b->axis[0] * s, dri[1] += b->axis[1] * s, dri[2] += b->axis[2] * s;
            }
        }
        cross_axis_add(b, dvi, thd, dai);
        const rd_inertia *I = &b->inertia;
        double Iv[6], Idv[6];
        inertia_times(I, dai, dfi);
        inertia_times(I, v, Iv);
        inertia_times(I, dvi, Idv);
        cross_force_add(dvi, Iv, dfi);
        cross_force_add(v, Idv, dfi);
    }
}

/* rnea_tangent's external wrenches (wrt q only): each turns with its body. */
static void tangent_wrenches(const rd_model *m, const double *fx, int nfx, rd_work *w)
{
    double *df = w->df, *dr = w->drho;
    const int *moved = w->moved;
    /* A wrench fixed in base axes at a point of the body turns with the body in its axes:
     * d(R^T x) = -drho x R^T x, for the force and the moment (add_wrenches) */
    for (int n = 0; n < nfx; ++n) {
        const double *row = fx + RD_WRENCH * n;
        const int b = (int)row[0];
        if (!moved[b])
            continue;
        const double *R = w->R + 9 * b, *pt = row + 1, *force = row + 4, *moment = row + 7, *rho = dr + 3 * b;
        double F[3], M[3], dF[3], dM[3];
        for (int x = 0; x < 3; ++x) {
            F[x] = R[x] * force[0] + R[3 + x] * force[1] + R[6 + x] * force[2];
            M[x] = R[x] * moment[0] + R[3 + x] * moment[1] + R[6 + x] * moment[2];
        }
        dF[0] = F[1] * rho[2] - F[2] * rho[1], dF[1] = F[2] * rho[0] - F[0] * rho[2], dF[2] = F[0] * rho[1] - F[1] * rho[0];
        dM[0] = M[1] * rho[2] - M[2] * rho[1], dM[1] = M[2] * rho[0] - M[0] * rho[2], dM[2] = M[0] * rho[1] - M[1] * rho[0];
        double *f = df + 6 * b;
        f[0] += dM[0] + pt[1] * dF[2] - pt[2] * dF[1];
        f[1] += dM[1] + pt[2] * dF[0] - pt[0] * dF[2];
        f[2] += dM[2] + pt[0] * dF[1] - pt[1] * dF[0];
        f[3] += dF[0], f[4] += dF[1], f[5] += dF[2];
    }
}

/* rnea_tangent's secondary links: their torques' tangents on the carriers and along beta. */
static void tangent_secondary(const rd_model *m, const double *qd, int k, int wrt_qd, rd_work *w)
{
    const int nq = m->nq;
    double *dv = w->dv, *da = w->da, *df = w->df, *dtau = w->dtau;
    int *moved = w->moved;
    /* Secondary links (rd_rnea): n_s = I_s (e_s betadd + w_c x e_s betad) on the carrier and
     * I_s e_s . alpha_c along beta: their tangents through w_c, alpha_c and betad = b . qd */
    for (int s = 0; s < m->nr; ++s) {
        const rd_secondary *sl = &m->secondary[s];
        const int c = sl->carrier;
        const double dbd = wrt_qd ? sl->b[k] : 0.0;
        if (c < 0 || (!moved[c] && dbd == 0.0))
            continue;
        double bd = 0.0;
        for (int j = 0; j < nq; ++j)
            bd += sl->b[j] * qd[j];
        const double hx = sl->inertia * sl->axis[0], hy = sl->inertia * sl->axis[1], hz = sl->inertia * sl->axis[2];
        const double *v = w->v + 6 * c, *dw = dv + 6 * c, *dal = da + 6 * c;
        double *f = df + 6 * c;
        f[0] += (dw[1] * hz - dw[2] * hy) * bd + (v[1] * hz - v[2] * hy) * dbd;
        f[1] += (dw[2] * hx - dw[0] * hz) * bd + (v[2] * hx - v[0] * hz) * dbd;
        f[2] += (dw[0] * hy - dw[1] * hx) * bd + (v[0] * hy - v[1] * hx) * dbd;
        moved[c] = 1;
        const double dts = hx * dal[0] + hy * dal[1] + hz * dal[2];
        for (int j = 0; j < nq; ++j)
            dtau[j] += sl->b[j] * dts;
    }
}

/* rnea_tangent's backward pass over the moved bodies and their ancestors. */
static void tangent_backward(const rd_model *m, int k, int wrt_qd, rd_work *w)
{
    const int nb = m->nb;
    double *df = w->df, *dtau = w->dtau;
    int *moved = w->moved;
    /* Backward: dtau_i = S_i . df_i, df_p += X_i^T (df_i + dth_i S_i x* f_i) */
    for (int i = nb - 1; i >= 0; --i) {
        if (!moved[i])
            continue;
        const rd_body *b = &m->body[i];
        double *dfi = df + 6 * i;
        dtau[b->joint] += b->mult * s_dot(b, dfi);
        if (b->parent < 0)
            continue;
        if (!wrt_qd && b->joint == k)
            axis_cross_force_add(b, w->f + 6 * i, b->mult, dfi);
        xt_force(w->E + 9 * i, w->r + 3 * i, dfi, df + 6 * b->parent, 1);
        moved[b->parent] = 1;
    }
}

/* w->dtau = d tau / d q_k (wrt_qd = 0) or d tau / d qd_k (wrt_qd = 1), after rd_rnea(q, qd, qdd)
 * left its state in w (E, r, v, a, c, the subtree forces f, and R when there are wrenches).
 * Each line of the recursion differentiated (the derivatives of Carpentier & Mansard, RSS 2018,
 * written in body coordinates): with d(X_i y)/d theta_i = (X_i y) x S_i (Featherstone 2.29 for
 * a joint transform) and dth_i = mult_i for a body that joint k drives (mimic: several), else 0,
 *   dv_i = X_i dv_p + dth_i (v_i x S_i) + dthd_i S_i
 *   da_i = X_i da_p + dth_i ((X_i a_p) x S_i) + thd_i (dv_i x S_i) + dthd_i (v_i x S_i)
 *   df_i = I_i da_i + dv_i x* I_i v_i + v_i x* I_i dv_i     (+ wrenches, secondary links)
 *   dtau_i = S_i . df_i,   df_p += X_i^T (df_i + dth_i S_i x* f_i).
 * Only the bodies the coordinate moves are visited forward ("moved"); the backward pass visits
 * them and their ancestors. */
static void rnea_tangent(const rd_model *m, const rd_input *in, const rd_options *o, int k, int wrt_qd, rd_work *w)
{
    const double *qd = in->qd;
    tangent_forward(m, qd, in->qdd, k, wrt_qd, w);
    if (!wrt_qd)
        tangent_wrenches(m, in->fx, in->nfx, w);
    tangent_secondary(m, qd, k, wrt_qd, w);
    tangent_backward(m, k, wrt_qd, w);
    if (wrt_qd && o->friction)
        w->dtau[k] += friction_slope(m, k, qd[k], o->smooth);
}


static inline double dot6(const double *x, const double *y)
{
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3] + x[4] * y[4] + x[5] * y[5];
}

/* B = v x* Y - Y v x, the rate of a base-frame spatial inertia Y = [[Io, [h]x], [[h]x^T, m 1]]
 * carried with velocity v = [w; u] (Featherstone 2.64). By blocks, with [a]x [b]x = b a^T - (a . b) 1:
 * [[X, [c]x], [-[c]x, 0]], X = [w]x Io - Io [w]x - h u^T - u h^T + 2 (u . h) 1 (symmetric),
 * c = w x h + m u; so B is symmetric and kept as X (row-major, 9) and c (3): B[0..8], B[9..11]. */
static void inertia_rate(const rd_inertia *I, const double *v, double *B)
{
    const double *w = v, *u = v + 3, *h = I->h, *Io = I->Io;
    const double uh2 = 2.0 * (u[0] * h[0] + u[1] * h[1] + u[2] * h[2]);
    /* [w]x Io - Io [w]x = A + A^T with A = [w]x Io (Io symmetric): A_xy = (w x Io e_y)_x */
    double A[9];
    for (int y = 0; y < 3; ++y) {
        A[y] = w[1] * Io[6 + y] - w[2] * Io[3 + y];
        A[3 + y] = w[2] * Io[y] - w[0] * Io[6 + y];
        A[6 + y] = w[0] * Io[3 + y] - w[1] * Io[y];
    }
    const double x01 = A[1] + A[3] - h[0] * u[1] - u[0] * h[1];
    const double x02 = A[2] + A[6] - h[0] * u[2] - u[0] * h[2];
    const double x12 = A[5] + A[7] - h[1] * u[2] - u[1] * h[2];
    B[0] = 2.0 * (A[0] - h[0] * u[0]) + uh2, B[1] = x01, B[2] = x02;
    B[3] = x01, B[4] = 2.0 * (A[4] - h[1] * u[1]) + uh2, B[5] = x12;
    B[6] = x02, B[7] = x12, B[8] = 2.0 * (A[8] - h[2] * u[2]) + uh2;
    B[9] = w[1] * h[2] - w[2] * h[1] + I->m * u[0];
    B[10] = w[2] * h[0] - w[0] * h[2] + I->m * u[1];
    B[11] = w[0] * h[1] - w[1] * h[0] + I->m * u[2];
}

/* The derivatives of rd_rnea for a tree without wrenches or secondary links, in the base frame
 * (Carpentier & Mansard 2018's formulation, derived again here): moving joint j turns its subtree
 * by the screw s_j = oS_j, so a base-frame quantity of the subtree varies as the screw's action
 * (s x m, s x* f, s x* Y - Y s x) plus the change of the subtree's motion not explained by it:
 *   d ov_i / d q_j  = s x ov_i + dv_j,            dv_j = -(s_j x ov_l)         (l: j's parent)
 *   d oa_i / d q_j  = s x oa_i + alpha_j + dv_j x ov_i,   alpha_j = -(s_j x oa_l) - dv_j x ov_l
 *   d ov_i / d qd_j = s_j,   d oa_i / d qd_j = s_j x ov_i + beta_j,   beta_j = -2 s_j x ov_l.
 * The screw's action cancels in tau_i = oS_i . oF_i for i in j's subtree, which leaves, with the
 * subtree's composite inertia Yc_i, momentum hc_i = sum Y ov and inertia rate Bc_i = sum (ov x* Y - Y ov x):
 *   d tau_i / d q_j  = alpha_j . P_i + dv_j . Q_i,   d tau_i / d qd_j = beta_j . P_i + s_j . Q_i,
 *   P_i = Yc_i oS_i,   Q_i = Bc_i^T oS_i - oS_i x* hc_i;
 * and for i an ancestor of j, d tau_i / d q_j = oS_i . G_j, d tau_i / d qd_j = oS_i . H_j with
 *   G_j = s_j x* oF_j + Yc_j alpha_j + dv_j x* hc_j + Bc_j dv_j,   H_j = Yc_j beta_j + s_j x* hc_j + Bc_j s_j.
 * Mimic joints fold in by the chain rule (theta = mult q + offset). A second derivation of
 * rnea_tangent's numbers (test_derivatives compares the two). Stages: tree_motion (after
 * rd_body_poses), tree_composites, tree_rows, tree_fill. */

/* Base-frame axes oS, velocities ov, accelerations oa (qdd NULL: zero), each body's inertia oY,
 * momentum oh and force of, from the body poses in w. With inertias = 0 only oa and of are
 * recomputed (a new qdd on the same q, qd). */
static void tree_motion(const rd_model *m, const double *qd, const double *qdd, const double *g, int inertias, rd_work *w)
{
    const int nb = m->nb;
    double *ov = w->ov, *oa = w->oa;
    for (int x = 0; x < 6; ++x)
        ov[6 * nb + x] = 0.0, oa[6 * nb + x] = 0.0;
    oa[6 * nb + 3] = -g[0], oa[6 * nb + 4] = -g[1], oa[6 * nb + 5] = -g[2];
    for (int i = 0; i < nb; ++i) {
        const rd_body *b = &m->body[i];
        const int p = b->parent < 0 ? nb : b->parent;
        double *S = w->oS + 6 * i, *v = ov + 6 * i, *a = oa + 6 * i;
        const double thd = b->mult * qd[b->joint], thdd = qdd ? b->mult * qdd[b->joint] : 0.0;
        if (inertias) {
            const double *R = w->R + 9 * i, *pos = w->p + 3 * i;
            double z[3];
            for (int x = 0; x < 3; ++x)
                z[x] = R[3 * x] * b->axis[0] + R[3 * x + 1] * b->axis[1] + R[3 * x + 2] * b->axis[2];
            if (b->type == RD_REVOLUTE) {
                S[0] = z[0], S[1] = z[1], S[2] = z[2];
                S[3] = pos[1] * z[2] - pos[2] * z[1], S[4] = pos[2] * z[0] - pos[0] * z[2], S[5] = pos[0] * z[1] - pos[1] * z[0];
            } else {
                S[0] = S[1] = S[2] = 0.0, S[3] = z[0], S[4] = z[1], S[5] = z[2];
            }
            for (int x = 0; x < 6; ++x)
                v[x] = ov[6 * p + x] + S[x] * thd;
            rd_inertia_move(R, 1, 3, pos, &b->inertia, &w->oY[i], 0); /* Y_i in the base frame: E = R^T */
        }
        double vS[6], *F = w->of + 6 * i, *h = w->oh + 6 * i;
        cross_motion(v, S, vS);
        for (int x = 0; x < 6; ++x)
            a[x] = oa[6 * p + x] + S[x] * thdd + vS[x] * thd;
        if (inertias) { /* (oh, Y a) = Y (v, a), two at once */
            rd_x2 VA[6], U[6];
            for (int x = 0; x < 6; ++x)
                VA[x] = rd_x2_set(v[x], a[x]);
            inertia_times_x2(&w->oY[i], VA, U);
            for (int x = 0; x < 6; ++x)
                h[x] = rd_x2_lane(U[x], 0), F[x] = rd_x2_lane(U[x], 1);
        } else {
            inertia_times(&w->oY[i], a, F);
        }
        cross_force_add(v, h, F);
    }
}

/* y += x, n values, two per SSE2 register (the same sums as one by one). */
static inline void add_to(double *y, const double *x, int n)
{
    int k = 0;
    for (; k + 1 < n; k += 2)
        rd_x2_store(y + k, rd_x2_add(rd_x2_load(y + k), rd_x2_load(x + k)));
    if (k < n)
        y[k] += x[k];
}

/* The subtrees' composites (one frame: no transform): inertias, rates, momenta (inertias = 1)
 * and forces. */
static void tree_composites(const rd_model *m, int inertias, rd_work *w)
{
    const int nb = m->nb;
    memcpy(w->oFc, w->of, sizeof(double) * 6 * nb);
    if (inertias) {
        memcpy(w->oYc, w->oY, sizeof(rd_inertia) * nb);
        memcpy(w->ohc, w->oh, sizeof(double) * 6 * nb);
        for (int i = 0; i < nb; ++i)
            inertia_rate(&w->oY[i], w->ov + 6 * i, w->oBc + 12 * i);
    }
    for (int i = nb - 1; i >= 0; --i) {
        const int p = m->body[i].parent;
        if (p < 0)
            continue;
        add_to(w->oFc + 6 * p, w->oFc + 6 * i, 6);
        if (!inertias)
            continue;
        rd_inertia *Yp = &w->oYc[p];
        const rd_inertia *Yi = &w->oYc[i];
        Yp->m += Yi->m;
        add_to(Yp->h, Yi->h, 3);
        add_to(Yp->Io, Yi->Io, 9);
        add_to(w->oBc + 12 * p, w->oBc + 12 * i, 12);
        add_to(w->ohc + 6 * p, w->ohc + 6 * i, 6);
    }
}

/* M = A(q) from the composites: A_ij = oS_j . Yc_i oS_i = oS_j . P_i (P_i computed here), j an
 * ancestor of i (Featherstone 6.2 in one frame), folded by the mimic multipliers; rotors added. */
static void tree_mass_matrix(const rd_model *m, double *M, rd_work *w)
{
    const int nb = m->nb, nq = m->nq;
    for (int k = 0; k < nq * nq; ++k)
        M[k] = 0.0;
    for (int i = 0; i < nb; ++i) {
        const rd_body *bi = &m->body[i];
        double *P = w->oP + 6 * i;
        inertia_times(&w->oYc[i], w->oS + 6 * i, P);
        for (int j = i; j >= 0; j = m->body[j].parent) {
            const rd_body *bj = &m->body[j];
            const double mij = bi->mult * bj->mult * dot6(w->oS + 6 * j, P);
            M[bi->joint * nq + bj->joint] += mij;
            if (j != i)
                M[bj->joint * nq + bi->joint] += mij;
        }
    }
    for (int k = 0; k < nq; ++k)
        M[k * nq + k] += m->joint[k].Ia;
}

/* dq, dqd from the composites (P from tree_mass_matrix). Per body: alpha_j, dv_j, Q_i, G_j, H_j,
 * two vectors per operation (lanes): (alpha, dv) through Yc, (dv, S) through x* hc and Bc; Bc S
 * and S x* hc serve both Q and H, and beta_j = 2 dv_j (Yc_j beta_j = 2 Yc_j dv_j, beta_j . P_i =
 * 2 dv_j . P_i, exactly). Then each body i with each of its ancestors j (and itself), two dot
 * products per operation: (alpha_j, dv_j) . P_i, (dv_j, S_j) . Q_i (oW) and S_j . (G_i, H_i) (oG),
 * each lane summing x = 0..5 in dot6's order. */
static void tree_fill(const rd_model *m, double *dq, double *dqd, rd_work *w)
{
    const int nb = m->nb, nq = m->nq;
    const double *ov = w->ov, *oa = w->oa;
    for (int i = 0; i < nb; ++i) {
        const rd_body *b = &m->body[i];
        const int l = b->parent < 0 ? nb : b->parent;
        const double *S = w->oS + 6 * i, *B = w->oBc + 12 * i, *hc = w->ohc + 6 * i, *vl = ov + 6 * l;
        const double *al = oa + 6 * l, *Fc = w->oFc + 6 * i;
        double *W = w->oW + 24 * i, *GH = w->oG + 12 * i, *Q = w->oQ + 6 * i;
        rd_x2 VA[6], S2[6], DA[6], h2[6], Wa[6], Wb[6], U[6], V[6], Z[6];
        double dv[6], t[6], SF[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
        for (int x = 0; x < 6; ++x) {
            VA[x] = rd_x2_set(vl[x], al[x]), S2[x] = rd_x2_set(S[x], S[x]), h2[x] = rd_x2_set(hc[x], hc[x]);
            V[x] = Z[x] = rd_x2_set(0.0, 0.0);
        }
        cross_motion_x2(VA, S2, DA); /* (dv, -(s x oa_l)), dv = -(s x ov_l) = ov_l x s */
        for (int x = 0; x < 6; ++x)
            dv[x] = rd_x2_lane(DA[x], 0);
        cross_motion(vl, dv, t); /* - dv x ov_l = ov_l x dv */
        for (int x = 0; x < 6; ++x) { /* (alpha, dv), (dv, S) */
            Wa[x] = rd_x2_set(rd_x2_lane(DA[x], 1) + t[x], dv[x]), Wb[x] = rd_x2_set(dv[x], S[x]);
            rd_x2_store(W + 2 * x, Wa[x]), rd_x2_store(W + 12 + 2 * x, Wb[x]);
        }
        inertia_times_x2(&w->oYc[i], Wa, U); /* (Yc alpha, Yc dv) */
        cross_force_add_x2(Wb, h2, V);       /* (dv x* hc, S x* hc) */
        rate_times_add_x2(B, Wb, Z);         /* (Bc dv, Bc S) */
        cross_force_add(S, Fc, SF);
        for (int x = 0; x < 6; ++x) {
            /* G_j = Yc_j alpha_j + s_j x* oF_j + dv_j x* hc_j + Bc_j dv_j,
             * H_j = Yc_j beta_j + s_j x* hc_j + Bc_j s_j, Q_i = Bc_i^T S_i - S_i x* hc_i */
            const rd_x2 UF = rd_x2_add(rd_x2_mul(U[x], rd_x2_set(1.0, 2.0)), rd_x2_set(SF[x], 0.0));
            rd_x2_store(GH + 2 * x, rd_x2_add(rd_x2_add(UF, V[x]), Z[x]));
            Q[x] = rd_x2_lane(Z[x], 1) - rd_x2_lane(V[x], 1);
        }
    }
    for (int k = 0; k < nq * nq; ++k)
        dq[k] = 0.0, dqd[k] = 0.0;
    for (int i = 0; i < nb; ++i) {
        const rd_body *bi = &m->body[i];
        const double *P = w->oP + 6 * i, *Q = w->oQ + 6 * i;
        const double *GH = w->oG + 12 * i;
        double *dqi = dq + bi->joint * nq, *dqdi = dqd + bi->joint * nq;
        for (int j = i; j >= 0; j = m->body[j].parent) {
            const rd_body *bj = &m->body[j];
            const double *Wa = w->oW + 24 * j, *Wb = Wa + 12, *S = w->oS + 6 * j;
            rd_x2 lo_a = rd_x2_scale(P[0], rd_x2_load(Wa)), lo_b = rd_x2_scale(Q[0], rd_x2_load(Wb));
            for (int x = 1; x < 6; ++x) {
                lo_a = rd_x2_add(lo_a, rd_x2_scale(P[x], rd_x2_load(Wa + 2 * x)));
                lo_b = rd_x2_add(lo_b, rd_x2_scale(Q[x], rd_x2_load(Wb + 2 * x)));
            }
            const double mm = bi->mult * bj->mult;
            dqi[bj->joint] += mm * (rd_x2_lane(lo_a, 0) + rd_x2_lane(lo_b, 0));
            dqdi[bj->joint] += mm * (2.0 * rd_x2_lane(lo_a, 1) + rd_x2_lane(lo_b, 1));
            if (j != i) {
                rd_x2 up = rd_x2_scale(S[0], rd_x2_load(GH));
                for (int x = 1; x < 6; ++x)
                    up = rd_x2_add(up, rd_x2_scale(S[x], rd_x2_load(GH + 2 * x)));
                dq[bj->joint * nq + bi->joint] += mm * rd_x2_lane(up, 0);
                dqd[bj->joint * nq + bi->joint] += mm * rd_x2_lane(up, 1);
            }
        }
    }
}

/* Whether the base-frame formulas apply: no wrench, no secondary link, the test switch off. */
static int tree_derivatives(const rd_model *m, int nfx) { return nfx == 0 && m->nr == 0 && !rd_tangent_derivatives; }

/* The tree's stages up to A(q) into M (and P): poses, motion at qdd (NULL: zero), composites. */
static void tree_start(const rd_model *m, const double *q, const double *qd, const double *qdd, const double *g,
                       double *M, rd_work *w)
{
    rd_body_poses(m, q, w);
    tree_motion(m, qd, qdd, g, 1, w);
    tree_composites(m, 1, w);
    tree_mass_matrix(m, M, w);
}

/* The tree's derivatives from its composites, friction's slope on the diagonal of d/dqd. Out of line,
 * as the trees' two callers had it (inlined into both it measured 3 % slower). */
static RD_NOINLINE void tree_finish(const rd_model *m, const double *qd, const rd_options *o, double *dq, double *dqd, rd_work *w)
{
    tree_fill(m, dq, dqd, w);
    for (int k = 0; k < m->nq && o->friction; ++k)
        dqd[k * m->nq + k] += friction_slope(m, k, qd[k], o->smooth);
}

/* rd_rnea_derivatives of any model: rd_rnea, then rnea_tangent along each coordinate, and M by
 * rd_crba. Out of line and cold: its 4 kB stay out of the trees' path through the instruction cache. */
static RD_COLD int tangent_derivatives(const rd_model *m, const rd_input *in, const rd_options *o, double *dtau_dq,
                                       double *dtau_dqd, double *M, rd_work *w)
{
    const int nq = m->nq;
    int st;
    if ((st = rd_rnea(m, in, o, w->dtau, w)) != RD_OK)
        return st;
    for (int k = 0; k < nq; ++k)
        for (int wrt_qd = 0; wrt_qd < 2; ++wrt_qd) {
            double *out = wrt_qd ? dtau_dqd : dtau_dq;
            rnea_tangent(m, in, o, k, wrt_qd, w);
            for (int j = 0; j < nq; ++j)
                out[j * nq + k] = w->dtau[j];
        }
    return M ? rd_crba(m, in->q, M, w) : RD_OK;
}

/* dtau/dq and dtau/dqd (nq x nq, row-major: [j, k] = d tau_j / d q_k) of rd_rnea at (q, qd, qdd),
 * friction and wrenches as there, and M = A(q) (rd_crba) when M is not NULL. */
int rd_rnea_derivatives(const rd_model *m, const rd_input *in, const rd_options *o, double *dtau_dq, double *dtau_dqd,
                        double *M, rd_work *w)
{
    const int nq = m->nq;
    const rd_options op = rd_options_of(m, o);
    int st;
    if (tree_derivatives(m, in->nfx)) {
        tree_start(m, in->q, in->qd, in->qdd, op.gravity, M ? M : w->L, w);
        tree_finish(m, in->qd, &op, dtau_dq, dtau_dqd, w);
        if (M && !rd_finite(M, nq * nq))
            return RD_BAD_OUTPUT;
    } else if ((st = tangent_derivatives(m, in, &op, dtau_dq, dtau_dqd, M, w)) != RD_OK) {
        return st;
    }
    return rd_finite(dtau_dq, nq * nq) && rd_finite(dtau_dqd, nq * nq) ? RD_OK : RD_BAD_OUTPUT;
}

/* A^-1 = L^-T L^-1 into Minv (nq x nq, symmetric) from the Cholesky factor L (lower triangle), with
 * L^-1 in the lower triangle of T: nq divisions, where solving A x = e_k column by column took 2 nq
 * divisions per column. */
static void inverse_from_factor(const double *L, int nq, double *T, double *Minv)
{
    for (int i = 0; i < nq; ++i) {
        const double inv = 1.0 / L[i * nq + i];
        T[i * nq + i] = inv;
        for (int j = 0; j < i; ++j) {
            double s = 0.0;
            for (int k = j; k < i; ++k)
                s += L[i * nq + k] * T[k * nq + j];
            T[i * nq + j] = -s * inv;
        }
    }
    for (int j = 0; j < nq; ++j)
        for (int k = j; k < nq; ++k) {
            double s = 0.0;
            for (int i = k; i < nq; ++i)
                s += T[i * nq + j] * T[i * nq + k];
            Minv[j * nq + k] = Minv[k * nq + j] = s;
        }
}

/* The tree's d tau/dq, d tau/dqd at qdd = rd_aba's (written into w->H, w->L) and A^-1 (into Minv,
 * from the Cholesky factor of A in w->L): qdd = A^-1 (tau - h - Gamma_f) from the composites (the
 * bias h_i = oS_i . oFc_i at qdd = 0), then the accelerations and forces again at that qdd for the
 * derivatives. */
static int tree_at_aba(const rd_model *m, const rd_input *in, const rd_options *o, double *Minv, rd_work *w)
{
    const int nq = m->nq;
    const double *qd = in->qd, *tau = in->tau;
    tree_start(m, in->q, qd, NULL, o->gravity, w->L, w);
    double *b = w->dtau, *acc = w->acc;
    for (int k = 0; k < nq; ++k)
        b[k] = tau[k] - (o->friction ? rd_friction(m, k, qd[k], o->smooth) : 0.0);
    for (int i = 0; i < m->nb; ++i)
        b[m->body[i].joint] -= m->body[i].mult * dot6(w->oS + 6 * i, w->oFc + 6 * i);
    if (rd_cholesky(w->L, nq) != RD_OK) { /* rd_aba words which joint moves no inertia */
        const rd_input state = {in->q, qd, NULL, tau, NULL, 0};
        const int st = rd_aba(m, &state, o, w->acc, w);
        return st != RD_OK ? st : RD_NOT_POSITIVE_DEFINITE;
    }
    inverse_from_factor(w->L, nq, w->H, Minv); /* the output A^-1 also gives qdd = A^-1 b */
    for (int j = 0; j < nq; ++j) {
        double s = 0.0;
        for (int i = 0; i < nq; ++i)
            s += Minv[j * nq + i] * b[i];
        acc[j] = s;
    }
    if (!rd_finite(acc, nq))
        return RD_BAD_OUTPUT;
    tree_motion(m, qd, acc, o->gravity, 0, w);
    tree_composites(m, 0, w);
    tree_finish(m, qd, o, w->H, w->L, w); /* the factor and L^-1 are spent */
    return RD_OK;
}

/* The same by rd_aba, then rd_rnea_derivatives at its qdd (any model, wrenches included); dq, dqd:
 * room for d tau/dq, d tau/dqd on their way. */
static RD_COLD int general_at_aba(const rd_model *m, const rd_input *in, const rd_options *o, double *dq, double *dqd,
                                  double *Minv, rd_work *w)
{
    const int nq = m->nq;
    int st = rd_aba(m, in, o, w->acc, w);
    const rd_input at = {in->q, in->qd, w->acc, NULL, in->fx, in->nfx};
    if (st == RD_OK)
        st = rd_rnea_derivatives(m, &at, o, dq, dqd, w->L, w);
    if (st == RD_OK && rd_cholesky(w->L, nq) != RD_OK)
        st = RD_NOT_POSITIVE_DEFINITE;
    if (st == RD_OK) {
        inverse_from_factor(w->L, nq, w->H, Minv);
        memcpy(w->H, dq, sizeof(double) * nq * nq);
        memcpy(w->L, dqd, sizeof(double) * nq * nq);
    }
    return st;
}

/* D = -A^-1 T and E = -A^-1 U (nq x nq each, A^-1 symmetric): D_jk = -sum_i A^-1_ji T_ik, summed
 * over i in order. Two rows and two columns of both at a time: four independent sums per step,
 * where one sum at a time waited on its own additions (a third of aba_derivatives' product). */
static void minus_inverse_times(const double *Minv, int nq, const double *T, const double *U, double *D, double *E)
{
    for (int j = 0; j < nq; j += 2) {
        const int j1 = j + 1 < nq ? j + 1 : j; /* an odd nq: the last row twice */
        const double *a = Minv + j * nq, *b = Minv + j1 * nq;
        int k = 0;
        for (; k + 1 < nq; k += 2) {
            rd_x2 t = rd_x2_load(T + k), u = rd_x2_load(U + k);
            rd_x2 ta = rd_x2_scale(a[0], t), tb = rd_x2_scale(b[0], t), ua = rd_x2_scale(a[0], u), ub = rd_x2_scale(b[0], u);
            for (int i = 1; i < nq; ++i) {
                t = rd_x2_load(T + i * nq + k), u = rd_x2_load(U + i * nq + k);
                ta = rd_x2_add(ta, rd_x2_scale(a[i], t)), tb = rd_x2_add(tb, rd_x2_scale(b[i], t));
                ua = rd_x2_add(ua, rd_x2_scale(a[i], u)), ub = rd_x2_add(ub, rd_x2_scale(b[i], u));
            }
            rd_x2_store(D + j * nq + k, rd_x2_neg(ta)), rd_x2_store(D + j1 * nq + k, rd_x2_neg(tb));
            rd_x2_store(E + j * nq + k, rd_x2_neg(ua)), rd_x2_store(E + j1 * nq + k, rd_x2_neg(ub));
        }
        for (; k < nq; ++k) { /* an odd nq: the last column */
            double ta = a[0] * T[k], tb = b[0] * T[k], ua = a[0] * U[k], ub = b[0] * U[k];
            for (int i = 1; i < nq; ++i) {
                ta += a[i] * T[i * nq + k], tb += b[i] * T[i * nq + k];
                ua += a[i] * U[i * nq + k], ub += b[i] * U[i * nq + k];
            }
            D[j * nq + k] = -ta, D[j1 * nq + k] = -tb, E[j * nq + k] = -ua, E[j1 * nq + k] = -ub;
        }
    }
}

/* dqdd/dq, dqdd/dqd and A^-1 of rd_aba at (q, qd, tau): qdd = A^-1 (tau - h(q, qd) - ...), so
 * dqdd/dx = -A^-1 dtau/dx evaluated at the motion's own qdd (the inverse dynamics identity,
 * as Carpentier & Mansard's ABA derivatives), A^-1 from the Cholesky factor of A (rd_crba). */
int rd_aba_derivatives(const rd_model *m, const rd_input *in, const rd_options *o, double *dqdd_dq, double *dqdd_dqd,
                       double *Minv, rd_work *w)
{
    const int nq = m->nq;
    const rd_options op = rd_options_of(m, o);
    const int st = tree_derivatives(m, in->nfx) ? tree_at_aba(m, in, &op, Minv, w)
                                                : general_at_aba(m, in, &op, dqdd_dq, dqdd_dqd, Minv, w);
    if (st != RD_OK)
        return st;
    minus_inverse_times(Minv, nq, w->H, w->L, dqdd_dq, dqdd_dqd); /* dtau/dq, dtau/dqd */
    return rd_finite(dqdd_dq, nq * nq) && rd_finite(dqdd_dqd, nq * nq) && rd_finite(Minv, nq * nq) ? RD_OK : RD_BAD_OUTPUT;
}
