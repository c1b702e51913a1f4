/* A path q(s) and the dynamics along it, for robot_dynamics.trajectory.time_optimal: the
 * derivatives of a piecewise polynomial path, and the coefficients of the joint torques
 * tau = a(s) u + b(s) x + g(s) in u = sddot and x = sdot^2 (Khalil's inverse model 7.5 along the
 * path: qd = q' sdot, qdd = q' u + q'' x, so a = A(q) q', b = A(q) q'' + C(q, q') q', g = Q(q)).
 *
 * The three coefficient sets are rd_rnea's at (q, 0, q') and (q, q', q'') without gravity and at
 * (q, 0, 0) with it. Four grid points a call run recursions.h's four-state instance, each point's
 * joint transforms computed once for its three sets: the sets at rest need no velocities, only
 * the accelerations a_i = X_i a_p + S_i qdd_i and the forces f_i = I_i a_i; the backward recursion
 * (joint_torques) is rnea's. Each lane's operations are those of the one-state rd_rnea (the
 * states at rest add exact zeros there), which computes the points left over. */

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "internal.h"
#include "recursions_x4.h"

/* The derivatives 0, 1, 2 of the nq joints of piece i at t = s - x_i into out[dx] (nq each) by
 * scipy's evaluate_poly1, its operations in its order (the same doubles as PPoly's evaluation):
 * the sum over the powers p from the lowest of c * t^(p - dx) * prefactor[dx][p], the powers of t
 * by repeated products from 1, prefactor p! / (p - dx)!. */
static void ppoly_at(const rd_ppoly *pp, int i, double t, const double *prefactor, double *out[3], size_t o)
{
    const int order = pp->order, nq = pp->nq;
    const size_t stride = (size_t)pp->pieces * nq;
    const double *c = pp->c + (size_t)i * nq + (size_t)(order - 1) * stride; /* the lowest power's */
    if (order == 4) { /* a cubic, the sums below written out: the products by 1 left out (exact) */
        const double t2 = t * t, t3 = t2 * t;
        const double *c0 = c - 3 * stride, *c1 = c - 2 * stride, *c2 = c - stride;
        for (int k = 0; k < nq; ++k) {
            out[0][o + k] = ((c[k] + c2[k] * t) + c1[k] * t2) + c0[k] * t3;
            out[1][o + k] = (c2[k] + c1[k] * t * 2.0) + c0[k] * t2 * 3.0;
            out[2][o + k] = c1[k] * 2.0 + c0[k] * t * 6.0;
        }
        return;
    }
    double z[RD_PPOLY_MAX_ORDER];
    z[0] = 1.0;
    for (int j = 1; j < order; ++j)
        z[j] = z[j - 1] * t;
    for (int dx = 0; dx < 3; ++dx) {
        double *res = out[dx] + o;
        if (dx >= order) /* a derivative beyond the degree */
            for (int k = 0; k < nq; ++k)
                res[k] = 0.0;
        for (int kp = dx; kp < order; ++kp) {
            const double *ck = c - (ptrdiff_t)kp * (ptrdiff_t)stride, zf = z[kp - dx], f = prefactor[dx * order + kp];
            for (int k = 0; k < nq; ++k)
                res[k] = (kp == dx ? 0.0 : res[k]) + ck[k] * zf * f;
        }
    }
}

int rd_ppoly_derivatives(const rd_ppoly *pp, int n, const double *s, double *q, double *dq, double *ddq)
{
    const int pieces = pp->pieces, nq = pp->nq, order = pp->order;
    if (order < 1 || order > RD_PPOLY_MAX_ORDER)
        return 0;
    double *out[3] = {q, dq, ddq}, prefactor[3 * RD_PPOLY_MAX_ORDER];
    for (int dx = 0; dx < 3; ++dx)
        for (int kp = 0; kp < order; ++kp) {
            double f = 1.0;
            for (int k = kp; k > kp - dx; --k)
                f *= k;
            prefactor[dx * order + kp] = f;
        }
    int i = 0;
    for (int at = 0; at < n; ++at) {
        while (i + 1 < pieces && s[at] >= pp->x[i + 1]) /* x_i <= s < x_(i+1) */
            ++i;
        while (i > 0 && s[at] < pp->x[i])
            --i;
        ppoly_at(pp, i, s[at] - pp->x[i], prefactor, out, (size_t)at * nq);
    }
    for (int dx = 0; dx < 3; ++dx)
        if (!rd_finite(out[dx], n * nq))
            return dx;
    return -1;
}

/* One point's coefficients by three rd_rnea calls (friction off). */
static void coefficients1(const rd_model *m, const rd_input *in, const double *gravity, double *out[3], rd_work *w)
{
    static const double none[3] = {0.0, 0.0, 0.0};
    const rd_options still = {none, 0, 0.0}, weighed = {gravity, 0, 0.0};
    for (int k = 0; k < m->nq; ++k)
        w->zero[k] = 0.0;
    const rd_input A = {in->q, w->zero, in->qd, NULL, NULL, 0}, B = {in->q, in->qd, in->qdd, NULL, NULL, 0};
    const rd_input G = {in->q, w->zero, w->zero, NULL, NULL, 0};
    rd_rnea(m, &A, &still, out[0], w);
    rd_rnea(m, &B, &still, out[1], w);
    rd_rnea(m, &G, &weighed, out[2], w);
}

#if RD_LANES == 4
/* The rows of rd_work.x4 coefficients4 takes (rd_x4 each): 60 nb + 24 + 4 nq. */
static int fits_x4(const rd_model *m)
{
    return 60 * m->nb + 24 + 4 * m->nq <= 80 * m->nb + 12 + m->nq;
}

void rd_path_coefficients4(const rd_model *m, const rd_input *in, const double *gravity, double *out[3], rd_work *w);

/* Four points' coefficients (in: rows of nq values, as rd_rnea4's) into out[0..3) (four rows each). */
RD_TARGET_CLONES void rd_path_coefficients4(const rd_model *m, const rd_input *in, const double *gravity,
                                            double *out[3], rd_work *w)
{
    static const double none[3] = {0.0, 0.0, 0.0};
    const int nb = m->nb, nq = m->nq;
    rd_x4 *E = (rd_x4 *)w->x4, *r = E + 9 * nb, *v = r + 3 * nb, *aB = v + 6 * (nb + 1), *c = aB + 6 * (nb + 1);
    rd_x4 *fB = c + 6 * nb, *aA = fB + 6 * nb, *fA = aA + 6 * (nb + 1), *aG = fA + 6 * nb, *fG = aG + 6 * (nb + 1);
    rd_x4 *t = fG + 6 * nb;
    double *zero = (double *)(t + 3 * nq); /* qd and qdd of the states at rest (4 rows) */
    memset(zero, 0, sizeof(double) * 4 * (size_t)nq);
    /* B: (q, q', q'') without gravity; A and G read its transforms (and its v only where multiplied
     * by their zero joint velocities: a secondary link's spin rate) */
    const rd_arrays_x4 B = {E, r, v, aB, c, fB, NULL, NULL, NULL, NULL, NULL};
    const rd_arrays_x4 A = {E, r, v, aA, NULL, fA, NULL, NULL, NULL, NULL, NULL};
    const rd_arrays_x4 G = {E, r, v, aG, NULL, fG, NULL, NULL, NULL, NULL, NULL};
    forward_x4(m, in->q, in->qd, in->qdd, none, &B);
    body_forces_x4(m, &B);
    for (int k = 0; k < 6; ++k)
        aA[6 * nb + k] = aG[6 * nb + k] = (rd_x4){0.0, 0.0, 0.0, 0.0};
    for (int k = 0; k < 3; ++k)
        aG[6 * nb + 3 + k] = (rd_x4){-gravity[k], -gravity[k], -gravity[k], -gravity[k]}; /* a_0 = [0; -g] */
    for (int i = 0; i < nb; ++i) {
        const rd_body *b = &m->body[i];
        const int p = b->parent < 0 ? nb : b->parent;
        rd_x4 *a = aA + 6 * i;
        x_motion_x4(E + 9 * i, r + 3 * i, aA + 6 * p, a); /* a_i = X_i a_p + S_i qdd_i     [7.44], v = 0 */
        x_motion_x4(E + 9 * i, r + 3 * i, aG + 6 * p, aG + 6 * i);
        const double *dq = in->qd + b->joint;
        const rd_x4 qddi = b->mult * (rd_x4){dq[0], dq[nq], dq[2 * nq], dq[3 * nq]};
        rd_x4 *s = b->type == RD_REVOLUTE ? a : a + 3;
        s[0] += b->axis[0] * qddi, s[1] += b->axis[1] * qddi, s[2] += b->axis[2] * qddi;
        inertia_times_x4(&b->inertia, a, fA + 6 * i); /* f_i = I_i a_i               [7.46], v = 0 */
        inertia_times_x4(&b->inertia, aG + 6 * i, fG + 6 * i);
    }
    joint_torques_x4(m, zero, in->qd, &A, t);
    joint_torques_x4(m, in->qd, in->qdd, &B, t + nq);
    joint_torques_x4(m, zero, zero, &G, t + 2 * nq);
    for (int set = 0; set < 3; ++set)
        for (int l = 0; l < 4; ++l)
            for (int k = 0; k < nq; ++k)
                out[set][l * nq + k] = t[set * nq + k][l];
}
#endif

int rd_path_coefficients(const rd_model *m, int n, const rd_input *path, const double *gravity, double *a, double *b,
                         double *g, rd_work *w)
{
    const int nq = m->nq;
    gravity = gravity ? gravity : m->gravity;
    int i = 0;
#if RD_LANES == 4
    for (; fits_x4(m) && i + 4 <= n; i += 4) {
        const size_t o = (size_t)i * nq;
        const rd_input in = {path->q + o, path->qd + o, path->qdd + o, NULL, NULL, 0};
        double *out[3] = {a + o, b + o, g + o};
        rd_path_coefficients4(m, &in, gravity, out, w);
    }
#endif
    for (; i < n; ++i) {
        const size_t o = (size_t)i * nq;
        const rd_input in = {path->q + o, path->qd + o, path->qdd + o, NULL, NULL, 0};
        double *out[3] = {a + o, b + o, g + o};
        coefficients1(m, &in, gravity, out, w);
    }
    const size_t size = (size_t)n * nq;
    return rd_finite(a, (int)size) && rd_finite(b, (int)size) && rd_finite(g, (int)size) ? RD_OK : RD_BAD_OUTPUT;
}

/* The slopes d (K x nq) of the spline from its tridiagonal system: rows k of sub[k] d_(k-1) +
 * diag[k] d_k + sup[k] d_(k+1) = d_k's right-hand side (in d, overwritten), Gaussian elimination
 * with partial pivoting (LAPACK's dgtsv; fill, the second superdiagonal, in sub). 0, or -1 when
 * singular. */
static int tridiagonal_solve(int K, int nq, double *sub, double *diag, double *sup, double *d)
{
    for (int i = 0; i + 1 < K; ++i) {
        double *r0 = d + (size_t)i * nq, *r1 = r0 + nq;
        const double below = sub[i + 1]; /* row i + 1's entry in column i */
        if (fabs(diag[i]) >= fabs(below)) {
            if (diag[i] == 0.0)
                return -1;
            const double f = below / diag[i];
            diag[i + 1] -= f * sup[i];
            for (int k = 0; k < nq; ++k)
                r1[k] -= f * r0[k];
            sub[i] = 0.0; /* no fill */
        } else {                                /* rows i and i + 1 exchanged */
            const double f = diag[i] / below, t = diag[i + 1];
            diag[i] = below;
            diag[i + 1] = sup[i] - f * t;
            sub[i] = i + 2 < K ? sup[i + 1] : 0.0; /* the fill at (i, i + 2) */
            if (i + 2 < K)
                sup[i + 1] = -f * sub[i];
            sup[i] = t;
            for (int k = 0; k < nq; ++k) {
                const double v = r0[k];
                r0[k] = r1[k], r1[k] = v - f * r1[k];
            }
        }
    }
    if (diag[K - 1] == 0.0)
        return -1;
    for (int i = K - 1; i >= 0; --i) {
        double *r = d + (size_t)i * nq;
        for (int k = 0; k < nq; ++k) {
            double v = r[k];
            if (i + 1 < K)
                v -= sup[i] * r[nq + k];
            if (i + 2 < K)
                v -= sub[i] * r[2 * nq + k];
            r[k] = v / diag[i];
        }
    }
    return 0;
}

int rd_spline_through(int K, int nq, const double *y, double *s, double *c, double *work)
{
    double *sub = work, *diag = sub + K, *sup = diag + K, *d = sup + K;
    if (!rd_finite(y, K * nq))
        return -2;
    s[0] = 0.0;
    for (int i = 0; i + 1 < K; ++i) { /* the chord lengths */
        double sq = 0.0;
        for (int k = 0; k < nq; ++k) {
            const double e = y[(size_t)(i + 1) * nq + k] - y[(size_t)i * nq + k];
            sq += e * e;
        }
        if (sq == 0.0)
            return i;
        s[i + 1] = s[i] + sqrt(sq);
    }
    for (int i = 1; i < K; ++i)
        s[i] /= s[K - 1];
    s[K - 1] = 1.0;
    const size_t P = (size_t)(K - 1) * nq; /* one coefficient's stride in c */
    double *slope = c;                     /* (y_(i+1) - y_i) / h_i, kept in c's lowest power until the end */
    for (int i = 0; i + 1 < K; ++i)
        for (int k = 0; k < nq; ++k)
            slope[(size_t)i * nq + k] = (y[(size_t)(i + 1) * nq + k] - y[(size_t)i * nq + k]) / (s[i + 1] - s[i]);
    /* the slopes' equations, scipy's CubicSpline: interior rows h_i d_(i-1) + 2 (h_(i-1) + h_i) d_i +
     * h_(i-1) d_(i+1) = 3 (h_i m_(i-1) + h_(i-1) m_i); not-a-knot ends (the third derivative
     * continuous at s_1 and s_(K-2)); three waypoints: the parabola (d_0 + d_1 = 2 m_0, d_1 + d_2 = 2 m_1) */
    const double h0 = s[1] - s[0], h1 = s[2] - s[1], hl = s[K - 1] - s[K - 2], hm = s[K - 2] - s[K - 3];
    for (int i = 1; i + 1 < K; ++i) {
        const double hp = s[i] - s[i - 1], hn = s[i + 1] - s[i];
        sub[i] = hn, diag[i] = 2.0 * (hp + hn), sup[i] = hp;
        for (int k = 0; k < nq; ++k)
            d[(size_t)i * nq + k] = 3.0 * (hn * slope[(size_t)(i - 1) * nq + k] + hp * slope[(size_t)i * nq + k]);
    }
    const double *m0 = slope, *m1 = slope + nq, *ml = slope + (size_t)(K - 2) * nq, *mm = ml - nq;
    double *d0 = d, *dl = d + (size_t)(K - 1) * nq;
    if (K == 3) {
        sub[0] = 0.0, diag[0] = 1.0, sup[0] = 1.0, sub[2] = 1.0, diag[2] = 1.0, sup[2] = 0.0;
        for (int k = 0; k < nq; ++k)
            d0[k] = 2.0 * m0[k], dl[k] = 2.0 * ml[k];
    } else {
        const double w0 = s[2] - s[0], wl = s[K - 1] - s[K - 3];
        sub[0] = 0.0, diag[0] = h1, sup[0] = w0;
        sub[K - 1] = wl, diag[K - 1] = hm, sup[K - 1] = 0.0;
        for (int k = 0; k < nq; ++k) {
            d0[k] = ((h0 + 2.0 * w0) * h1 * m0[k] + h0 * h0 * m1[k]) / w0;
            dl[k] = (hl * hl * mm[k] + (2.0 * wl + hl) * hm * ml[k]) / wl;
        }
    }
    if (tridiagonal_solve(K, nq, sub, diag, sup, d))
        return K - 2; /* not reached for distinct waypoints */
    for (int i = 0; i + 1 < K; ++i) { /* scipy's coefficients from the slopes, highest power first */
        const double h = s[i + 1] - s[i];
        for (int k = 0; k < nq; ++k) {
            const size_t o = (size_t)i * nq + k;
            const double m = slope[o], da = d[o], db = d[o + nq], t = (da + db - 2.0 * m) / h;
            c[o] = t / h;
            c[P + o] = (m - da) / h - t;
            c[2 * P + o] = da;
            c[3 * P + o] = y[o];
        }
    }
    return -1;
}

int rd_path_grid(int count, int k, const double *knots, double *s, double *flags, double *work)
{
    const double step = 1.0 / (count - 1);
    for (int j = 0; j < count; ++j)
        s[j] = j * step, flags[j] = 0.0;
    s[count - 1] = 1.0;
    int added = 0, taken = 0; /* the knots added (into work, in order) and the last point moved */
    for (int q = 0; q < k; ++q) {
        const double knot = knots[q];
        if (!(knot > 0.0 && knot < 1.0) || (q > 0 && !(knot > knots[q - 1])))
            return -1;
        const double j = nearbyint(knot / step); /* half to even, as np.rint */
        if (j > taken && j < count - 1 && fabs(s[(int)j] - knot) <= step / 3.0)
            s[(int)j] = knot, flags[(int)j] = 1.0, taken = (int)j;
        else
            work[added++] = knot;
    }
    /* the added knots merged in from the back (none equals a point: each is more than a third of a
     * step from every point but its nearest, which is an end, farther, or holds the knot before) */
    for (int a = added - 1, j = count - 1, out = count + added - 1; a >= 0; --out)
        if (s[j] > work[a]) /* j >= 0 while a knot remains: s[0] = 0 is below every knot */
            s[out] = s[j], flags[out] = flags[j], --j;
        else
            s[out] = work[a--], flags[out] = 1.0;
    return count + added;
}
