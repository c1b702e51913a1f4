/* Time-optimal path parameterization by reachability analysis (TOPP-RA: H. Pham and Q.-C. Pham,
 * "A New Approach to Time-Optimal Path Parameterization Based on Reachability Analysis", IEEE
 * Trans. Robotics 34(3), 2018).
 *
 * A path q(s), s in [0, 1], traversed with sdot = ds/dt >= 0: the state of the timing is
 * x = sdot^2 and its control u = sddot, so that on a segment of constant u, x(s) = x_i + 2 (s - s_i) u
 * (Pham and Pham eq. 4). Every limit of the robot is a row lo <= a(s) u + b(s) x + c(s) <= hi
 * (joint torques tau = M q' u + (M q'' + C(q, q') q') x + g + friction; accelerations
 * qdd = q' u + q'' x), and velocity limits bound x alone.
 *
 * The discretization is the paper's "first-order interpolation" (its section VI-B): the rows of
 * segment i hold at both of its ends, at (u, x_i) with s_i's coefficients and at (u, x_i + 2 d u)
 * with s_(i+1)'s, so that no row is violated at a grid point from either side; given the rows at
 * each segment's midpoint (rd_path_constraints' mid), also each row's end values plus the
 * midpoint's distance from their chord, and x within its bounds at the quarter points. The backward pass
 * computes the controllable sets K_i = [K_lo, K_hi] of x (Algorithm 1's backward recursion, one
 * two-variable LP for each bound), the forward pass takes at each point the largest u whose next
 * state stays controllable (the greedy choice, its Theorem 3: time-optimal over the grid). The
 * two-variable LPs are solved exactly by Seidel's incremental algorithm (R. Seidel, "Small-
 * dimensional linear programming and convex hulls made easy", Discrete Comput. Geom. 6, 1991), in
 * a deterministic order (the previous segment's defining half-planes first), no allocation. */

#include "engine.h"

#include <math.h>

/* fmax and fmin without the library call (no NaN reaches them here). */
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* A half-plane a u + b x <= g of the (u, x) plane. */
typedef struct {
    double a, b, g;
} half_plane;

/* The box every LP lives in: |u| <= RD_TOPP_U_BOUND, 0 <= x <= the point's xmax and RD_TOPP_X_BOUND. */
#define RD_TOPP_U_BOUND 1e12
#define RD_TOPP_X_BOUND 1e24
/* Relative slack of a satisfied row (round-off of a u + b x against g). */
#define RD_TOPP_TOL 1e-12
/* An interval of u or x that round-off has turned over by at most this much (relative to 1 and its
 * ends) is taken as the point between its ends: rows met to round-off there. */
#define RD_TOPP_EMPTY 1e-9

static double slack(const half_plane *h, double u, double x)
{
    return RD_TOPP_TOL * (fabs(h->g) + fabs(h->a * u) + fabs(h->b * x)) + 1e-300;
}

/* t in [*lo, *hi] with coef t <= rhs added: 0 (1: *hi lowered, 2: *lo raised), or -1 when a
 * parallel row excludes the line. */
static int bound_1d(double coef, double rhs, double scale, double *lo, double *hi)
{
    if (fabs(coef) <= 1e-14 * scale)
        return rhs < -RD_TOPP_TOL * (fabs(rhs) + scale) ? -1 : 0;
    /* the comparisons multiplied out (coef's sign kept): a division only where a bound moves */
    if (coef > 0.0) {
        if (rhs < *hi * coef) {
            *hi = rhs / coef;
            return 1;
        }
    } else if (rhs < *lo * coef) {
        *lo = rhs / coef;
        return 2;
    }
    return 0;
}

/* The optimum of dir * x (then the larger u) on the line of h[j], under h[0..j) and the box
 * [-U, U] x [xl, xh]: 0 with (*u, *x) and in *by the half-plane that bounds it there (-1: the
 * box), or -1 when that part of the line is empty. */
static int on_line(const half_plane *h, int j, double dir, double xl, double xh, double *u, double *x, int *by)
{
    int by_lo = -1, by_hi = -1;
    const half_plane *L = h + j;
    const int by_u = fabs(L->b) >= fabs(L->a); /* the parameter t: u (x = (g - a t) / b), else x */
    double lo = -INFINITY, hi = INFINITY, primary, secondary;
    if (by_u) {
        lo = -RD_TOPP_U_BOUND, hi = RD_TOPP_U_BOUND;
        /* xl <= (g - a t) / b <= xh */
        if (bound_1d(-L->a / L->b, xh - L->g / L->b, 1.0, &lo, &hi) < 0 ||
            bound_1d(L->a / L->b, L->g / L->b - xl, 1.0, &lo, &hi) < 0)
            return -1;
        primary = -dir * L->a / L->b, secondary = 1.0;
    } else {
        lo = xl, hi = xh;
        /* -U <= (g - b t) / a <= U */
        if (bound_1d(-L->b / L->a, RD_TOPP_U_BOUND - L->g / L->a, 1.0, &lo, &hi) < 0 ||
            bound_1d(L->b / L->a, RD_TOPP_U_BOUND + L->g / L->a, 1.0, &lo, &hi) < 0)
            return -1;
        primary = dir, secondary = -L->b / L->a;
    }
    for (int i = 0; i < j; ++i) {
        const half_plane *H = h + i;
        const double s = fabs(H->a) + fabs(H->b) + 1e-300;
        int side;
        if (by_u)
            side = bound_1d(H->a - H->b * L->a / L->b, H->g - H->b * L->g / L->b, s, &lo, &hi);
        else
            side = bound_1d(H->b - H->a * L->b / L->a, H->g - H->a * L->g / L->a, s, &lo, &hi);
        if (side < 0)
            return -1;
        if (side == 1)
            by_hi = i;
        else if (side == 2)
            by_lo = i;
    }
    if (lo > hi) {
        if (lo - hi > RD_TOPP_EMPTY * (1.0 + fabs(lo) + fabs(hi)))
            return -1;
        hi = lo = 0.5 * (lo + hi);
    }
    const int upper = primary > 0.0 || (primary == 0.0 && secondary > 0.0);
    const double pick = upper ? hi : lo;
    *by = upper ? by_hi : by_lo;
    if (by_u)
        *u = pick, *x = (L->g - L->a * pick) / L->b;
    else
        *x = pick, *u = (L->g - L->b * pick) / L->a;
    return 0;
}

/* Seidel's two-variable LP: the largest (dir 1) or smallest (dir -1) x of the points (u, x) of the
 * box [-U, U] x [xl, xh] in every half-plane of h[0..k): 0 with *x, or -1 when there is none.
 * active[0..2) are the half-planes that define the optimum (-1: the box), for the next LP's order. */
static int lp_x(const half_plane *h, int k, double dir, double xl, double xh, double *x, int active[2])
{
    double u = RD_TOPP_U_BOUND, v = dir > 0.0 ? xh : xl;
    if (xl > xh)
        return -1;
    active[0] = active[1] = -1;
    for (int j = 0; j < k; ++j) {
        const half_plane *H = h + j;
        const double lhs = H->a * u + H->b * v;
        if (lhs <= H->g || lhs <= H->g + slack(H, u, v))
            continue;
        if (H->a == 0.0 && H->b == 0.0)
            return -1; /* 0 <= g violated: no point at all */
        if (on_line(h, j, dir, xl, xh, &u, &v, active + 1))
            return -1;
        active[0] = j;
    }
    *x = v;
    return 0;
}

/* p with positions a and b exchanged (the transposition (a b)). */
static int transposed(int p, int a, int b)
{
    return p == a ? b : (p == b ? a : p);
}

/* Seidel's algorithm is exact in any order of the half-planes; its work is least when the ones
 * that define the optimum come first (then every later one is a single test). Neighbouring
 * segments' optima are defined by the same rows, so the previous LP's two go first: h[t] swapped
 * with the half-plane first[t] (t = 0, 1; where it is after the first swap), moved[t] the position
 * swapped with t (t itself: none). original() maps a position back to its half-plane. */
static void defining_first(half_plane *h, int k, const int first[2], int moved[2])
{
    moved[0] = 0, moved[1] = 1;
    for (int t = 0; t < 2; ++t) {
        if (first[t] < 0 || first[t] >= k)
            continue;
        const int j = transposed(first[t], 0, moved[0]);
        if (j > t) {
            const half_plane tmp = h[t];
            h[t] = h[j], h[j] = tmp;
            moved[t] = j;
        }
    }
}

/* The half-plane at position p after defining_first's swaps moved. */
static int original(int p, const int moved[2])
{
    return transposed(transposed(p, 1, moved[1]), 0, moved[0]);
}

/* Row k's bounds [lo, hi] on the value a u + b x + c as half-planes into h: their count. */
static int bounded(double a, double b, double c, double lo, double hi, half_plane *h)
{
    int n = 0;
    if (isfinite(hi))
        h[n++] = (half_plane){a, b, hi - c};
    if (isfinite(lo))
        h[n++] = (half_plane){-a, -b, c - lo};
    return n;
}

/* The half-planes of segment i (its rows at both ends, and x_i + 2 d u within K_(i+1)) into h:
 * their count. With midpoints, each row's value at an end plus the midpoint's distance from the
 * chord, e = v_mid - (v_0 + v_1) / 2, within that end's bounds too: v_0 + e = v_mid + (v_0 - v_1) / 2
 * and v_1 + e = v_mid - (v_0 - v_1) / 2. */
static int segment_rows(const rd_path_constraints *p, const double *K_lo, const double *K_hi, int i, half_plane *h)
{
    const int m = p->m;
    const double d = p->s[i + 1] - p->s[i];
    int n = 0;
    for (int k = 0; k < m; ++k) {
        const size_t i0 = (size_t)i * m + k, i1 = i0 + m;
        const double a0 = p->a[i0], b0 = p->b[i0], c0 = p->c[i0];
        const double a1 = p->a[i1] + 2.0 * d * p->b[i1], b1 = p->b[i1], c1 = p->c[i1]; /* x_(i+1) = x + 2 d u */
        n += bounded(a0, b0, c0, p->lo[i0], p->hi[i0], h + n);
        n += bounded(a1, b1, c1, p->lo[i1], p->hi[i1], h + n);
        if (p->mid) {
            const double *mid = p->mid + (size_t)i * (3 * m + 3);
            const double am = mid[k] + d * mid[m + k], bm = mid[m + k], cm = mid[2 * m + k]; /* x_mid = x + d u */
            const double ha = 0.5 * (a0 - a1), hb = 0.5 * (b0 - b1), hc = 0.5 * (c0 - c1);
            n += bounded(am + ha, bm + hb, cm + hc, p->lo[i0], p->hi[i0], h + n);
            n += bounded(am - ha, bm - hb, cm - hc, p->lo[i1], p->hi[i1], h + n);
        }
    }
    if (p->mid)
        for (int e = 1; e <= 3; ++e) /* x_i + 2 d u e / 4 <= its bound at the quarter point e / 4 */
            h[n++] = (half_plane){0.5 * e * d, 1.0, p->mid[(size_t)i * (3 * m + 3) + 3 * m + e - 1]};
    h[n++] = (half_plane){2.0 * d, 1.0, K_hi[i + 1]};
    h[n++] = (half_plane){-2.0 * d, -1.0, -K_lo[i + 1]};
    return n;
}

size_t rd_reachability_work(int m)
{
    return (size_t)(8 * m + 5) * sizeof(half_plane);
}

/* The largest u of segment i at x = x_i under its half-planes h[0..k): 0 with *u, or -1. */
static int greedy_u(const half_plane *h, int k, double x, double *u)
{
    double lo = -RD_TOPP_U_BOUND, hi = RD_TOPP_U_BOUND;
    for (int j = 0; j < k; ++j) {
        const double a = h[j].a, rhs = h[j].g - h[j].b * x;
        if (rhs >= 0.0 && rhs >= (a > 0.0 ? hi : lo) * a)
            continue; /* neither moves a bound nor, parallel, excludes the line: bound_1d's 0 */
        if (bound_1d(a, rhs, fabs(a) + fabs(h[j].b * x) + fabs(h[j].g) + 1e-300, &lo, &hi) < 0)
            return -1;
    }
    if (lo > hi + RD_TOPP_EMPTY * (1.0 + fabs(lo) + fabs(hi)))
        return -1;
    *u = hi < lo ? 0.5 * (lo + hi) : hi;
    return 0;
}

/* Whether u = 0 holds every half-plane at x = 0 (g >= 0 for all): rest at s_i with rest next, the
 * usual case, known without greedy_u's divisions. */
static int holds_at_rest(const half_plane *h, int k)
{
    int ok = 1;
    for (int j = 0; j < k; ++j)
        ok &= h[j].g >= 0.0;
    return ok;
}

int rd_reachability(const rd_path_constraints *p, rd_path_timing *t)
{
    const int n = p->n;
    half_plane *h = t->work;
    int first[2] = {-1, -1}, moved[2], active[2];
    double *K_lo = t->K_lo, *K_hi = t->K_hi;
    const int keep = t->defining && p->keep > 0 ? MIN(p->keep, n - 1) : 0;
    if (!keep)
        K_lo[n - 1] = K_hi[n - 1] = p->x_end;
    if (!(p->x_end >= 0.0 && p->x_end <= p->xmax[n - 1]))
        return n - 1;
    if (keep > 1) /* the order the kept pass reached this segment with: the same LPs as a whole pass */
        first[0] = t->defining[2 * (n - keep)], first[1] = t->defining[2 * (n - keep) + 1];
    const int below = keep > 0 ? MAX(p->changed_from, 0) : 0; /* segments with the last call's rows */
    int lowest = 0; /* the lowest point whose controllable set may differ from the last call's */
    for (int i = n - 1 - MAX(keep, 1); i >= 0; --i) {
        const int k = segment_rows(p, K_lo, K_hi, i, h);
        const double xh = MIN(p->xmax[i], RD_TOPP_X_BOUND), was_lo = K_lo[i], was_hi = K_hi[i];
        double u0;
        defining_first(h, k, first, moved);
        if (lp_x(h, k, 1.0, 0.0, xh, K_hi + i, active))
            return i;
        for (int c = 0; c < 2; ++c)
            first[c] = active[c] >= 0 ? original(active[c], moved) : -1;
        if (t->defining)
            t->defining[2 * i] = first[0], t->defining[2 * i + 1] = first[1];
        if (holds_at_rest(h, k) || !greedy_u(h, k, 0.0, &u0)) /* some u holds the rows at x = 0 */
            K_lo[i] = 0.0;                                  /* the set reaches down to rest */
        else if (lp_x(h, k, -1.0, 0.0, xh, K_lo + i, active))
            return i;
        if (K_lo[i] > K_hi[i])
            K_lo[i] = K_hi[i];
        if (i < below && K_lo[i] == was_lo && K_hi[i] == was_hi) { /* the last call's rows and next set */
            lowest = i + 1;
            break;
        }
    }
    /* the segments below both the changed rows and the changed sets time as in the last call: the
     * forward pass starts at the first point after them, from that call's x there */
    const int start = MAX(MIN(below, lowest - 1), 0);
    double x = start > 0 ? t->x[start] : p->x_start;
    if (start == 0 && (x < K_lo[0] - RD_TOPP_TOL * (1.0 + K_lo[0]) || x > K_hi[0] + RD_TOPP_TOL * (1.0 + K_hi[0])))
        return 0;
    t->x[start] = x;
    /* with kept segments, those from point n - keep on have the last pass's rows and next sets: where
     * the timing meets the last pass's x there, the rest of that pass's timing is this one's */
    const int same_from = keep > 0 ? n - keep : n;
    for (int i = start; i < n - 1; ++i) {
        const int k = segment_rows(p, K_lo, K_hi, i, h);
        const double d = p->s[i + 1] - p->s[i], before = t->x[i + 1];
        double u;
        if (greedy_u(h, k, x, &u))
            return i;
        double next = x + 2.0 * d * u;
        next = MIN(MAX(next, MAX(K_lo[i + 1], 0.0)), K_hi[i + 1]);
        if (i == n - 2)
            next = p->x_end;
        t->u[i] = (next - x) / (2.0 * d); /* the u that reaches the (clamped) next state */
        t->x[i + 1] = x = next;
        if (i + 1 >= same_from && next == before)
            break;
    }
    return -1;
}
