/* One frame's task space: its pose, Jacobian, twist and Jdot qd in base or frame axes, and the
 * operational-space quantities of Khatib (1987, IEEE J. Robotics and Automation 3(1)): the task
 * inertia Lambda = (J A^-1 J^T)^-1, the dynamically consistent inverse J_bar = A^-1 J^T Lambda and
 * the null-space projector of the torques N = 1 - J^T J_bar^T, with A = A(q) of rd_crba.
 *
 * A is never inverted: with its Cholesky factor A = L L^T, Y = L^-1 J^T (r forward substitutions)
 * gives J A^-1 J^T = Y^T Y, whose own factor (r x r, r <= 6) gives Lambda, and Z = L^-T Y = A^-1 J^T
 * (r back substitutions) gives J_bar = Z Lambda. No allocation: the scratch is rd_work's tJ, tY, tZ,
 * tB, tS and H.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

/* The task's rows in order (internal.h). */
int rd_task_rows(int rows, int index[6])
{
    int r = 0;
    for (int i = 0; i < 6; ++i)
        if (rows == 0 || (rows >> i & 1))
            index[r++] = i;
    return r;
}

/* A 6-vector [linear; angular] in base axes into the task's axes and rows: y[k] = (R^T x)[index[k]]
 * for RD_LOCAL (R = base_R_frame, T's rotation), x[index[k]] for RD_LOCAL_WORLD_ALIGNED. */
static void task_vector(const rd_task *t, const double T[16], const int *index, int r, const double x[6], double *y)
{
    double v[6];
    for (int h = 0; h < 6; h += 3)
        for (int a = 0; a < 3; ++a)
            v[h + a] = t->reference == RD_LOCAL ? T[a] * x[h] + T[4 + a] * x[h + 1] + T[8 + a] * x[h + 2] : x[h + a];
    for (int k = 0; k < r; ++k)
        y[k] = v[index[k]];
}

/* The task rows of the Jacobian of frame t->frame into J (r x nq) from the body poses in w; T its pose. */
static void task_jacobian(const rd_model *m, const rd_task *t, const double T[16], const int *index, int r, double *J,
                          rd_work *w)
{
    const int nq = m->nq;
    if (t->reference == RD_LOCAL_WORLD_ALIGNED && r == 6) { /* all rows in base axes: rd_jacobian's own */
        rd_jacobian(m, w, t->frame, J);
        return;
    }
    double *full = w->tB; /* 6 x nq in base axes */
    rd_jacobian(m, w, t->frame, full);
    for (int c = 0; c < nq; ++c) {
        double x[6], y[6];
        for (int i = 0; i < 6; ++i)
            x[i] = full[i * nq + c];
        task_vector(t, T, index, r, x, y);
        for (int k = 0; k < r; ++k)
            J[k * nq + c] = y[k];
    }
}

void rd_task_frame(const rd_model *m, const rd_task *t, const int *index, int r, double T[16], double *J, rd_work *w)
{
    rd_frame_pose(m, w, t->frame, T);
    task_jacobian(m, t, T, index, r, J, w);
}

int rd_task_factor(double *S, int r, double *gi)
{
    for (int j = 0; j < r; ++j) {
        double d = S[j * r + j];
        for (int k = 0; k < j; ++k)
            d -= S[j * r + k] * S[j * r + k];
        if (!(d > RD_TASK_PIVOT * S[j * r + j]))
            return RD_TASK_SINGULAR;
        d = sqrt(d);
        S[j * r + j] = d;
        gi[j] = 1.0 / d;
        for (int i = j + 1; i < r; ++i) {
            double s = S[i * r + j];
            for (int k = 0; k < j; ++k)
                s -= S[i * r + k] * S[j * r + k];
            S[i * r + j] = s * gi[j];
        }
    }
    return RD_OK;
}

void rd_task_solve(const double *G, const double *gi, int r, double *x)
{
    for (int i = 0; i < r; ++i) {
        double s = x[i];
        for (int k = 0; k < i; ++k)
            s -= G[i * r + k] * x[k];
        x[i] = s * gi[i];
    }
    for (int i = r - 1; i >= 0; --i) {
        double s = x[i];
        for (int k = i + 1; k < r; ++k)
            s -= G[k * r + i] * x[k];
        x[i] = s * gi[i];
    }
}

int rd_task_inverse(double *S, int r, double *Lambda, double *Ginv)
{
    double gi[6]; /* 1 / G_jj */
    if (rd_task_factor(S, r, gi) != RD_OK)
        return RD_TASK_SINGULAR;
    for (int c = 0; c < r; ++c) /* G^-1, lower triangular: column c by forward substitution */
        for (int i = 0; i < r; ++i) {
            double s = i == c ? 1.0 : 0.0;
            for (int k = c; k < i; ++k)
                s -= S[i * r + k] * Ginv[k * r + c];
            Ginv[i * r + c] = i < c ? 0.0 : s * gi[i];
        }
    for (int i = 0; i < r; ++i)
        for (int j = 0; j <= i; ++j) {
            double s = 0.0;
            for (int k = i; k < r; ++k)
                s += Ginv[k * r + i] * Ginv[k * r + j];
            Lambda[i * r + j] = Lambda[j * r + i] = s;
        }
    return RD_OK;
}

void rd_task_gram(const rd_model *m, double damping, const double *J, int r, rd_work *w)
{
    const int nq = m->nq;
    const double *L = w->H;
    double *Y = w->tY, *S = w->tS, *dinv = w->tS + 108; /* 1 / L_aa: one division per joint */
    for (int a = 0; a < nq; ++a)
        dinv[a] = 1.0 / L[a * nq + a];
    for (int a = 0; a < nq; ++a) /* Y_i = L^-1 J_i^T, every row i at once (forward substitution) */
        for (int i = 0; i < r; ++i) {
            const double *y = Y + i * nq;
            double s = J[i * nq + a];
            for (int k = 0; k < a; ++k)
                s -= L[a * nq + k] * y[k];
            Y[i * nq + a] = s * dinv[a];
        }
    const double lam2 = damping * damping;
    for (int i = 0; i < r; ++i) /* S = J A^-1 J^T + lambda^2 1 = Y^T Y + lambda^2 1 (its lower triangle) */
        for (int j = 0; j <= i; ++j) {
            double s = 0.0;
            for (int a = 0; a < nq; ++a)
                s += Y[i * nq + a] * Y[j * nq + a];
            S[i * r + j] = i == j ? s + lam2 : s;
        }
}

/* Lambda, J_bar and N from the task rows J (r x nq) and A's factor L in w->H (internal.h). */
int rd_task_operational(const rd_model *m, const rd_task *t, const double *J, int r, const rd_task_space_out *out,
                        rd_work *w)
{
    const int nq = m->nq, projector = out->Jbar || out->N;
    const double *L = w->H, *Y = w->tY, *dinv = w->tS + 108;
    double *Z = w->tZ, *S = w->tS, *Lambda = out->Lambda ? out->Lambda : w->tS + 36, *Ginv = w->tS + 72;
    rd_task_gram(m, t->damping, J, r, w);
    for (int a = nq - 1; projector && a >= 0; --a) /* Z_i = L^-T Y_i = A^-1 J_i^T (back substitution) */
        for (int i = 0; i < r; ++i) {
            const double *z = Z + i * nq;
            double s = Y[i * nq + a];
            for (int k = a + 1; k < nq; ++k)
                s -= L[k * nq + a] * z[k];
            Z[i * nq + a] = s * dinv[a];
        }
    const int st = rd_task_inverse(S, r, Lambda, Ginv);
    if (st != RD_OK)
        return st;
    if (!projector)
        return RD_OK;
    double *B = w->tB; /* J_bar^T = Lambda Z (r x nq), Lambda symmetric: row i = sum_j Lambda_ij Z_j */
    for (int i = 0; i < r; ++i) {
        double *b = B + i * nq;
        for (int a = 0; a < nq; ++a)
            b[a] = 0.0;
        for (int j = 0; j < r; ++j) {
            const double l = Lambda[i * r + j], *z = Z + j * nq;
            for (int a = 0; a < nq; ++a)
                b[a] += l * z[a];
        }
    }
    if (out->Jbar)
        for (int a = 0; a < nq; ++a)
            for (int i = 0; i < r; ++i)
                out->Jbar[a * r + i] = B[i * nq + a];
    if (out->N) /* N = 1 - J^T J_bar^T: row a = e_a - sum_i J_ia (J_bar^T)_i */
        for (int a = 0; a < nq; ++a) {
            double *n = out->N + a * nq;
            for (int b = 0; b < nq; ++b)
                n[b] = a == b ? 1.0 : 0.0;
            for (int i = 0; i < r; ++i) {
                const double c = J[i * nq + a], *b = B + i * nq;
                for (int k = 0; k < nq; ++k)
                    n[k] -= c * b[k];
            }
        }
    return RD_OK;
}

static int task_valid(const rd_model *m, const rd_task *t)
{
    return t && t->frame >= 0 && t->frame < m->nf && (t->reference == RD_LOCAL_WORLD_ALIGNED || t->reference == RD_LOCAL) &&
           t->rows >= 0 && t->rows <= RD_TASK_ALL_ROWS && isfinite(t->damping) && t->damping >= 0.0;
}

/* The output's arrays all finite. */
static int task_finite(int nq, int r, const rd_task_space_out *o)
{
    return (!o->T || rd_finite(o->T, 16)) && (!o->J || rd_finite(o->J, r * nq)) && (!o->vel || rd_finite(o->vel, r)) &&
           (!o->bias || rd_finite(o->bias, r)) && (!o->Lambda || rd_finite(o->Lambda, r * r)) &&
           (!o->Jbar || rd_finite(o->Jbar, nq * r)) && (!o->N || rd_finite(o->N, nq * nq));
}

int rd_task_space(const rd_model *m, const rd_input *in, const rd_task *t, const rd_task_space_out *out, rd_work *w)
{
    if (!in || !out || !task_valid(m, t))
        return RD_BAD_SIZE;
    const int nq = m->nq;
    const int motion = out->vel || out->bias, dynamics = out->Lambda || out->Jbar || out->N;
    if (!rd_finite(in->q, nq) || (motion && !rd_finite(in->qd, nq)))
        return RD_BAD_INPUT;
    int index[6];
    const int r = rd_task_rows(t->rows, index);
    if (dynamics) { /* A = L L^T in w->H (rd_crba, then its factor) */
        const int st = rd_crba(m, in->q, w->H, w);
        if (st != RD_OK)
            return st;
        if (rd_cholesky(w->H, nq) != RD_OK)
            return RD_NOT_POSITIVE_DEFINITE;
    }
    double vel[6], acc[6], T[16];
    if (motion) /* the forward recursion at qdd = 0 without gravity, and the body poses */
        rd_point_motion(m, in->q, in->qd, t->frame, vel, acc, w);
    else
        rd_body_poses(m, in->q, w);
    rd_frame_pose(m, w, t->frame, T);
    if (out->T)
        memcpy(out->T, T, sizeof T);
    if (out->vel)
        task_vector(t, T, index, r, vel, out->vel);
    if (out->bias)
        task_vector(t, T, index, r, acc, out->bias);
    double *J = out->J ? out->J : w->tJ;
    if (out->J || dynamics)
        task_jacobian(m, t, T, index, r, J, w);
    if (dynamics) {
        const int st = rd_task_operational(m, t, J, r, out, w);
        if (st != RD_OK)
            return st;
    }
    return task_finite(nq, r, out) ? RD_OK : RD_BAD_OUTPUT;
}
