/* A compiled closed loop: K ticks of joint-space computed torque (Khalil 9.4.2) on a rigid plant
 * integrated by classical RK4 under a zero-order hold, written into the caller's log.
 *
 * It performs the operations of the Python tick (robot_dynamics.simulation.Simulation._tick with
 * control.ComputedTorque and control.base.ControllerBase._saturate) in the same order, with no
 * contraction into fused multiply-adds, so that both give the same numbers. Anything the Python
 * tick would turn into a FAULT, a message or a diverged run (a non-finite reference or torque, a
 * failing dynamics call, a state beyond RD_DIVERGED) stops the loop before that tick: the caller
 * takes it in Python, which words it.
 */
#pragma GCC optimize("fp-contract=off")

#include <math.h>
#include <string.h>

#include "engine.h"

/* The plant's state equation at x = (q, qd) under the held joint torque u: qdd (Khalil [7.26]
 * friction, its sign smoothed to tanh(qd / v_s) when smooth > 0, as Plant.accel). */
static int plant_accel(const rd_sim *s, const double *q, const double *qd, const double *u, double *qdd, rd_work *w)
{
    const int n = s->n;
    if (!rd_finite(q, n) || !rd_finite(qd, n) || !rd_finite(u, n))
        return RD_BAD_INPUT;
    if (s->plant_friction && s->smooth > 0.0) {
        double uf[RD_SIM_MAX_JOINTS]; /* u - Gamma_f(qd), then aba without friction */
        for (int k = 0; k < n; ++k)
            uf[k] = u[k] - rd_friction(s->plant, k, qd[k], s->smooth);
        return rd_aba(s->plant, q, qd, uf, s->g_plant, NULL, 0, 0, 0.0, qdd, w);
    }
    return rd_aba(s->plant, q, qd, u, s->g_plant, NULL, 0, s->plant_friction, 0.0, qdd, w);
}

/* y = M x for an n x n row-major M (the structure matrix maps, x @ M.T), or y = x without one. */
static void map(const double *M, const double *x, double *y, int n)
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

/* The controller's tick k: measured state, the law [9.24] or [9.29] by Newton-Euler (9.4.2.5),
 * saturation at the joints then at the actuators. Writes EFF[k], STATUS[k], CLIP[k]. */
static int control(const rd_sim *s, const rd_sim_log *L, int k, const double *q, const double *qd, double *xi, rd_work *w)
{
    const int n = s->n;
    const double *qr = L->qr + k * n, *qdr = L->qdr + k * n, *qddr = L->qddr + k * n;
    double qm[RD_SIM_MAX_JOINTS], qdm[RD_SIM_MAX_JOINTS], e[RD_SIM_MAX_JOINTS], wv[RD_SIM_MAX_JOINTS];
    double tau[RD_SIM_MAX_JOINTS], ts[RD_SIM_MAX_JOINTS];
    if (!rd_finite(qr, n) || !rd_finite(qdr, n) || !rd_finite(qddr, n))
        return RD_BAD_INPUT; /* a bad reference: the controller's FAULT, in Python */
    for (int j = 0; j < n; ++j) {
        qm[j] = L->zq ? q[j] + L->zq[k * n + j] * s->pos_std[j] : q[j];
        qdm[j] = L->zqd ? qd[j] + L->zqd[k * n + j] * s->vel_std[j] : qd[j];
    }
    if (!rd_finite(qm, n) || !rd_finite(qdm, n))
        return RD_BAD_INPUT;
    for (int j = 0; j < n; ++j) {
        e[j] = qr[j] - qm[j];
        wv[j] = s->position ? s->kp[j] * e[j] - s->kd[j] * qdm[j]             /* Khalil [9.29] */
                            : qddr[j] + s->kd[j] * (qdr[j] - qdm[j]) + s->kp[j] * e[j]; /* [9.24] */
    }
    const double *qs = s->predictive ? qr : qm, *qds = s->predictive ? qdr : qdm; /* [9.31] */
    int st = rd_rnea(s->ctrl, qs, qds, wv, s->ctrl->gravity, NULL, 0, !s->desired_friction, 0.0, tau, w);
    if (st != RD_OK)
        return st;
    if (s->desired_friction) /* friction feed-forward at the desired velocity */
        for (int j = 0; j < n; ++j)
            tau[j] = tau[j] + rd_friction(s->ctrl, j, qdr[j], 0.0);
    if (!rd_finite(tau, n))
        return RD_BAD_OUTPUT;
    int64_t clip = 0;
    for (int j = 0; j < n; ++j) {
        const double lo = -s->limit[j], hi = s->limit[j];
        ts[j] = tau[j] > lo ? tau[j] : lo; /* np.maximum, then np.minimum */
        ts[j] = ts[j] < hi ? ts[j] : hi;
        if (ts[j] != tau[j])
            clip |= (int64_t)1 << j;
    }
    map(s->ctrl_A_inv, ts, xi, n);
    if (s->actuator_limit) {
        int64_t clip_a = 0;
        double xs[RD_SIM_MAX_JOINTS];
        for (int j = 0; j < n; ++j) {
            const double a = s->actuator_limit[j];
            xs[j] = xi[j] < -a ? -a : (xi[j] > a ? a : xi[j]);
            if (xs[j] != xi[j])
                clip_a |= (int64_t)1 << j;
        }
        if (clip_a) {
            memcpy(xi, xs, sizeof(double) * n);
            clip |= clip_a;
        }
    }
    memcpy(L->effort + k * n, xi, sizeof(double) * n);
    L->status[k] = clip ? 1 : 0; /* Status.SATURATED */
    L->clip[k] = clip;
    return RD_OK;
}

/* One classical RK4 step of the rigid plant over h under u; k1 = f(x) given. As plant.rk4_step:
 * x + (0.5 h) k1, x + (0.5 h) k2, x + h k3, then x + (h / 6) (k1 + 2 k2 + 2 k3 + k4). */
static int rk4(const rd_sim *s, double *x, const double *k1, const double *u, rd_work *w)
{
    const int n = s->n, m = 2 * n;
    const double h = s->h, hh = 0.5 * s->h, h6 = s->h / 6.0;
    double xs[2 * RD_SIM_MAX_JOINTS], k2[2 * RD_SIM_MAX_JOINTS], k3[2 * RD_SIM_MAX_JOINTS], k4[2 * RD_SIM_MAX_JOINTS];
    const double *kin[3] = {k1, k2, k3};
    double *kout[3] = {k2, k3, k4};
    const double scale[3] = {hh, hh, h};
    for (int stage = 0; stage < 3; ++stage) {
        for (int i = 0; i < m; ++i)
            xs[i] = x[i] + scale[stage] * kin[stage][i];
        memcpy(kout[stage], xs + n, sizeof(double) * n); /* qdot = qd */
        int st = plant_accel(s, xs, xs + n, u, kout[stage] + n, w);
        if (st != RD_OK)
            return st;
    }
    for (int i = 0; i < m; ++i)
        x[i] = x[i] + h6 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    return RD_OK;
}

int rd_simulate(const rd_sim *s, const rd_sim_log *L, int k0, int k1, double *x, int *done, rd_work *wc, rd_work *wp)
{
    const int n = s->n, m = 2 * n;
    if (n > RD_SIM_MAX_JOINTS)
        return RD_BAD_SIZE;
    double xi[RD_SIM_MAX_JOINTS], u[RD_SIM_MAX_JOINTS], f1[2 * RD_SIM_MAX_JOINTS];
    *done = k0;
    for (int k = k0; k < k1; ++k) {
        const double *q = x, *qd = x + n;
        memcpy(L->q + k * n, q, sizeof(double) * n);
        memcpy(L->qd + k * n, qd, sizeof(double) * n);
        int st = control(s, L, k, q, qd, xi, wc);
        if (st != RD_OK)
            return st;
        map(s->plant_A, xi, L->tau + k * n, n); /* the plant's own drive train */
        for (int j = 0; j < n; ++j)
            u[j] = L->tau[k * n + j] + L->dist[k * n + j];
        memcpy(f1, qd, sizeof(double) * n);
        st = plant_accel(s, q, qd, u, f1 + n, wp);
        if (st != RD_OK)
            return st;
        memcpy(L->qdd + k * n, f1 + n, sizeof(double) * n);
        if (k == s->last) { /* the last tick logs and does not integrate */
            *done = k + 1;
            return RD_OK;
        }
        double xn[2 * RD_SIM_MAX_JOINTS];
        memcpy(xn, x, sizeof(double) * m);
        for (int sub = 0; sub < s->substeps; ++sub) {
            if (sub > 0) {
                memcpy(f1, xn + n, sizeof(double) * n);
                st = plant_accel(s, xn, xn + n, u, f1 + n, wp);
                if (st != RD_OK)
                    return st;
            }
            st = rk4(s, xn, f1, u, wp);
            if (st != RD_OK)
                return st;
        }
        for (int i = 0; i < m; ++i)
            if (!(fabs(xn[i]) < RD_DIVERGED))
                return RD_BAD_OUTPUT;
        memcpy(x, xn, sizeof(double) * m); /* the tick is complete: the state of the next one */
        *done = k + 1;
    }
    return RD_OK;
}

/* x_k = Ad x_(k-1) + Bd u_(k-1), k = 1 .. K - 1, from x_0; e_k = the first ne values of x_k (e_0 too).
 * Ad (m x m) and Bd (m x p) row-major, U (K x p), E (K x ne). The exact discretisation of a linear
 * system under a zero-order hold (Khalil [9.28]'s predicted tracking error). */
void rd_linear_recurrence(int m, int p, int ne, int K, const double *Ad, const double *Bd, const double *x0,
                          const double *U, double *E, double *work)
{
    double *x = work, *y = work + m;
    memcpy(x, x0, sizeof(double) * m);
    for (int k = 0; k < K; ++k) {
        if (k > 0) {
            const double *u = U + (k - 1) * p;
            for (int i = 0; i < m; ++i) {
                double ax = 0.0, bu = 0.0;
                for (int j = 0; j < m; ++j)
                    ax += Ad[i * m + j] * x[j];
                for (int j = 0; j < p; ++j)
                    bu += Bd[i * p + j] * u[j];
                y[i] = ax + bu;
            }
            memcpy(x, y, sizeof(double) * m);
        }
        memcpy(E + k * ne, x, sizeof(double) * ne);
    }
}
