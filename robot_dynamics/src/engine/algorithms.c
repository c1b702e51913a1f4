/* The recursions of robot_dynamics, one state each (see engine.h for the model and the data).
 *
 * Written as the book's forward and backward loops over parent[i] < i, with the book's symbols:
 * Khalil's inverse model (7.5: [7.43]-[7.49], friction [7.26], rotor inertia [7.29]),
 * Featherstone's composite rigid bodies (6.2, 6.7) and articulated bodies (7.3), Chen & Wang's
 * secondary links of a geared robot (eqs. 11, 14-21, 18). A joint transform X_i (parent to
 * body i) is the rotation E_i = body_R_parent and the body origin r_i in parent coordinates:
 * X v = [E w; E (v - r x w)], X^T f = [E^T n + r x E^T f; E^T f].
 */
#include <math.h>
#include <string.h>

#include "engine.h"

/* -- the data ----------------------------------------------------------------------------------- */
#define RD_ALIGN 64 /* every array starts on its own cache line */

static size_t rd_round(size_t bytes) { return (bytes + RD_ALIGN - 1) / RD_ALIGN * RD_ALIGN; }

size_t rd_work_bytes(int nb, int nq)
{
    size_t total = 0;
#define RD_WORK_SIZE(name, type, count) total += rd_round(sizeof(type) * (size_t)(count));
    RD_WORK_ARRAYS(RD_WORK_SIZE)
#undef RD_WORK_SIZE
    return total + RD_ALIGN; /* room to align the start */
}

void rd_work_bind(rd_work *w, void *memory, int nb, int nq)
{
    char *at = (char *)(((size_t)memory + RD_ALIGN - 1) / RD_ALIGN * RD_ALIGN);
#define RD_WORK_BIND(name, type, count)                 \
    w->name = (type *)at;                               \
    at += rd_round(sizeof(type) * (size_t)(count));
    RD_WORK_ARRAYS(RD_WORK_BIND)
#undef RD_WORK_BIND
}

int rd_finite(const double *x, int n)
{
    for (int k = 0; k < n; ++k)
        if (!isfinite(x[k]))
            return 0;
    return 1;
}

/* -- spatial algebra ------------------------------------------------------------------------------ */

/* Joint transform of body b at its coordinate qb: E (9) and r (3). */
static inline void joint_transform(const rd_body *b, double qb, double *E, double *r)
{
    if (b->type == RD_REVOLUTE) {
        /* E = R(a, qb)^T E0 = c E0 - s [a]x E0 + (1 - c) a a^T E0 (Rodrigues) */
        const double c = cos(qb), s = sin(qb), c1 = 1.0 - c;
        for (int k = 0; k < 9; ++k)
            E[k] = c * b->E0[k] - s * b->KE0[k] + c1 * b->AE0[k];
        r[0] = b->r0[0], r[1] = b->r0[1], r[2] = b->r0[2];
    } else {
        /* prismatic: the origin slides along d = E0^T a in parent coordinates */
        memcpy(E, b->E0, 9 * sizeof(double));
        for (int k = 0; k < 3; ++k)
            r[k] = b->r0[k] + qb * b->d[k];
    }
}

/* y = X x: a motion vector from parent to body coordinates, [E w; E (v - r x w)]. */
static inline void x_motion(const double *E, const double *r, const double *x, double *y)
{
    const double wx = x[0], wy = x[1], wz = x[2];
    const double ux = x[3] - (r[1] * wz - r[2] * wy);
    const double uy = x[4] - (r[2] * wx - r[0] * wz);
    const double uz = x[5] - (r[0] * wy - r[1] * wx);
    y[0] = E[0] * wx + E[1] * wy + E[2] * wz;
    y[1] = E[3] * wx + E[4] * wy + E[5] * wz;
    y[2] = E[6] * wx + E[7] * wy + E[8] * wz;
    y[3] = E[0] * ux + E[1] * uy + E[2] * uz;
    y[4] = E[3] * ux + E[4] * uy + E[5] * uz;
    y[5] = E[6] * ux + E[7] * uy + E[8] * uz;
}

/* y (+)= X^T x: a force from body to parent coordinates, [E^T n + r x E^T f; E^T f]. */
static inline void xt_force(const double *E, const double *r, const double *x, double *y, int accumulate)
{
    const double fx = E[0] * x[3] + E[3] * x[4] + E[6] * x[5];
    const double fy = E[1] * x[3] + E[4] * x[4] + E[7] * x[5];
    const double fz = E[2] * x[3] + E[5] * x[4] + E[8] * x[5];
    const double nx = E[0] * x[0] + E[3] * x[1] + E[6] * x[2] + r[1] * fz - r[2] * fy;
    const double ny = E[1] * x[0] + E[4] * x[1] + E[7] * x[2] + r[2] * fx - r[0] * fz;
    const double nz = E[2] * x[0] + E[5] * x[1] + E[8] * x[2] + r[0] * fy - r[1] * fx;
    if (accumulate) {
        y[0] += nx, y[1] += ny, y[2] += nz, y[3] += fx, y[4] += fy, y[5] += fz;
    } else {
        y[0] = nx, y[1] = ny, y[2] = nz, y[3] = fx, y[4] = fy, y[5] = fz;
    }
}

/* y = I x for a rigid-body inertia (Featherstone 2.63): [Io w + h x l; m l - h x w]. */
static inline void inertia_times(const rd_inertia *I, const double *x, double *y)
{
    const double ax = x[0], ay = x[1], az = x[2], lx = x[3], ly = x[4], lz = x[5];
    const double hx = I->h[0], hy = I->h[1], hz = I->h[2];
    const double *Io = I->Io;
    y[0] = Io[0] * ax + Io[1] * ay + Io[2] * az + hy * lz - hz * ly;
    y[1] = Io[3] * ax + Io[4] * ay + Io[5] * az + hz * lx - hx * lz;
    y[2] = Io[6] * ax + Io[7] * ay + Io[8] * az + hx * ly - hy * lx;
    y[3] = I->m * lx - (hy * az - hz * ay);
    y[4] = I->m * ly - (hz * ax - hx * az);
    y[5] = I->m * lz - (hx * ay - hy * ax);
}

/* y += v x* F = [w x n + vl x f; w x f] (Featherstone 2.32). */
static inline void cross_force_add(const double *v, const double *F, double *y)
{
    const double wx = v[0], wy = v[1], wz = v[2], vx = v[3], vy = v[4], vz = v[5];
    const double nx = F[0], ny = F[1], nz = F[2], fx = F[3], fy = F[4], fz = F[5];
    y[0] += wy * nz - wz * ny + vy * fz - vz * fy;
    y[1] += wz * nx - wx * nz + vz * fx - vx * fz;
    y[2] += wx * ny - wy * nx + vx * fy - vy * fx;
    y[3] += wy * fz - wz * fy;
    y[4] += wz * fx - wx * fz;
    y[5] += wx * fy - wy * fx;
}

/* S_i . F: the component of a force along body i's joint (S = [a; 0] or [0; a]). */
static inline double s_dot(const rd_body *b, const double *F)
{
    const double *x = b->type == RD_REVOLUTE ? F : F + 3;
    return b->axis[0] * x[0] + b->axis[1] * x[1] + b->axis[2] * x[2];
}

static inline double body_coordinate(const rd_body *b, const double *q)
{
    return b->mult * q[b->joint] + b->offset; /* mimic joints: q_body = mult q[k] + offset */
}

double rd_friction(const rd_model *m, int k, double qd, double smooth)
{
    /* Khalil [7.26]: Fv qd + sign(qd) (Fc + (Fst - Fc) exp(-|qd| B)); sign -> tanh(qd / v_s) when smooth > 0 */
    const rd_joint *j = &m->joint[k];
    const double sg = smooth > 0.0 ? tanh(qd / smooth) : (qd > 0.0) - (qd < 0.0);
    double tau = j->Fv * qd + sg * j->Fc;
    if (j->Fs != 0.0)
        tau += sg * j->Fs * exp(-fabs(qd) * j->B);
    return tau;
}

/* -- the forward recursion ------------------------------------------------------------------------ */

/* Joint transforms, body velocities v, velocity products c and (with qdd) accelerations a
 * (Khalil [7.43]-[7.45]). Gravity enters as the base acceleration a_0 = [0; -g]. */
void rd_forward(const rd_model *m, const double *q, const double *qd, const double *qdd, const double *g, rd_work *w)
{
    const int nb = m->nb;
    double *v0 = w->v + 6 * nb, *a0 = w->a + 6 * nb;
    for (int k = 0; k < 6; ++k)
        v0[k] = 0.0, a0[k] = 0.0;
    a0[3] = -g[0], a0[4] = -g[1], a0[5] = -g[2];
    for (int i = 0; i < nb; ++i) {
        const rd_body *b = &m->body[i];
        double *E = w->E + 9 * i, *r = w->r + 3 * i, *v = w->v + 6 * i, *a = w->a + 6 * i, *c = w->c + 6 * i;
        const int p = b->parent < 0 ? nb : b->parent;
        joint_transform(b, body_coordinate(b, q), E, r);
        const double qdi = b->mult * qd[b->joint];
        const double sx = b->axis[0] * qdi, sy = b->axis[1] * qdi, sz = b->axis[2] * qdi;
        x_motion(E, r, w->v + 6 * p, v); /* v_i = X_i v_p + S_i qd_i                                  [7.43] */
        if (b->type == RD_REVOLUTE) {
            v[0] += sx, v[1] += sy, v[2] += sz;
            /* c_i = v_i x S_i qd_i = [w x s; vl x s]                                                   [7.45] */
            c[0] = v[1] * sz - v[2] * sy, c[1] = v[2] * sx - v[0] * sz, c[2] = v[0] * sy - v[1] * sx;
            c[3] = v[4] * sz - v[5] * sy, c[4] = v[5] * sx - v[3] * sz, c[5] = v[3] * sy - v[4] * sx;
        } else {
            v[3] += sx, v[4] += sy, v[5] += sz;
            /* v x [0; s] = [0; w x s] */
            c[0] = 0.0, c[1] = 0.0, c[2] = 0.0;
            c[3] = v[1] * sz - v[2] * sy, c[4] = v[2] * sx - v[0] * sz, c[5] = v[0] * sy - v[1] * sx;
        }
        if (qdd) {
            const double qddi = b->mult * qdd[b->joint];
            x_motion(E, r, w->a + 6 * p, a); /* a_i = X_i a_p + S_i qdd_i + c_i                     [7.44] */
            for (int k = 0; k < 6; ++k)
                a[k] += c[k];
            double *s = b->type == RD_REVOLUTE ? a : a + 3;
            s[0] += b->axis[0] * qddi, s[1] += b->axis[1] * qddi, s[2] += b->axis[2] * qddi;
        }
    }
}

/* base_R_body and the body origins in the base frame from the joint transforms E, r. */
static void world_poses(const rd_model *m, rd_work *w)
{
    for (int i = 0; i < m->nb; ++i) {
        const double *E = w->E + 9 * i, *r = w->r + 3 * i;
        double *R = w->R + 9 * i, *p = w->p + 3 * i;
        const int par = m->body[i].parent;
        if (par < 0) {
            for (int x = 0; x < 3; ++x) {
                for (int y = 0; y < 3; ++y)
                    R[3 * x + y] = E[3 * y + x];
                p[x] = r[x];
            }
        } else {
            /* R_i = R_p E_i^T, p_i = p_p + R_p r_i */
            const double *Rp = w->R + 9 * par, *pp = w->p + 3 * par;
            for (int x = 0; x < 3; ++x) {
                for (int y = 0; y < 3; ++y)
                    R[3 * x + y] = Rp[3 * x] * E[3 * y] + Rp[3 * x + 1] * E[3 * y + 1] + Rp[3 * x + 2] * E[3 * y + 2];
                p[x] = pp[x] + Rp[3 * x] * r[0] + Rp[3 * x + 1] * r[1] + Rp[3 * x + 2] * r[2];
            }
        }
    }
}

void rd_body_poses(const rd_model *m, const double *q, rd_work *w)
{
    for (int i = 0; i < m->nb; ++i)
        joint_transform(&m->body[i], body_coordinate(&m->body[i], q), w->E + 9 * i, w->r + 3 * i);
    world_poses(m, w);
}

/* F[b] += the wrenches the links exert on the environment (Khalil's f_en [7.30]), in body axes. */
static void add_wrenches(const rd_work *w, const double *fx, int nfx, double *F)
{
    for (int k = 0; k < nfx; ++k) {
        const double *row = fx + RD_WRENCH * k;
        const int b = (int)row[0];
        const double *R = w->R + 9 * b, *pt = row + 1, *force = row + 4, *moment = row + 7;
        double *f = F + 6 * b;
        const double Fx = R[0] * force[0] + R[3] * force[1] + R[6] * force[2];
        const double Fy = R[1] * force[0] + R[4] * force[1] + R[7] * force[2];
        const double Fz = R[2] * force[0] + R[5] * force[1] + R[8] * force[2];
        /* the moment about the body origin: R^T M + p x (R^T F) */
        f[0] += R[0] * moment[0] + R[3] * moment[1] + R[6] * moment[2] + pt[1] * Fz - pt[2] * Fy;
        f[1] += R[1] * moment[0] + R[4] * moment[1] + R[7] * moment[2] + pt[2] * Fx - pt[0] * Fz;
        f[2] += R[2] * moment[0] + R[5] * moment[1] + R[8] * moment[2] + pt[0] * Fy - pt[1] * Fx;
        f[3] += Fx, f[4] += Fy, f[5] += Fz;
    }
}

/* -- inverse dynamics ------------------------------------------------------------------------------- */

/* tau = A qdd + C qd + Q + Gamma_f + J^T f_en (Khalil 7.5, Featherstone's ID). */
int rd_rnea(const rd_model *m, const double *q, const double *qd, const double *qdd, const double *g,
            const double *fx, int nfx, int friction, double smooth, double *tau, rd_work *w)
{
    const int nb = m->nb, nq = m->nq;
    rd_forward(m, q, qd, qdd, g, w);
    /* Newton-Euler equations of each body: f_i = I_i a_i + v_i x* I_i v_i       [7.46]-[7.47] */
    for (int i = 0; i < nb; ++i) {
        double Iv[6];
        const double *v = w->v + 6 * i;
        double *f = w->f + 6 * i;
        inertia_times(&m->body[i].inertia, v, Iv);
        inertia_times(&m->body[i].inertia, w->a + 6 * i, f);
        cross_force_add(v, Iv, f);
    }
    if (nfx > 0) {
        world_poses(m, w);
        add_wrenches(w, fx, nfx, w->f);
    }
    for (int k = 0; k < nq; ++k)
        tau[k] = 0.0;
    /* Secondary links (Chen & Wang eqs. 14-21): the spin beta_s = b_s . theta of a gear or rotor
     * about its carrier adds the couple n_s = I_s (e_s betadd_s + w_c x e_s betad_s) to the
     * carrier, and I_s (e_s . alpha_c + betadd_s) along its own coordinate, which reaches the
     * joints as b_s^T times it (virtual work). */
    for (int s = 0; s < m->nr; ++s) {
        const rd_secondary *sl = &m->secondary[s];
        double bd = 0.0, bdd = 0.0;
        for (int k = 0; k < nq; ++k)
            bd += sl->b[k] * qd[k], bdd += sl->b[k] * qdd[k];
        const double hx = sl->inertia * sl->axis[0], hy = sl->inertia * sl->axis[1], hz = sl->inertia * sl->axis[2];
        double ts = sl->inertia * bdd;
        if (sl->carrier >= 0) {
            const double *v = w->v + 6 * sl->carrier, *a = w->a + 6 * sl->carrier;
            double *f = w->f + 6 * sl->carrier;
            f[0] += hx * bdd + (v[1] * hz - v[2] * hy) * bd;
            f[1] += hy * bdd + (v[2] * hx - v[0] * hz) * bd;
            f[2] += hz * bdd + (v[0] * hy - v[1] * hx) * bd;
            ts += hx * a[0] + hy * a[1] + hz * a[2];
        }
        for (int k = 0; k < nq; ++k)
            tau[k] += sl->b[k] * ts;
    }
    /* Backward recursion: tau_i = S_i . f_i, f_p += X_i^T f_i                   [7.48]-[7.49] */
    for (int i = nb - 1; i >= 0; --i) {
        const rd_body *b = &m->body[i];
        tau[b->joint] += b->mult * s_dot(b, w->f + 6 * i);
        if (b->parent >= 0)
            xt_force(w->E + 9 * i, w->r + 3 * i, w->f + 6 * i, w->f + 6 * b->parent, 1);
    }
    /* Rotor inertia Ia qdd (Khalil [7.29]) and friction (Khalil [7.26]) */
    for (int k = 0; k < nq; ++k) {
        tau[k] += m->joint[k].Ia * qdd[k];
        if (friction)
            tau[k] += rd_friction(m, k, qd[k], smooth);
    }
    return rd_finite(tau, nq) ? RD_OK : RD_BAD_OUTPUT;
}

/* -- the joint-space inertia matrix ----------------------------------------------------------------- */

/* Ic_p += X^T Ic X (Featherstone 6.7) for a rigid-body inertia moved by R = E^T and r:
 * h_p += R h + m r, Io_p += R Io R^T + m (|r|^2 1 - r r^T) + 2 (r . Rh) 1 - Rh r^T - r Rh^T. */
static void inertia_to_parent(const double *E, const double *r, const rd_inertia *I, rd_inertia *Ip)
{
    const double m = I->m;
    double Rh[3], IE[9];
    for (int x = 0; x < 3; ++x)
        Rh[x] = E[x] * I->h[0] + E[3 + x] * I->h[1] + E[6 + x] * I->h[2];
    const double rr = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
    const double rh = r[0] * Rh[0] + r[1] * Rh[1] + r[2] * Rh[2];
    Ip->m += m;
    for (int x = 0; x < 3; ++x)
        Ip->h[x] += Rh[x] + m * r[x];
    for (int x = 0; x < 3; ++x)
        for (int y = 0; y < 3; ++y)
            IE[3 * x + y] = I->Io[3 * x] * E[y] + I->Io[3 * x + 1] * E[3 + y] + I->Io[3 * x + 2] * E[6 + y];
    for (int x = 0; x < 3; ++x)
        for (int y = x; y < 3; ++y) {
            /* (E^T Io E)_xy - m r_x r_y - Rh_x r_y - r_x Rh_y (+ m |r|^2 + 2 r.Rh on the diagonal) */
            double val = E[x] * IE[y] + E[3 + x] * IE[3 + y] + E[6 + x] * IE[6 + y];
            val += -m * r[x] * r[y] - Rh[x] * r[y] - r[x] * Rh[y];
            if (x == y) {
                Ip->Io[4 * x] += val + m * rr + 2.0 * rh;
            } else {
                Ip->Io[3 * x + y] += val;
                Ip->Io[3 * y + x] += val;
            }
        }
}

/* F = Ic S: the force that accelerates body b's subtree at unit joint rate. */
static inline void composite_column(const rd_body *b, const rd_inertia *I, double *F)
{
    const double ex = b->axis[0], ey = b->axis[1], ez = b->axis[2];
    const double hx = I->h[0], hy = I->h[1], hz = I->h[2];
    if (b->type == RD_REVOLUTE) {
        /* I [e; 0] = [Io e; e x h] */
        for (int x = 0; x < 3; ++x)
            F[x] = I->Io[3 * x] * ex + I->Io[3 * x + 1] * ey + I->Io[3 * x + 2] * ez;
        F[3] = ey * hz - ez * hy, F[4] = ez * hx - ex * hz, F[5] = ex * hy - ey * hx;
    } else {
        /* I [0; e] = [h x e; m e] */
        F[0] = hy * ez - hz * ey, F[1] = hz * ex - hx * ez, F[2] = hx * ey - hy * ex;
        F[3] = I->m * ex, F[4] = I->m * ey, F[5] = I->m * ez;
    }
}

/* A(q): composite rigid bodies (Featherstone 6.2, Khalil [7.64]). Rotor inertias on the diagonal
 * (Khalil [7.29]); a geared robot's secondary links add M_s = B^T diag(I) B + U B + (U B)^T
 * (Chen & Wang eq. 18), U from their spin momenta. H: nq x nq, row-major. */
int rd_crba(const rd_model *m, const double *q, double *H, rd_work *w)
{
    const int nb = m->nb, nq = m->nq;
    for (int i = 0; i < nb; ++i) {
        joint_transform(&m->body[i], body_coordinate(&m->body[i], q), w->E + 9 * i, w->r + 3 * i);
        w->Ic[i] = m->body[i].inertia;
    }
    /* Composite inertias from the leaves down: Ic_p += X_i^T Ic_i X_i (Featherstone 6.7) */
    for (int i = nb - 1; i >= 0; --i)
        if (m->body[i].parent >= 0)
            inertia_to_parent(w->E + 9 * i, w->r + 3 * i, &w->Ic[i], &w->Ic[m->body[i].parent]);
    for (int k = 0; k < nq * nq; ++k)
        H[k] = 0.0;
    /* H_ij = S_j . X^T ... Ic_i S_i, walking from each body to the base (Featherstone 6.2) */
    for (int i = 0; i < nb; ++i) {
        const rd_body *bi = &m->body[i];
        double F[6], Fp[6];
        composite_column(bi, &w->Ic[i], F);
        const int ji = bi->joint;
        H[ji * nq + ji] += bi->mult * bi->mult * s_dot(bi, F);
        for (int j = i; m->body[j].parent >= 0;) {
            xt_force(w->E + 9 * j, w->r + 3 * j, F, Fp, 0);
            memcpy(F, Fp, sizeof F);
            j = m->body[j].parent;
            const rd_body *bj = &m->body[j];
            const double val = bi->mult * bj->mult * s_dot(bj, F);
            H[ji * nq + bj->joint] += val;
            H[bj->joint * nq + ji] += val;
        }
    }
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
    for (int k = 0; k < nq; ++k)
        H[k * nq + k] += m->joint[k].Ia;
    return rd_finite(H, nq * nq) ? RD_OK : RD_BAD_OUTPUT;
}

/* -- direct dynamics --------------------------------------------------------------------------------- */

/* IAp += X^T Ia X for a symmetric 6x6 Ia = [[A, B], [B^T, C]] (Featherstone 2.66, an articulated
 * inertia carried to the parent), by blocks: A' = E^T A E, B' = E^T B E, C' = E^T C E, then the
 * shift by [r]x: [[A' + [r]x B'^T - B' [r]x - [r]x C' [r]x, B' + [r]x C'], [.., C']]. A, C and
 * the result's diagonal blocks are symmetric: only their upper triangles are computed. */
static void articulated_to_parent(const double *E, const double *r, const double *Ia, double *IAp)
{
    double A[9], B[9], C[9], T[9];
    /* T = P E, then E^T T, for P = A, B, C (rows 0-2 / 3-5 and columns 0-2 / 3-5 of Ia) */
    for (int blk = 0; blk < 3; ++blk) {
        const double *P = Ia + (blk == 2 ? 21 : 0) + (blk == 1 ? 3 : 0);
        double *out = blk == 0 ? A : (blk == 1 ? B : C);
        for (int x = 0; x < 3; ++x)
            for (int y = 0; y < 3; ++y)
                T[3 * x + y] = P[6 * x] * E[y] + P[6 * x + 1] * E[3 + y] + P[6 * x + 2] * E[6 + y];
        for (int x = 0; x < 3; ++x)
            for (int y = (blk == 1 ? 0 : x); y < 3; ++y)
                out[3 * x + y] = E[x] * T[y] + E[3 + x] * T[3 + y] + E[6 + x] * T[6 + y];
    }
    C[3] = C[1], C[6] = C[2], C[7] = C[5];
    const double r0 = r[0], r1 = r[1], r2 = r[2];
    /* RC = [r]x C', BR = B' [r]x */
    double RC[9], BR[9];
    for (int y = 0; y < 3; ++y) {
        RC[y] = r1 * C[6 + y] - r2 * C[3 + y];
        RC[3 + y] = r2 * C[y] - r0 * C[6 + y];
        RC[6 + y] = r0 * C[3 + y] - r1 * C[y];
    }
    for (int x = 0; x < 3; ++x) {
        const double b0 = B[3 * x], b1 = B[3 * x + 1], b2 = B[3 * x + 2];
        BR[3 * x] = b1 * r2 - b2 * r1;
        BR[3 * x + 1] = b2 * r0 - b0 * r2;
        BR[3 * x + 2] = b0 * r1 - b1 * r0;
    }
    for (int x = 0; x < 3; ++x) {
        for (int y = 0; y < 3; ++y) {
            const double top = B[3 * x + y] + RC[3 * x + y]; /* B' + [r]x C' */
            IAp[6 * x + 3 + y] += top;
            IAp[6 * (3 + y) + x] += top;
        }
        for (int y = x; y < 3; ++y) {
            /* RCR = [r]x C' [r]x = RC [r]x */
            const double *rc = RC + 3 * x;
            const double rcr = y == 0 ? rc[1] * r2 - rc[2] * r1 : (y == 1 ? rc[2] * r0 - rc[0] * r2 : rc[0] * r1 - rc[1] * r0);
            const double ang = A[3 * x + y] - BR[3 * x + y] - BR[3 * y + x] - rcr; /* [r]x B'^T = -(B' [r]x)^T */
            const double lin = C[3 * x + y];
            IAp[6 * x + y] += ang;
            IAp[6 * (3 + x) + 3 + y] += lin;
            if (y != x) {
                IAp[6 * y + x] += ang;
                IAp[6 * (3 + y) + 3 + x] += lin;
            }
        }
    }
}

/* The articulated body algorithm (Featherstone 7.3, Khalil 7.6.2), for a tree without mimic
 * joints or coupled gear trains. */
static int aba_tree(const rd_model *m, const double *q, const double *qd, const double *tau, const double *g,
                    const double *fx, int nfx, int friction, double smooth, double *qdd, rd_work *w)
{
    const int nb = m->nb;
    /* Forward recursion: velocities and velocity-product accelerations c_i = v_i x S_i qd_i */
    rd_forward(m, q, qd, NULL, g, w);
    for (int i = 0; i < nb; ++i) {
        const rd_inertia *I = &m->body[i].inertia;
        double *IA = w->IA + 36 * i, Iv[6];
        /* IA_i = I_i = [[Io, [h]x], [[h]x^T, m 1]] (Featherstone 2.62, [angular; linear] order) */
        const double h0 = I->h[0], h1 = I->h[1], h2 = I->h[2];
        for (int x = 0; x < 3; ++x)
            for (int y = 0; y < 3; ++y) {
                IA[6 * x + y] = I->Io[3 * x + y];
                IA[6 * (3 + x) + 3 + y] = x == y ? I->m : 0.0;
            }
        const double hx[9] = {0.0, -h2, h1, h2, 0.0, -h0, -h1, h0, 0.0};
        for (int x = 0; x < 3; ++x)
            for (int y = 0; y < 3; ++y)
                IA[6 * x + 3 + y] = hx[3 * x + y], IA[6 * (3 + y) + x] = hx[3 * x + y];
        /* pA_i = v_i x* I_i v_i */
        double *pA = w->pA + 6 * i;
        inertia_times(I, w->v + 6 * i, Iv);
        for (int k = 0; k < 6; ++k)
            pA[k] = 0.0;
        cross_force_add(w->v + 6 * i, Iv, pA);
    }
    if (nfx > 0) {
        world_poses(m, w);
        add_wrenches(w, fx, nfx, w->pA);
    }
    /* Backward recursion: articulated inertias and bias forces (Khalil [7.67]-[7.68]) */
    for (int i = nb - 1; i >= 0; --i) {
        const rd_body *b = &m->body[i];
        const int k = b->joint, col = b->type == RD_REVOLUTE ? 0 : 3;
        const double ex = b->axis[0], ey = b->axis[1], ez = b->axis[2];
        double *IA = w->IA + 36 * i, *U = w->U + 6 * i, *pA = w->pA + 6 * i;
        /* U_i = IA_i S_i, D_i = S_i^T U_i + Ia (the rotor's inertia about its own axis) */
        for (int x = 0; x < 6; ++x)
            U[x] = IA[6 * x + col] * ex + IA[6 * x + col + 1] * ey + IA[6 * x + col + 2] * ez;
        const double D = U[col] * ex + U[col + 1] * ey + U[col + 2] * ez + m->joint[k].Ia;
        w->D[i] = D;
        if (!(D > 0.0))
            return RD_SINGULAR + i;
        /* u_i = tau_i - Gamma_f - S_i^T pA_i */
        double tk = tau[k];
        if (friction)
            tk -= rd_friction(m, k, qd[k], smooth);
        const double u = tk - s_dot(b, pA);
        w->u[i] = u;
        if (b->parent < 0)
            continue;
        /* Ia = IA - U U^T / D, pa = pA + Ia c + U u / D; then IA_p += X^T Ia X, pA_p += X^T pa */
        const double inv = 1.0 / D;
        const double *c = w->c + 6 * i;
        double Ia[36], pa[6];
        for (int x = 0; x < 6; ++x) {
            const double ux = U[x] * inv;
            for (int y = x; y < 6; ++y)
                Ia[6 * x + y] = Ia[6 * y + x] = IA[6 * x + y] - ux * U[y];
        }
        for (int x = 0; x < 6; ++x) {
            double acc = pA[x] + U[x] * u * inv;
            for (int y = 0; y < 6; ++y)
                acc += Ia[6 * x + y] * c[y];
            pa[x] = acc;
        }
        const double *E = w->E + 9 * i, *r = w->r + 3 * i;
        xt_force(E, r, pa, w->pA + 6 * b->parent, 1);
        articulated_to_parent(E, r, Ia, w->IA + 36 * b->parent);
    }
    /* Forward recursion: accelerations from a_0 = [0; -g] (gravity as the base acceleration) */
    for (int i = 0; i < nb; ++i) {
        const rd_body *b = &m->body[i];
        const int p = b->parent < 0 ? nb : b->parent;
        double *a = w->a + 6 * i;
        const double *c = w->c + 6 * i, *U = w->U + 6 * i;
        /* a'_i = X_i a_p + c_i; qdd_i = (u_i - U_i^T a'_i) / D_i; a_i = a'_i + S_i qdd_i */
        x_motion(w->E + 9 * i, w->r + 3 * i, w->a + 6 * p, a);
        double s = 0.0;
        for (int x = 0; x < 6; ++x) {
            a[x] += c[x];
            s += U[x] * a[x];
        }
        const double qi = (w->u[i] - s) / w->D[i];
        qdd[b->joint] = qi;
        double *sa = b->type == RD_REVOLUTE ? a : a + 3;
        sa[0] += b->axis[0] * qi, sa[1] += b->axis[1] * qi, sa[2] += b->axis[2] * qi;
    }
    return rd_finite(qdd, m->nq) ? RD_OK : RD_BAD_OUTPUT;
}

/* Cholesky factor H = L L^T in place (the lower triangle; the upper one is left as it was). */
static int cholesky(double *H, int nq)
{
    for (int j = 0; j < nq; ++j) {
        double d = H[j * nq + j];
        for (int k = 0; k < j; ++k)
            d -= H[j * nq + k] * H[j * nq + k];
        if (!(d > 0.0))
            return RD_NOT_POSITIVE_DEFINITE;
        d = sqrt(d);
        H[j * nq + j] = d;
        for (int i = j + 1; i < nq; ++i) {
            double s = H[i * nq + j];
            for (int k = 0; k < j; ++k)
                s -= H[i * nq + k] * H[j * nq + k];
            H[i * nq + j] = s / d;
        }
    }
    return RD_OK;
}

/* x <- (L L^T)^-1 x with the factor of cholesky(): two triangular solves. */
static void cholesky_solve(const double *L, int nq, double *x)
{
    for (int i = 0; i < nq; ++i) {
        double s = x[i];
        for (int k = 0; k < i; ++k)
            s -= L[i * nq + k] * x[k];
        x[i] = s / L[i * nq + i];
    }
    for (int i = nq - 1; i >= 0; --i) {
        double s = x[i];
        for (int k = i + 1; k < nq; ++k)
            s -= L[k * nq + i] * x[k];
        x[i] = s / L[i * nq + i];
    }
}

/* Direct dynamics from the inverse model (Khalil 7.6.1): A qdd = tau - Gamma_f - h(q, qd).
 * Mimic joints and gear trains couple coordinates (a secondary link's b_s may span joints of
 * different branches), which the articulated-body recursion cannot absorb. */
static int aba_joint_space(const rd_model *m, const double *q, const double *qd, const double *tau, const double *g,
                           const double *fx, int nfx, int friction, double smooth, double *qdd, rd_work *w)
{
    const int nq = m->nq;
    double *H = w->H, *h = w->h;
    for (int k = 0; k < nq; ++k)
        w->zero[k] = 0.0;
    int st = rd_rnea(m, q, qd, w->zero, g, fx, nfx, 0, smooth, h, w);
    if (st != RD_OK)
        return st;
    st = rd_crba(m, q, H, w);
    if (st != RD_OK)
        return st;
    for (int k = 0; k < nq; ++k) {
        qdd[k] = tau[k] - h[k];
        if (friction)
            qdd[k] -= rd_friction(m, k, qd[k], smooth);
    }
    if (cholesky(H, nq) != RD_OK)
        return RD_NOT_POSITIVE_DEFINITE;
    cholesky_solve(H, nq, qdd);
    return rd_finite(qdd, nq) ? RD_OK : RD_BAD_OUTPUT;
}

int rd_aba(const rd_model *m, const double *q, const double *qd, const double *tau, const double *g,
           const double *fx, int nfx, int friction, double smooth, double *qdd, rd_work *w)
{
    if (m->tree)
        return aba_tree(m, q, qd, tau, g, fx, nfx, friction, smooth, qdd, w);
    return aba_joint_space(m, q, qd, tau, g, fx, nfx, friction, smooth, qdd, w);
}

/* 1: every derivative by the tangents of the recursion (rnea_tangent), the base-frame formulas
 * of rnea_derivatives_tree off: a test switch, to compare the two derivations. */
int rd_tangent_derivatives = 0;

/* -- derivatives of the dynamics ------------------------------------------------------------------- */

/* y += s (x x S_b): the motion cross product with body b's joint axis (Featherstone 2.31),
 * [w; u] x [e; 0] = [w x e; u x e] and [w; u] x [0; e] = [0; w x e]. */
static inline void cross_axis_add(const rd_body *b, const double *x, double s, double *y)
{
    const double ex = b->axis[0] * s, ey = b->axis[1] * s, ez = b->axis[2] * s;
    if (b->type == RD_REVOLUTE) {
        y[0] += x[1] * ez - x[2] * ey, y[1] += x[2] * ex - x[0] * ez, y[2] += x[0] * ey - x[1] * ex;
        y[3] += x[4] * ez - x[5] * ey, y[4] += x[5] * ex - x[3] * ez, y[5] += x[3] * ey - x[4] * ex;
    } else {
        y[3] += x[1] * ez - x[2] * ey, y[4] += x[2] * ex - x[0] * ez, y[5] += x[0] * ey - x[1] * ex;
    }
}

/* y += s (S_b x* f) (Featherstone 2.32): [e; 0] x* [n; f] = [e x n; e x f], [0; e] x* [n; f] = [e x f; 0]. */
static inline void axis_cross_force_add(const rd_body *b, const double *f, double s, double *y)
{
    const double ex = b->axis[0] * s, ey = b->axis[1] * s, ez = b->axis[2] * s;
    if (b->type == RD_REVOLUTE) {
        y[0] += ey * f[2] - ez * f[1], y[1] += ez * f[0] - ex * f[2], y[2] += ex * f[1] - ey * f[0];
        y[3] += ey * f[5] - ez * f[4], y[4] += ez * f[3] - ex * f[5], y[5] += ex * f[4] - ey * f[3];
    } else {
        y[0] += ey * f[5] - ez * f[4], y[1] += ez * f[3] - ex * f[5], y[2] += ex * f[4] - ey * f[3];
    }
}

/* d Gamma_f / d qd of rd_friction: Fv + sg' (Fc + Fs e) - sg sign(qd) B Fs e, e = exp(-|qd| B);
 * sg' = (1 - tanh^2) / v_s when smoothed, 0 off qd = 0 otherwise (the Coulomb step has no slope). */
static double friction_slope(const rd_model *m, int k, double qd, double smooth)
{
    const rd_joint *j = &m->joint[k];
    const double sign = (qd > 0.0) - (qd < 0.0);
    double sg = sign, dsg = 0.0;
    if (smooth > 0.0) {
        sg = tanh(qd / smooth);
        dsg = (1.0 - sg * sg) / smooth;
    }
    double d = j->Fv + dsg * j->Fc;
    if (j->Fs != 0.0) {
        const double e = exp(-fabs(qd) * j->B);
        d += j->Fs * e * (dsg - sg * sign * j->B);
    }
    return d;
}

/* w->dtau = d tau / d q_k (wrt_qd = 0) or d tau / d qd_k (wrt_qd = 1), after rd_rnea(q, qd, qdd)
 * left its state in w (E, r, v, a, c, the subtree forces f, and R when there are wrenches).
 * Each line of the recursion differentiated (the derivatives of Carpentier & Mansard, RSS 2018,
 * written in body coordinates): with d(X_i y)/d theta_i = (X_i y) x S_i (Featherstone 2.29 for
 * a joint transform) and dth_i = mult_i for a body that joint k drives (mimic: several), else 0,
 *   dv_i = X_i dv_p + dth_i (v_i x S_i) + dthd_i S_i
 *   da_i = X_i da_p + dth_i ((X_i a_p) x S_i) + thd_i (dv_i x S_i) + dthd_i (v_i x S_i)
 *   df_i = I_i da_i + dv_i x* I_i v_i + v_i x* I_i dv_i     (+ wrenches, secondary links)
 *   dtau_i = S_i . df_i,   df_p += X_i^T (df_i + dth_i S_i x* f_i).
 * Only the bodies the coordinate moves are visited forward ("moved"); the backward pass visits
 * them and their ancestors. */
static void rnea_tangent(const rd_model *m, const double *qd, const double *qdd, const double *fx, int nfx, int k,
                         int wrt_qd, int friction, double smooth, rd_work *w)
{
    const int nb = m->nb, nq = m->nq;
    double *dv = w->dv, *da = w->da, *df = w->df, *dr = w->drho, *dtau = w->dtau;
    int *moved = w->moved;
    for (int x = 0; x < 6; ++x)
        dv[6 * nb + x] = 0.0, da[6 * nb + x] = 0.0;
    dr[3 * nb] = dr[3 * nb + 1] = dr[3 * nb + 2] = 0.0;
    for (int j = 0; j < nq; ++j)
        dtau[j] = 0.0;
    for (int i = 0; i < nb; ++i) {
        const rd_body *b = &m->body[i];
        double *dvi = dv + 6 * i, *dai = da + 6 * i, *dfi = df + 6 * i, *dri = dr + 3 * i;
        const int own = b->joint == k;
        moved[i] = own || (b->parent >= 0 && moved[b->parent]);
        if (!moved[i]) {
            for (int x = 0; x < 6; ++x)
                dvi[x] = 0.0, dai[x] = 0.0, dfi[x] = 0.0;
            dri[0] = dri[1] = dri[2] = 0.0;
            continue;
        }
        const int p = b->parent < 0 ? nb : b->parent;
        const double *E = w->E + 9 * i, *r = w->r + 3 * i, *v = w->v + 6 * i;
        const double s = own ? b->mult : 0.0, thd = b->mult * qd[b->joint];
        const double *drp = dr + 3 * p;
        x_motion(E, r, dv + 6 * p, dvi);
        x_motion(E, r, da + 6 * p, dai);
        for (int x = 0; x < 3; ++x) /* the frame's rotation: drho_i = E_i drho_p + dth_i a_i (revolute) */
            dri[x] = E[3 * x] * drp[0] + E[3 * x + 1] * drp[1] + E[3 * x + 2] * drp[2];
        if (own) {
            if (wrt_qd) {
                double *sv = b->type == RD_REVOLUTE ? dvi : dvi + 3;
                sv[0] += b->axis[0] * s, sv[1] += b->axis[1] * s, sv[2] += b->axis[2] * s;
                cross_axis_add(b, v, s, dai);
            } else {
                /* X_i a_p = a_i - c_i - S_i thdd_i */
                const double *a = w->a + 6 * i, *c = w->c + 6 * i, thdd = b->mult * qdd[b->joint];
                double xa[6];
                for (int x = 0; x < 6; ++x)
                    xa[x] = a[x] - c[x];
                double *sa = b->type == RD_REVOLUTE ? xa : xa + 3;
                sa[0] -= b->axis[0] * thdd, sa[1] -= b->axis[1] * thdd, sa[2] -= b->axis[2] * thdd;
                cross_axis_add(b, v, s, dvi);
                cross_axis_add(b, xa, s, dai);
                if (b->type == RD_REVOLUTE)
                    dri[0] += b->axis[0] * s, dri[1] += b->axis[1] * s, dri[2] += b->axis[2] * s;
            }
        }
        cross_axis_add(b, dvi, thd, dai);
        const rd_inertia *I = &b->inertia;
        double Iv[6], Idv[6];
        inertia_times(I, dai, dfi);
        inertia_times(I, v, Iv);
        inertia_times(I, dvi, Idv);
        cross_force_add(dvi, Iv, dfi);
        cross_force_add(v, Idv, dfi);
    }
    /* A wrench fixed in base axes at a point of the body turns with the body in its axes:
     * d(R^T x) = -drho x R^T x, for the force and the moment (add_wrenches) */
    for (int n = 0; n < nfx && !wrt_qd; ++n) {
        const double *row = fx + RD_WRENCH * n;
        const int b = (int)row[0];
        if (!moved[b])
            continue;
        const double *R = w->R + 9 * b, *pt = row + 1, *force = row + 4, *moment = row + 7, *rho = dr + 3 * b;
        double F[3], M[3], dF[3], dM[3];
        for (int x = 0; x < 3; ++x) {
            F[x] = R[x] * force[0] + R[3 + x] * force[1] + R[6 + x] * force[2];
            M[x] = R[x] * moment[0] + R[3 + x] * moment[1] + R[6 + x] * moment[2];
        }
        dF[0] = F[1] * rho[2] - F[2] * rho[1], dF[1] = F[2] * rho[0] - F[0] * rho[2], dF[2] = F[0] * rho[1] - F[1] * rho[0];
        dM[0] = M[1] * rho[2] - M[2] * rho[1], dM[1] = M[2] * rho[0] - M[0] * rho[2], dM[2] = M[0] * rho[1] - M[1] * rho[0];
        double *f = df + 6 * b;
        f[0] += dM[0] + pt[1] * dF[2] - pt[2] * dF[1];
        f[1] += dM[1] + pt[2] * dF[0] - pt[0] * dF[2];
        f[2] += dM[2] + pt[0] * dF[1] - pt[1] * dF[0];
        f[3] += dF[0], f[4] += dF[1], f[5] += dF[2];
    }
    /* Secondary links (rd_rnea): n_s = I_s (e_s betadd + w_c x e_s betad) on the carrier and
     * I_s e_s . alpha_c along beta: their tangents through w_c, alpha_c and betad = b . qd */
    for (int s = 0; s < m->nr; ++s) {
        const rd_secondary *sl = &m->secondary[s];
        const int c = sl->carrier;
        const double dbd = wrt_qd ? sl->b[k] : 0.0;
        if (c < 0 || (!moved[c] && dbd == 0.0))
            continue;
        double bd = 0.0;
        for (int j = 0; j < nq; ++j)
            bd += sl->b[j] * qd[j];
        const double hx = sl->inertia * sl->axis[0], hy = sl->inertia * sl->axis[1], hz = sl->inertia * sl->axis[2];
        const double *v = w->v + 6 * c, *dw = dv + 6 * c, *dal = da + 6 * c;
        double *f = df + 6 * c;
        f[0] += (dw[1] * hz - dw[2] * hy) * bd + (v[1] * hz - v[2] * hy) * dbd;
        f[1] += (dw[2] * hx - dw[0] * hz) * bd + (v[2] * hx - v[0] * hz) * dbd;
        f[2] += (dw[0] * hy - dw[1] * hx) * bd + (v[0] * hy - v[1] * hx) * dbd;
        moved[c] = 1;
        const double dts = hx * dal[0] + hy * dal[1] + hz * dal[2];
        for (int j = 0; j < nq; ++j)
            dtau[j] += sl->b[j] * dts;
    }
    /* Backward: dtau_i = S_i . df_i, df_p += X_i^T (df_i + dth_i S_i x* f_i) */
    for (int i = nb - 1; i >= 0; --i) {
        if (!moved[i])
            continue;
        const rd_body *b = &m->body[i];
        double *dfi = df + 6 * i;
        dtau[b->joint] += b->mult * s_dot(b, dfi);
        if (b->parent < 0)
            continue;
        if (!wrt_qd && b->joint == k)
            axis_cross_force_add(b, w->f + 6 * i, b->mult, dfi);
        xt_force(w->E + 9 * i, w->r + 3 * i, dfi, df + 6 * b->parent, 1);
        moved[b->parent] = 1;
    }
    if (wrt_qd && friction)
        dtau[k] += friction_slope(m, k, qd[k], smooth);
}

/* y = v x x, the motion cross product (Featherstone 2.31): [w x xw; w x xu + u x xw]. */
static inline void cross_motion(const double *v, const double *x, double *y)
{
    const double wx = v[0], wy = v[1], wz = v[2], ux = v[3], uy = v[4], uz = v[5];
    y[0] = wy * x[2] - wz * x[1], y[1] = wz * x[0] - wx * x[2], y[2] = wx * x[1] - wy * x[0];
    y[3] = wy * x[5] - wz * x[4] + uy * x[2] - uz * x[1];
    y[4] = wz * x[3] - wx * x[5] + uz * x[0] - ux * x[2];
    y[5] = wx * x[4] - wy * x[3] + ux * x[1] - uy * x[0];
}

static inline double dot6(const double *x, const double *y)
{
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3] + x[4] * y[4] + x[5] * y[5];
}

/* B += v x* Y - Y v x, the rate of a base-frame spatial inertia Y = [[Io, [h]x], [[h]x^T, m 1]]
 * carried with velocity v = [w; u] (Featherstone 2.64), 6x6 row-major. By blocks, with
 * [a]x [b]x = b a^T - (a . b) 1: [[ [w]x Io - Io [w]x - h u^T - u h^T + 2 (u . h) 1, [w x h + m u]x ],
 * [ -[w x h + m u]x, 0 ]]. */
static void inertia_rate_add(const rd_inertia *I, const double *v, double *B)
{
    const double *w = v, *u = v + 3, *h = I->h, *Io = I->Io;
    const double uh = u[0] * h[0] + u[1] * h[1] + u[2] * h[2];
    const double c[3] = {w[1] * h[2] - w[2] * h[1] + I->m * u[0], w[2] * h[0] - w[0] * h[2] + I->m * u[1],
                         w[0] * h[1] - w[1] * h[0] + I->m * u[2]};
    const double C[9] = {0.0, -c[2], c[1], c[2], 0.0, -c[0], -c[1], c[0], 0.0};
    for (int x = 0; x < 3; ++x) {
        /* row x of [w]x Io: (w x Io e_y)_x, and of Io [w]x */
        const int x1 = (x + 1) % 3, x2 = (x + 2) % 3;
        for (int y = 0; y < 3; ++y) {
            const int y1 = (y + 1) % 3, y2 = (y + 2) % 3;
            const double wI = w[x1] * Io[3 * x2 + y] - w[x2] * Io[3 * x1 + y];
            const double Iw = Io[3 * x + y1] * w[y2] - Io[3 * x + y2] * w[y1];
            B[6 * x + y] += wI - Iw - h[x] * u[y] - u[x] * h[y] + (x == y ? 2.0 * uh : 0.0);
            B[6 * x + 3 + y] += C[3 * x + y];
            B[6 * (3 + x) + y] -= C[3 * x + y];
        }
    }
}

/* The derivatives of rd_rnea for a tree without wrenches or secondary links, in the base frame
 * (Carpentier & Mansard 2018's formulation, derived again here): moving joint j turns its subtree
 * by the screw s_j = oS_j, so a base-frame quantity of the subtree varies as the screw's action
 * (s x m, s x* f, s x* Y - Y s x) plus the change of the subtree's motion not explained by it:
 *   d ov_i / d q_j  = s x ov_i + dv_j,            dv_j = -(s_j x ov_l)         (l: j's parent)
 *   d oa_i / d q_j  = s x oa_i + alpha_j + dv_j x ov_i,   alpha_j = -(s_j x oa_l) - dv_j x ov_l
 *   d ov_i / d qd_j = s_j,   d oa_i / d qd_j = s_j x ov_i + beta_j,   beta_j = -2 s_j x ov_l.
 * The screw's action cancels in tau_i = oS_i . oF_i for i in j's subtree, which leaves, with the
 * subtree's composite inertia Yc_i, momentum hc_i = sum Y ov and inertia rate Bc_i = sum (ov x* Y - Y ov x):
 *   d tau_i / d q_j  = alpha_j . P_i + dv_j . Q_i,   d tau_i / d qd_j = beta_j . P_i + s_j . Q_i,
 *   P_i = Yc_i oS_i,   Q_i = Bc_i^T oS_i - oS_i x* hc_i;
 * and for i an ancestor of j, d tau_i / d q_j = oS_i . G_j, d tau_i / d qd_j = oS_i . H_j with
 *   G_j = s_j x* oF_j + Yc_j alpha_j + dv_j x* hc_j + Bc_j dv_j,   H_j = Yc_j beta_j + s_j x* hc_j + Bc_j s_j.
 * Mimic joints fold in by the chain rule (theta = mult q + offset). A second derivation of
 * rnea_tangent's numbers (test_derivatives compares the two). Stages: tree_motion (after
 * rd_body_poses), tree_composites, tree_rows, tree_fill. */

/* Base-frame axes oS, velocities ov, accelerations oa (qdd NULL: zero), each body's inertia oY,
 * momentum oh and force of, from the body poses in w. With inertias = 0 only oa and of are
 * recomputed (a new qdd on the same q, qd). */
static void tree_motion(const rd_model *m, const double *qd, const double *qdd, const double *g, int inertias, rd_work *w)
{
    const int nb = m->nb;
    double *ov = w->ov, *oa = w->oa;
    for (int x = 0; x < 6; ++x)
        ov[6 * nb + x] = 0.0, oa[6 * nb + x] = 0.0;
    oa[6 * nb + 3] = -g[0], oa[6 * nb + 4] = -g[1], oa[6 * nb + 5] = -g[2];
    for (int i = 0; i < nb; ++i) {
        const rd_body *b = &m->body[i];
        const int p = b->parent < 0 ? nb : b->parent;
        double *S = w->oS + 6 * i, *v = ov + 6 * i, *a = oa + 6 * i;
        const double thd = b->mult * qd[b->joint], thdd = qdd ? b->mult * qdd[b->joint] : 0.0;
        if (inertias) {
            const double *R = w->R + 9 * i, *pos = w->p + 3 * i;
            double z[3];
            for (int x = 0; x < 3; ++x)
                z[x] = R[3 * x] * b->axis[0] + R[3 * x + 1] * b->axis[1] + R[3 * x + 2] * b->axis[2];
            if (b->type == RD_REVOLUTE) {
                S[0] = z[0], S[1] = z[1], S[2] = z[2];
                S[3] = pos[1] * z[2] - pos[2] * z[1], S[4] = pos[2] * z[0] - pos[0] * z[2], S[5] = pos[0] * z[1] - pos[1] * z[0];
            } else {
                S[0] = S[1] = S[2] = 0.0, S[3] = z[0], S[4] = z[1], S[5] = z[2];
            }
            for (int x = 0; x < 6; ++x)
                v[x] = ov[6 * p + x] + S[x] * thd;
            /* Y_i in the base frame: inertia_to_parent with E = R^T, r = p */
            double RT[9];
            for (int x = 0; x < 3; ++x)
                for (int y = 0; y < 3; ++y)
                    RT[3 * x + y] = R[3 * y + x];
            memset(&w->oY[i], 0, sizeof(rd_inertia));
            inertia_to_parent(RT, pos, &b->inertia, &w->oY[i]);
            inertia_times(&w->oY[i], v, w->oh + 6 * i);
        }
        double vS[6];
        cross_motion(v, S, vS);
        for (int x = 0; x < 6; ++x)
            a[x] = oa[6 * p + x] + S[x] * thdd + vS[x] * thd;
        double *F = w->of + 6 * i;
        inertia_times(&w->oY[i], a, F);
        cross_force_add(v, w->oh + 6 * i, F);
    }
}

/* The subtrees' composites (one frame: no transform): inertias, rates, momenta (inertias = 1)
 * and forces. */
static void tree_composites(const rd_model *m, int inertias, rd_work *w)
{
    const int nb = m->nb;
    memcpy(w->oFc, w->of, sizeof(double) * 6 * nb);
    if (inertias) {
        memcpy(w->oYc, w->oY, sizeof(rd_inertia) * nb);
        memcpy(w->ohc, w->oh, sizeof(double) * 6 * nb);
        memset(w->oBc, 0, sizeof(double) * 36 * nb);
        for (int i = 0; i < nb; ++i)
            inertia_rate_add(&w->oY[i], w->ov + 6 * i, w->oBc + 36 * i);
    }
    for (int i = nb - 1; i >= 0; --i) {
        const int p = m->body[i].parent;
        if (p < 0)
            continue;
        for (int x = 0; x < 6; ++x)
            w->oFc[6 * p + x] += w->oFc[6 * i + x];
        if (!inertias)
            continue;
        rd_inertia *Yp = &w->oYc[p];
        const rd_inertia *Yi = &w->oYc[i];
        Yp->m += Yi->m;
        for (int x = 0; x < 3; ++x)
            Yp->h[x] += Yi->h[x];
        for (int x = 0; x < 9; ++x)
            Yp->Io[x] += Yi->Io[x];
        for (int x = 0; x < 36; ++x)
            w->oBc[36 * p + x] += w->oBc[36 * i + x];
        for (int x = 0; x < 6; ++x)
            w->ohc[6 * p + x] += w->ohc[6 * i + x];
    }
}

/* M = A(q) from the composites: A_ij = oS_j . Yc_i oS_i = oS_j . P_i (P_i computed here), j an
 * ancestor of i (Featherstone 6.2 in one frame), folded by the mimic multipliers; rotors added. */
static void tree_mass_matrix(const rd_model *m, double *M, rd_work *w)
{
    const int nb = m->nb, nq = m->nq;
    for (int k = 0; k < nq * nq; ++k)
        M[k] = 0.0;
    for (int i = 0; i < nb; ++i) {
        const rd_body *bi = &m->body[i];
        double *P = w->oP + 6 * i;
        inertia_times(&w->oYc[i], w->oS + 6 * i, P);
        for (int j = i; j >= 0; j = m->body[j].parent) {
            const rd_body *bj = &m->body[j];
            const double mij = bi->mult * bj->mult * dot6(w->oS + 6 * j, P);
            M[bi->joint * nq + bj->joint] += mij;
            if (j != i)
                M[bj->joint * nq + bi->joint] += mij;
        }
    }
    for (int k = 0; k < nq; ++k)
        M[k * nq + k] += m->joint[k].Ia;
}

/* dq, dqd from the composites (P from tree_mass_matrix): Q_i, alpha_j, dv_j, beta_j, G_j, H_j,
 * then each body i with each of its ancestors j (and itself). */
static void tree_fill(const rd_model *m, double *dq, double *dqd, rd_work *w)
{
    const int nb = m->nb, nq = m->nq;
    const double *ov = w->ov, *oa = w->oa;
    for (int i = 0; i < nb; ++i) {
        const rd_body *b = &m->body[i];
        const int l = b->parent < 0 ? nb : b->parent;
        const double *S = w->oS + 6 * i, *B = w->oBc + 36 * i, *hc = w->ohc + 6 * i;
        double *Q = w->oQ + 6 * i;
        /* Q_i = Bc_i^T S_i - S_i x* hc_i */
        for (int x = 0; x < 6; ++x)
            Q[x] = B[x] * S[0] + B[6 + x] * S[1] + B[12 + x] * S[2] + B[18 + x] * S[3] + B[24 + x] * S[4] + B[30 + x] * S[5];
        double Sh[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
        cross_force_add(S, hc, Sh);
        for (int x = 0; x < 6; ++x)
            Q[x] -= Sh[x];
        double *alpha = w->oW + 18 * i, *dv = alpha + 6, *beta = alpha + 12, t[6];
        cross_motion(ov + 6 * l, S, dv);    /* dv = -(s x ov_l) = ov_l x s */
        cross_motion(oa + 6 * l, S, alpha); /* -(s x oa_l) */
        cross_motion(dv, ov + 6 * l, t);
        for (int x = 0; x < 6; ++x)
            alpha[x] -= t[x], beta[x] = 2.0 * dv[x];
        double *G = w->oG + 12 * i, *H = G + 6;
        inertia_times(&w->oYc[i], alpha, G);
        cross_force_add(S, w->oFc + 6 * i, G);
        cross_force_add(dv, hc, G);
        inertia_times(&w->oYc[i], beta, H);
        cross_force_add(S, hc, H);
        for (int x = 0; x < 6; ++x) {
            double gx = 0.0, hx = 0.0;
            for (int y = 0; y < 6; ++y)
                gx += B[6 * x + y] * dv[y], hx += B[6 * x + y] * S[y];
            G[x] += gx, H[x] += hx;
        }
    }
    for (int k = 0; k < nq * nq; ++k)
        dq[k] = 0.0, dqd[k] = 0.0;
    for (int i = 0; i < nb; ++i) {
        const rd_body *bi = &m->body[i];
        const double *P = w->oP + 6 * i, *Q = w->oQ + 6 * i, *G = w->oG + 12 * i, *H = G + 6;
        for (int j = i; j >= 0; j = m->body[j].parent) {
            const rd_body *bj = &m->body[j];
            const double *W = w->oW + 18 * j, *S = w->oS + 6 * j;
            const double mm = bi->mult * bj->mult;
            dq[bi->joint * nq + bj->joint] += mm * (dot6(W, P) + dot6(W + 6, Q));
            dqd[bi->joint * nq + bj->joint] += mm * (dot6(W + 12, P) + dot6(S, Q));
            if (j != i) {
                dq[bj->joint * nq + bi->joint] += mm * dot6(S, G);
                dqd[bj->joint * nq + bi->joint] += mm * dot6(S, H);
            }
        }
    }
}

/* Whether the base-frame formulas apply: no wrench, no secondary link, the test switch off. */
static int tree_derivatives(const rd_model *m, int nfx) { return nfx == 0 && m->nr == 0 && !rd_tangent_derivatives; }

/* The tree's stages up to A(q) into M (and P): poses, motion at qdd (NULL: zero), composites. */
static void tree_start(const rd_model *m, const double *q, const double *qd, const double *qdd, const double *g,
                       double *M, rd_work *w)
{
    rd_body_poses(m, q, w);
    tree_motion(m, qd, qdd, g, 1, w);
    tree_composites(m, 1, w);
    tree_mass_matrix(m, M, w);
}

/* The tree's derivatives from its composites, friction's slope on the diagonal of d/dqd. */
static void tree_finish(const rd_model *m, const double *qd, int friction, double smooth, double *dq, double *dqd,
                        rd_work *w)
{
    tree_fill(m, dq, dqd, w);
    for (int k = 0; k < m->nq && friction; ++k)
        dqd[k * m->nq + k] += friction_slope(m, k, qd[k], smooth);
}

/* dtau/dq and dtau/dqd (nq x nq, row-major: [j, k] = d tau_j / d q_k) of rd_rnea at (q, qd, qdd),
 * friction and wrenches as there, and M = A(q) (rd_crba) when M is not NULL. */
int rd_rnea_derivatives(const rd_model *m, const double *q, const double *qd, const double *qdd, const double *g,
                        const double *fx, int nfx, int friction, double smooth, double *dtau_dq, double *dtau_dqd,
                        double *M, rd_work *w)
{
    const int nq = m->nq;
    int st;
    if (tree_derivatives(m, nfx)) {
        tree_start(m, q, qd, qdd, g, M ? M : w->L, w);
        tree_finish(m, qd, friction, smooth, dtau_dq, dtau_dqd, w);
        if (M && !rd_finite(M, nq * nq))
            return RD_BAD_OUTPUT;
    } else {
        if ((st = rd_rnea(m, q, qd, qdd, g, fx, nfx, friction, smooth, w->dtau, w)) != RD_OK)
            return st;
        for (int k = 0; k < nq; ++k)
            for (int wrt_qd = 0; wrt_qd < 2; ++wrt_qd) {
                double *out = wrt_qd ? dtau_dqd : dtau_dq;
                rnea_tangent(m, qd, qdd, fx, nfx, k, wrt_qd, friction, smooth, w);
                for (int j = 0; j < nq; ++j)
                    out[j * nq + k] = w->dtau[j];
            }
        if (M && (st = rd_crba(m, q, M, w)) != RD_OK)
            return st;
    }
    return rd_finite(dtau_dq, nq * nq) && rd_finite(dtau_dqd, nq * nq) ? RD_OK : RD_BAD_OUTPUT;
}

/* dqdd/dq, dqdd/dqd and A^-1 of rd_aba at (q, qd, tau): qdd = A^-1 (tau - h(q, qd) - ...), so
 * dqdd/dx = -A^-1 dtau/dx evaluated at the motion's own qdd (the inverse dynamics identity,
 * as Carpentier & Mansard's ABA derivatives), A^-1 from the Cholesky factor of A (rd_crba). */
int rd_aba_derivatives(const rd_model *m, const double *q, const double *qd, const double *tau, const double *g,
                       const double *fx, int nfx, int friction, double smooth, double *dqdd_dq, double *dqdd_dqd,
                       double *Minv, rd_work *w)
{
    const int nq = m->nq;
    int st;
    if (tree_derivatives(m, nfx)) {
        /* qdd = A^-1 (tau - h - Gamma_f) from the same composites (the bias h_i = oS_i . oFc_i at
         * qdd = 0), then the accelerations and forces again at that qdd for the derivatives */
        tree_start(m, q, qd, NULL, g, w->L, w);
        double *acc = w->acc;
        for (int k = 0; k < nq; ++k)
            acc[k] = tau[k] - (friction ? rd_friction(m, k, qd[k], smooth) : 0.0);
        for (int i = 0; i < m->nb; ++i)
            acc[m->body[i].joint] -= m->body[i].mult * dot6(w->oS + 6 * i, w->oFc + 6 * i);
        if (cholesky(w->L, nq) != RD_OK) /* rd_aba words which joint moves no inertia */
            return (st = rd_aba(m, q, qd, tau, g, fx, nfx, friction, smooth, w->acc, w)) != RD_OK ? st : RD_NOT_POSITIVE_DEFINITE;
        cholesky_solve(w->L, nq, acc);
        if (!rd_finite(acc, nq))
            return RD_BAD_OUTPUT;
        tree_motion(m, qd, acc, g, 0, w);
        tree_composites(m, 0, w);
        tree_finish(m, qd, friction, smooth, dqdd_dq, dqdd_dqd, w);
    } else {
        if ((st = rd_aba(m, q, qd, tau, g, fx, nfx, friction, smooth, w->acc, w)) != RD_OK)
            return st;
        st = rd_rnea_derivatives(m, q, qd, w->acc, g, fx, nfx, friction, smooth, dqdd_dq, dqdd_dqd, w->L, w);
        if (st != RD_OK)
            return st;
        if (cholesky(w->L, nq) != RD_OK)
            return RD_NOT_POSITIVE_DEFINITE;
    }
    double *x = w->dtau;
    for (int k = 0; k < nq; ++k) {
        for (int j = 0; j < nq; ++j)
            x[j] = j == k;
        cholesky_solve(w->L, nq, x);
        for (int j = 0; j < nq; ++j)
            Minv[j * nq + k] = x[j];
        for (int pass = 0; pass < 2; ++pass) {
            double *D = pass ? dqdd_dqd : dqdd_dq;
            for (int j = 0; j < nq; ++j)
                x[j] = D[j * nq + k];
            cholesky_solve(w->L, nq, x);
            for (int j = 0; j < nq; ++j)
                D[j * nq + k] = -x[j];
        }
    }
    return rd_finite(dqdd_dq, nq * nq) && rd_finite(dqdd_dqd, nq * nq) && rd_finite(Minv, nq * nq) ? RD_OK : RD_BAD_OUTPUT;
}

/* -- energy and kinematics ----------------------------------------------------------------------------- */

/* out = [kinetic, potential] (Khalil [7.10], [7.19]): 1/2 v.Iv + 1/2 Ia qd^2 + the gears' spin
 * (Chen & Wang eq. 14); U = -sum m_i g . p_Gi (zero at the base origin). */
int rd_energy(const rd_model *m, const double *q, const double *qd, const double *g, double out[2], rd_work *w)
{
    static const double no_gravity[3] = {0.0, 0.0, 0.0};
    const int nb = m->nb, nq = m->nq;
    rd_forward(m, q, qd, NULL, no_gravity, w);
    world_poses(m, w);
    double kin = 0.0, pot = 0.0;
    for (int i = 0; i < nb; ++i) {
        const rd_inertia *I = &m->body[i].inertia;
        const double *v = w->v + 6 * i, *R = w->R + 9 * i, *p = w->p + 3 * i;
        double Iv[6];
        inertia_times(I, v, Iv);
        for (int x = 0; x < 6; ++x)
            kin += 0.5 * v[x] * Iv[x];
        /* the potential of the body: -g . (R h + m p), the world first moment of its mass */
        for (int x = 0; x < 3; ++x)
            pot -= g[x] * (R[3 * x] * I->h[0] + R[3 * x + 1] * I->h[1] + R[3 * x + 2] * I->h[2] + I->m * p[x]);
    }
    for (int k = 0; k < nq; ++k)
        kin += 0.5 * m->joint[k].Ia * qd[k] * qd[k];
    for (int s = 0; s < m->nr; ++s) {
        const rd_secondary *sl = &m->secondary[s];
        double bd = 0.0, proj = 0.0;
        for (int k = 0; k < nq; ++k)
            bd += sl->b[k] * qd[k];
        if (sl->carrier >= 0) {
            const double *v = w->v + 6 * sl->carrier;
            proj = sl->axis[0] * v[0] + sl->axis[1] * v[1] + sl->axis[2] * v[2];
        }
        kin += sl->inertia * (0.5 * bd * bd + bd * proj); /* K_s, eq. (14), less the virtual link */
    }
    out[0] = kin, out[1] = pot;
    return isfinite(kin) && isfinite(pot) ? RD_OK : RD_BAD_OUTPUT;
}

/* T (4x4, row-major) = T_base_frame of frame k from the body poses in w. */
void rd_frame_pose(const rd_model *m, const rd_work *w, int k, double T[16])
{
    const rd_frame *fr = &m->frame[k];
    for (int x = 0; x < 16; ++x)
        T[x] = 0.0;
    T[15] = 1.0;
    if (fr->body < 0) {
        for (int x = 0; x < 3; ++x) {
            for (int y = 0; y < 3; ++y)
                T[4 * x + y] = fr->R[3 * x + y];
            T[4 * x + 3] = fr->p[x];
        }
        return;
    }
    const double *R = w->R + 9 * fr->body, *p = w->p + 3 * fr->body;
    for (int x = 0; x < 3; ++x) {
        for (int y = 0; y < 3; ++y)
            T[4 * x + y] = R[3 * x] * fr->R[y] + R[3 * x + 1] * fr->R[3 + y] + R[3 * x + 2] * fr->R[6 + y];
        T[4 * x + 3] = p[x] + R[3 * x] * fr->p[0] + R[3 * x + 1] * fr->p[1] + R[3 * x + 2] * fr->p[2];
    }
}

/* J (6 x nq, row-major): the geometric Jacobian of frame k, rows [linear; angular] in base axes
 * (Khalil's J_n in frame 0), from the body poses in w. */
void rd_jacobian(const rd_model *m, const rd_work *w, int k, double *J)
{
    const int nq = m->nq;
    double T[16];
    for (int x = 0; x < 6 * nq; ++x)
        J[x] = 0.0;
    rd_frame_pose(m, w, k, T);
    for (int j = m->frame[k].body; j >= 0; j = m->body[j].parent) {
        const rd_body *b = &m->body[j];
        const double *R = w->R + 9 * j, *p = w->p + 3 * j, *e = b->axis;
        const int col = b->joint;
        const double mult = b->mult;
        const double zx = R[0] * e[0] + R[1] * e[1] + R[2] * e[2];
        const double zy = R[3] * e[0] + R[4] * e[1] + R[5] * e[2];
        const double zz = R[6] * e[0] + R[7] * e[1] + R[8] * e[2];
        if (b->type == RD_REVOLUTE) {
            const double dx = T[3] - p[0], dy = T[7] - p[1], dz = T[11] - p[2];
            J[0 * nq + col] += mult * (zy * dz - zz * dy);
            J[1 * nq + col] += mult * (zz * dx - zx * dz);
            J[2 * nq + col] += mult * (zx * dy - zy * dx);
            J[3 * nq + col] += mult * zx;
            J[4 * nq + col] += mult * zy;
            J[5 * nq + col] += mult * zz;
        } else {
            J[0 * nq + col] += mult * zx;
            J[1 * nq + col] += mult * zy;
            J[2 * nq + col] += mult * zz;
        }
    }
}

/* Twist [v; w] of frame k's origin and its acceleration at qdd = 0 without gravity (Jdot qd),
 * base axes. */
void rd_point_motion(const rd_model *m, const double *q, const double *qd, int k, double vel[6], double acc[6], rd_work *w)
{
    static const double no_gravity[3] = {0.0, 0.0, 0.0};
    for (int x = 0; x < m->nq; ++x)
        w->zero[x] = 0.0;
    rd_forward(m, q, qd, w->zero, no_gravity, w);
    world_poses(m, w);
    for (int x = 0; x < 6; ++x)
        vel[x] = 0.0, acc[x] = 0.0;
    const rd_frame *fr = &m->frame[k];
    const int b = fr->body;
    if (b < 0)
        return;
    const double px = fr->p[0], py = fr->p[1], pz = fr->p[2];
    const double *v = w->v + 6 * b, *a = w->a + 6 * b, *R = w->R + 9 * b;
    const double wx = v[0], wy = v[1], wz = v[2], lx = a[0], ly = a[1], lz = a[2];
    /* the velocity of the body-fixed point: v_o + w x p (spatial shift) */
    const double vpx = v[3] + wy * pz - wz * py;
    const double vpy = v[4] + wz * px - wx * pz;
    const double vpz = v[5] + wx * py - wy * px;
    /* its classical acceleration: a_o + alpha x p + w x v_p */
    const double apx = a[3] + ly * pz - lz * py + wy * vpz - wz * vpy;
    const double apy = a[4] + lz * px - lx * pz + wz * vpx - wx * vpz;
    const double apz = a[5] + lx * py - ly * px + wx * vpy - wy * vpx;
    for (int x = 0; x < 3; ++x) {
        const double r0 = R[3 * x], r1 = R[3 * x + 1], r2 = R[3 * x + 2];
        vel[x] = r0 * vpx + r1 * vpy + r2 * vpz;
        vel[3 + x] = r0 * wx + r1 * wy + r2 * wz;
        acc[x] = r0 * apx + r1 * apy + r2 * apz;
        acc[3 + x] = r0 * lx + r1 * ly + r2 * lz;
    }
}
