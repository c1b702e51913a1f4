/* The generalized momentum observer of an arm (De Luca and Mattone 2005; Haddadin, De Luca and
 * Albu-Schaeffer 2017, "Robot Collisions: A Survey on Detection, Isolation, and Identification",
 * IEEE T-RO 33(6)): one update per tick, no allocation, no lock, a status.
 *
 * The residual r = K_O [p(t) - p(0) - integral of (tau - Gamma_f + C^T qd - Q + r) dt], p = A(q) qd,
 * follows the external joint torque through the first-order lag dr/dt = K_O (tau_ext - r) without
 * the accelerations. Its term C^T qd is the gradient of the kinetic energy in q at a fixed qd
 * (Christoffel symbols: (C^T qd)_i = qd^T (dA/dq_i) qd / 2, the identity dA/dt = C + C^T), which
 * rd_momentum computes with p by one forward and one backward recursion.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

/* y . (v x S): the component along (v x S) of a momentum y, S the joint axis of body b (S = [a; 0] or [0; a]),
 * v its velocity: the partial derivative of the kinetic energy in the joint's coordinate. */
static double cross_axis_dot(const rd_body *b, const double *v, const double *y)
{
    const double *a = b->axis;
    /* w x a and vl x a; v x [a; 0] = [w x a; vl x a], v x [0; a] = [0; w x a] */
    const double wa[3] = {v[1] * a[2] - v[2] * a[1], v[2] * a[0] - v[0] * a[2], v[0] * a[1] - v[1] * a[0]};
    if (b->type != RD_REVOLUTE)
        return wa[0] * y[3] + wa[1] * y[4] + wa[2] * y[5];
    const double la[3] = {v[4] * a[2] - v[5] * a[1], v[5] * a[0] - v[3] * a[2], v[3] * a[1] - v[4] * a[0]};
    return wa[0] * y[0] + wa[1] * y[1] + wa[2] * y[2] + la[0] * y[3] + la[1] * y[4] + la[2] * y[5];
}

/* p = A(q) qd (the rotor inertias and a geared robot's secondary links in A) and ctq = C^T(q, qd) qd,
 * the kinetic energy's gradient in q. Each body's momentum I_i v_i (w->f), its subtree's sum from the
 * leaves down (X_i^T), then p_k = sum mult S_i . h_i and ctq_k = sum mult (v_i x S_i) . h_i over the
 * bodies i that joint k drives (a joint's motion moves its subtree by S_i: d v_j / d q_k =
 * S_i x (v_j - v_parent(i)), dI_j/dq_k = S_i x* I_j - I_j S_i x, which sum to this). A secondary link's
 * spin momentum I_s (b . qd) e_s joins its carrier's, and b_s I_s (e_s . w_c + b . qd) its coordinate. */
int rd_momentum(const rd_model *m, const double *q, const double *qd, double *p, double *ctq, rd_work *w)
{
    const int nb = m->nb, nq = m->nq;
    if (!rd_finite(q, nq) || !rd_finite(qd, nq))
        return RD_BAD_INPUT;
    const rd_arrays ar = rd_arrays_of(w);
    forward(m, q, qd, NULL, m->gravity, &ar);
    for (int i = 0; i < nb; ++i)
        inertia_times(&m->body[i].inertia, w->v + 6 * i, w->f + 6 * i);
    for (int k = 0; k < nq; ++k)
        p[k] = m->joint[k].Ia * qd[k], ctq[k] = 0.0;
    for (int s = 0; s < m->nr; ++s) {
        const rd_secondary *sl = &m->secondary[s];
        double bd = 0.0, we = 0.0;
        for (int k = 0; k < nq; ++k)
            bd += sl->b[k] * qd[k];
        if (sl->carrier >= 0) {
            const double *v = w->v + 6 * sl->carrier;
            double *h = w->f + 6 * sl->carrier;
            for (int x = 0; x < 3; ++x)
                h[x] += sl->inertia * bd * sl->axis[x], we += sl->axis[x] * v[x];
        }
        for (int k = 0; k < nq; ++k)
            p[k] += sl->b[k] * sl->inertia * (we + bd);
    }
    for (int i = nb - 1; i >= 0; --i) {
        const rd_body *b = &m->body[i];
        const double *h = w->f + 6 * i;
        p[b->joint] += b->mult * s_dot(b, h);
        ctq[b->joint] += b->mult * cross_axis_dot(b, w->v + 6 * i, h);
        if (b->parent >= 0)
            xt_force(w->E + 9 * i, w->r + 3 * i, h, w->f + 6 * b->parent, 1);
    }
    return rd_finite(p, nq) && rd_finite(ctq, nq) ? RD_OK : RD_BAD_OUTPUT;
}

/* Q(q), the gravity torques (rd_rnea at rest), on the joint transforms the last forward recursion
 * left in ar (rd_momentum's): a_i = X_i a_p from a_0 = [0; -g] (no joint motion), f_i = I_i a_i,
 * then the backward recursion; the rotors and secondary links add nothing at rest. The same
 * operations as rd_rnea's with qd = qdd = 0, without a second pass of joint transforms. */
static void gravity_torques(const rd_model *m, const double *g, const rd_arrays *ar, double *Q)
{
    const int nb = m->nb;
    double *a0 = ar->a + 6 * nb;
    a0[0] = a0[1] = a0[2] = 0.0, a0[3] = -g[0], a0[4] = -g[1], a0[5] = -g[2];
    for (int i = 0; i < nb; ++i) {
        const rd_body *b = &m->body[i];
        double *a = ar->a + 6 * i;
        x_motion(ar->E + 9 * i, ar->r + 3 * i, ar->a + 6 * (b->parent < 0 ? nb : b->parent), a);
        inertia_times(&b->inertia, a, ar->f + 6 * i);
    }
    for (int k = 0; k < m->nq; ++k)
        Q[k] = 0.0;
    for (int i = nb - 1; i >= 0; --i) {
        const rd_body *b = &m->body[i];
        Q[b->joint] += b->mult * s_dot(b, ar->f + 6 * i);
        if (b->parent >= 0)
            xt_force(ar->E + 9 * i, ar->r + 3 * i, ar->f + 6 * i, ar->f + 6 * b->parent, 1);
    }
}

/* Checks the options: gains and thresholds finite and >= 0, the smoothing >= 0. */
static int observer_options_valid(const rd_observer_options *o, int nq)
{
    if (!o->gain || !o->threshold || !o->relative || !rd_finite(o->gain, nq) || !rd_finite(o->threshold, nq) ||
        !rd_finite(o->relative, nq) || !(o->smooth >= 0.0) || (o->gravity && !rd_finite(o->gravity, 3)))
        return 0;
    for (int j = 0; j < nq; ++j)
        if (!(o->gain[j] > 0.0) || o->threshold[j] < 0.0 || o->relative[j] < 0.0)
            return 0;
    return 1;
}

void rd_momentum_observer_reset(rd_observer *s, int nq)
{
    for (int j = 0; j < nq; ++j)
        s->r[j] = s->p[j] = s->z[j] = s->b[j] = s->tau[j] = s->model[j] = s->threshold[j] = s->q[j] = 0.0;
    s->t = 0.0, s->started = 0, s->collision = 0, s->joint = -1;
}

/* The threshold and the detection of the residual s->r: th_j = threshold_j + relative_j s->model_j,
 * collision when some |r_j| > th_j, the joint the last such one (a contact on link i leaves the
 * residuals of the joints after i at zero: the survey's isolation). */
static void observer_detect(const rd_observer_options *o, rd_observer *s, int nq)
{
    s->collision = 0, s->joint = -1;
    for (int j = 0; j < nq; ++j) {
        s->threshold[j] = o->threshold[j] + o->relative[j] * s->model[j];
        if (fabs(s->r[j]) > s->threshold[j])
            s->collision = 1, s->joint = j;
    }
}

int rd_momentum_observer_update(const rd_model *m, const rd_observer_options *o, rd_observer *s, double t,
                                const double *q, const double *qd, const double *tau, rd_work *w)
{
    const int nq = m->nq;
    if (!observer_options_valid(o, nq))
        return RD_BAD_SIZE;
    if (!isfinite(t) || !rd_finite(q, nq) || !rd_finite(qd, nq) || !rd_finite(tau, nq) || (s->started && !(t > s->t)))
        return RD_BAD_INPUT;
    /* p = A qd and C^T qd, then Q(q) on the same joint transforms */
    double *g = w->law, *p = w->dtau, *ctq = w->uf;
    const int st = rd_momentum(m, q, qd, p, ctq, w);
    if (st != RD_OK)
        return st;
    const rd_arrays ar = rd_arrays_of(w);
    gravity_torques(m, o->gravity ? o->gravity : m->gravity, &ar, g);
    if (!rd_finite(g, nq))
        return RD_BAD_OUTPUT;
    /* b = C^T qd - Q - (Gamma_f - Fv qd): the integrand's model part but the viscous friction, whose
     * integral is Fv (q_k - q_(k-1)) exactly (a light link's fast viscous decay defeats the trapezoid) */
    for (int j = 0; j < nq; ++j)
        ctq[j] = ctq[j] - g[j] - (o->friction ? rd_friction(m, j, qd[j], o->smooth) - m->joint[j].Fv * qd[j] : 0.0);
    if (!s->started) { /* r(0) = 0: the integral starts at p(0) */
        for (int j = 0; j < nq; ++j)
            s->r[j] = 0.0, s->p[j] = s->z[j] = p[j], s->b[j] = ctq[j], s->tau[j] = tau[j], s->model[j] = fabs(tau[j]),
            s->q[j] = q[j];
        observer_detect(o, s, nq);
        s->t = t, s->started = 1;
        return RD_OK;
    }
    const double dt = t - s->t;
    double *T = w->law; /* the torque over the period: held since the last update, or the trapezoid's mean */
    for (int j = 0; j < nq; ++j) {
        T[j] = o->hold ? s->tau[j] : 0.5 * (s->tau[j] + tau[j]);
        /* z_k = z_(k-1) + dt (T + (b_(k-1) + b_k) / 2 + (r_(k-1) + r_k) / 2) and r_k = K (p_k - z_k), solved for
         * r_k (the trapezoidal rule, stable for every K dt): r_k (1 + K dt / 2) = K (p_k - z'), z' without r_k */
        const double K = o->gain[j];
        const double viscous = o->friction ? m->joint[j].Fv * (q[j] - s->q[j]) : 0.0;
        const double zp = s->z[j] + dt * (T[j] + 0.5 * (s->b[j] + ctq[j]) + 0.5 * s->r[j]) - viscous;
        s->r[j] = K * (p[j] - zp) / (1.0 + 0.5 * K * dt);
        s->z[j] = zp + 0.5 * dt * s->r[j];
        s->p[j] = p[j], s->b[j] = ctq[j], s->tau[j] = tau[j], s->q[j] = q[j];
    }
    if (!rd_finite(s->r, nq))
        return RD_BAD_OUTPUT;
    /* the model torque's lag s: backward Euler of ds/dt = K (|T - r| - s), the residual's own lag */
    for (int j = 0; j < nq; ++j) {
        const double K = o->gain[j], alpha = K * dt / (1.0 + K * dt);
        const double explained = fabs(T[j] - s->r[j]);
        s->model[j] += alpha * (explained - s->model[j]);
    }
    observer_detect(o, s, nq);
    s->t = t;
    return RD_OK;
}
