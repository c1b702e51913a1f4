/* The four-state instance of recursions.h (RD_REAL = rd_x4, its names x_x4) for the files that run
 * four states at once (algorithms.c's rd_rnea4 and rd_aba4, path.c's path coefficients), each lane
 * performing the one-state operations in the same order. Include it after internal.h. */
#ifndef RD_RECURSIONS_X4_H
#define RD_RECURSIONS_X4_H

#pragma GCC diagnostic ignored "-Wpsabi" /* four-state vectors pass between always-inline functions only */

/* The four-state batches (and rd_crba) are compiled for AVX2 too and chosen at load time where the CPU
 * has it (without FMA: the same doubles as the default build). */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define RD_TARGET_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef RD_TARGET_CLONES
#define RD_TARGET_CLONES
#endif

#if RD_LANES == 4
/* Four states, one per lane of a vector of four doubles (an AVX register; two SSE2 registers on a
 * machine without AVX2): the states are rows of nq values, q[l * nq + k]. */
typedef double rd_x4 __attribute__((vector_size(32)));
#define RD_INLINE inline __attribute__((always_inline))
#define RD_REAL rd_x4
#define RD_NAME(x) x##_x4
#define RD_LOAD(x, j) ((rd_x4){(x)[j], (x)[nq + (j)], (x)[2 * nq + (j)], (x)[3 * nq + (j)]})
#define RD_SPLAT(c) ((rd_x4){(c), (c), (c), (c)})
#define RD_WIDTH 4
#define RD_AT(x, l) ((x)[l])
#define RD_STORE(x, j, value) \
    ((x)[j] = (value)[0], (x)[nq + (j)] = (value)[1], (x)[2 * nq + (j)] = (value)[2], (x)[3 * nq + (j)] = (value)[3])
#define RD_FRICTION(m, k, qd, smooth)                                                         \
    ((rd_x4){rd_friction(m, k, (qd)[k], smooth), rd_friction(m, k, (qd)[nq + (k)], smooth),    \
             rd_friction(m, k, (qd)[2 * nq + (k)], smooth), rd_friction(m, k, (qd)[3 * nq + (k)], smooth)})
#define RD_ALL_POSITIVE(x) ((x)[0] > 0.0 && (x)[1] > 0.0 && (x)[2] > 0.0 && (x)[3] > 0.0)
#include "recursions.h"
#endif

#endif
