/* What the engine's files share and its users do not: the one-state instance of recursions.h
 * (RD_REAL = double) and the helpers several algorithms call. */
#ifndef RD_INTERNAL_H
#define RD_INTERNAL_H

#include <math.h>

#include "engine.h"

/* A step inlined where it is called, whatever the compiler's own choice (its loops then of the caller's
 * constant lengths, and each target_clones build its own copy). */
#if defined(__GNUC__)
#define RD_HOT inline __attribute__((always_inline))
#else
#define RD_HOT inline
#endif

/* Two doubles at once (rd_x2): one state's code that forms two values by the same operations,
 * lane by lane, as the scalar code would (the same bits). Where the compiler has vector types
 * (as RD_LANES in engine.h) one SSE2 or NEON register; elsewhere a pair computed lane by lane. */
#if RD_LANES == 4
#define RD_PAIRS 1
typedef double rd_x2 __attribute__((vector_size(16), aligned(8)));
static inline rd_x2 rd_x2_set(double a, double b) { return (rd_x2){a, b}; }
static inline rd_x2 rd_x2_load(const double *p) { return *(const rd_x2 *)p; }
static inline void rd_x2_store(double *p, rd_x2 v) { *(rd_x2 *)p = v; }
static inline double rd_x2_lane(rd_x2 v, int l) { return v[l]; }
static inline rd_x2 rd_x2_add(rd_x2 a, rd_x2 b) { return a + b; }
static inline rd_x2 rd_x2_neg(rd_x2 a) { return -a; }
static inline rd_x2 rd_x2_mul(rd_x2 a, rd_x2 b) { return a * b; }
static inline rd_x2 rd_x2_scale(double s, rd_x2 a) { return s * a; }
#else
#define RD_PAIRS 0
typedef struct {
    double l[2];
} rd_x2;
static inline rd_x2 rd_x2_set(double a, double b)
{
    rd_x2 v;
    v.l[0] = a, v.l[1] = b;
    return v;
}
static inline rd_x2 rd_x2_load(const double *p) { return rd_x2_set(p[0], p[1]); }
static inline void rd_x2_store(double *p, rd_x2 v) { p[0] = v.l[0], p[1] = v.l[1]; }
static inline double rd_x2_lane(rd_x2 v, int l) { return v.l[l]; }
static inline rd_x2 rd_x2_add(rd_x2 a, rd_x2 b) { return rd_x2_set(a.l[0] + b.l[0], a.l[1] + b.l[1]); }
static inline rd_x2 rd_x2_neg(rd_x2 a) { return rd_x2_set(-a.l[0], -a.l[1]); }
static inline rd_x2 rd_x2_mul(rd_x2 a, rd_x2 b) { return rd_x2_set(a.l[0] * b.l[0], a.l[1] * b.l[1]); }
static inline rd_x2 rd_x2_scale(double s, rd_x2 a) { return rd_x2_set(s * a.l[0], s * a.l[1]); }
#endif

/* The options of a call with their defaults filled in (o NULL: no friction; gravity NULL: the
 * model's own), as the algorithms read them: gravity never NULL. */
static inline rd_options rd_options_of(const rd_model *m, const rd_options *o)
{
    rd_options r = {m->gravity, 0, 0.0};
    if (o) {
        r = *o;
        if (!r.gravity)
            r.gravity = m->gravity;
    }
    return r;
}

#define RD_INLINE inline
#define RD_REAL double
#define RD_NAME(x) x
#define RD_LOAD(x, j) ((x)[j])
#define RD_SPLAT(c) (c)
#define RD_WIDTH 1
#define RD_AT(x, l) (x)
#define RD_STORE(x, j, value) ((x)[j] = (value))
#define RD_FRICTION(m, k, qd, smooth) rd_friction(m, k, (qd)[k], smooth)
#define RD_ALL_POSITIVE(x) ((x) > 0.0)
#include "recursions.h"

/* The one-state recursions' arrays: rd_work's of the same names. */
static inline rd_arrays rd_arrays_of(rd_work *w)
{
    const rd_arrays a = {w->E, w->r, w->v, w->a, w->c, w->f, w->IA, w->pA, w->U, w->D, w->u};
    return a;
}

/* base_R_body and the body origins in the base frame (w->R, w->p) from the joint transforms E, r. */
void rd_world_poses(const rd_model *m, rd_work *w);

/* F[b] += the wrenches the links exert on the environment (Khalil's f_en [7.30]), in body axes. */
void rd_add_wrenches(const rd_work *w, const double *fx, int nfx, double *F);

/* Ip (+)= X^T I X (Featherstone 6.7): a rigid-body inertia moved by the rotation R = E^T and the
 * origin r (both of the moved frame, in the destination's coordinates), added (accumulate) or
 * written (the derivatives' base-frame inertias). E_xy = E[rs x + cs y]:
 * (3, 1) for E = body_R_parent, (1, 3) for a base_R_body R read as E^T; inlined, the strides fold.
 *   h_p = R h + m r,   Io_p = R Io R^T + m (|r|^2 1 - r r^T) + 2 (r . Rh) 1 - Rh r^T - r Rh^T. */
static inline void rd_inertia_move(const double *E, int rs, int cs, const double *r, const rd_inertia *I, rd_inertia *Ip,
                                   int accumulate)
{
#define RD_E(x, y) E[rs * (x) + cs * (y)]
#define RD_PUT(at, value) (accumulate ? ((at) += (value)) : ((at) = (value)))
    const double m = I->m;
    double Rh[3], IE[9];
    for (int x = 0; x < 3; ++x)
        Rh[x] = RD_E(0, x) * I->h[0] + RD_E(1, x) * I->h[1] + RD_E(2, x) * I->h[2];
    const double rr = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
    const double rh = r[0] * Rh[0] + r[1] * Rh[1] + r[2] * Rh[2];
    RD_PUT(Ip->m, m);
    for (int x = 0; x < 3; ++x)
        RD_PUT(Ip->h[x], Rh[x] + m * r[x]);
    for (int x = 0; x < 3; ++x)
        for (int y = 0; y < 3; ++y)
            IE[3 * x + y] = I->Io[3 * x] * RD_E(0, y) + I->Io[3 * x + 1] * RD_E(1, y) + I->Io[3 * x + 2] * RD_E(2, y);
    for (int x = 0; x < 3; ++x)
        for (int y = x; y < 3; ++y) {
            /* (E^T Io E)_xy - m r_x r_y - Rh_x r_y - r_x Rh_y (+ m |r|^2 + 2 r.Rh on the diagonal) */
            double val = RD_E(0, x) * IE[y] + RD_E(1, x) * IE[3 + y] + RD_E(2, x) * IE[6 + y];
            val += -m * r[x] * r[y] - Rh[x] * r[y] - r[x] * Rh[y];
            if (x == y) {
                RD_PUT(Ip->Io[4 * x], val + m * rr + 2.0 * rh);
            } else {
                RD_PUT(Ip->Io[3 * x + y], val);
                RD_PUT(Ip->Io[3 * y + x], val);
            }
        }
#undef RD_E
#undef RD_PUT
}

/* Cholesky factor H = L L^T in place (the lower triangle); RD_OK or RD_NOT_POSITIVE_DEFINITE. */
int rd_cholesky(double *H, int nq);

/* x = H^-1 x from the factor L of rd_cholesky. */
void rd_cholesky_solve(const double *L, int nq, double *x);

/* The task's rows in order (the set bits of rows, all six for 0) into index; their count r
 * (task_space.c). */
int rd_task_rows(int rows, int index[6]);

/* S (r x r: its lower triangle, in w->tS) = J A^-1 J^T + damping^2 1 = Y^T Y + damping^2 1 from the task
 * rows J (r x nq) and the Cholesky factor of A = L L^T in w->H: Y = L^-1 J^T (r rows of nq) into w->tY,
 * 1 / L_aa (nq) into w->tS + 108 (task_space.c). */
void rd_task_gram(const rd_model *m, double damping, const double *J, int r, rd_work *w);

/* The Cholesky factor S = G G^T (r x r, r <= 6; G into S's lower triangle) of rd_task_gram's S, and
 * 1 / G_jj into gi (r): RD_OK, or RD_TASK_SINGULAR at a pivot at most RD_TASK_PIVOT of its diagonal. */
int rd_task_factor(double *S, int r, double *gi);

/* Lambda (r x r) = S^-1 from S (r x r, symmetric positive definite, lower triangle read; overwritten by its
 * factor): S = G G^T (rd_task_factor), then Lambda = G^-T G^-1 from the triangular G^-1 (into Ginv, r x r),
 * symmetric by construction. RD_OK or RD_TASK_SINGULAR as rd_task_factor. */
int rd_task_inverse(double *S, int r, double *Lambda, double *Ginv);

/* x (r) = S^-1 x = G^-T G^-1 x from rd_task_factor's G and gi (two triangular solves, no division). */
void rd_task_solve(const double *G, const double *gi, int r, double *x);

/* -- small symmetric eigenproblems (eigen.c) -- */

/* J J^T (r x r, both triangles) of J (r x nq) into G. */
void rd_gram(const double *J, int r, int nq, double *G);

/* y (r) = D x (x: r; r <= 6), the damping of rd_impedance_damping for the positive diagonal stiffness k
 * (r) applied to x without D or Lambda formed, from the task inertia's inverse S = Lambda^-1 (r x r, its
 * lower triangle read): M = C^-1 Lambda C^-1 = P^-1 with P = C S C (C = diag(sqrt(k))), so M's
 * eigenvectors are P's and mu = 1 / nu for P = V diag(nu) V^T, and y = 2 zeta C V diag(nu^-1/2) V^T C x,
 * V = Q W: Q's reflections (Householder's reduction to tridiagonal form) applied to vectors (Q not
 * formed), W the eigenvectors of the tridiagonal form by QR steps. RD_OK, or RD_TASK_SINGULAR for an
 * eigenvalue nu that is not positive. */
int rd_impedance_damping_apply(int r, const double *k, const double *S, double zeta, const double *x, double *y);

/* The smallest singular value of J (r x nq, r <= nq, r <= 6) from G = J J^T (overwritten): v, the
 * eigenvector of G's smallest eigenvalue (inverse iteration on G^-4, else from G's eigen-decomposition),
 * then s_min = |J^T v|. This is the Rayleigh quotient of J J^T at v without the square formed: v's error
 * (about DBL_EPSILON |J|^2 over the gap to the next eigenvalue) enters it only to the second order, so
 * s_min comes within a few DBL_EPSILON |J| (absolute) where sqrt of the eigenvalue would carry
 * DBL_EPSILON |J|^2 / s_min; within DBL_EPSILON |J|^2 / s_2 when the next singular value s_2 is small too
 * (the gap that sets v's error). */
double rd_smallest_singular_value(const double *J, int r, int nq, double *G);

/* The pose T (4 x 4) of frame t->frame and its task rows J (r x nq, index from rd_task_rows) from the
 * body poses already in w (w->R, w->p: rd_body_poses, or rd_world_poses after a forward recursion). */
void rd_task_frame(const rd_model *m, const rd_task *t, const int *index, int r, double T[16], double *J, rd_work *w);

/* rd_task_space's second half (task_space.c): Lambda, Jbar and N of out (those not NULL; Lambda NULL:
 * computed in w->tS) from the task rows J (r x nq) of t and the Cholesky factor of A = L L^T in w->H,
 * Lambda damped by t->damping. RD_OK or RD_TASK_SINGULAR. Scratch: w->tY, tZ, tB, tS. */
int rd_task_operational(const rd_model *m, const rd_task *t, const double *J, int r, const rd_task_space_out *out,
                        rd_work *w);

#endif
