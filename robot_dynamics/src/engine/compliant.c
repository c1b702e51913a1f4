/* Compliant control of one frame on its task inertia: Cartesian impedance (Hogan 1985; Albu-Schaeffer,
 * Ott, Frese and Hirzinger, "Cartesian impedance control of redundant robots", ICRA 2003) and Khatib's
 * operational-space control (1987; Khalil [9.36]), with a posture task in the null space, the task
 * inertia damped near singularities and the task wrench and torque rate saturated: the one law of
 * robot_dynamics.control.CartesianImpedance and OperationalSpaceControl (which call it through
 * robot_dynamics.engine.stages) and of the ros2_control controllers.
 *
 * One tick: rd_task_space's pose, Jacobian rows and Jdot qd; A = rd_crba's and its Cholesky factor;
 * whether J's smallest singular value is below the threshold (a Cholesky factor of J J^T - thr^2 1), and
 * only then its value (|J^T v|, v the eigenvector of J J^T's smallest eigenvalue, by inverse iteration);
 * the task inertia's inverse S = Lambda^-1 = J A^-1 J^T + lambda^2 1 from the factors (rd_task_gram) and
 * its own factor, Lambda never formed (Lambda x = S^-1 x); the wrench; rnea(q, qd, 0) + J^T F + N tau_0,
 * N tau_0 = tau_0 - J^T Lambda J A^-1 tau_0 from the factors (N not formed). The damping of the diagonal
 * stiffness K = C^2 is D = 2 zeta C sqrt(C^-1 Lambda C^-1) C = 2 zeta C (C S C)^-1/2 C, applied to e_dot
 * without being formed: the matrix function from an eigen-decomposition of C S C (Householder reduction to
 * tridiagonal form and implicit QR steps with Wilkinson's shift, Golub and Van Loan ch. 8), equal to
 * Albu-Schaeffer's Lambda Phi diag(2 zeta w) Phi^T Lambda. rd_impedance_damping forms D from Lambda: by
 * that route for a positive diagonal K and, for a full K, as D = L U diag(2 zeta w) U^T L^T from
 * S = L^-1 K L^-T = U diag(w^2) U^T (Lambda = L L^T) by cyclic Jacobi rotations, which give the small w^2 of
 * a graded S to their own precision.
 * No allocation: the r x r matrices live on the stack, the nq-sized ones in rd_work (cN, cA, c0).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "internal.h"

#define JACOBI_TOLERANCE 1e-15 /* the off-diagonal part's norm relative to the matrix's when the sweeps stop */
#define JACOBI_SWEEPS 50       /* at most (a 6 x 6 converges in 3 to 7) */
#define QR_SWEEPS 30              /* QR steps per eigenvalue at most (a 6 x 6 takes one to three) */
#define HALF_PI 1.5707963267948966 /* the double nearest pi / 2, numpy's np.pi / 2 */
#define INVERSE_STEPS 16         /* inverse iteration's steps at most before the eigen-decomposition takes over */
#define INVERSE_TOLERANCE 1e-10  /* a step's change of the unit vector (max norm) once it has converged */

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
static void tridiagonalize(double *A, int n, double *d, double *e, double *V)
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

/* x = P_k x (x: n) for the reflection P_k = 1 - beta v v^T that tridiagonalize kept in A (n x n): v in
 * column k below the diagonal, beta in A_k,k+1. */
static void reflect(const double *A, int n, int k, double *x)
{
    const double beta = A[k * n + k + 1];
    double s = 0.0;
    for (int i = k + 1; i < n; ++i)
        s += A[i * n + k] * x[i];
    s *= beta;
    for (int i = k + 1; i < n; ++i)
        x[i] -= s * A[i * n + k];
}

/* One implicit symmetric QR step with Wilkinson's shift on the unreduced block lo..hi of the tridiagonal
 * (d, e) (Golub and Van Loan, algorithm 8.3.2): Givens rotations in the planes (k, k + 1) chase the bulge
 * b down; V's columns (n rows) turn with them when V is not NULL. */
static void qr_step(double *d, double *e, int lo, int hi, double *V, int n)
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
        for (int r = 0; V && r < n; ++r) {
            const double vk = V[r * n + k], vl = V[r * n + k + 1];
            V[r * n + k] = c * vk + s * vl, V[r * n + k + 1] = c * vl - s * vk;
        }
    }
}

/* The eigenvalues of the symmetric tridiagonal matrix of diagonal w and off-diagonal e (n each, both
 * overwritten) into w by implicit QR steps, an off-diagonal entry dropped once it is at most DBL_EPSILON
 * of its two diagonal neighbours; the rotations applied to V's columns (n x n, or NULL). */
static void tridiagonal_eigen(double *w, double *e, int n, double *V)
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
        qr_step(w, e, lo, hi, V, n), ++steps;
    }
}

/* Eigen-decomposition of the symmetric A (n x n row-major, n <= 6; overwritten): Householder reduction to
 * tridiagonal form and implicit QR steps with Wilkinson's shift, an off-diagonal entry dropped once it is
 * at most DBL_EPSILON of its two diagonal neighbours. The eigenvalues into w (n), the eigenvectors into V's
 * columns (n x n, or NULL for the values only): A_in = V diag(w) V^T, backward stable (the error of each
 * eigenvalue within a few DBL_EPSILON |A|). */
static void symmetric_eigen(double *A, int n, double *w, double *V)
{
    double e[6];
    tridiagonalize(A, n, w, e, V);
    tridiagonal_eigen(w, e, n, V);
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

/* y (r) = D x, the damping of diagonal_damping applied to x (r) without D or Lambda formed, from the task
 * inertia's inverse S = Lambda^-1 (r x r, its lower triangle read): M = C^-1 Lambda C^-1 = P^-1 with
 * P = C S C, so M's eigenvectors are P's and mu = 1 / nu for P = V diag(nu) V^T, and
 * y = 2 zeta C V diag(nu^-1/2) V^T C x, V = Q W: Q's reflections (tridiagonalize) applied to vectors from
 * where it keeps them (Q not formed), W the eigenvectors of the tridiagonal form (tridiagonal_eigen). RD_OK, or
 * RD_TASK_SINGULAR for an eigenvalue nu that is not positive. */
static int damping_from_inverse(int r, const double *k, const double *S, double zeta, const double *x, double *y)
{
    double P[36], W[36], c[6], nu[6], e[6], u[6], v[6];
    for (int i = 0; i < r; ++i)
        c[i] = sqrt(k[i]), u[i] = c[i] * x[i];
    for (int i = 0; i < r; ++i)
        for (int j = 0; j <= i; ++j)
            P[i * r + j] = P[j * r + i] = c[i] * S[i * r + j] * c[j];
    tridiagonalize(P, r, nu, e, NULL);
    for (int i = 0; i < r * r; ++i)
        W[i] = i % (r + 1) == 0 ? 1.0 : 0.0;
    tridiagonal_eigen(nu, e, r, W);
    for (int k = 0; k + 2 < r; ++k) /* u = Q^T C x = ... P_1 P_0 C x */
        reflect(P, r, k, u);
    for (int j = 0; j < r; ++j) { /* v = diag(2 zeta nu^-1/2) W^T u */
        if (!(nu[j] > 0.0))
            return RD_TASK_SINGULAR;
        double t = 0.0;
        for (int i = 0; i < r; ++i)
            t += W[i * r + j] * u[i];
        v[j] = 2.0 * zeta / sqrt(nu[j]) * t;
    }
    for (int i = 0; i < r; ++i) { /* u = W v */
        double t = 0.0;
        for (int j = 0; j < r; ++j)
            t += W[i * r + j] * v[j];
        u[i] = t;
    }
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

/* B = A A (n x n, A symmetric; B symmetric). */
static void symmetric_square(const double *A, int n, double *B)
{
    for (int i = 0; i < n; ++i)
        for (int j = 0; j <= i; ++j) {
            double s = 0.0;
            for (int k = 0; k < n; ++k)
                s += A[i * n + k] * A[k * n + j];
            B[i * n + j] = B[j * n + i] = s;
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
    symmetric_square(H1, n, H2);
    symmetric_square(H2, n, H);
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

/* J J^T (r x r, both triangles) of J (r x nq) into G. */
static void gram(const double *J, int r, int nq, double *G)
{
    for (int i = 0; i < r; ++i)
        for (int j = 0; j <= i; ++j) {
            double s = 0.0;
            for (int a = 0; a < nq; ++a)
                s += J[i * nq + a] * J[j * nq + a];
            G[i * r + j] = G[j * r + i] = s;
        }
}

/* The smallest singular value of J (r x nq, r <= nq, r <= 6) from G = J J^T (overwritten): v, the
 * eigenvector of G's smallest eigenvalue (inverse_iteration, else smallest_eigenvector), then s_min = |J^T v|. This is the Rayleigh
 * quotient of J J^T at v without the square formed: v's error (about DBL_EPSILON |J|^2 over the gap to the
 * next eigenvalue) enters it only to the second order, so s_min comes within a few DBL_EPSILON |J| (absolute)
 * where sqrt of the eigenvalue would carry DBL_EPSILON |J|^2 / s_min; within DBL_EPSILON |J|^2 / s_2 when
 * the next singular value s_2 is small too (the gap that sets v's error). */
static double smallest_singular_value(const double *J, int r, int nq, double *G)
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

/* s_min of J (r x nq, r <= 6) when below thr > 0, else INFINITY: a Cholesky factor of J J^T - thr^2 1
 * (a cheap test) decides whether every singular value exceeds thr, and only then is s_min computed
 * (smallest_singular_value); 0 for r > nq (a task direction that no joint moves). */
static double singular_below(const double *J, int r, int nq, double thr)
{
    if (r > nq)
        return 0.0;
    double G[36], F[36];
    gram(J, r, nq, G);
    memcpy(F, G, sizeof(double) * r * r);
    for (int i = 0; i < r; ++i)
        F[i * r + i] -= thr * thr;
    return rd_cholesky(F, r) == RD_OK ? INFINITY : smallest_singular_value(J, r, nq, G);
}

/* The rotation vector w (axis * angle, angle in [0, pi]) of R (3 x 3 row-major), as
 * robot_dynamics.spatial.log_so3: theta = atan2(|vee(R - R^T)| / 2, (tr R - 1) / 2); below pi/2 the
 * axis is vee / (2 sin theta), above it comes from the symmetric part, exact up to pi. */
static void log_so3(const double R[9], double w[3])
{
    const double vee[3] = {R[7] - R[5], R[2] - R[6], R[3] - R[1]};
    const double sin_t = 0.5 * sqrt(vee[0] * vee[0] + vee[1] * vee[1] + vee[2] * vee[2]);
    const double cos_t = 0.5 * (R[0] + R[4] + R[8] - 1.0);
    const double theta = atan2(sin_t, cos_t);
    const double factor = theta < 1e-6 ? 0.5 + theta * theta / 12.0 : theta / (2.0 * (sin_t == 0.0 ? 1.0 : sin_t));
    for (int a = 0; a < 3; ++a)
        w[a] = factor * vee[a];
    if (!(theta > HALF_PI))
        return;
    double S[9]; /* (R + R^T) / 2 - cos(theta) 1 = (1 - cos(theta)) a a^T */
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
            S[3 * a + b] = (0.5 * (R[3 * a + b] + R[3 * b + a]) - (a == b ? cos_t : 0.0)) / (1.0 - cos_t);
    int k = 0;
    for (int a = 1; a < 3; ++a)
        k = S[4 * a] > S[4 * k] ? a : k;
    const double norm = sqrt(S[4 * k] > 1e-300 ? S[4 * k] : 1e-300);
    double axis[3], dot = 0.0;
    for (int a = 0; a < 3; ++a)
        axis[a] = S[3 * k + a] / norm, dot += axis[a] * vee[a];
    const double sign = dot < 0.0 ? -1.0 : 1.0;
    for (int a = 0; a < 3; ++a)
        w[a] = sign * axis[a] * theta;
}

/* The pose error [p_d - p; log(R_d R^T)] (6) [m, rad] in base axes of T (4 x 4) against Td. */
static void pose_error(const double Td[16], const double T[16], double e[6])
{
    double R[9];
    for (int a = 0; a < 3; ++a) {
        e[a] = Td[4 * a + 3] - T[4 * a + 3];
        for (int b = 0; b < 3; ++b)
            R[3 * a + b] = Td[4 * a] * T[4 * b] + Td[4 * a + 1] * T[4 * b + 1] + Td[4 * a + 2] * T[4 * b + 2];
    }
    log_so3(R, e + 3);
}

static int positive(double x) { return isfinite(x) && x > 0.0; }
static int limit(double x) { return !isnan(x) && x > 0.0; } /* > 0, INFINITY allowed */

static int all_at_least(const double *x, int n, double low)
{
    for (int j = 0; j < n; ++j)
        if (!(isfinite(x[j]) && x[j] >= low))
            return 0;
    return 1;
}

/* The options hold what rd_compliant_control expects of them (r: the task's rows). */
static int options_valid(const rd_model *m, const rd_compliant_options *o, int r)
{
    const rd_task *t = &o->task;
    const int impedance = o->law == RD_CARTESIAN_IMPEDANCE;
    if (!(impedance || o->law == RD_OPERATIONAL_SPACE) || t->frame < 0 || t->frame >= m->nf ||
        t->reference != RD_LOCAL_WORLD_ALIGNED || t->rows < 0 || t->rows > RD_TASK_ALL_ROWS || !isfinite(t->damping) ||
        t->damping < 0.0 || !o->kp || !o->null_stiffness || !o->posture || (!impedance && !o->kd))
        return 0;
    for (int k = 0; impedance && k < r; ++k) /* the impedance's stiffness > 0, the other law's gains >= 0 */
        if (!positive(o->kp[k]))
            return 0;
    if (impedance ? !positive(o->damping_ratio) : !(all_at_least(o->kp, r, 0.0) && all_at_least(o->kd, r, 0.0)))
        return 0;
    return all_at_least(o->null_stiffness, m->nq, 0.0) && rd_finite(o->posture, m->nq) &&
           positive(o->null_damping_ratio) && limit(o->max_force) && limit(o->max_moment) &&
           limit(o->max_torque_rate) && isfinite(o->singular_threshold) && o->singular_threshold >= 0.0 &&
           isfinite(o->smooth) && o->smooth >= 0.0;
}

/* The input finite where the law reads it (the rate limit's tau_prev only when it applies). */
static int input_finite(const rd_model *m, const rd_compliant_options *o, const rd_compliant_input *in)
{
    const int nq = m->nq;
    if (!in->q || !in->qd || !in->pose || !in->twist || (o->law == RD_OPERATIONAL_SPACE && !in->accel))
        return 0;
    return rd_finite(in->q, nq) && rd_finite(in->qd, nq) && rd_finite(in->pose, 16) && rd_finite(in->twist, 6) &&
           (o->law != RD_OPERATIONAL_SPACE || rd_finite(in->accel, 6)) && !isnan(in->dt) &&
           (!in->tau_prev || !(in->dt > 0.0) || rd_finite(in->tau_prev, nq));
}

/* What a tick's wrench reads: the task rows, their index, J (r x nq), the inverse of the task inertia
 * S = Lambda^-1 (r x r, its lower triangle), its Cholesky factor G (lower triangle) and 1 / G_jj (gi; Lambda x
 * is rd_task_solve's S^-1 x), the pose T, Jdot qd. */
typedef struct {
    int r, index[6];
    const double *J, *S, *G, *gi, *T, *bias;
} task_state;

/* The task wrench F (r) of the law, before its saturation. RD_OK or damping_from_inverse's status. */
static int task_wrench(const rd_model *m, const rd_compliant_options *o, const rd_compliant_input *in,
                       const task_state *s, double F[6])
{
    const int nq = m->nq, r = s->r;
    double full[6], e[6], ed[6] = {0.0};
    pose_error(in->pose, s->T, full);
    for (int k = 0; k < r; ++k) {
        double v = 0.0;
        for (int a = 0; a < nq; ++a)
            v += s->J[k * nq + a] * in->qd[a];
        e[k] = full[s->index[k]], ed[k] = in->twist[s->index[k]] - v;
    }
    if (o->law == RD_CARTESIAN_IMPEDANCE) { /* F = K e + D e_dot, D applied without being formed */
        const int st = damping_from_inverse(r, o->kp, s->S, o->damping_ratio, ed, F);
        for (int i = 0; i < r; ++i)
            F[i] += o->kp[i] * e[i];
        return st;
    }
    for (int k = 0; k < r; ++k) /* F = Lambda (accel_d + Kd e_dot + Kp e - Jdot qd) = S^-1 (...) */
        F[k] = in->accel[s->index[k]] + o->kd[k] * ed[k] + o->kp[k] * e[k] - s->bias[k];
    rd_task_solve(s->G, s->gi, r, F);
    return RD_OK;
}

/* F's force rows (index < 3) scaled to a norm of at most max_force, its moment rows to max_moment. */
static void saturate_wrench(const rd_compliant_options *o, const task_state *s, double F[6])
{
    for (int part = 0; part < 2; ++part) {
        const double cap = part ? o->max_moment : o->max_force;
        double sq = 0.0;
        for (int k = 0; k < s->r; ++k)
            sq += (s->index[k] >= 3) == part ? F[k] * F[k] : 0.0;
        const double norm = sqrt(sq);
        if (norm > cap)
            for (int k = 0; k < s->r; ++k)
                F[k] = (s->index[k] >= 3) == part ? F[k] * (cap / norm) : F[k];
    }
}

/* tau (holding rnea(q, qd, 0)) += J^T F + N tau_0, tau_0 = K_n (q_n - q) - 2 zeta_n sqrt(K_n A_jj) qd;
 * then the rate limit. N tau_0 = tau_0 - J^T Lambda J A^-1 tau_0 (N = 1 - J^T Lambda J A^-1) from A's
 * factor L in w->H, N never formed. */
static void compliant_torques(const rd_model *m, const rd_compliant_options *o, const rd_compliant_input *in,
                          const task_state *s, const double F[6], double *tau, rd_work *w)
{
    const int nq = m->nq, r = s->r;
    const double *L = w->H, *J = s->J;
    double *tau0 = w->c0, *u = w->cN, y[6], z[6];
    for (int j = 0; j < nq; ++j) {
        const double k = o->null_stiffness[j];
        tau0[j] = k * (o->posture[j] - in->q[j]) - 2.0 * o->null_damping_ratio * sqrt(k * w->cA[j]) * in->qd[j];
    }
    memcpy(u, tau0, sizeof(double) * (size_t)nq);
    rd_task_solve(L, w->tS + 108, nq, u); /* u = A^-1 tau_0, 1 / L_aa from rd_task_gram */
    for (int i = 0; i < r; ++i) { /* y = J u */
        double v = 0.0;
        for (int a = 0; a < nq; ++a)
            v += J[i * nq + a] * u[a];
        y[i] = v;
    }
    rd_task_solve(s->G, s->gi, r, y); /* z = Lambda y - F: J^T F + N tau_0 = tau_0 - J^T z */
    for (int i = 0; i < r; ++i)
        z[i] = y[i] - F[i];
    for (int a = 0; a < nq; ++a) {
        double v = 0.0;
        for (int i = 0; i < r; ++i)
            v += J[i * nq + a] * z[i];
        tau[a] += tau0[a] - v;
    }
    if (in->tau_prev && isfinite(o->max_torque_rate) && in->dt > 0.0) {
        const double step = o->max_torque_rate * in->dt;
        for (int j = 0; j < nq; ++j) {
            const double lo = in->tau_prev[j] - step, hi = in->tau_prev[j] + step;
            tau[j] = tau[j] < lo ? lo : tau[j] > hi ? hi : tau[j];
        }
    }
}

/* A = rd_crba's into w->H, its diagonal into w->cA, then its Cholesky factor in w->H. */
static int factor_inertia(const rd_model *m, const double *q, rd_work *w)
{
    const int nq = m->nq;
    const int st = rd_crba(m, q, w->H, w);
    if (st != RD_OK)
        return st;
    for (int j = 0; j < nq; ++j)
        w->cA[j] = w->H[j * nq + j];
    return rd_cholesky(w->H, nq) == RD_OK ? RD_OK : RD_NOT_POSITIVE_DEFINITE;
}

int rd_compliant_control(const rd_model *m, const rd_compliant_options *o, const rd_compliant_input *in, double *tau,
                         rd_compliant_info *info, rd_work *w)
{
    if (!m || !o || !in || !tau || !w)
        return RD_BAD_SIZE;
    task_state s;
    s.r = rd_task_rows(o->task.rows, s.index);
    if (!options_valid(m, o, s.r))
        return RD_BAD_SIZE;
    if (!input_finite(m, o, in))
        return RD_BAD_INPUT;
    const int nq = m->nq, osc = o->law == RD_OPERATIONAL_SPACE;
    double T[16], bias[6], G[36], gi[6], F[6];
    rd_task t = o->task;
    t.damping = 0.0;
    const rd_input state = {in->q, in->qd, NULL, NULL, NULL, 0};
    const rd_task_space_out kinematics = {T, w->tJ, NULL, osc ? bias : NULL, NULL, NULL, NULL};
    int st = rd_task_space(m, &state, &t, &kinematics, w); /* T, J and (operational space) Jdot qd */
    if (st == RD_OK)
        st = factor_inertia(m, in->q, w);
    if (st != RD_OK)
        return st;
    const double thr = o->singular_threshold; /* s_min computed where it decides: below the threshold */
    const double s_min = thr > 0.0 ? singular_below(w->tJ, s.r, nq, thr) : INFINITY;
    const int singular = s_min < thr;
    const double lam2 = singular ? o->task.damping * o->task.damping * (1.0 - (s_min / thr) * (s_min / thr)) : 0.0;
    t.damping = sqrt(lam2);
    if (info)
        info->s_min = s_min, info->lambda = t.damping, info->singular = singular;
    rd_task_gram(m, t.damping, w->tJ, s.r, w); /* S = J A^-1 J^T + lambda^2 1 in w->tS, then its factor */
    memcpy(G, w->tS, sizeof(double) * (size_t)(s.r * s.r));
    if ((st = rd_task_factor(G, s.r, gi)) != RD_OK)
        return st;
    s.J = w->tJ, s.S = w->tS, s.G = G, s.gi = gi, s.T = T, s.bias = bias;
    if ((st = task_wrench(m, o, in, &s, F)) != RD_OK)
        return st == RD_BAD_INPUT ? RD_BAD_OUTPUT : st;
    saturate_wrench(o, &s, F);
    const rd_input rest = {in->q, in->qd, w->zero, NULL, NULL, 0};
    const rd_options friction = {NULL, 1, o->smooth};
    if ((st = rd_rnea(m, &rest, &friction, tau, w)) != RD_OK) /* C qd + g + the friction */
        return st;
    compliant_torques(m, o, in, &s, F, tau, w);
    return rd_finite(tau, nq) ? RD_OK : RD_BAD_OUTPUT;
}
