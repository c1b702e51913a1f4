/* Compliant control of one frame on its task inertia: Cartesian impedance (Hogan 1985; Albu-Schaeffer,
 * Ott, Frese and Hirzinger, "Cartesian impedance control of redundant robots", ICRA 2003) and Khatib's
 * operational-space control (1987; Khalil [9.36]), with a posture task in the null space, the task
 * inertia damped near singularities, the task wrench and torque rate saturated and barriers at the joints'
 * position and velocity limits:
 * the one law of robot_dynamics.control.CartesianImpedance and OperationalSpaceControl (which call it
 * through robot_dynamics.engine.stages) and of the ros2_control controllers.
 *
 * One tick: rd_rnea(q, qd, 0), whose joint transforms give the frame's pose and Jacobian rows (the operational
 * space law: rd_task_space's, with Jdot qd); A = rd_crba's and its Cholesky factor;
 * whether J's smallest singular value is below the threshold (a Cholesky factor of J J^T - thr^2 1), and
 * only then its value (rd_smallest_singular_value, eigen.c); the task inertia's inverse
 * S = Lambda^-1 = J A^-1 J^T + lambda^2 1 from the factors (rd_task_gram) and its own factor, Lambda never
 * formed (Lambda x = S^-1 x); the wrench (the impedance's damping by rd_impedance_damping_apply, eigen.c);
 * rnea(q, qd, 0) + J^T F + N tau_0, N tau_0 = tau_0 - J^T Lambda J A^-1 tau_0 from the factors (N not
 * formed); the joint-limit barriers; the rate limit.
 * No allocation: the r x r matrices live on the stack, the nq-sized ones in rd_work (cN, cA, c0, tZ).
 */
#include <math.h>
#include <string.h>

#include "internal.h"

#define HALF_PI 1.5707963267948966 /* the double nearest pi / 2, numpy's np.pi / 2 */

/* s_min of J (r x nq, r <= 6) when below thr > 0, else INFINITY: a Cholesky factor of J J^T - thr^2 1
 * (a cheap test) decides whether every singular value exceeds thr, and only then is s_min computed
 * (rd_smallest_singular_value); 0 for r > nq (a task direction that no joint moves). */
static double singular_below(const double *J, int r, int nq, double thr)
{
    if (r > nq)
        return 0.0;
    double G[36], F[36];
    rd_gram(J, r, nq, G);
    memcpy(F, G, sizeof(double) * r * r);
    for (int i = 0; i < r; ++i)
        F[i * r + i] -= thr * thr;
    return rd_cholesky(F, r) == RD_OK ? INFINITY : rd_smallest_singular_value(J, r, nq, G);
}

/* The rotation vector w (axis * angle, angle in [0, pi]) of R (3 x 3 row-major), as
 * robot_dynamics.spatial.log_so3: theta = atan2(|vee(R - R^T)| / 2, (tr R - 1) / 2); below pi/2 the
 * axis is vee / (2 sin theta), above it comes from the symmetric part, exact up to pi. */
static void log_so3(const double R[9], double w[3])
{
    const double vee[3] = {R[7] - R[5], R[2] - R[6], R[3] - R[1]};
    const double sin_t = 0.5 * sqrt(vee[0] * vee[0] + vee[1] * vee[1] + vee[2] * vee[2]);
    const double cos_t = 0.5 * (R[0] + R[4] + R[8] - 1.0);
    const double theta = atan2(sin_t, cos_t);
    const double factor = theta < 1e-6 ? 0.5 + theta * theta / 12.0 : theta / (2.0 * (sin_t == 0.0 ? 1.0 : sin_t));
    for (int a = 0; a < 3; ++a)
        w[a] = factor * vee[a];
    if (!(theta > HALF_PI))
        return;
    double S[9]; /* (R + R^T) / 2 - cos(theta) 1 = (1 - cos(theta)) a a^T */
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
            S[3 * a + b] = (0.5 * (R[3 * a + b] + R[3 * b + a]) - (a == b ? cos_t : 0.0)) / (1.0 - cos_t);
    int k = 0;
    for (int a = 1; a < 3; ++a)
        k = S[4 * a] > S[4 * k] ? a : k;
    const double norm = sqrt(S[4 * k] > 1e-300 ? S[4 * k] : 1e-300);
    double axis[3], dot = 0.0;
    for (int a = 0; a < 3; ++a)
        axis[a] = S[3 * k + a] / norm, dot += axis[a] * vee[a];
    const double sign = dot < 0.0 ? -1.0 : 1.0;
    for (int a = 0; a < 3; ++a)
        w[a] = sign * axis[a] * theta;
}

/* The pose error [p_d - p; log(R_d R^T)] (6) [m, rad] in base axes of T (4 x 4) against Td. */
static void pose_error(const double Td[16], const double T[16], double e[6])
{
    double R[9];
    for (int a = 0; a < 3; ++a) {
        e[a] = Td[4 * a + 3] - T[4 * a + 3];
        for (int b = 0; b < 3; ++b)
            R[3 * a + b] = Td[4 * a] * T[4 * b] + Td[4 * a + 1] * T[4 * b + 1] + Td[4 * a + 2] * T[4 * b + 2];
    }
    log_so3(R, e + 3);
}

static int positive(double x) { return isfinite(x) && x > 0.0; }
static int limit(double x) { return !isnan(x) && x > 0.0; } /* > 0, INFINITY allowed */

static int all_at_least(const double *x, int n, double low)
{
    for (int j = 0; j < n; ++j)
        if (!(isfinite(x[j]) && x[j] >= low))
            return 0;
    return 1;
}

/* The joint-limit barriers' options: both position limits or neither, lower <= upper (not NaN), the band >= 0
 * and finite, the velocity limits > 0 (INFINITY allowed), the frequency > 0 and finite where the band is > 0
 * or velocity limits are given. */
static int limits_valid(int nq, const rd_compliant_options *o)
{
    if (!o->lower != !o->upper || !isfinite(o->limit_margin) || o->limit_margin < 0.0)
        return 0;
    if ((o->limit_margin > 0.0 || o->velocity) && !positive(o->limit_frequency))
        return 0;
    for (int j = 0; o->lower && j < nq; ++j)
        if (isnan(o->lower[j]) || isnan(o->upper[j]) || o->lower[j] > o->upper[j])
            return 0;
    for (int j = 0; o->velocity && j < nq; ++j)
        if (!limit(o->velocity[j]))
            return 0;
    return 1;
}

/* The options hold what rd_compliant_control expects of them (r: the task's rows). */
static int options_valid(const rd_model *m, const rd_compliant_options *o, int r)
{
    const rd_task *t = &o->task;
    const int impedance = o->law == RD_CARTESIAN_IMPEDANCE;
    if (!(impedance || o->law == RD_OPERATIONAL_SPACE) || t->frame < 0 || t->frame >= m->nf ||
        t->reference != RD_LOCAL_WORLD_ALIGNED || t->rows < 0 || t->rows > RD_TASK_ALL_ROWS || !isfinite(t->damping) ||
        t->damping < 0.0 || !o->kp || !o->null_stiffness || !o->posture || (!impedance && !o->kd))
        return 0;
    for (int k = 0; impedance && k < r; ++k) /* the impedance's stiffness > 0, the other law's gains >= 0 */
        if (!positive(o->kp[k]))
            return 0;
    if (impedance ? !positive(o->damping_ratio) : !(all_at_least(o->kp, r, 0.0) && all_at_least(o->kd, r, 0.0)))
        return 0;
    if (!limits_valid(m->nq, o))
        return 0;
    return all_at_least(o->null_stiffness, m->nq, 0.0) && rd_finite(o->posture, m->nq) &&
           positive(o->null_damping_ratio) && limit(o->max_force) && limit(o->max_moment) &&
           limit(o->max_torque_rate) && isfinite(o->singular_threshold) && o->singular_threshold >= 0.0 &&
           isfinite(o->smooth) && o->smooth >= 0.0;
}

/* The input finite where the law reads it (the rate limit's tau_prev only when it applies). */
static int input_finite(const rd_model *m, const rd_compliant_options *o, const rd_compliant_input *in)
{
    const int nq = m->nq;
    if (!in->q || !in->qd || !in->pose || !in->twist || (o->law == RD_OPERATIONAL_SPACE && !in->accel))
        return 0;
    return rd_finite(in->q, nq) && rd_finite(in->qd, nq) && rd_finite(in->pose, 16) && rd_finite(in->twist, 6) &&
           (o->law != RD_OPERATIONAL_SPACE || rd_finite(in->accel, 6)) && !isnan(in->dt) &&
           (!in->tau_prev || !(in->dt > 0.0) || rd_finite(in->tau_prev, nq));
}

/* What a tick's wrench reads: the task rows, their index, J (r x nq), the inverse of the task inertia
 * S = Lambda^-1 (r x r, its lower triangle), its Cholesky factor G (lower triangle) and 1 / G_jj (gi; Lambda x
 * is rd_task_solve's S^-1 x), the pose T, Jdot qd. */
typedef struct {
    int r, index[6];
    const double *J, *S, *G, *gi, *T, *bias;
} task_state;

/* The task wrench F (r) of the law, before its saturation. RD_OK or rd_impedance_damping_apply's status. */
static int task_wrench(const rd_model *m, const rd_compliant_options *o, const rd_compliant_input *in,
                       const task_state *s, double F[6])
{
    const int nq = m->nq, r = s->r;
    double full[6], e[6], ed[6] = {0.0};
    pose_error(in->pose, s->T, full);
    for (int k = 0; k < r; ++k) {
        double v = 0.0;
        for (int a = 0; a < nq; ++a)
            v += s->J[k * nq + a] * in->qd[a];
        e[k] = full[s->index[k]], ed[k] = in->twist[s->index[k]] - v;
    }
    if (o->law == RD_CARTESIAN_IMPEDANCE) { /* F = K e + D e_dot, D applied without being formed */
        const int st = rd_impedance_damping_apply(r, o->kp, s->S, o->damping_ratio, ed, F);
        for (int i = 0; i < r; ++i)
            F[i] += o->kp[i] * e[i];
        return st;
    }
    for (int k = 0; k < r; ++k) /* F = Lambda (accel_d + Kd e_dot + Kp e - Jdot qd) = S^-1 (...) */
        F[k] = in->accel[s->index[k]] + o->kd[k] * ed[k] + o->kp[k] * e[k] - s->bias[k];
    rd_task_solve(s->G, s->gi, r, F);
    return RD_OK;
}

/* F's force rows (index < 3) scaled to a norm of at most max_force, its moment rows to max_moment. */
static void saturate_wrench(const rd_compliant_options *o, const task_state *s, double F[6])
{
    for (int part = 0; part < 2; ++part) {
        const double cap = part ? o->max_moment : o->max_force;
        double sq = 0.0;
        for (int k = 0; k < s->r; ++k)
            sq += (s->index[k] >= 3) == part ? F[k] * F[k] : 0.0;
        const double norm = sqrt(sq);
        if (norm > cap)
            for (int k = 0; k < s->r; ++k)
                F[k] = (s->index[k] >= 3) == part ? F[k] * (cap / norm) : F[k];
    }
}

/* The smaller and the larger of two numbers (not NaN: what the barriers compare is finite or infinite), without
 * the library call that fmin and fmax are on x86-64's baseline. */
static double lesser(double a, double b) { return b < a ? b : a; }
static double greater(double a, double b) { return b > a ? b : a; }

/* Joint j's barriers' band (of limit_margin, at most a quarter of the joint's range; 0: no position barrier). */
static double band_of(const rd_compliant_options *o, int j)
{
    return o->lower && o->limit_margin > 0.0 ? lesser(o->limit_margin, 0.25 * (o->upper[j] - o->lower[j])) : 0.0;
}

/* Joint j (at q, qd; the tick dt) under a barrier: within a band of its position limits, faster than half its
 * velocity limit, or with a velocity limit at a known tick (dt > 0). */
static int barred(const rd_compliant_options *o, int j, double q, double qd, double dt)
{
    const double b = band_of(o, j);
    return (b > 0.0 && (q > o->upper[j] - b || q < o->lower[j] + b)) ||
           (o->velocity && (fabs(qd) > 0.5 * o->velocity[j] || (dt > 0.0 && isfinite(o->velocity[j]))));
}

/* Joint j's acceleration a (at q, qd; 1 / dt of the tick, 0 when unknown) within its barriers: the velocity
 * barrier's bounds, then the position barrier's (rd_compliant_options), which wins where they disagree. */
static double barrier_cut(const rd_compliant_options *o, int j, double q, double qd, double inv_dt, double a)
{
    const double omega = o->limit_frequency, b = band_of(o, j), v = o->velocity ? o->velocity[j] : INFINITY;
    if (qd > 0.5 * v) /* faster than half the limit: at most omega (v - qd) */
        a = lesser(a, omega * (v - qd));
    if (qd < -0.5 * v) /* at least omega (-v - qd) */
        a = greater(a, omega * (-v - qd));
    if (inv_dt > 0.0 && isfinite(v)) /* the next tick's velocity within the limit */
        a = greater(lesser(a, (v - qd) * inv_dt), (-v - qd) * inv_dt);
    if (b > 0.0 && q < o->lower[j] + b) /* at least omega^2 (lo_edge - q) - 2 omega qd */
        a = greater(a, omega * omega * (o->lower[j] + b - q) - 2.0 * omega * qd);
    if (b > 0.0 && q > o->upper[j] - b) /* at most omega^2 (hi_edge - q) - 2 omega qd */
        a = lesser(a, omega * omega * (o->upper[j] - b - q) - 2.0 * omega * qd);
    return a;
}

/* The joint-limit barriers (rd_compliant_options' limit_margin and velocity) on u (nq), the torques beyond
 * rnea(q, qd, 0): a = A^-1 u, each joint's acceleration bounded (barrier_cut), u += A delta for the cut delta,
 * = L (L^T delta) from A's factor L in w->H. Nothing is solved while no joint is barred, nothing added while
 * no bound cuts. */
static void limit_barrier(const rd_model *m, const rd_compliant_options *o, const rd_compliant_input *in, double *u,
                          rd_work *w)
{
    const int nq = m->nq;
    const double *L = w->H, inv_dt = in->dt > 0.0 ? 1.0 / in->dt : 0.0;
    int inside = 0, cut = 0;
    for (int j = 0; j < nq; ++j)
        inside |= barred(o, j, in->q[j], in->qd[j], in->dt);
    if (!inside)
        return;
    double *a = w->tZ, *delta = w->tZ + nq;
    memcpy(a, u, sizeof(double) * (size_t)nq);
    rd_task_solve(L, w->tS + 108, nq, a); /* a = A^-1 u */
    for (int j = 0; j < nq; ++j) {
        delta[j] = barrier_cut(o, j, in->q[j], in->qd[j], inv_dt, a[j]) - a[j];
        cut |= delta[j] != 0.0;
    }
    if (!cut)
        return;
    for (int i = 0; i < nq; ++i) { /* a = L^T delta, then u += L a */
        double s = 0.0;
        for (int k = i; k < nq; ++k)
            s += L[k * nq + i] * delta[k];
        a[i] = s;
    }
    for (int i = 0; i < nq; ++i) {
        double s = 0.0;
        for (int k = 0; k <= i; ++k)
            s += L[i * nq + k] * a[k];
        u[i] += s;
    }
}

/* tau (holding rnea(q, qd, 0)) += J^T F + N tau_0 (then the joint-limit barrier),
 * tau_0 = K_n (q_n - q) - 2 zeta_n sqrt(K_n A_jj) qd; then the rate limit. N tau_0 = tau_0 - J^T Lambda J A^-1 tau_0
 * (N = 1 - J^T Lambda J A^-1, never formed), J A^-1 tau_0 = Y^T L^-1 tau_0 from A's factor L in w->H and
 * rd_task_gram's Y = L^-1 J^T. */
static void compliant_torques(const rd_model *m, const rd_compliant_options *o, const rd_compliant_input *in,
                          const task_state *s, const double F[6], double *tau, rd_work *w)
{
    const int nq = m->nq, r = s->r;
    const double *L = w->H, *J = s->J;
    double *tau0 = w->c0, *u = w->cN, y[6], z[6];
    for (int j = 0; j < nq; ++j) {
        const double k = o->null_stiffness[j];
        tau0[j] = k * (o->posture[j] - in->q[j]) - 2.0 * o->null_damping_ratio * sqrt(k * w->cA[j]) * in->qd[j];
    }
    const double *dinv = w->tS + 108, *Y = w->tY; /* 1 / L_aa and Y = L^-1 J^T from rd_task_gram */
    for (int a = 0; a < nq; ++a) { /* u = L^-1 tau_0 (forward substitution) */
        double v = tau0[a];
        for (int k = 0; k < a; ++k)
            v -= L[a * nq + k] * u[k];
        u[a] = v * dinv[a];
    }
    for (int i = 0; i < r; ++i) { /* y = J A^-1 tau_0 = (L^-1 J^T)^T (L^-1 tau_0) = Y_i . u */
        double v = 0.0;
        for (int a = 0; a < nq; ++a)
            v += Y[i * nq + a] * u[a];
        y[i] = v;
    }
    rd_task_solve(s->G, s->gi, r, y); /* z = Lambda y - F: J^T F + N tau_0 = tau_0 - J^T z */
    for (int i = 0; i < r; ++i)
        z[i] = y[i] - F[i];
    for (int a = 0; a < nq; ++a) { /* tau0 = J^T F + N tau_0, the torques beyond rnea's */
        double v = 0.0;
        for (int i = 0; i < r; ++i)
            v += J[i * nq + a] * z[i];
        tau0[a] -= v;
    }
    limit_barrier(m, o, in, tau0, w);
    for (int a = 0; a < nq; ++a)
        tau[a] += tau0[a];
    if (in->tau_prev && isfinite(o->max_torque_rate) && in->dt > 0.0) {
        const double step = o->max_torque_rate * in->dt;
        for (int j = 0; j < nq; ++j) {
            const double lo = in->tau_prev[j] - step, hi = in->tau_prev[j] + step;
            tau[j] = tau[j] < lo ? lo : tau[j] > hi ? hi : tau[j];
        }
    }
}

/* A = rd_crba's into w->H, its diagonal into w->cA, then its Cholesky factor in w->H. */
static int factor_inertia(const rd_model *m, const double *q, rd_work *w)
{
    const int nq = m->nq;
    const int st = rd_crba(m, q, w->H, w);
    if (st != RD_OK)
        return st;
    for (int j = 0; j < nq; ++j)
        w->cA[j] = w->H[j * nq + j];
    return rd_cholesky(w->H, nq) == RD_OK ? RD_OK : RD_NOT_POSITIVE_DEFINITE;
}

int rd_compliant_control(const rd_model *m, const rd_compliant_options *o, const rd_compliant_input *in, double *tau,
                         rd_compliant_info *info, rd_work *w)
{
    if (!m || !o || !in || !tau || !w)
        return RD_BAD_SIZE;
    task_state s;
    s.r = rd_task_rows(o->task.rows, s.index);
    if (!options_valid(m, o, s.r))
        return RD_BAD_SIZE;
    if (!input_finite(m, o, in))
        return RD_BAD_INPUT;
    const int nq = m->nq, osc = o->law == RD_OPERATIONAL_SPACE;
    double T[16], bias[6], G[36], gi[6], F[6];
    rd_task t = o->task;
    t.damping = 0.0;
    const rd_input rest = {in->q, in->qd, w->zero, NULL, NULL, 0};
    const rd_options friction = {NULL, 1, o->smooth};
    int st = rd_rnea(m, &rest, &friction, tau, w); /* C qd + g + the friction; its joint transforms in w */
    if (st == RD_OK && osc) { /* T, J and Jdot qd (a forward recursion without gravity) */
        const rd_input state = {in->q, in->qd, NULL, NULL, NULL, 0};
        const rd_task_space_out kinematics = {T, w->tJ, NULL, bias, NULL, NULL, NULL};
        st = rd_task_space(m, &state, &t, &kinematics, w);
    } else if (st == RD_OK) { /* T and J from rnea's joint transforms */
        rd_world_poses(m, w);
        rd_task_frame(m, &t, s.index, s.r, T, w->tJ, w);
    }
    if (st == RD_OK)
        st = factor_inertia(m, in->q, w);
    if (st != RD_OK)
        return st;
    const double thr = o->singular_threshold; /* s_min computed where it decides: below the threshold */
    const double s_min = thr > 0.0 ? singular_below(w->tJ, s.r, nq, thr) : INFINITY;
    const int singular = s_min < thr;
    const double lam2 = singular ? o->task.damping * o->task.damping * (1.0 - (s_min / thr) * (s_min / thr)) : 0.0;
    t.damping = sqrt(lam2);
    if (info)
        info->s_min = s_min, info->lambda = t.damping, info->singular = singular;
    rd_task_gram(m, t.damping, w->tJ, s.r, w); /* S = J A^-1 J^T + lambda^2 1 in w->tS, then its factor */
    memcpy(G, w->tS, sizeof(double) * (size_t)(s.r * s.r));
    if ((st = rd_task_factor(G, s.r, gi)) != RD_OK)
        return st;
    s.J = w->tJ, s.S = w->tS, s.G = G, s.gi = gi, s.T = T, s.bias = bias;
    if ((st = task_wrench(m, o, in, &s, F)) != RD_OK)
        return st == RD_BAD_INPUT ? RD_BAD_OUTPUT : st;
    saturate_wrench(o, &s, F);
    compliant_torques(m, o, in, &s, F, tau, w);
    return rd_finite(tau, nq) ? RD_OK : RD_BAD_OUTPUT;
}
