/* The stages of one tick of the Cartesian impedance law (rd_compliant_control, compliant.c), each callable
 * alone: the engine calls that rd_compliant_control makes, in its order, on its work arrays, so that
 * bench/compliant_stages.cpp can time each stage beside the whole law and the CRISP-style law.
 * Built by bench/bench_compliant_stages.py with the engine's sources and flags; it reads the engine's
 * private header internal.h, as only a bench may. */
#include <math.h>
#include <string.h>

#include "compliant_stages.h"
#include "internal.h"

const char *const rd_stage_names[RD_STAGES] = {
    "rnea(q, qd, 0) with friction",
    "the frame's pose and J from rnea's transforms",
    "crba: A",
    "A's Cholesky factor",
    "s_min: J J^T - thr^2 1 factored (and s_min below thr)",
    "S = J A^-1 J^T + lambda^2 1 and its factor",
    "the damping: C S C's eigen-decomposition applied",
};

/* Stage k of the law on the tick's input (the options' impedance law, all six rows): what
 * rd_compliant_control does between its validation and its wrench, in its order. The later stages read
 * what the earlier ones left in w and s. */
static void stage(int k, const rd_model *m, const rd_compliant_options *o, const rd_compliant_input *in, double *tau,
                  rd_work *w, rd_stage_scratch *s)
{
    const int nq = m->nq, r = 6;
    int index[6];
    rd_task t = o->task;
    t.damping = 0.0;
    rd_task_rows(t.rows, index);
    if (k == 0) {
        const rd_input rest = {in->q, in->qd, w->zero, NULL, NULL, 0};
        const rd_options friction = {NULL, 1, o->smooth};
        rd_rnea(m, &rest, &friction, tau, w);
    } else if (k == 1) {
        rd_world_poses(m, w);
        rd_task_frame(m, &t, index, r, s->T, w->tJ, w);
    } else if (k == 2) {
        rd_crba(m, in->q, w->H, w);
        for (int j = 0; j < nq; ++j)
            w->cA[j] = w->H[j * nq + j];
    } else if (k == 3) {
        rd_cholesky(w->H, nq);
    } else if (k == 4) {
        double G[36], F[36];
        const double thr = o->singular_threshold;
        rd_gram(w->tJ, r, nq, G);
        memcpy(F, G, sizeof F);
        for (int i = 0; i < r; ++i)
            F[i * r + i] -= thr * thr;
        s->s_min = rd_cholesky(F, r) == RD_OK ? INFINITY : rd_smallest_singular_value(w->tJ, r, nq, G);
        const double ratio = s->s_min / thr;
        s->lambda = s->s_min < thr ? o->task.damping * sqrt(1.0 - ratio * ratio) : 0.0;
    } else if (k == 5) {
        rd_task_gram(m, s->lambda, w->tJ, r, w);
        memcpy(s->G, w->tS, sizeof s->G);
        rd_task_factor(s->G, r, s->gi);
    } else if (k == 6) {
        for (int i = 0; i < r; ++i) {
            double v = 0.0;
            for (int a = 0; a < nq; ++a)
                v += w->tJ[i * nq + a] * in->qd[a];
            s->ed[i] = in->twist[i] - v;
        }
        rd_impedance_damping_apply(r, o->kp, w->tS, o->damping_ratio, s->ed, s->F);
    }
}

void rd_stages_run(int from, int to, const rd_model *m, const rd_compliant_options *o, const rd_compliant_input *in,
                   double *tau, rd_work *w, rd_stage_scratch *s)
{
    for (int k = from; k < to && k < RD_STAGES; ++k)
        stage(k, m, o, in, tau, w, s);
}
