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
static RD_HOT void turn_rows(const double *E0, int k, double c, double sa, double *E)
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
static RD_HOT void placement(const rd_body *b, double qb, double s, double c, int axes, double *E, double *r)
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
 * the PUMA 560's body poses 142 -> 128 ns in C. Returns 1 when every body is moved by its own
 * joint alone (nb = nq, body i by joint i with mult 1), else 0. */
static RD_HOT int joint_transforms(const rd_model *m, const double *q, rd_work *w, int axes)
{
    int plain = m->nb == m->nq; /* returned: every body moved by its own joint (joint i, mult 1) */
#if RD_LANES == 4
    const int nb = m->nb;
    for (int i0 = 0; i0 < nb; i0 += 4) {
        rd_x4 qb, s, c;
        for (int l = 0; l < 4; ++l) { /* lanes past the last body repeat it */
            const int i = i0 + l < nb ? i0 + l : nb - 1;
            const rd_body *b = &m->body[i];
            qb[l] = b->mult * q[b->joint] + b->offset; /* mimic joints: q_body = mult q[k] + offset */
            plain &= (b->joint == i) & (b->mult == 1.0);
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
        plain &= b->joint == i && b->mult == 1.0;
        placement(b, qb, s, c, axes, w->E + 9 * i, w->r + 3 * i);
    }
#endif
    return plain;
}

#if RD_LANES == 4
/* joint_angles of the bodies i0..i0 + 3 (lanes past the last body repeat it); 1 when each is moved
 * by its own joint alone. */
static RD_HOT int angles4(const rd_model *m, const double *q, int i0, double *qb, double *s, double *c)
{
    const int nb = m->nb;
    int own = 1;
    rd_x4 x, sx, cx;
    for (int l = 0; l < 4; ++l) {
        const int i = i0 + l < nb ? i0 + l : nb - 1;
        const rd_body *b = &m->body[i];
        x[l] = b->mult * q[b->joint] + b->offset;
        own &= (b->joint == i) & (b->mult == 1.0);
    }
    sin_cos_x4(&x, &sx, &cx);
    memcpy(qb + i0, &x, sizeof x), memcpy(s + i0, &sx, sizeof sx), memcpy(c + i0, &cx, sizeof cx);
    return own;
}
#endif

/* Every body's angle or travel qb, its sine and cosine (revolute; anything for prismatic) into
 * qb, s, c (nb values each, room for three more): joint_transforms' first half, for rd_crba, which
 * forms the transforms where it uses them. Returns joint_transforms' `plain`. With vector types up
 * to eight bodies without a loop (a loop's constants would be held on the stack). */
static RD_HOT int joint_angles(const rd_model *m, const double *q, double *qb, double *s, double *c)
{
    const int nb = m->nb;
    int plain = nb == m->nq;
#if RD_LANES == 4
    if (nb <= 8) {
        plain &= angles4(m, q, 0, qb, s, c);
        if (nb > 4)
            plain &= angles4(m, q, 4, qb, s, c);
    } else {
        for (int i0 = 0; i0 < nb; i0 += 4)
            plain &= angles4(m, q, i0, qb, s, c);
    }
#else
    for (int i = 0; i < nb; ++i) {
        const rd_body *b = &m->body[i];
        qb[i] = b->mult * q[b->joint] + b->offset, s[i] = 0.0, c[i] = 1.0;
        if (b->type == RD_REVOLUTE)
            sin_cos(qb + i, s + i, c + i);
        plain &= b->joint == i && b->mult == 1.0;
    }
#endif
    return plain;
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

#include "crba.h"

/* A(q): composite rigid bodies (Featherstone 6.2, Khalil [7.64]). Rotor inertias on the diagonal
 * (Khalil [7.29]); a geared robot's secondary links add M_s = B^T diag(I) B + U B + (U B)^T
 * (Chen & Wang eq. 18), U from their spin momenta. H: nq x nq, row-major. */
RD_TARGET_CLONES int rd_crba(const rd_model *m, const double *q, double *H, rd_work *w)
{
    const int nb = m->nb, nq = m->nq;
    const int blocks = nb > 0 && m->body[0].last >= 0;
    /* the blocks: the angles, each transform formed where it is used; else (and for the secondary
     * links) every transform in w->E, w->r */
    const int stride = rd_crba_stride(nb);
    double *qb = w->Fcol + 6 * stride + 4, *s = qb + stride, *c = s + stride;
    const int plain = blocks ? joint_angles(m, q, qb, s, c) : 0; /* body i moved by joint i alone: H_ki directly */
    if (!blocks || m->nr > 0)
        joint_transforms(m, q, w, 1);
    /* sum: finite when every entry is (else the exact check below); plain blocks: of the entries */
    double sum = 0.0;
    if (!plain)
        for (int x = 0; x < nq; ++x)
            for (int y = 0; y <= x; ++y)
                H[x * nq + y] = 0.0;
    if (plain && stride == 16) /* the usual case, its stride a constant: the rows at fixed offsets */
        sum = crba_blocks(m, 1, 16, H, w);
    else if (blocks)
        sum = crba_blocks(m, plain, stride, H, w);
    else
        crba_walks(m, H, w);
    if (!plain)
        for (int x = 0; x < nq; ++x) {
            H[x * nq + x] += m->joint[x].Ia;
            for (int y = 0; y <= x; ++y)
                sum += H[y * nq + x] = H[x * nq + y];
        }
    if (m->nr > 0)
        add_secondaries(m, H, w);
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
