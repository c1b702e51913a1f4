/* The time-optimal timing of a path: rd_reachability solved until the full dynamics hold between
 * the grid points as well (robot_dynamics.trajectory.time_optimal).
 *
 * The rows of reachability.c hold at both ends of every segment. Inside a segment the coefficients
 * a(s), b(s), g(s) and the path's q'(s) change, and the friction Gamma_f(q' sdot) is not linear in
 * x = sdot^2. So after each solve the timing is evaluated on every segment with the full model:
 * at its two ends exactly (the coefficients come from inverse dynamics at the grid points), and at
 * its quarter points from the cubic through the coefficients at the four grid points around the
 * segment on the same smooth piece of the path (Lagrange; its error is of order d^4 of the grid step
 * d where the path is four times differentiable: a cubic spline's knots are grid points, flagged in
 * knot, and no cubic spans one), with the joints' friction (Khalil [7.26], rd_friction)
 * at the velocity q' sdot of each point. A row exceeded on a segment gets a margin at the segment's
 * two ends of at least the model's error there (the full value less the solve's linear one), so
 * that the next solve keeps the full value within the limit; a velocity exceeded shrinks x's bound
 * by the ratio squared. Speed-dependent friction (viscous, Stribeck) enters the rows as its secant
 * through rest and the last solve's speed, updated while it changes the torques there.
 *
 * So that the first solve usually passes the check, the solve itself holds what the check bounds:
 * each row's end values plus its midpoint's distance from their chord (rd_path_constraints' mid, the
 * rows at the midpoint being linear in (u, x_i) as at the ends), and x below the velocity bound at
 * the quarter points, that bound lowered by how far a linear x can rise above a convex bound between
 * them. The check bounds a speed's peak between its points the same way (velocity_bound). */

#include "engine.h"

#include <math.h>

/* fmax and fmin without the library call (no NaN reaches them here). */
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#include <string.h>

/* The vector loops compiled for AVX2 too, chosen at load time where the CPU has it (without FMA: the
 * same doubles as the default build). */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define RD_TOPP_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef RD_TOPP_CLONES
#define RD_TOPP_CLONES
#endif

/* Four values at once (a vector of four doubles: an AVX register, two SSE2 registers without AVX). */
typedef double topp_x4 __attribute__((vector_size(32)));
#pragma GCC diagnostic ignored "-Wpsabi" /* the four-value vectors pass to an always-inline function only */

/* The working arrays of rd_time_optimal, bound in p->work (rd_time_optimal_work bytes). */
typedef struct {
    double *b, *c, *lo, *hi; /* the solve's rows (n x m): b with the friction's secant, c with friction at 0+ */
    double *up, *down;       /* the margins of the upper and lower limits (n x m) */
    double *slope;           /* the friction's secant (n x m) */
    double *xmax;            /* x's bound (n) */
    double *f0, *f;          /* joint friction at 0+ and at a speed (nq) */
    double *inv_vmax;        /* 1 / vmax, 0 where unlimited (nq) */
    double *coef;            /* two points' a, b, g, q' (2 (3 m + nq)) */
    double *acc;             /* a segment's excess, model error and chord per row and side, its rows at the ends (8 m) */
    double *quarter;         /* each segment's coefficients at f = 1/4, 1/2, 3/4 ((n - 1) x 3 x (3 m + nq)) */
    double *mid;             /* the solve's rows at each segment's midpoint (a, b, c) and x's bounds at its
                              * quarter points ((n - 1) x (3 m + 3), rd_path_constraints' mid) */
    double *vshrink;         /* each segment's factor on those bounds, its velocity rows' tightening (n - 1) */
    double *vquarter;        /* x's bounds at each segment's quarter points before tightening ((n - 1) x 3) */
    double *xm;              /* a segment's q'_j / v_j at its five quarter points (5 nq), (nq unused) and q'_j / v_j
                              * at its end (7 nq) */
    double *seen;            /* x (n) and u (n - 1) of the last check, and 1 where a segment passed it (n - 1) */
    void *lp;                /* rd_reachability_work(m) */
    int *defining;           /* the backward pass's defining half-planes (2 n, rd_path_timing's) */
} topp_arrays;

size_t rd_time_optimal_work(int n, int m, int nq)
{
    return ((size_t)7 * n * m + n + 3 * nq + 14 * m + 2 * nq + (size_t)3 * (n - 1) * (3 * m + nq) + (size_t)(n - 1) * (3 * m + 7) + 7 * nq + 3 * (size_t)n) * sizeof(double) +
           rd_reachability_work(m) + 2 * (size_t)n * sizeof(int);
}

static topp_arrays bind(const rd_topp_problem *p, void *work)
{
    const size_t nm = (size_t)p->n * p->m;
    double *d = work;
    topp_arrays A;
    A.b = d, A.c = d + nm, A.lo = d + 2 * nm, A.hi = d + 3 * nm, A.up = d + 4 * nm, A.down = d + 5 * nm;
    A.slope = d + 6 * nm, A.xmax = d + 7 * nm, A.f0 = A.xmax + p->n, A.f = A.f0 + p->nq, A.inv_vmax = A.f + p->nq;
    A.coef = A.inv_vmax + p->nq;
    A.acc = A.coef + 2 * (3 * p->m + p->nq);
    A.quarter = A.acc + 8 * p->m;
    A.mid = A.quarter + (size_t)3 * (p->n - 1) * (3 * p->m + p->nq);
    A.vshrink = A.mid + (size_t)(p->n - 1) * (3 * p->m + 3);
    A.vquarter = A.vshrink + (p->n - 1);
    A.xm = A.vquarter + (size_t)3 * (p->n - 1);
    A.seen = A.xm + 7 * p->nq;
    A.lp = A.seen + 3 * (size_t)p->n;
    A.defining = (int *)((char *)A.lp + rd_reachability_work(p->m));
    return A;
}

/* Joint friction (nq) at the velocities v * dq (v = 0: rest, sign(0) = 0; 1e-300: the friction of
 * starting along dq); zero without a model. */
static void joint_friction(const rd_topp_problem *p, const double *dq, double v, double *f)
{
    for (int j = 0; j < p->nq; ++j)
        f[j] = p->model ? rd_friction(p->model, j, dq[j] * v, 0.0) : 0.0;
}

/* sum_j T[k, j] f[j]: row k's share of joint torques f. */
static double row_share(const rd_topp_problem *p, int k, const double *f)
{
    const double *T = p->T + (size_t)k * p->nq;
    double t = 0.0;
    for (int j = 0; j < p->nq; ++j)
        t += T[j] * f[j];
    return t;
}

/* The static rows c = g + T Gamma_f(0+ q') and the velocity bound xmax = min_j (v_j / |q'_j|)^2. */
static void prepare(const rd_topp_problem *p, topp_arrays *A)
{
    const int m = p->m, nq = p->nq;
    for (int j = 0; j < nq; ++j)
        A->inv_vmax[j] = isfinite(p->vmax[j]) ? 1.0 / p->vmax[j] : 0.0;
    for (int i = 0; i < p->n; ++i) {
        const double *dq = p->dq + (size_t)i * nq;
        if (p->model) {
            joint_friction(p, dq, 1e-300, A->f0);
            for (int k = 0; k < m; ++k)
                A->c[i * m + k] = p->g[i * m + k] + row_share(p, k, A->f0);
        } else {
            memcpy(A->c + (size_t)i * m, p->g + (size_t)i * m, sizeof(double) * m); /* no friction */
        }
        double xm = INFINITY;
        for (int j = 0; j < nq; ++j)
            if (isfinite(p->vmax[j]) && dq[j] != 0.0) {
                const double r = p->vmax[j] / fabs(dq[j]);
                xm = MIN(xm, r * r);
            }
        A->xmax[i] = xm;
    }
}

/* The secant of the speed-dependent friction at x (n): (T Gamma_f(q' sqrt(x)) - T Gamma_f(0+ q')) / x
 * into A->slope; returns the largest change of the torques it makes at x. */
static double friction_secant(const rd_topp_problem *p, topp_arrays *A, const double *x)
{
    const int m = p->m;
    double change = 0.0;
    for (int i = 0; i < p->n; ++i) {
        const double *dq = p->dq + (size_t)i * p->nq;
        if (x[i] > 0.0) {
            joint_friction(p, dq, 1e-300, A->f0);
            joint_friction(p, dq, sqrt(x[i]), A->f);
        }
        for (int k = 0; k < m; ++k) {
            const double s = x[i] > 0.0 ? (row_share(p, k, A->f) - row_share(p, k, A->f0)) / x[i] : 0.0;
            change = MAX(change, fabs((s - A->slope[i * m + k]) * x[i]));
            A->slope[i * m + k] = s;
        }
    }
    return change;
}

/* Lagrange weights w (count) of the nodes s[j0..j0 + count) at t. */
static void lagrange(const double *s, int j0, int count, double t, double w[4])
{
    for (int a = 0; a < count; ++a) {
        double v = 1.0;
        for (int b = 0; b < count; ++b)
            if (b != a)
                v *= (t - s[j0 + b]) / (s[j0 + a] - s[j0 + b]);
        w[a] = v;
    }
}

/* A grid point inside which a polynomial may not reach: a knot of the path, or outside the grid. */
static int is_knot(const rd_topp_problem *p, int j)
{
    return j <= 0 || j >= p->n - 1 || (p->knot && p->knot[j] != 0.0);
}

/* The grid points j0.. (their count returned) of the cubic inside segment i: up to four around it
 * on the same smooth piece of the path (no knot strictly between them). */
static int stencil(const rd_topp_problem *p, int i, int *j0)
{
    int a = i, b = i + 1;
    if (!is_knot(p, a))
        --a;
    if (!is_knot(p, b))
        ++b;
    if (b - a < 3 && !is_knot(p, b))
        ++b;
    else if (b - a < 3 && !is_knot(p, a))
        --a;
    *j0 = a;
    return b - a + 1;
}

/* The grid points j0.. (their count returned) and weights w whose sum interpolates at the point
 * f in [0, 1] of segment i: the segment's ends at f 0 or 1, else up to four grid points around it
 * on the same smooth piece of the path (no knot strictly between them). */
static int nodes(const rd_topp_problem *p, int i, double f, int *j0, double w[4])
{
    if (f == 0.0 || f == 1.0) {
        *j0 = i, w[0] = 1.0 - f, w[1] = f;
        return 2;
    }
    const int count = stencil(p, i, j0);
    lagrange(p->s, *j0, count, p->s[i] + f * (p->s[i + 1] - p->s[i]), w);
    return count;
}

/* The coefficients a, b, g (m each) and q' (nq) at the point f of segment i into out (nodes()). */
static void coefficients_at(const rd_topp_problem *p, int i, double f, double *out)
{
    const int m = p->m, nq = p->nq;
    const double *src[4] = {p->a, p->b, p->g, p->dq};
    const int len[4] = {m, m, m, nq};
    double w[4];
    int j0;
    const int count = nodes(p, i, f, &j0, w);
    for (int q = 0, at = 0; q < 4; at += len[q], ++q)
        for (int k = 0; k < len[q]; ++k) {
            double v = 0.0;
            for (int c = 0; c < count; ++c)
                v += w[c] * src[q][(size_t)(j0 + c) * len[q] + k];
            out[at + k] = v;
        }
}

/* q'_j at the point f of segment i (nodes()). */
static double dq_at(const rd_topp_problem *p, int i, double f, int j)
{
    double w[4], v = 0.0;
    int j0;
    const int count = nodes(p, i, f, &j0, w);
    for (int c = 0; c < count; ++c)
        v += w[c] * p->dq[(size_t)(j0 + c) * p->nq + j];
    return v;
}

/* The points of segment i where the timing is checked, as fractions f in [0, 1] into f (at most
 * RD_TOPP_POINTS): its quarter points; with friction (its speed sqrt(x), x = sdot^2, is not linear in
 * x) also where sqrt(x) is farthest from its chord, points approaching rest geometrically where x
 * comes near zero at one end (sqrt(x) has no bounded slope there), and both sides of a joint's turn
 * (where q' changes sign its friction steps). Returns their count. The velocity needs no more: its
 * square is linear in x (velocity_bound). */
enum { RD_TOPP_POINTS = 64 };
static int check_points(const rd_topp_problem *p, const rd_topp_result *r, int i, double *f)
{
    const int nq = p->nq;
    const double x0 = r->x[i], x1 = r->x[i + 1], step = fabs(x1 - x0);
    int count = 0;
    for (int e = 0; e <= 4; ++e)
        f[count++] = 0.25 * e;
    if (p->model && step > 0.0) { /* where sqrt(x), the speed in the friction, is farthest above its chord */
        const double mid = 0.5 * (sqrt(x0) + sqrt(x1));
        f[count++] = MIN(MAX((mid * mid - x0) / (x1 - x0), 0.0), 1.0);
    }
    if (p->model && step > 0.0)
        for (int side = 0; side < 2; ++side)
            if ((side ? x1 : x0) < step)
                for (double h = 0.125; h > 1e-6 && count < RD_TOPP_POINTS - 2 * nq - 2; h *= 0.25)
                    f[count++] = side ? 1.0 - h : h;
    if (!p->model)
        return count;
    double w[5][4];
    int j0[5], nn[5];
    for (int e = 0; e <= 4; ++e)
        nn[e] = nodes(p, i, 0.25 * e, j0 + e, w[e]);
    for (int j = 0; j < nq && count < RD_TOPP_POINTS - 1; ++j) {
        const rd_joint *joint = &p->model->joint[j];
        if (joint->Fc == 0.0 && joint->Fs == 0.0)
            continue; /* its friction is continuous where it turns */
        double a = 0.0;
        for (int e = 0; e <= 4 && count < RD_TOPP_POINTS - 1; ++e) {
            double b = 0.0;
            for (int c = 0; c < nn[e]; ++c)
                b += w[e][c] * p->dq[(size_t)(j0[e] + c) * nq + j];
            if (e > 0 && ((a < 0.0 && b > 0.0) || (a > 0.0 && b < 0.0))) {
                double fa = 0.25 * (e - 1), fb = 0.25 * e;
                for (int it = 0; it < 40; ++it) { /* the turn: the root of the interpolated q'_j */
                    const double fm = 0.5 * (fa + fb);
                    if ((dq_at(p, i, fm, j) < 0.0) == (a < 0.0))
                        fa = fm;
                    else
                        fb = fm;
                }
                f[count++] = fa, f[count++] = fb;
            }
            a = b;
        }
    }
    return count;
}

/* q' (nq) at the quarter point e / 4 (e = 0..4) of segment i: the grid's at the ends, the quarter
 * coefficients' inside. */
static const double *quarter_dq(const rd_topp_problem *p, const topp_arrays *A, int i, int e)
{
    const int nq = p->nq;
    if (e == 0 || e == 4)
        return p->dq + (size_t)(i + e / 4) * nq;
    return A->quarter + ((size_t)3 * i + e - 1) * (3 * p->m + nq) + 3 * p->m;
}

/* The largest value on [0, 1] of the parabola through A at 0 and B at 1 that rises `rise` above its
 * chord at 1/2 (rise >= 0): A + (B - A) t + 4 rise t (1 - t). */
static double parabola_peak(double A, double B, double rise)
{
    const double t = rise > 0.0 ? 0.5 + (B - A) / (8.0 * rise) : -1.0;
    if (t <= 0.0 || t >= 1.0)
        return MAX(A, B);
    return A + (B - A) * t + 4.0 * rise * t * (1.0 - t);
}

/* The largest squared velocity ratio rho_j = (q'_j sdot / vmax_j)^2 = (q'_j / vmax_j)^2 x on segment i,
 * bounded from its five quarter points (x is linear in s, q' from the grid and the quarter
 * coefficients): on each quarter, the peak of the parabola through its two ends as curved as the
 * most concave second difference D2 of the segment (a rise of -min(D2, 0) / 8 over the chord). The
 * peak of a speed that a convex bound and a linear x make between two checked points is inside it. */
static double velocity_bound(const rd_topp_problem *p, const topp_arrays *A, const rd_topp_result *r, int i)
{
    const int nq = p->nq;
    const double u = r->u[i], d = p->s[i + 1] - p->s[i];
    double peak = 0.0;
    for (int j = 0; j < nq; ++j) {
        if (A->inv_vmax[j] == 0.0)
            continue;
        double rho[5];
        for (int e = 0; e <= 4; ++e) {
            const double v = quarter_dq(p, A, i, e)[j] * A->inv_vmax[j], x = e == 4 ? r->x[i + 1] : r->x[i] + 0.5 * e * d * u;
            rho[e] = v * v * MAX(x, 0.0);
        }
        double bend = 0.0, top = rho[0];
        for (int e = 1; e <= 3; ++e)
            bend = MAX(bend, 2.0 * rho[e] - rho[e - 1] - rho[e + 1]), top = MAX(top, rho[e]);
        top = MAX(top, rho[4]);
        if (top + 0.125 * bend <= 1.0) { /* no parabola here rises above 1: the peaks are not needed */
            peak = MAX(peak, top);
            continue;
        }
        for (int e = 0; e < 4; ++e)
            peak = MAX(peak, parabola_peak(rho[e], rho[e + 1], 0.125 * bend));
    }
    return peak;
}

/* Segment i of the timing (x, u) against the full model: each row's excess over its limits and
 * model error at its check points, and its velocity (velocity_bound); the margins and xmax updated
 * where exceeded. Returns 1 when something was exceeded. */
static int check_segment(const rd_topp_problem *p, topp_arrays *A, const rd_topp_result *r, int i)
{
    const int m = p->m, nq = p->nq;
    const double u = r->u[i], d = p->s[i + 1] - p->s[i];
    double *worst = A->acc, *error = A->acc + 2 * m, *chord = A->acc + 4 * m, *co = A->coef;
    int exceeded = 0;
    for (int k = 0; k < 2 * m; ++k)
        worst[k] = error[k] = -INFINITY;
    double fractions[RD_TOPP_POINTS], *lin = A->acc + 6 * m; /* the solve's rows at the two ends (2 m) */
    const int count = check_points(p, r, i, fractions);
    for (int k = 0; k < m; ++k) {
        const size_t i0 = (size_t)i * m + k, i1 = i0 + m;
        lin[k] = p->a[i0] * u + A->b[i0] * r->x[i] + A->c[i0];
        lin[m + k] = p->a[i1] * u + A->b[i1] * r->x[i + 1] + A->c[i1];
        chord[k] = MAX(lin[k], lin[m + k]) - p->limit[k], chord[m + k] = MAX(-lin[k], -lin[m + k]) - p->limit[k];
    }
    for (int e = 0; e < count; ++e) {
        const double f = fractions[e], x = MAX(r->x[i] + 2.0 * f * d * u, 0.0), sd = sqrt(x);
        if (!p->model && (e == 0 || e == 4))
            continue; /* no friction: the full rows at the ends are the solve's (lin) */
        if (e >= 1 && e <= 3) /* the quarter points: the same every solve */
            co = A->quarter + ((size_t)3 * i + e - 1) * (3 * m + nq);
        else
            coefficients_at(p, i, f, co = A->coef);
        if (p->model)
            joint_friction(p, co + 3 * m, sd, A->f);
        for (int k = 0; k < m; ++k) {
            const double value = co[k] * u + co[m + k] * x + co[2 * m + k] + (p->model ? row_share(p, k, A->f) : 0.0);
            const double err = value - ((1.0 - f) * lin[k] + f * lin[m + k]);
            worst[k] = MAX(worst[k], value - p->limit[k]), worst[m + k] = MAX(worst[m + k], -value - p->limit[k]);
            error[k] = MAX(error[k], err), error[m + k] = MAX(error[m + k], -err);
        }
    }
    /* The full value is at most the chord's highest point plus the largest model error: a peak
     * between the points checked exceeds no limit this bound does not (the chord's ends included). */
    for (int k = 0; k < 2 * m; ++k)
        worst[k] = MAX(worst[k], chord[k] + MAX(error[k], 0.0));
    for (int side = 0; side < 2; ++side) {
        double *margin = side ? A->down : A->up;
        for (int k = 0; k < m; ++k) {
            const double tol = p->tolerance * p->limit[k], over = worst[side * m + k];
            if (over > tol) {
                const size_t i0 = (size_t)i * m + k;
                const double need = MAX(error[side * m + k], over + margin[i0]) + tol;
                margin[i0] = MAX(margin[i0], need);
                margin[i0 + m] = MAX(margin[i0 + m], need);
                exceeded = 1;
            }
        }
    }
    const double rho = velocity_bound(p, A, r, i);
    if (rho > 1.0 + 2.0 * p->tolerance) {
        const double shrink = (1.0 - 2.0 * p->tolerance) / rho;
        A->xmax[i] *= shrink, A->xmax[i + 1] *= shrink, A->vshrink[i] *= shrink;
        exceeded = 1;
    }
    return exceeded;
}

/* out[e L + 0..4) = sum_c w[e][c] y[c stride + 0..4) for the three quarter points e: each lane the
 * operations of the scalar sum, in its order. */
static inline __attribute__((always_inline)) void quarter_x4(const double w[3][4], const double *y, int stride,
                                                              double *out, int L)
{
    topp_x4 y0, y1, y2, y3;
    memcpy(&y0, y, sizeof y0), memcpy(&y1, y + stride, sizeof y1);
    memcpy(&y2, y + 2 * stride, sizeof y2), memcpy(&y3, y + 3 * stride, sizeof y3);
    for (int e = 0; e < 3; ++e) {
        const topp_x4 v = w[e][0] * y0 + w[e][1] * y1 + w[e][2] * y2 + w[e][3] * y3;
        memcpy(out + e * L, &v, sizeof v);
    }
}

/* Each segment's coefficients at its quarter points into A->quarter (coefficients_at's), the
 * Lagrange weights computed again only where the nodes' spacing relative to the segment changes
 * (on an evenly spaced grid: at the ends and around the knots). */
RD_TOPP_CLONES static void quarter_coefficients(const rd_topp_problem *p, topp_arrays *A)
{
    const int L = 3 * p->m + p->nq;
    const double *src[4] = {p->a, p->b, p->g, p->dq};
    const int len[4] = {p->m, p->m, p->m, p->nq};
    double w[3][4], offset[4] = {NAN, NAN, NAN, NAN};
    int shift = 0, count = 0;
    for (int i = 0; i < p->n - 1; ++i) {
        int j0;
        double o[4];
        const int c0 = stencil(p, i, &j0); /* the same for the three points */
        const double d = p->s[i + 1] - p->s[i];
        int same = c0 == count && j0 - i == shift;
        for (int c = 0; c < c0; ++c) {
            o[c] = (p->s[j0 + c] - p->s[i]) / d;
            same = same && fabs(o[c] - offset[c]) <= 1e-12;
        }
        if (!same) {
            for (int e = 1; e <= 3; ++e)
                nodes(p, i, 0.25 * e, &j0, w[e - 1]);
            count = c0, shift = j0 - i;
            for (int c = 0; c < 4; ++c)
                offset[c] = c < c0 ? o[c] : NAN;
        }
        double *out = A->quarter + (size_t)3 * i * L; /* the three points' rows, L apart */
        for (int q = 0, at = 0; q < 4; at += len[q], ++q) {
            const double *row = src[q] + (size_t)j0 * len[q];
            const int stride = len[q];
            if (count == 4 && stride >= 4) /* four values at once; the last four overlap the ones before */
                for (int k0 = 0; k0 < stride; k0 += 4) {
                    const int k = k0 + 4 <= stride ? k0 : stride - 4;
                    quarter_x4(w, row + k, stride, out + at + k, L);
                }
            else if (count == 4) /* the usual stencil, unrolled: each node read once for the three points */
                for (int k = 0; k < stride; ++k) {
                    const double y0 = row[k], y1 = row[stride + k], y2 = row[2 * stride + k], y3 = row[3 * stride + k];
                    for (int e = 0; e < 3; ++e)
                        out[e * L + at + k] = w[e][0] * y0 + w[e][1] * y1 + w[e][2] * y2 + w[e][3] * y3;
                }
            else
                for (int e = 0; e < 3; ++e)
                    for (int k = 0; k < stride; ++k) {
                        double v = 0.0;
                        for (int c = 0; c < count; ++c)
                            v += w[e][c] * row[c * stride + k];
                        out[e * L + at + k] = v;
                    }
        }
    }
}

/* The solve's rows at each segment's midpoint into A->mid: the quarter coefficients' a, b with the
 * friction's secant of the ends averaged, g with the friction of starting along q' there. */
static void midpoints(const rd_topp_problem *p, topp_arrays *A)
{
    const int m = p->m, L = 3 * m + p->nq;
    for (int i = 0; i < p->n - 1; ++i) {
        const double *co = A->quarter + ((size_t)3 * i + 1) * L;
        double *out = A->mid + (size_t)i * (3 * m + 3);
        if (p->model)
            joint_friction(p, co + 3 * m, 1e-300, A->f0);
        for (int k = 0; k < m; ++k) {
            const size_t i0 = (size_t)i * m + k;
            out[k] = co[k];
            out[m + k] = co[m + k] + 0.5 * (A->slope[i0] + A->slope[i0 + m]);
            out[2 * m + k] = co[2 * m + k] + (p->model ? row_share(p, k, A->f0) : 0.0);
        }
        for (int e = 0; e < 3; ++e)
            out[3 * m + e] = A->vquarter[3 * i + e] * A->vshrink[i];
    }
}

/* x's velocity bounds xmax_j = (v_j / q'_j)^2 at each segment's ends (A->xmax) and quarter points
 * (A->vquarter), less the most that a linear x held below a convex xmax_j at those five points can
 * rise above it between them: a parabola's rise over its chord, D2 / 8 for the largest second
 * difference D2 of xmax_j at the quarter points (a quarter of it again as room for the check's
 * estimate of the same rise; at most half the bound, the check catching the rest). A straight path
 * at a constant speed limit has none.
 *
 * c_j = q'_j / v_j at the five quarter points of segment i into c (0 where joint j is unlimited),
 * c[0] the last segment's c[4] (the segments in order; *c_end holds it): xmax_j = 1 / c_j^2. */
static void joint_speeds(const rd_topp_problem *p, const topp_arrays *A, int i, int j, double c[5])
{
    double *c_end = A->xm + 6 * p->nq + j;
    for (int e = 0; e <= 4; ++e)
        c[e] = e == 0 && i > 0 ? *c_end : quarter_dq(p, A, i, e)[j] * A->inv_vmax[j];
    *c_end = c[4];
}

/* xmax_j at the five quarter points from c_j (INFINITY where joint j is unlimited or stops) into xm;
 * returns the largest second difference of them (0 where one is infinite). */
static double joint_xmax(const double c[5], double xm[5])
{
    int finite = 1;
    for (int e = 0; e <= 4; ++e) {
        xm[e] = c[e] != 0.0 ? 1.0 / (c[e] * c[e]) : INFINITY;
        finite = finite && c[e] != 0.0;
    }
    double rise = 0.0;
    for (int e = 1; e <= 3 && finite; ++e)
        rise = MAX(rise, xm[e - 1] - 2.0 * xm[e] + xm[e + 1]);
    return rise;
}

/* The bound at each quarter point is the smallest xmax_j, 1 / max_j c_j^2 (the same double); only a
 * joint whose xmax_j comes within 1.5 times of it somewhere gets its xmax_j and their rise, the
 * divisions (a joint with c_j^2 below 1 / 1.6 of the largest is not within 1.5 times after rounding). */
static void velocity_bounds(const rd_topp_problem *p, topp_arrays *A)
{
    const int nq = p->nq;
    for (int i = 0; i < p->n - 1; ++i) {
        double top[5] = {0.0, 0.0, 0.0, 0.0, 0.0}, low[5], bound[5];
        for (int j = 0; j < nq; ++j) { /* the bound without margins */
            double *c = A->xm + 5 * j;
            joint_speeds(p, A, i, j, c);
            for (int e = 0; e <= 4; ++e)
                top[e] = MAX(top[e], c[e] * c[e]);
        }
        for (int e = 0; e <= 4; ++e)
            bound[e] = low[e] = top[e] != 0.0 ? 1.0 / top[e] : INFINITY;
        for (int j = 0; j < nq; ++j) {
            const double *c = A->xm + 5 * j;
            int near = 0;
            for (int e = 0; e <= 4; ++e)
                near |= c[e] * c[e] * 1.6 >= top[e] && top[e] != 0.0;
            if (!near)
                continue;
            double xm[5];
            const double margin = 1.25 * 0.125 * joint_xmax(c, xm);
            for (int e = 0; e <= 4 && margin > 0.0; ++e)
                if (xm[e] <= 1.5 * low[e]) /* a joint near the bound (one far above it never holds x) */
                    bound[e] = MIN(bound[e], MAX(xm[e] - margin, 0.5 * xm[e]));
        }
        A->xmax[i] = MIN(A->xmax[i], bound[0]);
        A->xmax[i + 1] = MIN(A->xmax[i + 1], bound[4]);
        for (int e = 0; e < 3; ++e)
            A->vquarter[3 * i + e] = bound[e + 1];
    }
}

/* check_segment on every segment but those that passed the last check at the same x and u (the
 * same rows: the same result). Returns -1 when nothing was exceeded, else the highest segment whose
 * rows changed (a margin or x's bound at a point of an exceeded segment: its neighbours' too), and
 * the lowest in *bottom. */
static int check_all(const rd_topp_problem *p, topp_arrays *A, const rd_topp_result *r, int *bottom)
{
    const int n = p->n;
    double *x = A->seen, *u = A->seen + n, *passed = A->seen + 2 * n - 1;
    int top = -1;
    for (int i = 0; i < n - 1; ++i) {
        if (passed[i] != 0.0 && x[i] == r->x[i] && x[i + 1] == r->x[i + 1] && u[i] == r->u[i])
            continue;
        const int exceeded = check_segment(p, A, r, i);
        passed[i] = !exceeded;
        if (exceeded && top < 0)
            *bottom = MAX(i - 1, 0);
        if (exceeded)
            top = MIN(i + 1, n - 2);
    }
    memcpy(x, r->x, (size_t)n * sizeof(double));
    memcpy(u, r->u, (size_t)(n - 1) * sizeof(double));
    return top;
}

/* A timing found: r->failed at the first of two neighbouring points at rest (it never passes them),
 * else the times r->t (NULL: none). RD_OK. */
static int finish(const rd_topp_problem *p, rd_topp_result *r)
{
    for (int i = 0; i + 1 < p->n; ++i)
        if (r->x[i] == 0.0 && r->x[i + 1] == 0.0) {
            r->failed = i;
            return RD_OK;
        }
    if (r->t) {
        double before = sqrt(MAX(r->x[0], 0.0));
        r->t[0] = 0.0;
        for (int i = 0; i + 1 < p->n; ++i) {
            const double after = sqrt(MAX(r->x[i + 1], 0.0));
            r->t[i + 1] = r->t[i] + 2.0 * (p->s[i + 1] - p->s[i]) / (before + after);
            before = after;
        }
    }
    return RD_OK;
}

int rd_time_optimal(const rd_topp_problem *p, rd_topp_result *r)
{
    const int n = p->n, m = p->m;
    const size_t nm = (size_t)n * m;
    topp_arrays A = bind(p, r->work);
    prepare(p, &A);
    quarter_coefficients(p, &A);
    velocity_bounds(p, &A);
    memset(A.up, 0, 3 * nm * sizeof(double)); /* up, down, slope */
    for (int i = 0; i < n - 1; ++i)
        A.vshrink[i] = 1.0;
    double largest = 1.0;
    for (int k = 0; k < m; ++k)
        largest = MAX(largest, p->limit[k]);
    r->solves = 0, r->failed = -1;
    int secant_steps = p->speed_friction ? 4 : 0, keep = 0, bottom = 0;
    double *passed = A.seen + 2 * n - 1;
    memset(passed, 0, (size_t)(n - 1) * sizeof(double));
    while (r->solves < p->max_solves) {
        for (size_t q = 0; q < nm; ++q) {
            const double limit = p->limit[q % m];
            A.b[q] = p->b[q] + A.slope[q];
            A.hi[q] = limit - A.up[q], A.lo[q] = -limit + A.down[q];
        }
        midpoints(p, &A);
        const rd_path_constraints pc = {n, m, p->s, p->a, A.b, A.c, A.lo, A.hi, A.xmax, 0.0, 0.0, A.mid, keep, bottom};
        rd_path_timing t = {r->K_lo, r->K_hi, r->x, r->u, A.lp, A.defining};
        ++r->solves;
        if ((r->failed = rd_reachability(&pc, &t)) >= 0)
            return RD_OK;
        int moved = 0; /* the friction's secant moves every row of the next solve */
        if (secant_steps > 0) {
            --secant_steps, moved = 1;
            if (friction_secant(p, &A, r->x) > p->tolerance * largest) {
                memset(passed, 0, (size_t)(n - 1) * sizeof(double)), keep = 0;
                continue;
            }
        }
        const int top = check_all(p, &A, r, &bottom);
        if (top < 0)
            return finish(p, r);
        keep = moved ? 0 : n - 1 - top; /* the segments above top kept their rows: their controllable sets hold */
        if (moved)
            memset(passed, 0, (size_t)(n - 1) * sizeof(double));
    }
    return RD_SINGULAR; /* still exceeding after max_solves */
}
