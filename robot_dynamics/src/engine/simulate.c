/* A compiled closed loop: K ticks of joint-space computed torque (Khalil 9.4.2) or PD with gravity
 * compensation (Khalil [9.12]) on a rigid plant
 * integrated by classical RK4 under a zero-order hold, written into the caller's log.
 *
 * It only sequences the stages that the Python tick (robot_dynamics.simulation.Simulation._tick)
 * calls through robot_dynamics.engine.stages: rd_computed_torque (ComputedTorque._law) or
 * rd_pd_gravity (PDGravity._law),
 * rd_saturate_effort (ControllerBase._saturate), rd_plant_accel and rd_plant_step (Plant), so both
 * ticks give the same numbers by construction. Anything the Python
 * tick would turn into a FAULT, a message or a diverged run (a non-finite reference or torque, a
 * failing dynamics call, a state beyond RD_DIVERGED) stops the loop before that tick: the caller
 * takes it in Python, which words it.
 */
#pragma GCC optimize("fp-contract=off")

#include <string.h>

#include "engine.h"

/* The controller's tick k: measured state, the law (computed torque [9.24] or [9.29] by
 * Newton-Euler (9.4.2.5), or PD with gravity compensation [9.12]), saturation at the joints then
 * at the actuators. Writes EFF[k], STATUS[k], CLIP[k]. */
static int control(const rd_sim *s, const rd_sim_log *L, int k, const double *q, const double *qd, double *xi, rd_work *w)
{
    const int n = s->n;
    const double *qr = L->qr + k * n, *qdr = L->qdr + k * n, *qddr = L->qddr + k * n;
    double qm[RD_SIM_MAX_JOINTS], qdm[RD_SIM_MAX_JOINTS], ts[RD_SIM_MAX_JOINTS];
    if (!rd_finite(qr, n) || !rd_finite(qdr, n) || !rd_finite(qddr, n))
        return RD_BAD_INPUT; /* a bad reference: the controller's FAULT, in Python */
    for (int j = 0; j < n; ++j) {
        qm[j] = L->zq ? q[j] + L->zq[k * n + j] * s->pos_std[j] : q[j];
        qdm[j] = L->zqd ? qd[j] + L->zqd[k * n + j] * s->vel_std[j] : qd[j];
    }
    const rd_computed_torque_options ct = {s->kp, s->kd, s->position, s->predictive, s->desired_friction};
    const rd_pd_gains pd = {s->kp, s->kd};
    const rd_reference ref = {qr, qdr, qddr};
    int st = s->law == RD_LAW_PD_GRAVITY ? rd_pd_gravity(s->ctrl, &pd, qm, qdm, &ref, ts, w)
                                         : rd_computed_torque(s->ctrl, &ct, qm, qdm, &ref, ts, w);
    if (st != RD_OK)
        return st;
    double flags[RD_SIM_MAX_JOINTS];
    rd_saturate_effort(n, s->limit, s->ctrl_A_inv, s->actuator_limit, ts, xi, flags);
    int64_t clip = 0;
    for (int j = 0; j < n; ++j)
        if (flags[j] != 0.0)
            clip |= (int64_t)1 << j;
    memcpy(L->effort + k * n, xi, sizeof(double) * n);
    L->status[k] = clip ? 1 : 0; /* Status.SATURATED */
    L->clip[k] = clip;
    return RD_OK;
}

int rd_simulate(const rd_sim *s, const rd_sim_log *L, int k0, int k1, double *x, int *done, rd_work *wc, rd_work *wp)
{
    const int n = s->n;
    if (n > RD_SIM_MAX_JOINTS)
        return RD_BAD_SIZE;
    double xi[RD_SIM_MAX_JOINTS], u[RD_SIM_MAX_JOINTS], f1[2 * RD_SIM_MAX_JOINTS];
    const rd_plant plant = {s->plant, s->g_plant, s->plant_friction, s->smooth};
    *done = k0;
    for (int k = k0; k < k1; ++k) {
        const double *q = x, *qd = x + n;
        memcpy(L->q + k * n, q, sizeof(double) * n);
        memcpy(L->qd + k * n, qd, sizeof(double) * n);
        int st = control(s, L, k, q, qd, xi, wc);
        if (st != RD_OK)
            return st;
        rd_map(n, s->plant_A, xi, L->tau + k * n); /* the plant's own drive train */
        for (int j = 0; j < n; ++j)
            u[j] = L->tau[k * n + j] + L->dist[k * n + j];
        memcpy(f1, qd, sizeof(double) * n);
        st = rd_plant_accel(&plant, q, qd, u, f1 + n, wp);
        if (st != RD_OK)
            return st;
        memcpy(L->qdd + k * n, f1 + n, sizeof(double) * n);
        if (k == s->last) { /* the last tick logs and does not integrate */
            *done = k + 1;
            return RD_OK;
        }
        st = rd_plant_step(&plant, s->h, s->substeps, x, f1, u, wp); /* the state of the next tick */
        if (st != RD_OK)
            return st;
        *done = k + 1;
    }
    return RD_OK;
}

/* x_k = Ad x_(k-1) + Bd u_(k-1), k = 1 .. K - 1, from x_0; e_k = the first ne values of x_k (e_0 too).
 * Ad (m x m) and Bd (m x p) row-major, U (K x p), E (K x ne). The exact discretisation of a linear
 * system under a zero-order hold (Khalil [9.28]'s predicted tracking error). */
void rd_linear_recurrence(const rd_linear_system *s, int ne, int K, const double *x0, const double *U, double *E,
                          double *work)
{
    const int m = s->m, p = s->p;
    const double *Ad = s->Ad, *Bd = s->Bd;
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
