/* What the files of _robot_dynamics_engine share (module.c, module_batch.c, module_path.c, module_observer.c,
 * module_task.c). */
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

/* x is a float64 C-contiguous vector of n finite values (a one-state call's fast shape). */
static inline int fast_vector(PyObject *x, int n)
{
    if (!PyArray_CheckExact(x))
        return 0;
    PyArrayObject *a = (PyArrayObject *)x;
    return PyArray_NDIM(a) == 1 && PyArray_DIMS(a)[0] == n && PyArray_TYPE(a) == NPY_DOUBLE &&
           PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISALIGNED(a) && rd_finite((const double *)PyArray_DATA(a), n);
}

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

/* One argument list for every batch, stage and the compiled loop (module_batch.c, module_observer.c).
 * A call's arguments are a table: name, kind, shape and where the value goes in the call's struct
 * (as MuJoCo's tables of fields). A shape's entries are sizes or the symbols below: N, K, F and W
 * are bound by the first array that has them, the others come from the model (the first argument). */
enum { S_N = -1, S_K = -2, S_F = -3, S_W = -4, S_NQ = -5, S_NB = -6, S_NB1 = -7, S_NQ2 = -8, S_2NQ = -9, S_R = -10 };
#define S_COUNT 10
#define SYM(s) (-(s)-1)

typedef enum {
    A_MODEL,   /* an engine Model: const rd_model * */
    A_DATA,    /* an engine Data of the model before it in the table: rd_work * (optional: absent or None, NULL) */
    A_IN,      /* float64 array: const double * */
    A_OUT,     /* writeable float64 array: double * */
    A_STATUS,  /* writeable int64 array: int64_t * */
    A_WRENCH,  /* float64 (N, W, RD_WRENCH) wrench rows, each naming a body: const double * */
    A_FRAMES,  /* int64 (F,) frame indices: const int64_t * */
    A_FRAME,   /* a frame index: int */
    A_BOOL,    /* int */
    A_INT,     /* int */
    A_DOUBLE,  /* double */
    A_ROWS,    /* a task's rows, bits 0-5 of an int (0: all six; engine.h's rd_task): binds S_R to their count */
} arg_kind;

typedef struct {
    const char *name;
    arg_kind kind;
    int ndim, shape[4];
    int optional; /* None gives a NULL pointer */
    size_t at;    /* offset of the value in the call's struct */
} arg_spec;

/* Fills `out` from positional `args` and keyword `kwargs` by the table spec (count entries): each
 * value checked and written at its offset; sym: the bound sizes. 0, or -1 with the exception. */
int rd_module_parse_args(const arg_spec *spec, int count, PyObject *args, PyObject *kwargs, char *out, npy_intp sym[S_COUNT]);

/* A batch's rows [lo, hi) on the workspace w; args: what its rows read (the batch's own struct). */
typedef void (*rd_rows_fn)(const void *args, rd_work *w, npy_intp lo, npy_intp hi);

/* Rows [0, N) of a batch of model m as every batch runs (module_batch.c): the GIL released, OpenMP threads
 * over chunks of rows with a workspace each (the calling thread alone below RD_SERIAL_BELOW rows). 0, or
 * -1 with MemoryError. */
int rd_module_run_rows(const rd_model *m, rd_rows_fn fn, const void *args, npy_intp N);

/* Adds the batches, the tick stages, simulate and linear_recurrence to the module (module_batch.c): 0 or -1. */
int rd_module_add_batches(PyObject *mod);

/* Adds the path timing (reachability) to the module (module_path.c): 0 or -1. */
int rd_module_add_path(PyObject *mod);

/* Adds the momentum observer's update to the module (module_observer.c): 0 or -1. */
int rd_module_add_observer(PyObject *mod);

/* Adds the task space, one state and batched, to the module (module_task.c): 0 or -1. */
int rd_module_add_task(PyObject *mod);

#endif
