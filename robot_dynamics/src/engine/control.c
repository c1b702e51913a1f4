/* The control laws of robot_dynamics.control, one tick each, for the compiled closed loop
 * (simulate.c) and for controllers inside ros2_control's update: no allocation, no lock, a status.
 *
 * Each performs the operations of its Python controller in the same order, with no contraction
 * into fused multiply-adds, so that both give the same numbers: PDGravity._law (Khalil [9.12]),
 * ComputedTorque._law (Khalil 9.4.2: [9.24], [9.29], [9.31]) and ControllerBase._saturate. The
 * Python controllers call these (through robot_dynamics.engine.stages), so both ticks are one code.
 */
#pragma GCC optimize("fp-contract=off")

#include <string.h>

#include "engine.h"

int rd_gravity_compensation(const rd_model *m, const double *q, const double *v, int friction, double *tau, rd_work *w)
{
    const int n = m->nq;
    if (!rd_finite(q, n) || (friction && !rd_finite(v, n)))
        return RD_BAD_INPUT;
    /* Q(q): the inverse dynamics at rest, where friction vanishes (Khalil [9.12]'s Q) */
    const rd_input rest = {q, w->zero, w->zero, NULL, NULL, 0};
    int st = rd_rnea(m, &rest, NULL, tau, w);
    if (st != RD_OK)
        return st;
    if (friction) /* the friction feed-forward Gamma_f(v), Khalil [7.26] */
        for (int j = 0; j < n; ++j)
            tau[j] = tau[j] + rd_friction(m, j, v[j], 0.0);
    return rd_finite(tau, n) ? RD_OK : RD_BAD_OUTPUT;
}

int rd_pd_gravity(const rd_model *m, const rd_pd_gains *k, const double *q, const double *qd, const rd_reference *r,
                  double *tau, rd_work *w)
{
    const int n = m->nq;
    const double *kp = k->kp, *kd = k->kd, *qr = r->qr, *qdr = r->qdr;
    if (!rd_finite(q, n) || !rd_finite(qd, n) || !rd_finite(qr, n) || !rd_finite(qdr, n))
        return RD_BAD_INPUT;
    const rd_input rest = {q, w->zero, w->zero, NULL, NULL, 0};
    const rd_options with_friction = {NULL, 1, 0.0};
    int st = rd_rnea(m, &rest, &with_friction, tau, w); /* Q(q) */
    if (st != RD_OK)
        return st;
    for (int j = 0; j < n; ++j) /* Khalil [9.12], its -Kd qd written Kd (qd^d - qd) */
        tau[j] = kp[j] * (qr[j] - q[j]) + kd[j] * (qdr[j] - qd[j]) + tau[j];
    return rd_finite(tau, n) ? RD_OK : RD_BAD_OUTPUT;
}

int rd_computed_torque(const rd_model *m, const rd_computed_torque_options *o, const double *q, const double *qd,
                       const rd_reference *r, double *tau, rd_work *w)
{
    const int n = m->nq;
    const double *qr = r->qr, *qdr = r->qdr, *qddr = r->qddr;
    if (!rd_finite(qr, n) || !rd_finite(qdr, n) || !rd_finite(qddr, n) || !rd_finite(q, n) || !rd_finite(qd, n))
        return RD_BAD_INPUT;
    double *wv = w->law;
    for (int j = 0; j < n; ++j) {
        const double e = qr[j] - q[j];
        wv[j] = o->position ? o->kp[j] * e - o->kd[j] * qd[j]                      /* Khalil [9.29] */
                            : qddr[j] + o->kd[j] * (qdr[j] - qd[j]) + o->kp[j] * e; /* [9.24] */
    }
    const double *qs = o->predictive ? qr : q, *qds = o->predictive ? qdr : qd; /* [9.31] */
    /* Gamma = A^ w + H^ by Newton-Euler (Khalil 9.4.2.5), friction at the measured velocity ... */
    const rd_input model_state = {qs, qds, wv, NULL, NULL, 0};
    const rd_options friction = {NULL, !o->desired_friction, o->smooth};
    int st = rd_rnea(m, &model_state, &friction, tau, w);
    if (st != RD_OK)
        return st;
    if (o->desired_friction) /* ... or fed forward at the desired one */
        for (int j = 0; j < n; ++j)
            tau[j] = tau[j] + rd_friction(m, j, qdr[j], o->smooth);
    return rd_finite(tau, n) ? RD_OK : RD_BAD_OUTPUT;
}

void rd_map(int n, const double *M, const double *x, double *y)
{
    if (!M) {
        memcpy(y, x, sizeof(double) * n);
        return;
    }
    for (int i = 0; i < n; ++i) {
        double acc = 0.0;
        for (int j = 0; j < n; ++j)
            acc += M[i * n + j] * x[j];
        y[i] = acc;
    }
}

/* x clipped to [-limit, limit] as np.minimum(np.maximum(x, -limit), limit). */
static inline double clamp(double x, double limit)
{
    const double t = x > -limit ? x : -limit;
    return t < limit ? t : limit;
}

int64_t rd_saturate(int n, const double *limit, double *tau)
{
    int64_t clip = 0;
    for (int j = 0; j < n; ++j) {
        const double t = clamp(tau[j], limit[j]);
        if (t != tau[j])
            clip |= (int64_t)1 << (j < 62 ? j : 62);
        tau[j] = t;
    }
    return clip;
}

int rd_saturate_effort(int n, const double *limit, const double *A_inv, const double *actuator_limit, double *tau,
                       double *xi, double *flags)
{
    for (int j = 0; j < n; ++j) {
        const double t = clamp(tau[j], limit[j]);
        flags[j] = t != tau[j];
        tau[j] = t;
    }
    rd_map(n, A_inv, tau, xi); /* xi = A^-1 Gamma (Khalil [7.33]: Gamma = A xi) */
    int actuator = 0;
    for (int j = 0; actuator_limit && j < n; ++j) {
        const double x = clamp(xi[j], actuator_limit[j]);
        if (x != xi[j])
            flags[j] = 1.0, actuator = 1;
        xi[j] = x;
    }
    return actuator;
}
