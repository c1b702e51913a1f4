/* The simulated plant, one step at a time: its state equation, classical RK4 under a held torque
 * (a zero-order hold), and one period of a simulated arm with its command rules (rd_plant_advance),
 * which the simulation (Plant.advance), the simulator node and ros2_control's SimulatedSystem all
 * call (the compiled loop of simulate.c calls its RK4 part, rd_plant_step). They perform the
 * operations of robot_dynamics.simulation's Plant.accel and rk4_step in the same order, with no
 * contraction into fused multiply-adds. */
#pragma GCC optimize("fp-contract=off")

#include <math.h>
#include <string.h>

#include "engine.h"

int rd_plant_accel(const rd_plant *p, const double *q, const double *qd, const double *u, double *qdd, rd_work *w)
{
    const int n = p->model->nq;
    if (!rd_finite(q, n) || !rd_finite(qd, n) || !rd_finite(u, n))
        return RD_BAD_INPUT;
    if (p->friction && p->smooth > 0.0) {
        double *uf = w->uf; /* u - Gamma_f(qd) with tanh(qd / v_s) for its sign, then aba without friction */
        for (int k = 0; k < n; ++k)
            uf[k] = u[k] - rd_friction(p->model, k, qd[k], p->smooth);
        const rd_input in = {q, qd, NULL, uf, NULL, 0};
        const rd_options no_friction = {p->g, 0, 0.0};
        return rd_aba(p->model, &in, &no_friction, qdd, w);
    }
    const rd_input in = {q, qd, NULL, u, NULL, 0};
    const rd_options o = {p->g, p->friction, 0.0};
    return rd_aba(p->model, &in, &o, qdd, w);
}

int rd_plant_rk4(const rd_plant *p, double h, double *x, const double *k1, const double *u, rd_work *w)
{
    const int n = p->model->nq, m = 2 * n;
    const double hh = 0.5 * h, h6 = h / 6.0;
    double *xs = w->rk, *k2 = xs + m, *k3 = k2 + m, *k4 = k3 + m;
    const double *kin[3] = {k1, k2, k3};
    double *kout[3] = {k2, k3, k4};
    const double scale[3] = {hh, hh, h};
    for (int stage = 0; stage < 3; ++stage) {
        for (int i = 0; i < m; ++i)
            xs[i] = x[i] + scale[stage] * kin[stage][i];
        memcpy(kout[stage], xs + n, sizeof(double) * n); /* qdot = qd */
        int st = rd_plant_accel(p, xs, xs + n, u, kout[stage] + n, w);
        if (st != RD_OK)
            return st;
    }
    for (int i = 0; i < m; ++i)
        x[i] = x[i] + h6 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    return RD_OK;
}

int rd_plant_step(const rd_plant *p, double h, int substeps, double *x, const double *k1, const double *u, rd_work *w)
{
    const int n = p->model->nq, m = 2 * n;
    if (substeps < 1)
        return RD_BAD_SIZE;
    double *xn = w->step, *f1 = xn + m;
    memcpy(xn, x, sizeof(double) * m);
    for (int sub = 0; sub < substeps; ++sub) {
        int st = RD_OK;
        if (sub == 0 && k1) {
            memcpy(f1, k1, sizeof(double) * m);
        } else {
            memcpy(f1, xn + n, sizeof(double) * n);
            st = rd_plant_accel(p, xn, xn + n, u, f1 + n, w);
        }
        if (st == RD_OK)
            st = rd_plant_rk4(p, h, xn, f1, u, w);
        if (st != RD_OK)
            return st;
    }
    for (int i = 0; i < m; ++i)
        if (!(fabs(xn[i]) < RD_DIVERGED))
            return RD_BAD_OUTPUT;
    memcpy(x, xn, sizeof(double) * m);
    return RD_OK;
}

/* The command rules of rd_plant_advance: applied = u with its NaN joints at zero effort; 1 when u is
 * NULL or NaN on every joint (no command), else 0. */
static int held_command(int n, const double *u, double *applied)
{
    int any = 0;
    for (int k = 0; k < n; ++k) {
        const int given = u && !isnan(u[k]);
        applied[k] = given ? u[k] : 0.0;
        any |= given;
    }
    return !any;
}

int rd_plant_advance(const rd_plant_period *p, double dt, const double *u, const double *k1, double *x,
                     double *applied, rd_plant_report *r, rd_work *w)
{
    const int n = p->plant.model->nq;
    const int substeps = p->substeps;
    int steps = substeps;
    double h = dt / substeps;
    const int refused = !(isfinite(dt) && dt > 0.0 && substeps >= 1) || (p->max_substeps == 0 && h > p->max_step);
    r->steps = 0;
    r->h = 0.0;
    r->lagging = 0;
    r->braked = held_command(n, u, applied);
    if (r->braked) { /* the brakes: where it is, at rest */
        for (int k = 0; k < n; ++k)
            x[n + k] = 0.0;
        return refused ? RD_BAD_SIZE : RD_OK;
    }
    if (refused)
        return RD_BAD_SIZE;
    if (h > p->max_step) { /* a late period: more, shorter steps */
        const double need = ceil(dt / p->max_step);
        if (need > p->max_substeps) { /* a stall: the simulated time falls behind */
            steps = p->max_substeps;
            h = p->max_step;
            r->lagging = 1;
        } else {
            steps = (int)need;
            h = dt / steps;
        }
    }
    r->steps = steps;
    r->h = h;
    return rd_plant_step(&p->plant, h, steps, x, k1, applied, w);
}
