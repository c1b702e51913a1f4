/* What the two files of _robot_dynamics_engine share (module.c, module_batch.c). */
#ifndef RD_MODULE_H
#define RD_MODULE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL rd_numpy_api
#ifndef RD_MODULE_INIT
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* A RobotModel packed for the engine (module.c's Model type). */
typedef struct {
    PyObject_HEAD
    rd_model m;   /* its block holds the one-state workspace too */
    rd_work work;
} EngineModel;

extern PyTypeObject EngineModelType;

/* Threads of the batches (set_num_threads). */
extern int rd_threads;

/* The signatures of rd_rnea and rd_aba, and of their derivatives. */
typedef int (*one_state_fn)(const rd_model *, const rd_input *, const rd_options *, double *, rd_work *);
typedef int (*derivatives_fn)(const rd_model *, const rd_input *, const rd_options *, double *, double *, double *,
                              rd_work *);

/* rnea (aba = 0) or aba (aba = 1) of N states q, qd, x, each an (N, nq) float64 C-contiguous array, at the
 * model's gravity without wrenches, as a batch (threads and four states a call): a new (N, nq) array,
 * or NotImplemented when a state fails (module.c's one_state). A non-finite input reaches the output
 * of its own joint (0 * NaN is NaN), whose status catches it; the general path then names the input. */
PyObject *rd_module_states(const rd_model *m, int aba, PyObject *q, PyObject *qd, PyObject *x, int friction);

/* Adds the batches, the tick stages, simulate and linear_recurrence to the module (module_batch.c): 0 or -1. */
int rd_module_add_batches(PyObject *mod);

#endif
