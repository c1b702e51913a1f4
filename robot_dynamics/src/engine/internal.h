/* What the engine's files share and its users do not: the one-state instance of recursions.h
 * (RD_REAL = double) and the helpers several algorithms call. */
#ifndef RD_INTERNAL_H
#define RD_INTERNAL_H

#include <math.h>

#include "engine.h"

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
