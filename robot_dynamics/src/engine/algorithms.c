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

#include "internal.h"

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

#include "recursions_x4.h"

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

/* The forward recursion of one state into w (recursions.h's forward). */
void rd_forward(const rd_model *m, const double *q, const double *qd, const double *qdd, const double *g, rd_work *w)
{
    const rd_arrays ar = rd_arrays_of(w);
    forward(m, q, qd, qdd, g, &ar);
}

/* base_R_body and the body origins in the base frame from the joint transforms E, r. */
void rd_world_poses(const rd_model *m, rd_work *w)
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

/* E = R(a, q)^T E0 for an axis a = +-e_k (body b's coord k; sa: the sine signed by a): rows u = k + 1
 * and v = k + 2 (mod 3) of E0 turn, row k stays. 12 products where Rodrigues' formula takes 27. */
static inline void turn_rows(const double *E0, int k, double c, double sa, double *E)
{
    const int u = (k + 1) % 3, v = (k + 2) % 3;
    const double *Eu = E0 + 3 * u, *Ev = E0 + 3 * v;
#if RD_PAIRS /* the first two entries of each row in one register */
    const rd_x2 cc = rd_x2_set(c, c), ss = rd_x2_set(sa, sa), u01 = rd_x2_load(Eu), v01 = rd_x2_load(Ev);
    rd_x2_store(E + 3 * u, cc * u01 + ss * v01);
    rd_x2_store(E + 3 * v, cc * v01 - ss * u01);
    rd_x2_store(E + 3 * k, rd_x2_load(E0 + 3 * k));
#else
    for (int y = 0; y < 2; ++y) {
        E[3 * u + y] = c * Eu[y] + sa * Ev[y];
        E[3 * v + y] = c * Ev[y] - sa * Eu[y];
        E[3 * k + y] = E0[3 * k + y];
    }
#endif
    E[3 * u + 2] = c * Eu[2] + sa * Ev[2];
    E[3 * v + 2] = c * Ev[2] - sa * Eu[2];
    E[3 * k + 2] = E0[3 * k + 2];
}

/* Body b's joint transform at its angle or travel qb, sine s, cosine c: joint_placement, or with
 * `axes` and an axis +-e_k, turn_rows (each k inlined with its own constant rows). */
static inline void placement(const rd_body *b, double qb, double s, double c, int axes, double *E, double *r)
{
    if (axes && b->type == RD_REVOLUTE && b->coord >= 0) {
        const double sa = b->axis[b->coord] * s;
        if (b->coord == 0)
            turn_rows(b->E0, 0, c, sa, E);
        else if (b->coord == 1)
            turn_rows(b->E0, 1, c, sa, E);
        else
            turn_rows(b->E0, 2, c, sa, E);
        r[0] = b->r0[0], r[1] = b->r0[1], r[2] = b->r0[2];
    } else {
        joint_placement(b, &qb, &s, &c, E, r);
    }
}

/* Every body's joint transform into w->E, w->r; `axes` (rd_crba): turn_rows for the axes +-e_k
 * (the same rotation to rounding). With vector types the sines and cosines of four bodies' angles
 * at a time (the four-state instance's sin_cos, the one-state values lane by lane, the same bits):
 * the PUMA 560's body poses 142 -> 128 ns in C. */
static inline void joint_transforms(const rd_model *m, const double *q, rd_work *w, int axes)
{
#if RD_LANES == 4
    const int nb = m->nb;
    for (int i0 = 0; i0 < nb; i0 += 4) {
        rd_x4 qb, s, c;
        for (int l = 0; l < 4; ++l) {
            const rd_body *b = &m->body[i0 + l < nb ? i0 + l : i0];
            qb[l] = b->mult * q[b->joint] + b->offset; /* mimic joints: q_body = mult q[k] + offset */
        }
        sin_cos_x4(&qb, &s, &c);
        for (int l = 0; l < 4 && i0 + l < nb; ++l)
            placement(&m->body[i0 + l], qb[l], s[l], c[l], axes, w->E + 9 * (i0 + l), w->r + 3 * (i0 + l));
    }
#else
    for (int i = 0; i < m->nb; ++i) {
        const rd_body *b = &m->body[i];
        const double qb = b->mult * q[b->joint] + b->offset;
        double s = 0.0, c = 1.0;
        if (b->type == RD_REVOLUTE)
            sin_cos(&qb, &s, &c);
        placement(b, qb, s, c, axes, w->E + 9 * i, w->r + 3 * i);
    }
#endif
}

void rd_body_poses(const rd_model *m, const double *q, rd_work *w)
{
    joint_transforms(m, q, w, 0);
    rd_world_poses(m, w);
}

/* F[b] += the wrenches the links exert on the environment (Khalil's f_en [7.30]), in body axes. */
void rd_add_wrenches(const rd_work *w, const double *fx, int nfx, double *F)
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
int rd_rnea(const rd_model *m, const rd_input *in, const rd_options *o, double *tau, rd_work *w)
{
    const int nq = m->nq;
    const rd_options op = rd_options_of(m, o);
    const double *qd = in->qd, *qdd = in->qdd;
    const rd_arrays ar = rd_arrays_of(w);
    forward(m, in->q, qd, qdd, op.gravity, &ar);
    body_forces(m, &ar);
    if (in->nfx > 0) {
        rd_world_poses(m, w);
        rd_add_wrenches(w, in->fx, in->nfx, w->f);
    }
    joint_torques(m, qd, qdd, &ar, tau);
    if (op.friction) /* Khalil [7.26] */
        for (int k = 0; k < nq; ++k)
            tau[k] += rd_friction(m, k, qd[k], op.smooth);
    return rd_finite(tau, nq) ? RD_OK : RD_BAD_OUTPUT;
}

#if RD_LANES == 4
/* rd_rnea of four states at once (no external wrenches): the same operations lane by lane. */
RD_TARGET_CLONES void rd_rnea4(const rd_model *m, const rd_input *in, const rd_options *o, double *tau, int status[4],
                               rd_work *w)
{
    const int nb = m->nb, nq = m->nq;
    const rd_options op = rd_options_of(m, o);
    const double *qd = in->qd;
    rd_x4 *E = (rd_x4 *)w->x4, *r = E + 9 * nb, *v = r + 3 * nb, *a = v + 6 * (nb + 1), *c = a + 6 * (nb + 1);
    rd_x4 *f = c + 6 * nb, *t = f + 6 * nb;
    const rd_arrays_x4 ar = {E, r, v, a, c, f, NULL, NULL, NULL, NULL, NULL};
    forward_x4(m, in->q, qd, in->qdd, op.gravity, &ar);
    body_forces_x4(m, &ar);
    joint_torques_x4(m, qd, in->qdd, &ar, t);
    for (int l = 0; l < 4; ++l) {
        double *tl = tau + l * nq;
        for (int k = 0; k < nq; ++k) {
            tl[k] = t[k][l];
            if (op.friction)
                tl[k] += rd_friction(m, k, qd[l * nq + k], op.smooth);
        }
        status[l] = rd_finite(tl, nq) ? RD_OK : RD_BAD_OUTPUT;
    }
}
#endif

/* -- the joint-space inertia matrix ----------------------------------------------------------------- */

/* rd_crba's composite inertias hold ten numbers each (w->Ic): the mass m, the first moment h = m c
 * and the rotational inertia about the body origin by its six distinct entries xx, xy, yy, xz, yz, zz. */
enum { RD_CI = 10 };

static inline void composite_init(const rd_inertia *I, double *Y)
{
    const double *Io = I->Io;
    Y[0] = I->m, Y[1] = I->h[0], Y[2] = I->h[1], Y[3] = I->h[2];
    Y[4] = Io[0], Y[5] = Io[1], Y[6] = Io[4], Y[7] = Io[2], Y[8] = Io[5], Y[9] = Io[8];
}

/* Yp += X^T Y X (Featherstone 6.7) for the joint transform (E, r): R = E^T rotates the body's axes
 * into the parent's, r is the body origin in the parent's coordinates.
 *   h_p = R h + m r,   Io_p = R Io R^T + 2 (y . r) 1 - r y^T - y r^T,   y = R h + m r / 2.
 * R Io R^T by Pinocchio's Symmetric3::rotate: Io = zz 1 + sym(L [1 0 0; 0 1 0]) with the 3x2 L of
 * Io - zz 1 (its last row doubled), so R Io R^T = zz 1 + sym(R L (R's first two columns)^T), whose
 * trace is Io's: 34 products where R (Io R^T) takes 45. */
static inline void composite_to_parent(const double *E, const double *r, const double *Y, double *Yp)
{
#define R_(x, y) E[3 * (y) + (x)]
    const double m = Y[0], *h = Y + 1, *S = Y + 4;
    const double l00 = S[0] - S[5], l10 = S[1], l11 = S[2] - S[5], l20 = 2.0 * S[3], l21 = 2.0 * S[4];
    /* Z = (rows 1 and 2 of R) L */
    const double z00 = R_(1, 0) * l00 + R_(1, 1) * l10 + R_(1, 2) * l20;
    const double z01 = R_(1, 0) * l10 + R_(1, 1) * l11 + R_(1, 2) * l21;
    const double z10 = R_(2, 0) * l00 + R_(2, 1) * l10 + R_(2, 2) * l20;
    const double z11 = R_(2, 0) * l10 + R_(2, 1) * l11 + R_(2, 2) * l21;
    /* the antisymmetric part's vector: R times (-yz, xz, *) */
    const double v0 = -R_(0, 0) * S[4] + R_(0, 1) * S[3];
    const double v1 = -R_(1, 0) * S[4] + R_(1, 1) * S[3];
    const double v2 = -R_(2, 0) * S[4] + R_(2, 1) * S[3];
    const double q1 = z00 * R_(0, 0) + z01 * R_(0, 1) + v2;
    const double q2 = z00 * R_(1, 0) + z01 * R_(1, 1);
    const double q3 = z10 * R_(0, 0) + z11 * R_(0, 1) - v1;
    const double q4 = z10 * R_(1, 0) + z11 * R_(1, 1) + v0;
    const double q5 = z10 * R_(2, 0) + z11 * R_(2, 1);
    const double q0 = l00 + l11 - q2 - q5 + S[5];
    /* the translation by r (every value formed before Yp is written: Yp may be read through E, r, Y) */
    const double r0 = r[0], r1 = r[1], r2 = r[2], h0 = h[0], h1 = h[1], h2 = h[2], zz = S[5];
    const double Rh0 = R_(0, 0) * h0 + R_(0, 1) * h1 + R_(0, 2) * h2;
    const double Rh1 = R_(1, 0) * h0 + R_(1, 1) * h1 + R_(1, 2) * h2;
    const double Rh2 = R_(2, 0) * h0 + R_(2, 1) * h1 + R_(2, 2) * h2;
    const double hm = 0.5 * m, y0 = Rh0 + hm * r0, y1 = Rh1 + hm * r1, y2 = Rh2 + hm * r2;
    const double yr = y0 * r0 + y1 * r1 + y2 * r2;
    const double p0 = Rh0 + m * r0, p1 = Rh1 + m * r1, p2 = Rh2 + m * r2;
    const double s0 = q0 + 2.0 * (yr - r0 * y0), s1 = q1 - (r0 * y1 + y0 * r1), s2 = q2 + zz + 2.0 * (yr - r1 * y1);
    const double s3 = q3 - (r0 * y2 + y0 * r2), s4 = q4 - (r1 * y2 + y1 * r2), s5 = q5 + zz + 2.0 * (yr - r2 * y2);
    Yp[0] += m, Yp[1] += p0, Yp[2] += p1, Yp[3] += p2;
    Yp[4] += s0, Yp[5] += s1, Yp[6] += s2, Yp[7] += s3, Yp[8] += s4, Yp[9] += s5;
#undef R_
}

/* F = Ic [sg e_k; 0] = sg [column k of Io; e_k x h] (a revolute axis +-e_k), k inlined constant. */
static inline void axis_column(int k, double sg, const double *Y, double *F, int stride)
{
    static const int io[3][3] = {{0, 1, 3}, {1, 2, 4}, {3, 4, 5}}; /* Io's entries (xx xy yy xz yz zz) */
    const int u = (k + 1) % 3, v = (k + 2) % 3;
    for (int x = 0; x < 3; ++x)
        F[x * stride] = sg * Y[4 + io[x][k]];
    F[(3 + k) * stride] = 0.0, F[(3 + u) * stride] = -sg * Y[1 + v], F[(3 + v) * stride] = sg * Y[1 + u];
}

/* F = Ic S: the force that accelerates body b's subtree at unit joint rate, into F[0], F[stride],
 * ... F[5 stride]. */
static inline void composite_column(const rd_body *b, const double *Y, double *F, int stride)
{
    if (b->type == RD_REVOLUTE && b->coord >= 0) {
        const double sg = b->axis[b->coord];
        if (b->coord == 0)
            axis_column(0, sg, Y, F, stride);
        else if (b->coord == 1)
            axis_column(1, sg, Y, F, stride);
        else
            axis_column(2, sg, Y, F, stride);
        return;
    }
    const double ex = b->axis[0], ey = b->axis[1], ez = b->axis[2];
    const double hx = Y[1], hy = Y[2], hz = Y[3], *S = Y + 4;
    if (b->type == RD_REVOLUTE) {
        /* I [e; 0] = [Io e; e x h] */
        F[0] = S[0] * ex + S[1] * ey + S[3] * ez;
        F[stride] = S[1] * ex + S[2] * ey + S[4] * ez;
        F[2 * stride] = S[3] * ex + S[4] * ey + S[5] * ez;
        F[3 * stride] = ey * hz - ez * hy, F[4 * stride] = ez * hx - ex * hz, F[5 * stride] = ex * hy - ey * hx;
    } else {
        /* I [0; e] = [h x e; m e] */
        F[0] = hy * ez - hz * ey, F[stride] = hz * ex - hx * ez, F[2 * stride] = hx * ey - hy * ex;
        F[3 * stride] = Y[0] * ex, F[4 * stride] = Y[0] * ey, F[5 * stride] = Y[0] * ez;
    }
}

/* The force columns k0..k1 of F (row-major, 6 x stride) moved from body to parent coordinates,
 * F_k = X^T F_k (xt_force). With vector types two columns at a time, from k1 down: an odd count
 * moves column k0 - 1 too, which is not yet computed (rd_crba reaches the bodies from the leaves, and
 * every column below k0 is an ancestor's or an earlier branch's) and is written later. */
static inline void columns_to_parent(const double *E, const double *r, double *F, int stride, int k0, int k1)
{
#if RD_PAIRS
    /* E and r in both lanes, held apart from F (which the compiler could not tell from E) */
    const rd_x2 e0 = rd_x2_set(E[0], E[0]), e1 = rd_x2_set(E[1], E[1]), e2 = rd_x2_set(E[2], E[2]);
    const rd_x2 e3 = rd_x2_set(E[3], E[3]), e4 = rd_x2_set(E[4], E[4]), e5 = rd_x2_set(E[5], E[5]);
    const rd_x2 e6 = rd_x2_set(E[6], E[6]), e7 = rd_x2_set(E[7], E[7]), e8 = rd_x2_set(E[8], E[8]);
    const rd_x2 rx = rd_x2_set(r[0], r[0]), ry = rd_x2_set(r[1], r[1]), rz = rd_x2_set(r[2], r[2]);
    for (int k = k1 - 1; k >= k0 - 1; k -= 2) {
        double *c = F + k;
        const rd_x2 n0 = rd_x2_load(c), n1 = rd_x2_load(c + stride), n2 = rd_x2_load(c + 2 * stride);
        const rd_x2 f0 = rd_x2_load(c + 3 * stride), f1 = rd_x2_load(c + 4 * stride), f2 = rd_x2_load(c + 5 * stride);
        const rd_x2 fx = e0 * f0 + e3 * f1 + e6 * f2;
        const rd_x2 fy = e1 * f0 + e4 * f1 + e7 * f2;
        const rd_x2 fz = e2 * f0 + e5 * f1 + e8 * f2;
        rd_x2_store(c, e0 * n0 + e3 * n1 + e6 * n2 + (ry * fz - rz * fy));
        rd_x2_store(c + stride, e1 * n0 + e4 * n1 + e7 * n2 + (rz * fx - rx * fz));
        rd_x2_store(c + 2 * stride, e2 * n0 + e5 * n1 + e8 * n2 + (rx * fy - ry * fx));
        rd_x2_store(c + 3 * stride, fx), rd_x2_store(c + 4 * stride, fy), rd_x2_store(c + 5 * stride, fz);
    }
#else
    for (int k = k0; k <= k1; ++k) {
        double x[6];
        for (int j = 0; j < 6; ++j)
            x[j] = F[j * stride + k];
        xt_force(E, r, x, x, 0);
        for (int j = 0; j < 6; ++j)
            F[j * stride + k] = x[j];
    }
#endif
}

/* H's lower triangle += S_i . F_k for the bodies i, k (k in i's subtree, F_k in i's coordinates),
 * mapped to their joints (mimic joints: H_jk += mult_i mult_k S_i . F_k, both orders). */
static inline void add_pair(const rd_model *m, const rd_body *bi, int i, int k, double val, double *H)
{
    const rd_body *bk = &m->body[k];
    const int ji = bi->joint, jk = bk->joint, nq = m->nq;
    val *= bi->mult * bk->mult;
    if (ji == jk)
        H[ji * nq + ji] += k == i ? val : 2.0 * val;
    else
        H[ji > jk ? ji * nq + jk : jk * nq + ji] += val;
}

/* The composite inertias and H's lower triangle, in one pass from the leaves, as Pinocchio's crba:
 * body i's subtree is the bodies i..last (depth-first order), whose force columns F_k (w->Fcol,
 * row-major 6 x nb) are all in body i's coordinates when it is reached; H_ik = S_i . F_k, then the
 * columns move to the parent's coordinates together (Featherstone 6.2, Table 6.2). */
static double crba_blocks(const rd_model *m, int plain, double *H, rd_work *w)
{
    const int nb = m->nb, nq = m->nq;
    double *F = w->Fcol, *t = w->Fcol + 6 * nb, sum = 0.0;
    for (int i = nb - 1; i >= 0; --i) {
        const rd_body *b = &m->body[i];
        const double *Y = w->Ic + RD_CI * i;
        const int last = b->last;
        composite_column(b, Y, F + i, nb);
        /* t_k = S_i . F_k: H_ik and H_ki (plain: row and column i, zero beyond the subtree), or added
         * to the joints' entries */
        const double *Fs = F + (b->type == RD_REVOLUTE ? 0 : 3 * nb);
        double *Hi = H + i * nq;
        if (b->coord >= 0) {
            const double sg = b->axis[b->coord], *row = Fs + b->coord * nb;
            for (int k = i; k <= last; ++k)
                t[k] = sg * row[k];
        } else {
            const double ex = b->axis[0], ey = b->axis[1], ez = b->axis[2];
            for (int k = i; k <= last; ++k)
                t[k] = ex * Fs[k] + ey * Fs[nb + k] + ez * Fs[2 * nb + k];
        }
        if (plain) {
            for (int k = i; k <= last; ++k)
                sum += Hi[k] = H[k * nq + i] = t[k];
            for (int k = last + 1; k < nq; ++k)
                Hi[k] = H[k * nq + i] = 0.0;
        } else {
            for (int k = i; k <= last; ++k)
                add_pair(m, b, i, k, t[k], H);
        }
        if (b->parent >= 0) {
            composite_to_parent(w->E + 9 * i, w->r + 3 * i, Y, w->Ic + RD_CI * b->parent);
            columns_to_parent(w->E + 9 * i, w->r + 3 * i, F, nb, i, last);
        }
    }
    return sum;
}

/* The same for bodies in any order: the composite inertias first, then each body's column walked
 * to the base. */
static void crba_walks(const rd_model *m, double *H, rd_work *w)
{
    const int nb = m->nb;
    for (int i = nb - 1; i >= 0; --i)
        if (m->body[i].parent >= 0)
            composite_to_parent(w->E + 9 * i, w->r + 3 * i, w->Ic + RD_CI * i, w->Ic + RD_CI * m->body[i].parent);
    for (int i = 0; i < nb; ++i) {
        const rd_body *bi = &m->body[i];
        double F[6];
        composite_column(bi, w->Ic + RD_CI * i, F, 1);
        add_pair(m, bi, i, i, s_dot(bi, F), H);
        for (int j = i; m->body[j].parent >= 0;) {
            xt_force(w->E + 9 * j, w->r + 3 * j, F, F, 0);
            j = m->body[j].parent;
            add_pair(m, &m->body[j], j, i, s_dot(&m->body[j], F), H);
        }
    }
}

/* A(q): composite rigid bodies (Featherstone 6.2, Khalil [7.64]). Rotor inertias on the diagonal
 * (Khalil [7.29]); a geared robot's secondary links add M_s = B^T diag(I) B + U B + (U B)^T
 * (Chen & Wang eq. 18), U from their spin momenta. H: nq x nq, row-major. */
int rd_crba(const rd_model *m, const double *q, double *H, rd_work *w)
{
    const int nb = m->nb, nq = m->nq;
    joint_transforms(m, q, w, 1);
    for (int i = 0; i < nb; ++i)
        composite_init(&m->body[i].inertia, w->Ic + RD_CI * i);
    int plain = nb == nq; /* body i moved by joint i alone: H_ki directly */
    for (int i = 0; i < nb; ++i)
        plain &= m->body[i].joint == i && m->body[i].mult == 1.0;
    const int blocks = nb > 0 && m->body[0].last >= 0;
    if (!(plain && blocks))
        for (int x = 0; x < nq; ++x)
            for (int y = 0; y <= x; ++y)
                H[x * nq + y] = 0.0;
    /* sum: finite when every entry is (else the exact check below); plain blocks: of the entries */
    double sum = 0.0;
    if (blocks)
        sum = crba_blocks(m, plain, H, w);
    else
        crba_walks(m, H, w);
    if (plain && blocks) {
        for (int x = 0; x < nq; ++x)
            H[x * nq + x] += m->joint[x].Ia;
    } else {
        for (int x = 0; x < nq; ++x) {
            H[x * nq + x] += m->joint[x].Ia;
            for (int y = 0; y <= x; ++y)
                sum += H[y * nq + x] = H[x * nq + y];
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
    return (isfinite(sum) && m->nr == 0) || rd_finite(H, nq * nq) ? RD_OK : RD_BAD_OUTPUT;
}

/* -- direct dynamics --------------------------------------------------------------------------------- */

/* The articulated body algorithm (Featherstone 7.3, Khalil 7.6.2), for a tree without mimic
 * joints or coupled gear trains (recursions.h); o with its gravity (rd_options_of). */
static int aba_tree(const rd_model *m, const rd_input *in, const rd_options *o, double *qdd, rd_work *w)
{
    const rd_arrays ar = rd_arrays_of(w);
    /* Forward recursion: velocities and velocity-product accelerations c_i = v_i x S_i qd_i */
    forward(m, in->q, in->qd, NULL, o->gravity, &ar);
    articulated_init(m, &ar);
    if (in->nfx > 0) {
        rd_world_poses(m, w);
        rd_add_wrenches(w, in->fx, in->nfx, w->pA);
    }
    const int singular = articulated_solve(m, in->qd, in->tau, o, &ar, qdd);
    if (singular >= 0)
        return RD_SINGULAR + singular;
    return rd_finite(qdd, m->nq) ? RD_OK : RD_BAD_OUTPUT;
}

/* Cholesky factor H = L L^T in place (the lower triangle; the upper one is left as it was). */
int rd_cholesky(double *H, int nq)
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

/* x <- (L L^T)^-1 x with the factor of rd_cholesky(): two triangular solves. */
void rd_cholesky_solve(const double *L, int nq, double *x)
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
static int aba_joint_space(const rd_model *m, const rd_input *in, const rd_options *o, double *qdd, rd_work *w)
{
    const int nq = m->nq;
    const double *qd = in->qd, *tau = in->tau;
    double *H = w->H, *h = w->h;
    for (int k = 0; k < nq; ++k)
        w->zero[k] = 0.0;
    const rd_input bias = {in->q, qd, w->zero, NULL, in->fx, in->nfx};
    const rd_options no_friction = {o->gravity, 0, o->smooth};
    int st = rd_rnea(m, &bias, &no_friction, h, w);
    if (st != RD_OK)
        return st;
    st = rd_crba(m, in->q, H, w);
    if (st != RD_OK)
        return st;
    for (int k = 0; k < nq; ++k) {
        qdd[k] = tau[k] - h[k];
        if (o->friction)
            qdd[k] -= rd_friction(m, k, qd[k], o->smooth);
    }
    if (rd_cholesky(H, nq) != RD_OK)
        return RD_NOT_POSITIVE_DEFINITE;
    rd_cholesky_solve(H, nq, qdd);
    return rd_finite(qdd, nq) ? RD_OK : RD_BAD_OUTPUT;
}

int rd_aba(const rd_model *m, const rd_input *in, const rd_options *o, double *qdd, rd_work *w)
{
    const rd_options op = rd_options_of(m, o);
    if (m->tree)
        return aba_tree(m, in, &op, qdd, w);
    return aba_joint_space(m, in, &op, qdd, w);
}

#if RD_LANES == 4
/* rd_aba of four states of a tree at once (no external wrenches), lane by lane; where a lane's
 * articulated inertia is singular, the four states again one at a time (the statuses are theirs). */
RD_TARGET_CLONES void rd_aba4(const rd_model *m, const rd_input *in, const rd_options *o, double *qdd, int status[4],
                              rd_work *w)
{
    const int nb = m->nb, nq = m->nq;
    const rd_options op = rd_options_of(m, o);
    rd_x4 *E = (rd_x4 *)w->x4, *r = E + 9 * nb, *v = r + 3 * nb, *a = v + 6 * (nb + 1), *c = a + 6 * (nb + 1);
    rd_x4 *IA = c + 6 * nb, *pA = IA + 36 * nb, *U = pA + 6 * nb, *D = U + 6 * nb, *u = D + nb;
    const rd_arrays_x4 ar = {E, r, v, a, c, NULL, IA, pA, U, D, u};
    forward_x4(m, in->q, in->qd, NULL, op.gravity, &ar);
    articulated_init_x4(m, &ar);
    const int singular = articulated_solve_x4(m, in->qd, in->tau, &op, &ar, qdd);
    for (int l = 0; l < 4; ++l) {
        const rd_input one = {in->q + l * nq, in->qd + l * nq, NULL, in->tau + l * nq, NULL, 0};
        status[l] = singular >= 0 ? rd_aba(m, &one, &op, qdd + l * nq, w)
                                  : (rd_finite(qdd + l * nq, nq) ? RD_OK : RD_BAD_OUTPUT);
    }
}
#endif

/* -- energy and kinematics ----------------------------------------------------------------------------- */

/* out = [kinetic, potential] (Khalil [7.10], [7.19]): 1/2 v.Iv + 1/2 Ia qd^2 + the gears' spin
 * (Chen & Wang eq. 14); U = -sum m_i g . p_Gi (zero at the base origin). */
int rd_energy(const rd_model *m, const double *q, const double *qd, const double *g, double out[2], rd_work *w)
{
    static const double no_gravity[3] = {0.0, 0.0, 0.0};
    const int nb = m->nb, nq = m->nq;
    rd_forward(m, q, qd, NULL, no_gravity, w);
    rd_world_poses(m, w);
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
    rd_world_poses(m, w);
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
