/* What the files of _robot_dynamics_engine share (module.c, module_batch.c, module_path.c). */
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

/* A RobotModel packed for the engine (module.c's Model type): the model half of the (model, data)
 * pair, never written after it is built, so that any number of threads read it at once. */
typedef struct {
    PyObject_HEAD
    rd_model m;
} EngineModel;

/* The data half (module.c's Data type, Pinocchio's Data): a workspace of its own for models of
 * nb bodies and nq joints, rd_work_bytes(nb, nq) bytes bound as rd_work. One thread writes it at a
 * time: the library keeps one per thread (module.c's thread_data). */
typedef struct {
    PyObject_HEAD
    int nb, nq;   /* the sizes it is bound for */
    void *memory; /* its block (calloc) */
    rd_work work;
    /* A thread's data (thread_data) remembers the last RobotModel a public one-state call served and
     * that model's engine Model (strong references: the pointer compared is never reused while
     * held), so that the next call on it skips the attribute lookup. NULL: none. */
    PyObject *served, *served_engine;
} EngineData;

extern PyTypeObject EngineModelType, EngineDataType;

/* The workspace of `obj` for the model m: an EngineData bound for m's sizes, or NULL with a TypeError. */
rd_work *rd_module_data(PyObject *obj, const rd_model *m);

/* A new EngineData for m's sizes (zeroed), or NULL with the exception. */
EngineData *rd_module_new_data(const rd_model *m);

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

/* Adds the path timing (reachability) to the module (module_path.c): 0 or -1. */
int rd_module_add_path(PyObject *mod);

#endif
