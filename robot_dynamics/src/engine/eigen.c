/* Small symmetric eigenproblems (n <= 6) of the compliant laws, without LAPACK: the impedance's damping
 * design (rd_impedance_damping, formed; rd_impedance_damping_apply, applied to a vector) and the smallest
 * singular value of the task rows of J (rd_smallest_singular_value).
 *
 * The damping of the diagonal stiffness K = C^2 is D = 2 zeta C sqrt(C^-1 Lambda C^-1) C, equal to
 * Albu-Schaeffer's Lambda Phi diag(2 zeta w) Phi^T Lambda: the matrix square root from an
 * eigen-decomposition (Householder reduction to tridiagonal form and implicit QR steps with Wilkinson's
 * shift, Golub and Van Loan ch. 8). rd_impedance_damping_apply takes it from Lambda^-1 = S, as
 * 2 zeta C (C S C)^-1/2 C, without forming Lambda or D. rd_impedance_damping forms D: by that route for a
 * positive diagonal K and, for a full K, as D = L U diag(2 zeta w) U^T L^T from S = L^-1 K L^-T =
 * U diag(w^2) U^T (Lambda = L L^T) by cyclic Jacobi rotations, which give the small w^2 of a graded S to
 * their own precision. s_min = |J^T v|, v the eigenvector of J J^T's smallest eigenvalue by inverse
 * iteration on (J J^T)^-4, else from the eigen-decomposition.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "internal.h"

#define JACOBI_TOLERANCE 1e-15 /* the off-diagonal part's norm relative to the matrix's when the sweeps stop */
#define JACOBI_SWEEPS 50       /* at most (a 6 x 6 converges in 3 to 7) */
#define QR_SWEEPS 30           /* QR steps per eigenvalue at most (a 6 x 6 takes one to three) */
#define VT 6                   /* the eigenvectors' rows' length (any n <= 6): two entries at a time */
#define INVERSE_STEPS 16       /* inverse iteration's steps at most before the eigen-decomposition takes over */
#define INVERSE_TOLERANCE 1e-10 /* a step's change of the unit vector (max norm) once it has converged */

/* A rotation of jacobi_eigen: the plane (p, q) and its tan t, cos c, sin s and tau = s / (1 + c). */
typedef struct {
    int p, q;
    double t, c, s, tau;
} jacobi_rotation;

/* The rotation that zeroes A_pq (n x n): t = tan, the smaller root of t^2 + 2 theta t - 1 = 0. */
static jacobi_rotation jacobi_plane(const double *A, int n, int p, int q)
{
    jacobi_rotation g = {p, q, 0.0, 1.0, 0.0, 0.0};
    const double apq = A[p * n + q];
    if (apq == 0.0)
        return g;
    const double theta = (A[q * n + q] - A[p * n + p]) / (2.0 * apq);
    g.t = (theta >= 0.0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
    g.c = 1.0 / sqrt(g.t * g.t + 1.0), g.s = g.t * g.c, g.tau = g.s / (1.0 + g.c);
    return g;
}

/* A = R^T A R and V = V R, R = 1 but R_pp = R_qq = c, R_pq = s, R_qp = -s (Rutishauser's update). */
static void jacobi_apply(double *A, int n, double *V, const jacobi_rotation *g)
{
    const int p = g->p, q = g->q;
    const double s = g->s, tau = g->tau, tapq = g->t * A[p * n + q];
    if (g->t == 0.0)
        return;
    A[p * n + p] -= tapq, A[q * n + q] += tapq;
    A[p * n + q] = A[q * n + p] = 0.0;
    for (int k = 0; k < n; ++k) {
        if (k == p || k == q)
            continue;
        const double akp = A[k * n + p], akq = A[k * n + q];
        A[k * n + p] = A[p * n + k] = akp - s * (akq + tau * akp);
        A[k * n + q] = A[q * n + k] = akq + s * (akp - tau * akq);
    }
    for (int k = 0; V && k < n; ++k) {
        const double vkp = V[k * n + p], vkq = V[k * n + q];
        V[k * n + p] = vkp - s * (vkq + tau * vkp), V[k * n + q] = vkq + s * (vkp - tau * vkq);
    }
}

/* The planes (p < q) of one round of the round robin of m players (n real, m even; the circle method:
 * order[i] meets order[m - 1 - i]), into pairs; their count. Then order moves on to the next round. */
static int round_robin(int order[6], int m, int n, int pairs[3][2])
{
    int count = 0;
    for (int i = 0; i < m / 2; ++i) {
        const int a = order[i], b = order[m - 1 - i];
        if (a < n && b < n)
            pairs[count][0] = a < b ? a : b, pairs[count][1] = a < b ? b : a, ++count;
    }
    const int last = order[m - 1]; /* all but the first move on by one */
    for (int i = m - 1; i > 1; --i)
        order[i] = order[i - 1];
    order[1] = last;
    return count;
}

/* Eigen-decomposition of the symmetric A (n x n row-major, n <= 6; overwritten) by Jacobi rotations in the
 * round-robin (parallel) order of Brent and Luk (1985): each round rotates up to three disjoint planes,
 * whose rotations are computed first from the same A (disjoint planes do not change each other's three
 * entries) and then applied, so that their square roots and divisions overlap. Sweeps until the
 * off-diagonal part's norm is at most JACOBI_TOLERANCE of A's. On return A's diagonal holds the
 * eigenvalues and V (n x n, or NULL) the eigenvectors as columns: A_in = V diag(A) V^T. */
static void jacobi_eigen(double *A, int n, double *V)
{
    for (int i = 0; V && i < n * n; ++i)
        V[i] = i % (n + 1) == 0 ? 1.0 : 0.0;
    double total = 0.0;
    for (int i = 0; i < n * n; ++i)
        total += A[i] * A[i];
    const int m = n + (n & 1); /* players of the round robin, one a bye when n is odd */
    for (int sweep = 0; sweep < JACOBI_SWEEPS; ++sweep) {
        double off = 0.0;
        for (int p = 0; p < n; ++p)
            for (int q = p + 1; q < n; ++q)
                off += A[p * n + q] * A[p * n + q];
        if (!(off > JACOBI_TOLERANCE * JACOBI_TOLERANCE * total))
            return;
        int order[6] = {0, 1, 2, 3, 4, 5}, pairs[3][2];
        for (int round = 0; round < m - 1; ++round) {
            jacobi_rotation g[3];
            const int count = round_robin(order, m, n, pairs);
            for (int k = 0; k < count; ++k)
                g[k] = jacobi_plane(A, n, pairs[k][0], pairs[k][1]);
            for (int k = 0; k < count; ++k)
                jacobi_apply(A, n, V, &g[k]);
        }
    }
}

/* A (n x n row-major, symmetric, n <= 6; overwritten) = Q T Q^T by Householder reflections (Golub and Van
 * Loan, Matrix Computations, 4th ed., algorithm 8.3.1), T tridiagonal: its diagonal d (n) and off-diagonal
 * e (e[k] = T_k,k+1, n - 1); Q (n x n) into V when V is not NULL. A keeps the reflections P_k = 1 - beta v v^T
 * (Q = P_0 P_1 ...): v (n - k - 1) in column k below the diagonal, beta in A_k,k+1. */
static RD_HOT void tridiagonalize_n(double *A, int n, double *d, double *e, double *V)
{
    for (int i = 0; V && i < n * n; ++i)
        V[i] = i % (n + 1) == 0 ? 1.0 : 0.0;
    for (int k = 0; k + 2 < n; ++k) {
        double v[6], p[6], tail = 0.0; /* x = A[k+1:, k]; v = x - alpha e_1, alpha = -sign(x_0) |x| */
        const int m = n - k - 1;
        for (int i = 0; i < m; ++i)
            v[i] = A[(k + 1 + i) * n + k], tail += i ? v[i] * v[i] : 0.0;
        d[k] = A[k * n + k];
        if (tail == 0.0) { /* x is along e_1 already: P = 1 (beta = 0 kept) */
            e[k] = v[0], A[k * n + k + 1] = 0.0;
            continue;
        }
        const double alpha = v[0] > 0.0 ? -sqrt(v[0] * v[0] + tail) : sqrt(v[0] * v[0] + tail);
        v[0] -= alpha;
        const double beta = 2.0 / (v[0] * v[0] + tail); /* P = 1 - beta v v^T */
        e[k] = alpha, A[k * n + k + 1] = beta; /* v into column k below the diagonal, beta beside it */
        for (int i = 0; i < m; ++i)
            A[(k + 1 + i) * n + k] = v[i];
        double pv = 0.0; /* A22 = P A22 P = A22 - v w^T - w v^T, p = beta A22 v, w = p - (beta p.v / 2) v */
        for (int i = 0; i < m; ++i) {
            double s = 0.0;
            for (int j = 0; j < m; ++j)
                s += A[(k + 1 + i) * n + k + 1 + j] * v[j];
            p[i] = beta * s, pv += p[i] * v[i];
        }
        const double h = 0.5 * beta * pv;
        for (int i = 0; i < m; ++i)
            p[i] -= h * v[i];
        for (int i = 0; i < m; ++i)
            for (int j = 0; j <= i; ++j)
                A[(k + 1 + i) * n + k + 1 + j] = A[(k + 1 + j) * n + k + 1 + i] =
                    A[(k + 1 + i) * n + k + 1 + j] - v[i] * p[j] - p[i] * v[j];
        for (int r = 0; V && r < n; ++r) { /* Q = Q P: row r of Q's last m columns less beta (row . v) v^T */
            double s = 0.0;
            for (int j = 0; j < m; ++j)
                s += V[r * n + k + 1 + j] * v[j];
            s *= beta;
            for (int j = 0; j < m; ++j)
                V[r * n + k + 1 + j] -= s * v[j];
        }
    }
    if (n > 1)
        d[n - 2] = A[(n - 2) * n + n - 2], e[n - 2] = A[(n - 1) * n + n - 2];
    d[n - 1] = A[n * n - 1];
}

/* tridiagonalize_n, its loops of constant length for the task's six rows (the index arithmetic folded). */
static void tridiagonalize(double *A, int n, double *d, double *e, double *V)
{
    if (n == 6)
        tridiagonalize_n(A, 6, d, e, V);
    else
        tridiagonalize_n(A, n, d, e, V);
}

/* x = P_k x (x: n) for the reflection P_k = 1 - beta v v^T that tridiagonalize kept in A (n x n): v in
 * column k below the diagonal, beta in A_k,k+1. */
static RD_HOT void reflect(const double *A, int n, int k, double *x)
{
    const double beta = A[k * n + k + 1];
    double s = 0.0;
    for (int i = k + 1; i < n; ++i)
        s += A[i * n + k] * x[i];
    s *= beta;
    for (int i = k + 1; i < n; ++i)
        x[i] -= s * A[i * n + k];
}

/* Rows a and a + VT (VT entries each) of the eigenvectors' rows turned by the rotation (c, s):
 * a <- c a + s b, b <- c b - s a, two entries at a time. */
static void rotate_rows(double *a, double c, double s)
{
    double *b = a + VT;
    for (int j = 0; j < VT; j += 2) {
        const rd_x2 x = rd_x2_load(a + j), y = rd_x2_load(b + j);
        rd_x2_store(a + j, rd_x2_add(rd_x2_scale(c, x), rd_x2_scale(s, y)));
        rd_x2_store(b + j, rd_x2_add(rd_x2_scale(c, y), rd_x2_neg(rd_x2_scale(s, x))));
    }
}

/* One implicit symmetric QR step with Wilkinson's shift on the unreduced block lo..hi of the tridiagonal
 * (d, e) (Golub and Van Loan, algorithm 8.3.2): Givens rotations in the planes (k, k + 1) chase the bulge
 * b down; the rows k, k + 1 of Vt (the eigenvectors as rows, VT columns) turn with them when Vt is not
 * NULL. */
static void qr_step(double *d, double *e, int lo, int hi, double *Vt)
{
    const double delta = 0.5 * (d[hi - 1] - d[hi]), f = e[hi - 1];
    const double root = sqrt(delta * delta + f * f);
    const double mu = d[hi] - f * f / (delta + (delta < 0.0 ? -root : root));
    double x = d[lo] - mu, z = e[lo];
    for (int k = lo; k < hi; ++k) {
        const double r2 = x * x + z * z, rr = sqrt(r2), inv = 1.0 / r2; /* the root and 1 / r2 side by side */
        const double c = rr > 0.0 ? x * inv * rr : 1.0, s = rr > 0.0 ? z * inv * rr : 0.0; /* x / rr, z / rr */
        if (k > lo)
            e[k - 1] = rr; /* (x, z) = (e_k-1, the bulge): the bulge rotated away */
        const double dk = d[k], dl = d[k + 1], ek = e[k], cs = c * s;
        d[k] = c * c * dk + 2.0 * cs * ek + s * s * dl;
        d[k + 1] = s * s * dk - 2.0 * cs * ek + c * c * dl;
        e[k] = cs * (dl - dk) + (c * c - s * s) * ek;
        if (k + 1 < hi) /* the next bulge at (k, k + 2) */
            x = e[k], z = s * e[k + 1], e[k + 1] *= c;
        if (Vt)
            rotate_rows(Vt + VT * k, c, s);
    }
}

/* The eigenvalues of the symmetric tridiagonal matrix of diagonal w and off-diagonal e (n each, both
 * overwritten) into w by implicit QR steps, an off-diagonal entry dropped once it is at most DBL_EPSILON
 * of its two diagonal neighbours; the rotations applied to Vt's rows (n rows of VT entries, or NULL):
 * the eigenvectors' components in the rows' basis, eigenvector k in row k. */
static void tridiagonal_eigen(double *w, double *e, int n, double *Vt)
{
    for (int hi = n - 1, steps = 0; hi > 0 && steps < QR_SWEEPS * n;) {
        for (int k = 0; k < hi; ++k)
            if (fabs(e[k]) <= DBL_EPSILON * (fabs(w[k]) + fabs(w[k + 1])))
                e[k] = 0.0;
        if (e[hi - 1] == 0.0) {
            --hi;
            continue;
        }
        int lo = hi - 1;
        while (lo > 0 && e[lo - 1] != 0.0)
            --lo;
        qr_step(w, e, lo, hi, Vt), ++steps;
    }
}

/* Eigen-decomposition of the symmetric A (n x n row-major, n <= 6; overwritten): Householder reduction to
 * tridiagonal form and implicit QR steps with Wilkinson's shift, an off-diagonal entry dropped once it is
 * at most DBL_EPSILON of its two diagonal neighbours. The eigenvalues into w (n), the eigenvectors into V's
 * columns (n x n, or NULL for the values only): A_in = V diag(w) V^T, backward stable (the error of each
 * eigenvalue within a few DBL_EPSILON |A|). */
static void symmetric_eigen(double *A, int n, double *w, double *V)
{
    double e[6], Vt[VT * VT] = {0.0}; /* V^T, VT columns */
    tridiagonalize(A, n, w, e, V);
    for (int r = 0; V && r < n; ++r)
        for (int k = 0; k < n; ++k)
            Vt[VT * k + r] = V[r * n + k];
    tridiagonal_eigen(w, e, n, V ? Vt : NULL);
    for (int r = 0; V && r < n; ++r)
        for (int k = 0; k < n; ++k)
            V[r * n + k] = Vt[VT * k + r];
}

/* D = 2 zeta C V diag(sqrt(mu)) V^T C^T (C = sqrt(K) when c (r) holds K's diagonal, C = L with
 * rows == NULL; else C = the lower triangular L in rows), from mu, V (r x r) of the eigen-decomposition. */
static void damping_product(int r, const double *C, int triangular, const double *mu, const double *V, double zeta,
                            double *D)
{
    double B[36], g[6];
    for (int k = 0; k < r; ++k)
        g[k] = 2.0 * zeta * sqrt(mu[k] > 0.0 ? mu[k] : 0.0);
    for (int i = 0; i < r; ++i) /* B = C V */
        for (int k = 0; k < r; ++k) {
            double s = 0.0;
            if (triangular)
                for (int a = 0; a <= i; ++a)
                    s += C[i * r + a] * V[a * r + k];
            else
                s = C[i] * V[i * r + k];
            B[i * r + k] = s;
        }
    for (int i = 0; i < r; ++i) /* D = B diag(2 zeta sqrt(mu)) B^T */
        for (int j = 0; j <= i; ++j) {
            double s = 0.0;
            for (int k = 0; k < r; ++k)
                s += B[i * r + k] * g[k] * B[j * r + k];
            D[i * r + j] = D[j * r + i] = s;
        }
}

/* The damping D (r x r) of a diagonal stiffness k (r, > 0) on Lambda (r x r): with C = diag(sqrt(k)),
 * M = C^-1 Lambda C^-1 = V diag(mu) V^T and D = 2 zeta C V diag(sqrt(mu)) V^T C, which is
 * Lambda Phi diag(2 zeta w) Phi^T Lambda (K phi = w^2 Lambda phi, Phi^T Lambda Phi = 1: Phi = C^-1 V diag(w),
 * w^2 = 1 / mu). */
static void diagonal_damping(int r, const double *k, const double *Lambda, double zeta, double *D)
{
    double M[36], V[36], mu[6], c[6], ci[6];
    for (int i = 0; i < r; ++i)
        c[i] = sqrt(k[i]), ci[i] = 1.0 / c[i];
    for (int i = 0; i < r; ++i)
        for (int j = 0; j < r; ++j)
            M[i * r + j] = ci[i] * Lambda[i * r + j] * ci[j];
    symmetric_eigen(M, r, mu, V);
    damping_product(r, c, 0, mu, V, zeta, D);
}

/* (internal.h) */
int rd_impedance_damping_apply(int r, const double *k, const double *S, double zeta, const double *x, double *y)
{
    double P[36], W[VT * VT] = {0.0}, c[6], nu[6], e[6], u[VT] = {0.0}; /* W: the eigenvectors as rows */
    for (int i = 0; i < r; ++i)
        c[i] = sqrt(k[i]), u[i] = c[i] * x[i];
    for (int i = 0; i < r; ++i)
        for (int j = 0; j <= i; ++j)
            P[i * r + j] = P[j * r + i] = c[i] * S[i * r + j] * c[j];
    tridiagonalize(P, r, nu, e, NULL);
    for (int i = 0; i < r; ++i)
        W[VT * i + i] = 1.0;
    tridiagonal_eigen(nu, e, r, W);
    for (int k = 0; k + 2 < r; ++k) /* u = Q^T C x = ... P_1 P_0 C x */
        reflect(P, r, k, u);
    rd_x2 sum[VT / 2] = {{0.0}}; /* W diag(2 zeta nu^-1/2) W^T u: the rows of W (the eigenvectors w_j) */
    for (int j = 0; j < r; ++j) {
        if (!(nu[j] > 0.0))
            return RD_TASK_SINGULAR;
        double t = 0.0;
        for (int i = 0; i < r; ++i)
            t += W[VT * j + i] * u[i];
        const double v = 2.0 * zeta / sqrt(nu[j]) * t; /* sum += (2 zeta nu_j^-1/2 w_j . u) w_j */
        for (int h = 0; h < VT / 2; ++h)
            sum[h] = rd_x2_add(sum[h], rd_x2_scale(v, rd_x2_load(W + VT * j + 2 * h)));
    }
    for (int h = 0; h < VT / 2; ++h)
        rd_x2_store(u + 2 * h, sum[h]);
    for (int k = r - 3; k >= 0; --k) /* u = Q u, the last reflection first */
        reflect(P, r, k, u);
    for (int i = 0; i < r; ++i)
        y[i] = c[i] * u[i];
    return RD_OK;
}

/* K (r x r) diagonal with a positive diagonal, copied into k. */
static int positive_diagonal(int r, const double *K, double *k)
{
    for (int i = 0; i < r; ++i) {
        for (int j = 0; j < r; ++j)
            if (i != j && K[i * r + j] != 0.0)
                return 0;
        if (!(K[i * r + i] > 0.0))
            return 0;
        k[i] = K[i * r + i];
    }
    return 1;
}

int rd_impedance_damping(int r, const double *K, const double *Lambda, double zeta, double *D)
{
    if (r < 1 || r > 6)
        return RD_BAD_SIZE;
    if (!rd_finite(K, r * r) || !rd_finite(Lambda, r * r) || !isfinite(zeta))
        return RD_BAD_INPUT;
    double L[36], X[36], S[36], U[36], w2[6], k[6];
    memcpy(L, Lambda, sizeof(double) * r * r);
    if (rd_cholesky(L, r) != RD_OK) /* Lambda = L L^T, L in the lower triangle */
        return RD_NOT_POSITIVE_DEFINITE;
    if (positive_diagonal(r, K, k)) {
        diagonal_damping(r, k, Lambda, zeta, D);
        return rd_finite(D, r * r) ? RD_OK : RD_BAD_OUTPUT;
    }
    for (int c = 0; c < r; ++c) /* X = L^-1, lower triangular: column c by forward substitution */
        for (int i = 0; i < r; ++i) {
            double x = i == c ? 1.0 : 0.0;
            for (int a = c; a < i; ++a)
                x -= L[i * r + a] * X[a * r + c];
            X[i * r + c] = i < c ? 0.0 : x / L[i * r + i];
        }
    for (int i = 0; i < r; ++i) /* S = X K X^T, symmetric */
        for (int j = 0; j <= i; ++j) {
            double s = 0.0;
            for (int a = 0; a <= i; ++a)
                for (int b = 0; b <= j; ++b)
                    s += X[i * r + a] * K[a * r + b] * X[j * r + b];
            S[i * r + j] = S[j * r + i] = s;
        }
    jacobi_eigen(S, r, U); /* S = U diag(w^2) U^T; Jacobi: the small w^2 of a graded S to their own precision */
    for (int k = 0; k < r; ++k)
        w2[k] = S[k * r + k];
    damping_product(r, L, 1, w2, U, zeta, D);
    return rd_finite(D, r * r) ? RD_OK : RD_BAD_OUTPUT;
}

/* x (n) = (T - mu 1)^-1 b for the tridiagonal T (d, e), by Gaussian elimination with partial pivoting
 * (U: diagonal u0, super-diagonals u1, u2; the multipliers l and row swaps sw), scaled to |x|_inf = 1; a
 * zero pivot replaced by tiny (> 0). With first set, b is taken as L's inverse applied to (1, ..., 1)
 * (Wilkinson's start of inverse iteration, L not applied). */
static void shifted_solve(const double *d, const double *e, int n, double mu, double tiny, int first, double *x)
{
    double u0[6], u1[6], u2[6], l[6], a = d[0] - mu, b = n > 1 ? e[0] : 0.0;
    int sw[6];
    for (int k = 0; k + 1 < n; ++k) {
        const double below = e[k], next = d[k + 1] - mu, far = k + 2 < n ? e[k + 1] : 0.0;
        sw[k] = fabs(a) < fabs(below);
        if (sw[k]) { /* row k + 1 pivots */
            l[k] = a / below, u0[k] = below, u1[k] = next, u2[k] = far;
            a = b - l[k] * next, b = -l[k] * far;
        } else {
            l[k] = a != 0.0 ? below / a : 0.0, u0[k] = a, u1[k] = b, u2[k] = 0.0;
            a = next - l[k] * b, b = far;
        }
    }
    u0[n - 1] = a, u1[n - 1] = u2[n - 1] = 0.0;
    for (int k = 0; k < n; ++k)
        u0[k] = u0[k] == 0.0 ? tiny : u0[k];
    for (int k = 0; first && k < n; ++k)
        x[k] = 1.0;
    for (int k = 0; !first && k + 1 < n; ++k) { /* x = L^-1 P x */
        if (sw[k]) {
            const double t = x[k];
            x[k] = x[k + 1], x[k + 1] = t;
        }
        x[k + 1] -= l[k] * x[k];
    }
    double top = 0.0;
    for (int k = n - 1; k >= 0; --k) {
        const double v = (x[k] - u1[k] * (k + 1 < n ? x[k + 1] : 0.0) - u2[k] * (k + 2 < n ? x[k + 2] : 0.0)) / u0[k];
        x[k] = v, top = fabs(v) > top ? fabs(v) : top;
    }
    for (int k = 0; k < n; ++k)
        x[k] /= top;
}

/* The unit eigenvector v (n) of G's smallest eigenvalue (G: n x n symmetric, n <= 6, overwritten; not 0):
 * Householder reduction to tridiagonal T without accumulating Q, T's eigenvalues by QR steps (values
 * only), two steps of inverse iteration on T shifted by the smallest (shifted_solve), then v = Q x with the
 * reflections kept in G. 0 when G is 0. */
static int smallest_eigenvector(double *G, int n, double *v)
{
    double d[6], e[6], w[6], f[6], tnorm = 0.0;
    tridiagonalize(G, n, d, e, NULL);
    for (int k = 0; k < n; ++k)
        w[k] = d[k], f[k] = e[k], tnorm += fabs(d[k]) + (k + 1 < n ? 2.0 * fabs(e[k]) : 0.0);
    if (!(tnorm > 0.0))
        return 0;
    tridiagonal_eigen(w, f, n, NULL); /* the values only */
    double mu = w[0];
    for (int k = 1; k < n; ++k)
        mu = w[k] < mu ? w[k] : mu;
    shifted_solve(d, e, n, mu, DBL_EPSILON * tnorm, 1, v);
    shifted_solve(d, e, n, mu, DBL_EPSILON * tnorm, 0, v);
    for (int k = n - 3; k >= 0; --k) /* v = Q x = P_0 P_1 ... x, the last reflection first */
        reflect(G, n, k, v);
    double sq = 0.0;
    for (int k = 0; k < n; ++k)
        sq += v[k] * v[k];
    const double norm = sqrt(sq);
    for (int k = 0; k < n; ++k)
        v[k] /= norm;
    return 1;
}

/* (internal.h) */
void rd_gram(const double *J, int r, int nq, double *G)
{
    for (int i = 0; i < r; ++i)
        for (int j = 0; j <= i; ++j) {
            double s = 0.0;
            for (int a = 0; a < nq; ++a)
                s += J[i * nq + a] * J[j * nq + a];
            G[i * r + j] = G[j * r + i] = s;
        }
}

/* The unit eigenvector v (n) of the smallest eigenvalue of G (n x n symmetric positive definite, n <= 6;
 * not changed) by inverse iteration on H = G^-4 (G^-1 from Cholesky factors, rd_task_inverse, then squared
 * twice: the steps are products with H, whose rows are independent, not triangular solves): x from H's
 * column of the largest diagonal entry, then x <- H x / |H x| until a step moves x by at most
 * INVERSE_TOLERANCE (max norm). Each power of G^-1 shrinks x's error by lambda_1 / lambda_2, the two
 * smallest eigenvalues: a few steps where lambda_1 stands apart. 0 (v not set) where G's factor has a
 * pivot at most RD_TASK_PIVOT of its diagonal or INVERSE_STEPS do not converge (lambda_2 near lambda_1):
 * smallest_eigenvector's route then. */
static int inverse_iteration(const double *G, int n, double *v)
{
    double R[36], Ginv[36], H1[36], H2[36], H[36], x[6];
    memcpy(R, G, sizeof(double) * (size_t)(n * n));
    if (rd_task_inverse(R, n, H1, Ginv) != RD_OK)
        return 0;
    rd_gram(H1, n, n, H2); /* H1 H1^T = G^-2 (H1 symmetric), then G^-4 */
    rd_gram(H2, n, n, H);
    int j = 0;
    for (int i = 1; i < n; ++i)
        j = H[i * n + i] > H[j * n + j] ? i : j;
    double sq0 = 0.0;
    for (int i = 0; i < n; ++i)
        sq0 += H[i * n + j] * H[i * n + j];
    for (int i = 0; i < n; ++i)
        x[i] = H[i * n + j] / sqrt(sq0);
    for (int step = 0; step < INVERSE_STEPS; ++step) {
        double y[6], sq = 0.0, change = 0.0;
        for (int i = 0; i < n; ++i) {
            double s = 0.0;
            for (int k = 0; k < n; ++k)
                s += H[i * n + k] * x[k];
            y[i] = s, sq += s * s;
        }
        const double scale = 1.0 / sqrt(sq);
        for (int i = 0; i < n; ++i) {
            const double u = y[i] * scale;
            change = fabs(u - x[i]) > change ? fabs(u - x[i]) : change;
            x[i] = u;
        }
        if (change <= INVERSE_TOLERANCE) {
            memcpy(v, x, sizeof(double) * (size_t)n);
            return 1;
        }
    }
    return 0;
}

/* (internal.h) */
double rd_smallest_singular_value(const double *J, int r, int nq, double *G)
{
    double v[6];
    if (!inverse_iteration(G, r, v) && !smallest_eigenvector(G, r, v))
        return 0.0;
    double sq = 0.0;
    for (int a = 0; a < nq; ++a) {
        double s = 0.0;
        for (int i = 0; i < r; ++i)
            s += J[i * nq + a] * v[i];
        sq += s * s;
    }
    return sqrt(sq);
}
