/* The stages of the Cartesian impedance law's tick, each callable alone (compliant_stages.c). */
#ifndef RD_BENCH_COMPLIANT_STAGES_H
#define RD_BENCH_COMPLIANT_STAGES_H

#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RD_STAGES 7

/* What the stages pass on beside rd_work: the frame's pose, s_min and the damping lambda it gives, S's
 * factor G and 1 / G_jj, the twist error e_dot = twist_d - J qd and the damping's wrench D e_dot. */
typedef struct {
    double T[16], s_min, lambda, G[36], gi[6], ed[6], F[6];
} rd_stage_scratch;

extern const char *const rd_stage_names[RD_STAGES];

/* Stages from .. to - 1 of rd_compliant_control's impedance tick (o->law RD_CARTESIAN_IMPEDANCE, all six
 * rows) on in: rnea into tau, then the frame, crba, its factor, s_min, S and the damping in w and s. */
void rd_stages_run(int from, int to, const rd_model *m, const rd_compliant_options *o, const rd_compliant_input *in,
                   double *tau, rd_work *w, rd_stage_scratch *s);

#ifdef __cplusplus
}
#endif

#endif
