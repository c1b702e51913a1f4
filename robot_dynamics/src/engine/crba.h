/* The steps of rd_crba (algorithms.c includes this file once, before rd_crba, after the joint
 * transforms' helpers it calls: placement, x_motion): the composite inertias and H by composite
 * rigid bodies (Featherstone 6.2, 6.7, Khalil [7.64]), with the joint transforms X_i (E_i =
 * body_R_parent, r_i the body origin in parent coordinates), and the secondary links of a geared
 * robot (Chen & Wang eq. 18).
 *
 * A composite inertia is held as its pseudo-inertia, the symmetric 4x4 J = [S h; h^T m] with the
 * second moment S = int p p^T dm = tr(Io)/2 1 - Io about the body origin, h = m c: it moves to the
 * parent's coordinates by J_p = T J T^T, T = [R r; 0 1], R = E^T, a product of 4x4 matrices computed
 * four numbers at a time, and its rotational inertia is Io = tr(S) 1 - S again. The force columns of
 * a subtree move to the parent four at a time too. With the compiler's vector types rd_crba is
 * compiled for AVX2 as well (chosen at load time), these steps inlined into both: the same doubles.
 */
#ifndef RD_CRBA_H
#define RD_CRBA_H

#include <math.h>
#include <string.h>

#include "internal.h"

#pragma GCC diagnostic ignored "-Wpsabi" /* four-number vectors pass between inline functions only */

/* the usual case (a revolute axis along a coordinate axis) laid out first, the others out of its
 * way */
#if defined(__GNUC__)
#define RD_USUALLY(x) __builtin_expect(!!(x), 1)
#else
#define RD_USUALLY(x) (x)
#endif


/* -- four numbers at once ------------------------------------------------------------------------- */
#if RD_LANES == 4
typedef double v4 __attribute__((vector_size(32), aligned(8)));
static RD_HOT v4 v4_set(double a, double b, double c, double d) { return (v4){a, b, c, d}; }
static RD_HOT v4 v4_splat(double a) { return (v4){a, a, a, a}; }
static RD_HOT v4 v4_load(const double *p) { return *(const v4 *)p; }
/* (macros: a function taking these vectors by value draws GCC's note on their ABI) */
#define v4_store(p, x) (*(v4 *)(p) = (x))
#define v4_add(a, b) ((a) + (b))
#define v4_sub(a, b) ((a) - (b))
#define v4_mul(a, b) ((a) * (b))
/* lane l of *x set to y (by a mask: no store and reload) */
static RD_HOT void v4_put(v4 *x, int l, double y)
{
    typedef long long v4i __attribute__((vector_size(32)));
    const v4i lane = {0, 1, 2, 3}, m = lane == (v4i){l, l, l, l};
    *x = (v4)(((v4i)*x & ~m) | ((v4i)v4_splat(y) & m));
}
#else
typedef struct {
    double l[4];
} v4;
static RD_HOT v4 v4_set(double a, double b, double c, double d)
{
    v4 x;
    x.l[0] = a, x.l[1] = b, x.l[2] = c, x.l[3] = d;
    return x;
}
static RD_HOT v4 v4_splat(double a) { return v4_set(a, a, a, a); }
static RD_HOT v4 v4_load(const double *p) { return v4_set(p[0], p[1], p[2], p[3]); }
static RD_HOT void v4_store(double *p, v4 x) { p[0] = x.l[0], p[1] = x.l[1], p[2] = x.l[2], p[3] = x.l[3]; }
static RD_HOT v4 v4_add(v4 a, v4 b) { return v4_set(a.l[0] + b.l[0], a.l[1] + b.l[1], a.l[2] + b.l[2], a.l[3] + b.l[3]); }
static RD_HOT v4 v4_sub(v4 a, v4 b) { return v4_set(a.l[0] - b.l[0], a.l[1] - b.l[1], a.l[2] - b.l[2], a.l[3] - b.l[3]); }
static RD_HOT v4 v4_mul(v4 a, v4 b) { return v4_set(a.l[0] * b.l[0], a.l[1] * b.l[1], a.l[2] * b.l[2], a.l[3] * b.l[3]); }
static RD_HOT void v4_put(v4 *x, int l, double y) { x->l[l] = y; }
#endif

/* -- composite inertias ------------------------------------------------------------------------------ */

enum { RD_J = 16 }; /* a pseudo-inertia's numbers (w->Ic, rd_body.J0): the rows of J, row-major */

/* The rows x0..x3 of a 4x4 matrix transposed in place. */
static RD_HOT void v4_transpose(v4 *x0, v4 *x1, v4 *x2, v4 *x3)
{
#if RD_LANES == 4 && (defined(__clang__) || __GNUC__ >= 12)
    const v4 a = __builtin_shufflevector(*x0, *x1, 0, 4, 2, 6), b = __builtin_shufflevector(*x0, *x1, 1, 5, 3, 7);
    const v4 c = __builtin_shufflevector(*x2, *x3, 0, 4, 2, 6), d = __builtin_shufflevector(*x2, *x3, 1, 5, 3, 7);
    *x0 = __builtin_shufflevector(a, c, 0, 1, 4, 5), *x1 = __builtin_shufflevector(b, d, 0, 1, 4, 5);
    *x2 = __builtin_shufflevector(a, c, 2, 3, 6, 7), *x3 = __builtin_shufflevector(b, d, 2, 3, 6, 7);
#else
    double t[16];
    v4_store(t, *x0), v4_store(t + 4, *x1), v4_store(t + 8, *x2), v4_store(t + 12, *x3);
    *x0 = v4_set(t[0], t[4], t[8], t[12]), *x1 = v4_set(t[1], t[5], t[9], t[13]);
    *x2 = v4_set(t[2], t[6], t[10], t[14]), *x3 = v4_set(t[3], t[7], t[11], t[15]);
#endif
}

/* The joint transform (E, r) as T = [R r; 0 1], R = E^T: its entries T_ca = E[3 a + c] (a < 3),
 * T_c3 = r_c in all four lanes (t[4 c + a]), shared by the composite and the columns. */
static RD_HOT void transform_splats(const double *E, const double *r, v4 t[12])
{
    for (int c = 0; c < 3; ++c) {
        for (int a = 0; a < 3; ++a)
            t[4 * c + a] = v4_splat(E[3 * a + c]);
        t[4 * c + 3] = v4_splat(r[c]);
    }
}

/* Jp (+)= T J T^T (accumulate; else Jp = J0 + T J T^T): B = T J by rows (row c of T J is
 * sum_a T_ca J_a, row 3 is J_3), then T B^T by the rows of B^T (J is symmetric: T J T^T = T (T J)^T).
 * Every value is formed before Jp is written. */
static RD_HOT void composite_to_parent(const v4 t[12], const double *J, const double *J0, double *Jp, int accumulate)
{
    const v4 j0 = v4_load(J), j1 = v4_load(J + 4), j2 = v4_load(J + 8), j3 = v4_load(J + 12);
    v4 b[4];
    for (int c = 0; c < 3; ++c) /* summed in pairs: a shorter chain from J to Jp */
        b[c] = v4_add(v4_add(v4_mul(t[4 * c], j0), v4_mul(t[4 * c + 1], j1)), v4_add(v4_mul(t[4 * c + 2], j2), v4_mul(t[4 * c + 3], j3)));
    b[3] = j3;
    v4_transpose(&b[0], &b[1], &b[2], &b[3]);
    const double *base = accumulate ? Jp : J0;
    for (int c = 0; c < 3; ++c) {
        const v4 x = v4_add(v4_add(v4_mul(t[4 * c], b[0]), v4_mul(t[4 * c + 1], b[1])), v4_add(v4_mul(t[4 * c + 2], b[2]), v4_mul(t[4 * c + 3], b[3])));
        v4_store(Jp + 4 * c, v4_add(v4_load(base + 4 * c), x));
    }
    v4_store(Jp + 12, v4_add(v4_load(base + 12), b[3]));
}

/* F = Ic [sg e_k; 0] = sg [Io e_k; e_k x h] (a revolute axis +-e_k), k inlined constant:
 * Io e_k = (S_uu + S_vv) e_k - S_uk e_u - S_vk e_v, e_k x h = h_u e_v - h_v e_u. */
static RD_HOT void axis_column(int k, double sg, const double *J, double *F, int stride)
{
    const int u = (k + 1) % 3, v = (k + 2) % 3;
    F[k * stride] = sg * (J[5 * u] + J[5 * v]);
    F[u * stride] = -sg * J[4 * u + k], F[v * stride] = -sg * J[4 * v + k];
    F[(3 + k) * stride] = 0.0, F[(3 + u) * stride] = -sg * J[4 * v + 3], F[(3 + v) * stride] = sg * J[4 * u + 3];
}

/* F = Ic S: the force that accelerates body b's subtree at unit joint rate, into F[0], F[stride],
 * ... F[5 stride], from J: Io e = tr(S) e - S e, I [e; 0] = [Io e; e x h], I [0; e] = [h x e; m e]. */
static RD_HOT void composite_column(const rd_body *b, const double *J, double *F, int stride)
{
    if (RD_USUALLY(b->type == RD_REVOLUTE && b->coord >= 0)) {
        const double sg = b->axis[b->coord];
        if (b->coord == 0)
            axis_column(0, sg, J, F, stride);
        else if (b->coord == 1)
            axis_column(1, sg, J, F, stride);
        else
            axis_column(2, sg, J, F, stride);
        return;
    }
    const double hx = J[3], hy = J[7], hz = J[11];
    const double ex = b->axis[0], ey = b->axis[1], ez = b->axis[2];
    if (b->type == RD_REVOLUTE) {
        const double tr = J[0] + J[5] + J[10];
        F[0] = tr * ex - (J[0] * ex + J[1] * ey + J[2] * ez);
        F[stride] = tr * ey - (J[4] * ex + J[5] * ey + J[6] * ez);
        F[2 * stride] = tr * ez - (J[8] * ex + J[9] * ey + J[10] * ez);
        F[3 * stride] = ey * hz - ez * hy, F[4 * stride] = ez * hx - ex * hz, F[5 * stride] = ex * hy - ey * hx;
    } else {
        F[0] = hy * ez - hz * ey, F[stride] = hz * ex - hx * ez, F[2 * stride] = hx * ey - hy * ex;
        F[3 * stride] = J[15] * ex, F[4 * stride] = J[15] * ey, F[5 * stride] = J[15] * ez;
    }
}

/* -- the force columns of a subtree ------------------------------------------------------------------ */

/* The force columns k0..k1 of F (6 rows of `stride`) moved from body to parent coordinates, F_k =
 * X^T F_k = [E^T n + r x E^T f; E^T f], four at a time from k1 down, column k0 taken from Fi (six
 * values) into its lane rather than stored first: a load of four columns that one of them had just
 * been stored alone would wait for the store. The last four also move up to three columns below
 * k0, which are not computed yet (rd_crba reaches the bodies from the leaves, and every column
 * below k0 is an ancestor's or an earlier branch's; they lie in F's padding below column 0) and
 * are written later. */
static RD_HOT void columns_to_parent(const v4 t[12], double *F, int stride, int k0, int k1, const double *Fi)
{
    for (int k = k1 - 3; k > k0 - 4; k -= 4) {
        double *c = F + k;
        v4 x[6];
        for (int y = 0; y < 6; ++y)
            x[y] = v4_load(c + y * stride);
        if (k0 - k >= 0) /* the last four: column k0 in lane k0 - k */
            for (int y = 0; y < 6; ++y)
                v4_put(&x[y], k0 - k, Fi[y]);
        v4 f[3], n[3];
        for (int y = 0; y < 3; ++y) { /* E^T f, E^T n: row y of R = E^T is T's */
            f[y] = v4_add(v4_add(v4_mul(t[4 * y], x[3]), v4_mul(t[4 * y + 1], x[4])), v4_mul(t[4 * y + 2], x[5]));
            n[y] = v4_add(v4_add(v4_mul(t[4 * y], x[0]), v4_mul(t[4 * y + 1], x[1])), v4_mul(t[4 * y + 2], x[2]));
        }
        const v4 rx = t[3], ry = t[7], rz = t[11];
        v4_store(c, v4_add(n[0], v4_sub(v4_mul(ry, f[2]), v4_mul(rz, f[1]))));
        v4_store(c + stride, v4_add(n[1], v4_sub(v4_mul(rz, f[0]), v4_mul(rx, f[2]))));
        v4_store(c + 2 * stride, v4_add(n[2], v4_sub(v4_mul(rx, f[1]), v4_mul(ry, f[0]))));
        v4_store(c + 3 * stride, f[0]), v4_store(c + 4 * stride, f[1]), v4_store(c + 5 * stride, f[2]);
    }
}

/* The row length of rd_crba's force columns (w->Fcol): nb + 4 (four columns of padding before
 * column 0), at least 16 (a constant for up to 12 bodies). */
static inline int rd_crba_stride(int nb) { return nb + 4 > 16 ? nb + 4 : 16; }

/* H's lower triangle += S_i . F_k for the bodies i, k (k in i's subtree, F_k in i's coordinates),
 * mapped to their joints (mimic joints: H_jk += mult_i mult_k S_i . F_k, both orders). */
static inline void add_pair(const rd_model *m, const rd_body *bi, int i, int k, double val, double *H)
{
    const rd_body *bk = &m->body[k];
    const int ji = bi->joint, jk = bk->joint, nq = m->nq;
    val *= bi->mult * bk->mult;
    if (ji == jk)
        H[ji * nq + ji] += k == i ? val : 2.0 * val;
    else
        H[ji > jk ? ji * nq + jk : jk * nq + ji] += val;
}

/* One pass of crba_blocks: the model, plain (H_ik and H_ki written; else added to the joints'
 * entries), the force columns (6 rows of `stride`), H and the sum of its written entries. */
typedef struct {
    const rd_model *m;
    int plain, stride;
    double *F, *H, sum;
} crba_pass;

/* H_ik = S_i . F_k for the columns k = i..last of body i's subtree in i's coordinates: column i
 * from Fi (six values), the others from the pass's F; `extra` added on the diagonal. plain: written
 * with H_ki, the rotor inertia on the diagonal, the entries added to the pass's sum; else added to
 * the joints' entries of the lower triangle. */
static RD_HOT void subtree_row(crba_pass *c, const rd_body *b, int i, int last, const double *Fi, double extra)
{
    const rd_model *m = c->m;
    const int nq = m->nq, stride = c->stride, off = b->type == RD_REVOLUTE ? 0 : 3;
    double *Hi = c->H + i * nq, *Hk = c->H + i * nq + i; /* row i, then down column i */
    if (RD_USUALLY(b->coord >= 0)) {
        const int x = off + b->coord;
        const double sg = b->axis[b->coord], *row = c->F + x * stride;
        if (c->plain) {
            c->sum += Hi[i] = sg * Fi[x] + extra + m->joint[i].Ia;
            for (int k = i + 1; k <= last; ++k)
                c->sum += Hi[k] = *(Hk += nq) = sg * row[k];
        } else {
            add_pair(m, b, i, i, sg * Fi[x] + extra, c->H);
            for (int k = i + 1; k <= last; ++k)
                add_pair(m, b, i, k, sg * row[k], c->H);
        }
    } else {
        const double ex = b->axis[0], ey = b->axis[1], ez = b->axis[2], *Fs = c->F + off * stride;
        for (int k = i; k <= last; ++k) {
            const double t = k == i ? ex * Fi[off] + ey * Fi[off + 1] + ez * Fi[off + 2] + extra
                                    : ex * Fs[k] + ey * Fs[stride + k] + ez * Fs[2 * stride + k];
            if (!c->plain)
                add_pair(m, b, i, k, t, c->H);
            else if (k == i)
                c->sum += Hi[i] = t + m->joint[i].Ia;
            else
                c->sum += Hi[k] = *(Hk += nq) = t;
        }
    }
}

/* A root's row from one of its children i (a body whose parent p has none): with m = X_i S_p, p's
 * joint axis in i's coordinates, H_pk = S_p . X_i^T F_k = m . F_k for the columns k = i..last of i's
 * subtree (column i from Fi, the others four at a time from `last` down, as the child moved them),
 * and the subtree's share of H_pp, S_p . X_i^T Ic_i X_i S_p = m . Ic_i m =
 * w . Io w + 2 w . (h x v) + m |v|^2 for m = [w; v], Io w = tr(S) w - S w, returned. The root's
 * composite and columns are never formed: its own share of H_pp is added at p. */
static RD_HOT double root_row(crba_pass *cp, int p, int i, int last, const double *J, const double *Fi, const double *T)
{
    const rd_model *m = cp->m;
    const int nq = m->nq, plain = cp->plain, stride = cp->stride;
    const double *F = cp->F;
    double *H = cp->H, *sum = &cp->sum;
    const rd_body *bp = &m->body[p];
    const int prismatic = bp->type != RD_REVOLUTE;
    double S[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, mv[6];
    for (int x = 0; x < 3; ++x)
        S[3 * prismatic + x] = bp->axis[x];
    x_motion(T, T + 9, S, mv);
    const double *wv = mv, *v = mv + 3, h[3] = {J[3], J[7], J[11]};
    double wIw = (J[0] + J[5] + J[10]) * (wv[0] * wv[0] + wv[1] * wv[1] + wv[2] * wv[2]);
    for (int x = 0; x < 3; ++x)
        wIw -= wv[x] * (J[4 * x] * wv[0] + J[4 * x + 1] * wv[1] + J[4 * x + 2] * wv[2]);
    const double hv[3] = {h[1] * v[2] - h[2] * v[1], h[2] * v[0] - h[0] * v[2], h[0] * v[1] - h[1] * v[0]};
    const double whv = wv[0] * hv[0] + wv[1] * hv[1] + wv[2] * hv[2];
    double t0 = 0.0; /* H_pi from column i (Fi) */
    for (int x = 0; x < 6; ++x)
        t0 += mv[x] * Fi[x];
    if (plain)
        *sum += H[p * nq + i] = H[i * nq + p] = t0;
    else
        add_pair(m, bp, p, i, t0, H);
    v4 ms[6];
    for (int x = 0; x < 6; ++x)
        ms[x] = v4_splat(mv[x]);
    for (int k = last - 3; k > i - 3; k -= 4) { /* columns i + 1..last, as the child stored them */
        const double *c = F + k;
        double t[4];
        v4_store(t, v4_add(v4_add(v4_add(v4_mul(ms[0], v4_load(c)), v4_mul(ms[1], v4_load(c + stride))),
                                  v4_add(v4_mul(ms[2], v4_load(c + 2 * stride)), v4_mul(ms[3], v4_load(c + 3 * stride)))),
                           v4_add(v4_mul(ms[4], v4_load(c + 4 * stride)), v4_mul(ms[5], v4_load(c + 5 * stride)))));
        for (int l = k > i + 1 ? 0 : i + 1 - k; l < 4; ++l) {
            if (plain)
                *sum += H[p * nq + k + l] = H[(k + l) * nq + p] = t[l];
            else
                add_pair(m, bp, p, k + l, t[l], H);
        }
    }
    return wIw + 2.0 * whv + J[15] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

/* The composite inertias and H, in one pass from the leaves, as Pinocchio's crba: body i's subtree
 * is the bodies i..last (depth-first order), whose force columns F_k (w->Fcol: row x at 4 + x
 * stride, four columns of padding before column 0; then the angles, sines and cosines of
 * rd_crba's joint_angles, from which each joint transform is formed here) are all in body i's
 * coordinates when it is reached; H_ik = S_i . F_k, then the columns and the composite move to the parent's coordinates
 * together (Featherstone 6.2, Table 6.2), or, to a root, give its row (root_row). A leaf's
 * composite is its J0; the first of a parent's children to reach it (the one holding its last
 * body) writes J0 + its own, the others add theirs; a root holds its children's shares of H_pp in
 * its J's first number instead. plain: H_ik and H_ki written (zero beyond the subtree, the rotor
 * inertia on the diagonal), else added to the joints' entries of the lower triangle. Returns the
 * sum of the written entries (plain; else 0). */
static RD_HOT double crba_blocks(const rd_model *m, int plain, int stride, double *H, rd_work *w)
{
    const int nb = m->nb, nq = m->nq;
    double *F = w->Fcol + 4;
    const double *qb = F + 6 * stride, *s = qb + stride, *c = s + stride; /* rd_crba's joint_angles */
    crba_pass cp = {m, plain, stride, F, H, 0.0};
    for (int i = nb - 1; i >= 0; --i) {
        const rd_body *b = &m->body[i];
        const int last = b->last, p = b->parent;
        double Fi[6]; /* body i's column, held apart from F until it moves */
        if (p < 0) { /* a root: its own share of H_ii, its children's, and zeros past its subtree */
            composite_column(b, b->J0, Fi, 1);
            subtree_row(&cp, b, i, i, Fi, last != i ? w->Ic[RD_J * i] : 0.0);
            for (int k = last + 1; plain && k < nq; ++k)
                H[i * nq + k] = H[k * nq + i] = 0.0;
            continue;
        }
        const double *J = last == i ? b->J0 : w->Ic + RD_J * i;
        composite_column(b, J, Fi, 1);
        subtree_row(&cp, b, i, last, Fi, 0.0);
        for (int k = last + 1; plain && k < nq; ++k)
            H[i * nq + k] = H[k * nq + i] = 0.0;
        double T[12]; /* the joint transform E, r, formed here */
        placement(b, qb[i], s[i], c[i], 1, T, T + 9);
        const int first = last == m->body[p].last; /* the first of p's children to reach it */
        if (m->body[p].parent < 0) {
            const double share = root_row(&cp, p, i, last, J, Fi, T);
            w->Ic[RD_J * p] = first ? share : w->Ic[RD_J * p] + share;
        } else {
            v4 t[12];
            transform_splats(T, T + 9, t);
            composite_to_parent(t, J, m->body[p].J0, w->Ic + RD_J * p, !first);
            columns_to_parent(t, F, stride, i, last, Fi);
        }
    }
    return cp.sum;
}

/* The same for bodies in any order: the composite inertias first, then each body's column walked
 * to the base. */
static void crba_walks(const rd_model *m, double *H, rd_work *w)
{
    const int nb = m->nb;
    for (int i = 0; i < nb; ++i)
        memcpy(w->Ic + RD_J * i, m->body[i].J0, sizeof m->body[i].J0);
    for (int i = nb - 1; i >= 0; --i)
        if (m->body[i].parent >= 0) {
            v4 t[12];
            transform_splats(w->E + 9 * i, w->r + 3 * i, t);
            composite_to_parent(t, w->Ic + RD_J * i, NULL, w->Ic + RD_J * m->body[i].parent, 1);
        }
    for (int i = 0; i < nb; ++i) {
        const rd_body *bi = &m->body[i];
        double F[6];
        composite_column(bi, w->Ic + RD_J * i, F, 1);
        add_pair(m, bi, i, i, s_dot(bi, F), H);
        for (int j = i; m->body[j].parent >= 0;) {
            xt_force(w->E + 9 * j, w->r + 3 * j, F, F, 0);
            j = m->body[j].parent;
            add_pair(m, &m->body[j], j, i, s_dot(&m->body[j], F), H);
        }
    }
}

/* H += M_s of the secondary links (Chen & Wang eq. 18): B^T diag(I) B + U B + (U B)^T. */
static void add_secondaries(const rd_model *m, double *H, rd_work *w)
{
    const int nq = m->nq;
    for (int s = 0; s < m->nr; ++s) {
        const rd_secondary *sl = &m->secondary[s];
        double *U = w->sU, F[6], Fp[6];
        /* U_k = S_k . X^T...[I_s e_s; 0]: the spin momentum seen by every joint below the
         * carrier (eq. 18b/18c), with mimic joints folded in (G^T U) */
        for (int k = 0; k < nq; ++k)
            U[k] = 0.0;
        for (int k = 0; k < 3; ++k)
            F[k] = sl->inertia * sl->axis[k], F[3 + k] = 0.0;
        for (int j = sl->carrier; j >= 0; j = m->body[j].parent) {
            const rd_body *bj = &m->body[j];
            U[bj->joint] += bj->mult * s_dot(bj, F);
            xt_force(w->E + 9 * j, w->r + 3 * j, F, Fp, 0);
            memcpy(F, Fp, sizeof F);
        }
        for (int x = 0; x < nq; ++x)
            for (int y = 0; y < nq; ++y)
                H[x * nq + y] += sl->inertia * sl->b[x] * sl->b[y] + U[x] * sl->b[y] + sl->b[x] * U[y]; /* eq. (18d) + (18b) + (18c) */
    }
}

#endif
