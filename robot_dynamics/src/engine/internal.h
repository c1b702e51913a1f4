/* What the engine's files share and its users do not: the one-state instance of recursions.h
 * (RD_REAL = double) and the helpers several algorithms call. */
#ifndef RD_INTERNAL_H
#define RD_INTERNAL_H

#include <math.h>

#include "engine.h"

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

/* base_R_body and the body origins in the base frame (w->R, w->p) from the joint transforms E, r. */
void rd_world_poses(const rd_model *m, rd_work *w);

/* F[b] += the wrenches the links exert on the environment (Khalil's f_en [7.30]), in body axes. */
void rd_add_wrenches(const rd_work *w, const double *fx, int nfx, double *F);

/* Ic_p += X^T Ic X (Featherstone 6.7) for a rigid-body inertia moved by R = E^T and r. */
void rd_inertia_to_parent(const double *E, const double *r, const rd_inertia *I, rd_inertia *Ip);

/* Cholesky factor H = L L^T in place (the lower triangle); RD_OK or RD_NOT_POSITIVE_DEFINITE. */
int rd_cholesky(double *H, int nq);

/* x = H^-1 x from the factor L of rd_cholesky. */
void rd_cholesky_solve(const double *L, int nq, double *x);

#endif
