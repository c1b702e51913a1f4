/* _robot_dynamics_engine's batches and compiled loop (module.c holds the model and one state).
 *
 * Batches: X_batch(model, arrays...) over N states, the arrays validated by the caller (shapes are
 * checked again here, by each batch's table of arguments), the GIL released, OpenMP threads over
 * chunks of samples with a workspace per thread; below SERIAL_BELOW states (or with one thread)
 * the calling thread alone. Where the compiler has vector types (engine.h's RD_LANES), rnea and
 * aba take four states a call.
 */
#include "module.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Batches smaller than this run in the calling thread: starting the OpenMP team costs more than
 * their work (measured by bench/bench_core.py --threshold). */
#define RD_SERIAL_BELOW 64

/* -- batches ------------------------------------------------------------------------------------------- */

/* What a batch's rows function reads: the model, the arrays, the options. */
typedef struct {
    const rd_model *m;
    const double *Q, *QD, *X, *g, *FX;
    int nfx, friction, k;
    double smooth;
    const int64_t *frames;
    int nframes;
    double *OUT, *OUT2, *OUT3, *OUT4;
    int64_t *status;
} batch_args;

typedef void (*rows_fn)(const batch_args *b, rd_work *w, npy_intp lo, npy_intp hi);

/* The first row of chunk ch of nc over N rows: a multiple of four (the four-state calls), the last chunk's end N. */
static inline npy_intp chunk_start(npy_intp ch, npy_intp nc, npy_intp N) { return ch == nc ? N : ch * N / nc / 4 * 4; }

/* Run rows [0, N) of a batch: chunks of samples over the OpenMP threads, one workspace per thread. */
int rd_module_run_rows(const rd_model *m, rd_rows_fn fn, const void *b, npy_intp N)
{
    const int nb = m->nb, nq = m->nq;
    const size_t bytes = rd_work_bytes(nb, nq);
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
#ifdef _OPENMP
    if (N >= RD_SERIAL_BELOW && rd_threads > 1) {
        const int nt = rd_threads;
        const npy_intp nc = N < 4 * (npy_intp)nt ? N : 4 * (npy_intp)nt; /* 4 chunks per thread */
#pragma omp parallel num_threads(nt)
        {
            void *memory = malloc(bytes);
            rd_work w;
            if (!memory) {
#pragma omp atomic write
                failed = 1;
            } else {
                rd_work_bind(&w, memory, nb, nq);
            }
#pragma omp for schedule(dynamic, 1)
            for (npy_intp ch = 0; ch < nc; ++ch)
                if (memory)
                    fn(b, &w, chunk_start(ch, nc, N), chunk_start(ch + 1, nc, N));
            free(memory);
        }
    } else
#endif
    {
        void *memory = malloc(bytes);
        if (!memory) {
            failed = 1;
        } else {
            rd_work w;
            rd_work_bind(&w, memory, nb, nq);
            fn(b, &w, 0, N);
            free(memory);
        }
    }
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* A batch_args batch's rows function, called through rd_module_run_rows. */
typedef struct {
    const batch_args *b;
    rows_fn fn;
} batch_rows;

static void call_rows(const void *args, rd_work *w, npy_intp lo, npy_intp hi)
{
    const batch_rows *c = args;
    c->fn(c->b, w, lo, hi);
}

static int run_batch(const batch_args *b, rows_fn fn, npy_intp N)
{
    const batch_rows c = {b, fn};
    return rd_module_run_rows(b->m, call_rows, &c, N);
}

typedef void (*four_states_fn)(const rd_model *, const rd_input *, const rd_options *, double *, int[4], rd_work *);

/* Row n's state (x: its accelerations for rnea, torques for aba) and wrenches. */
static inline rd_input row_input(const batch_args *b, npy_intp n, int aba)
{
    const int nq = b->m->nq;
    const double *x = b->X + n * nq;
    const rd_input in = {b->Q + n * nq, b->QD + n * nq, aba ? NULL : x, aba ? x : NULL, b->FX + n * b->nfx * RD_WRENCH,
                         b->nfx};
    return in;
}

/* rnea or aba rows: four states a call where the engine has them (no external wrenches), then one. */
static void dynamics_rows(const batch_args *b, rd_work *w, npy_intp lo, npy_intp hi, one_state_fn one,
                          four_states_fn four)
{
    const int nq = b->m->nq, aba = one == rd_aba;
    const rd_options o = {b->g, b->friction, b->smooth};
    npy_intp n = lo;
    for (int st[4]; four && b->nfx == 0 && n + 4 <= hi; n += 4) {
        const rd_input in = row_input(b, n, aba);
        four(b->m, &in, &o, b->OUT + n * nq, st, w);
        for (int l = 0; l < 4; ++l)
            b->status[n + l] = st[l];
    }
    for (; n < hi; ++n) {
        const rd_input in = row_input(b, n, aba);
        b->status[n] = one(b->m, &in, &o, b->OUT + n * nq, w);
    }
}

#if RD_LANES == 4
#define RNEA4 rd_rnea4
#define ABA4(m) ((m)->tree ? rd_aba4 : NULL) /* the articulated-body recursion: trees */
#else
#define RNEA4 NULL
#define ABA4(m) NULL
#endif

static void rnea_rows(const batch_args *b, rd_work *w, npy_intp lo, npy_intp hi)
{
    dynamics_rows(b, w, lo, hi, rd_rnea, RNEA4);
}

static void aba_rows(const batch_args *b, rd_work *w, npy_intp lo, npy_intp hi)
{
    dynamics_rows(b, w, lo, hi, rd_aba, ABA4(b->m));
}

PyObject *rd_module_states(const rd_model *m, int aba, PyObject *q, PyObject *qd, PyObject *x, int friction)
{
    static const double no_wrench = 0.0;
    const npy_intp N = PyArray_DIMS((PyArrayObject *)q)[0];
    npy_intp dims[2] = {N, m->nq};
    PyObject *out = PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    if (!out)
        return NULL;
    int64_t *status = malloc(sizeof(int64_t) * (size_t)N);
    if (!status) {
        Py_DECREF(out);
        return PyErr_NoMemory();
    }
    const batch_args b = {.m = m, .Q = PyArray_DATA((PyArrayObject *)q), .QD = PyArray_DATA((PyArrayObject *)qd),
                          .X = PyArray_DATA((PyArrayObject *)x), .g = m->gravity, .FX = &no_wrench,
                          .friction = friction, .OUT = PyArray_DATA((PyArrayObject *)out), .status = status};
    int ok = run_batch(&b, aba ? aba_rows : rnea_rows, N) == 0;
    for (npy_intp n = 0; ok && n < N; ++n)
        ok = status[n] == RD_OK;
    free(status);
    if (!ok && !PyErr_Occurred()) {
        Py_DECREF(out);
        Py_RETURN_NOTIMPLEMENTED;
    }
    if (!ok)
        Py_CLEAR(out);
    return out;
}

static void derivatives_rows(const batch_args *b, rd_work *w, npy_intp lo, npy_intp hi, derivatives_fn fn)
{
    const int nq = b->m->nq, aba = fn == rd_aba_derivatives;
    const npy_intp nn = (npy_intp)nq * nq;
    const rd_options o = {b->g, b->friction, b->smooth};
    for (npy_intp n = lo; n < hi; ++n) {
        const rd_input in = row_input(b, n, aba);
        b->status[n] = fn(b->m, &in, &o, b->OUT + n * nn, b->OUT2 + n * nn, b->OUT3 + n * nn, w);
    }
}

static void rnea_derivatives_rows(const batch_args *b, rd_work *w, npy_intp lo, npy_intp hi)
{
    derivatives_rows(b, w, lo, hi, rd_rnea_derivatives);
}

static void aba_derivatives_rows(const batch_args *b, rd_work *w, npy_intp lo, npy_intp hi)
{
    derivatives_rows(b, w, lo, hi, rd_aba_derivatives);
}

static void crba_rows(const batch_args *b, rd_work *w, npy_intp lo, npy_intp hi)
{
    const int nq = b->m->nq;
    for (npy_intp n = lo; n < hi; ++n)
        b->status[n] = rd_crba(b->m, b->Q + n * nq, b->OUT + n * nq * nq, w);
}

static void energy_rows(const batch_args *b, rd_work *w, npy_intp lo, npy_intp hi)
{
    const int nq = b->m->nq;
    for (npy_intp n = lo; n < hi; ++n)
        b->status[n] = rd_energy(b->m, b->Q + n * nq, b->QD + n * nq, b->g, b->OUT + 2 * n, w);
}

static void frame_poses_rows(const batch_args *b, rd_work *w, npy_intp lo, npy_intp hi)
{
    const int nq = b->m->nq;
    for (npy_intp n = lo; n < hi; ++n) {
        rd_body_poses(b->m, b->Q + n * nq, w);
        for (int f = 0; f < b->nframes; ++f)
            rd_frame_pose(b->m, w, (int)b->frames[f], b->OUT + (n * b->nframes + f) * 16);
    }
}

static void jacobian_rows(const batch_args *b, rd_work *w, npy_intp lo, npy_intp hi)
{
    const int nq = b->m->nq;
    for (npy_intp n = lo; n < hi; ++n) {
        rd_body_poses(b->m, b->Q + n * nq, w);
        rd_jacobian(b->m, w, b->k, b->OUT + n * 6 * nq);
    }
}

static void point_motion_rows(const batch_args *b, rd_work *w, npy_intp lo, npy_intp hi)
{
    const int nq = b->m->nq;
    for (npy_intp n = lo; n < hi; ++n)
        rd_point_motion(b->m, b->Q + n * nq, b->QD + n * nq, b->k, b->OUT + 6 * n, b->OUT2 + 6 * n, w);
}

static void motion_rows(const batch_args *b, rd_work *w, npy_intp lo, npy_intp hi)
{
    const int nq = b->m->nq, nb = b->m->nb;
    for (npy_intp n = lo; n < hi; ++n) {
        rd_forward(b->m, b->Q + n * nq, b->QD + n * nq, b->X + n * nq, b->g, w);
        memcpy(b->OUT + n * 9 * nb, w->E, sizeof(double) * 9 * nb);
        memcpy(b->OUT2 + n * 3 * nb, w->r, sizeof(double) * 3 * nb);
        memcpy(b->OUT3 + n * 6 * (nb + 1), w->v, sizeof(double) * 6 * (nb + 1));
        memcpy(b->OUT4 + n * 6 * (nb + 1), w->a, sizeof(double) * 6 * (nb + 1));
    }
}

static void friction_rows(const batch_args *b, rd_work *w, npy_intp lo, npy_intp hi)
{
    const int nq = b->m->nq;
    for (npy_intp n = lo; n < hi; ++n)
        for (int k = 0; k < nq; ++k)
            b->OUT[n * nq + k] = rd_friction(b->m, k, b->QD[n * nq + k], b->smooth);
}

/* An array argument of a batch: C-contiguous, aligned, of the given type and shape (-1: any). */
static int check_array(PyObject *obj, const char *what, int type, int ndim, const npy_intp *shape, int writeable)
{
    if (!PyArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a numpy array", what);
        return -1;
    }
    PyArrayObject *a = (PyArrayObject *)obj;
    if (PyArray_TYPE(a) != type || !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a) ||
        (writeable && !PyArray_ISWRITEABLE(a))) {
        PyErr_Format(PyExc_TypeError, "%s: expected a C-contiguous %s array%s", what,
                     type == NPY_DOUBLE ? "float64" : "int64", writeable ? ", writeable" : "");
        return -1;
    }
    if (PyArray_NDIM(a) != ndim) {
        PyErr_Format(PyExc_ValueError, "%s: expected %d dimensions, got %d", what, ndim, PyArray_NDIM(a));
        return -1;
    }
    for (int d = 0; d < ndim; ++d)
        if (shape[d] >= 0 && PyArray_DIMS(a)[d] != shape[d]) {
            PyErr_Format(PyExc_ValueError, "%s: dimension %d is %zd, expected %zd", what, d,
                         (Py_ssize_t)PyArray_DIMS(a)[d], (Py_ssize_t)shape[d]);
            return -1;
        }
    return 0;
}

#define DATA(obj) ((double *)PyArray_DATA((PyArrayObject *)(obj)))
#define IDATA(obj) ((int64_t *)PyArray_DATA((PyArrayObject *)(obj)))

static EngineModel *model_arg(PyObject *obj)
{
    EngineModel *em = Py_TYPE(obj) == &EngineModelType ? (EngineModel *)obj : NULL;
    if (!em)
        PyErr_SetString(PyExc_TypeError, "expected an engine Model");
    return em;
}

/* -- one argument list for every batch, stage and the compiled loop (module.h's arg_spec) ------------- */

static int bad_shape_value(const char *what, const char *why)
{
    PyErr_Format(PyExc_ValueError, "%s: %s", what, why);
    return -1;
}

/* A model argument into slot; the first one binds the model's sizes. */
static int parse_model(const arg_spec *a, PyObject *v, void *slot, const rd_model **model, npy_intp *sym)
{
    EngineModel *em = model_arg(v);
    if (!em)
        return -1;
    if (*model && em->m.nq != (*model)->nq)
        return bad_shape_value(a->name, "its joints differ from the first model's");
    if (!*model) {
        const rd_model *m = *model = &em->m;
        sym[SYM(S_NQ)] = m->nq, sym[SYM(S_NB)] = m->nb, sym[SYM(S_NB1)] = m->nb + 1;
        sym[SYM(S_NQ2)] = (npy_intp)m->nq * m->nq, sym[SYM(S_2NQ)] = 2 * (npy_intp)m->nq;
    }
    *(const rd_model **)slot = &em->m;
    return 0;
}

/* A bool, int, frame index or double argument into slot. */
static int parse_scalar(const arg_spec *a, PyObject *v, void *slot, const rd_model *model)
{
    if (a->kind == A_BOOL) {
        const int t = PyObject_IsTrue(v);
        if (t < 0)
            return -1;
        *(int *)slot = t;
    } else if (a->kind == A_DOUBLE) {
        const double x = PyFloat_AsDouble(v);
        if (x == -1.0 && PyErr_Occurred())
            return -1;
        *(double *)slot = x;
    } else {
        const long x = PyLong_AsLong(v);
        if (x == -1 && PyErr_Occurred())
            return -1;
        if (a->kind == A_FRAME && (x < 0 || x >= model->nf)) {
            PyErr_Format(PyExc_ValueError, "frame index %ld out of range (%d frames)", x, model->nf);
            return -1;
        }
        if (x < INT_MIN || x > INT_MAX)
            return bad_shape_value(a->name, "out of range");
        *(int *)slot = (int)x;
    }
    return 0;
}

/* A task's rows (bits 0-5 of an int, 0: all six) into slot; binds S_R to their count. */
static int parse_rows(const arg_spec *a, PyObject *v, void *slot, npy_intp *sym)
{
    const long x = PyLong_AsLong(v);
    if (x == -1 && PyErr_Occurred())
        return -1;
    if (x < 0 || x > RD_TASK_ALL_ROWS)
        return bad_shape_value(a->name, "expected task rows as bits 0-5 (0: all six)");
    int r = 0;
    for (int i = 0; i < 6; ++i)
        r += x == 0 || (x >> i & 1);
    *(int *)slot = (int)x;
    sym[SYM(S_R)] = r;
    return 0;
}

/* An array argument's data pointer into slot: its type and shape checked (binding the sizes it
 * is the first to have), a wrench row's body and a frame index checked against the model. */
static int parse_array(const arg_spec *a, PyObject *v, void *slot, const rd_model *model, npy_intp *sym)
{
    const int type = a->kind == A_STATUS || a->kind == A_FRAMES ? NPY_INT64 : NPY_DOUBLE;
    npy_intp shape[4];
    for (int d = 0; d < a->ndim; ++d)
        shape[d] = a->shape[d] >= 0 ? a->shape[d] : sym[SYM(a->shape[d])];
    if (check_array(v, a->name, type, a->ndim, shape, a->kind == A_OUT || a->kind == A_STATUS))
        return -1;
    const npy_intp *dims = PyArray_DIMS((PyArrayObject *)v);
    for (int d = 0; d < a->ndim; ++d)
        if (a->shape[d] < 0)
            sym[SYM(a->shape[d])] = dims[d];
    const npy_intp size = PyArray_SIZE((PyArrayObject *)v);
    if (a->kind == A_WRENCH)
        for (npy_intp r = 0; r < size; r += RD_WRENCH) {
            const double body = DATA(v)[r];
            if (!(body >= 0 && body < model->nb))
                return bad_shape_value(a->name, "a wrench row names no body");
        }
    if (a->kind == A_FRAMES)
        for (npy_intp r = 0; r < size; ++r)
            if (IDATA(v)[r] < 0 || IDATA(v)[r] >= model->nf) {
                PyErr_Format(PyExc_ValueError, "frame index %lld out of range (%d frames)", (long long)IDATA(v)[r],
                             model->nf);
                return -1;
            }
    *(void **)slot = PyArray_DATA((PyArrayObject *)v);
    return 0;
}

int rd_module_parse_args(const arg_spec *spec, int count, PyObject *args, PyObject *kwargs, char *out, npy_intp sym[S_COUNT])
{
    const Py_ssize_t npos = PyTuple_GET_SIZE(args);
    Py_ssize_t used = 0;
    const rd_model *model = NULL, *recent = NULL; /* the first model (the sizes), the last one */
    if (npos > count) {
        PyErr_Format(PyExc_TypeError, "expected at most %d arguments, got %zd", count, npos);
        return -1;
    }
    for (int s = 0; s < S_COUNT; ++s)
        sym[s] = -1;
    for (int i = 0; i < count; ++i) {
        const arg_spec *a = spec + i;
        PyObject *v = i < npos ? PyTuple_GET_ITEM(args, i) : (kwargs ? PyDict_GetItemString(kwargs, a->name) : NULL);
        void *slot = out + a->at;
        used += i >= npos && v;
        if (a->kind == A_DATA && a->optional && (!v || v == Py_None)) {
            *(rd_work **)slot = NULL;
            continue;
        }
        if (!v) {
            PyErr_Format(PyExc_TypeError, "%s: required", a->name);
            return -1;
        }
        int st;
        if (a->kind == A_MODEL)
            st = parse_model(a, v, slot, &model, sym), recent = *(const rd_model **)slot;
        else if (a->kind == A_DATA)
            st = (*(rd_work **)slot = rd_module_data(v, recent)) ? 0 : -1;
        else if (a->kind == A_BOOL || a->kind == A_INT || a->kind == A_FRAME || a->kind == A_DOUBLE)
            st = parse_scalar(a, v, slot, model);
        else if (a->kind == A_ROWS)
            st = parse_rows(a, v, slot, sym);
        else if (v == Py_None && a->optional)
            *(void **)slot = NULL, st = 0;
        else
            st = parse_array(a, v, slot, model, sym);
        if (st)
            return -1;
    }
    if (kwargs && PyDict_Size(kwargs) != used) {
        PyErr_SetString(PyExc_TypeError, "an unknown or repeated keyword argument");
        return -1;
    }
    return 0;
}

/* -- batches ------------------------------------------------------------------------------------------- */

static PyObject *py_call(PyObject *self, PyObject *args);

/* The argument tables, shared by name. */
#define BA(field) offsetof(batch_args, field)
#define ARG_MODEL {"model", A_MODEL, 0, {0}, 0, BA(m)}
#define ARG_Q {"Q", A_IN, 2, {S_N, S_NQ}, 0, BA(Q)}
#define ARG_QD {"QD", A_IN, 2, {S_N, S_NQ}, 0, BA(QD)}
#define ARG_X(name) {name, A_IN, 2, {S_N, S_NQ}, 0, BA(X)}
#define ARG_G {"g", A_IN, 1, {3}, 0, BA(g)}
#define ARG_FX {"FX", A_WRENCH, 3, {S_N, S_W, RD_WRENCH}, 0, BA(FX)}
#define ARG_FRICTION {"friction", A_BOOL, 0, {0}, 0, BA(friction)}, {"smooth", A_DOUBLE, 0, {0}, 0, BA(smooth)}
#define ARG_STATUS {"status", A_STATUS, 1, {S_N}, 0, BA(status)}
#define ARG_MATRICES(a, b, c)                                                                      \
    {a, A_OUT, 3, {S_N, S_NQ, S_NQ}, 0, BA(OUT)}, {b, A_OUT, 3, {S_N, S_NQ, S_NQ}, 0, BA(OUT2)},  \
    {c, A_OUT, 3, {S_N, S_NQ, S_NQ}, 0, BA(OUT3)}

typedef int (*stage_fn)(const void *args);

/* A batch (rows: its rows function) or a tick stage (stage: its function, below), with its table. */
typedef struct {
    PyMethodDef def; /* its ml_meth: py_call; its doc: the call */
    rows_fn rows;
    stage_fn stage;
    int count;
    arg_spec args[13];
} call_spec;

static call_spec batches[] = {
    {{"rnea_batch", py_call, METH_VARARGS, "rnea_batch(model, Q, QD, QDD, g, FX, friction, smooth, OUT, status)"},
     rnea_rows, NULL, 10, {ARG_MODEL, ARG_Q, ARG_QD, ARG_X("QDD"), ARG_G, ARG_FX, ARG_FRICTION,
                     {"OUT", A_OUT, 2, {S_N, S_NQ}, 0, BA(OUT)}, ARG_STATUS}},
    {{"aba_batch", py_call, METH_VARARGS, "aba_batch(model, Q, QD, TAU, g, FX, friction, smooth, OUT, status)"},
     aba_rows, NULL, 10, {ARG_MODEL, ARG_Q, ARG_QD, ARG_X("TAU"), ARG_G, ARG_FX, ARG_FRICTION,
                    {"OUT", A_OUT, 2, {S_N, S_NQ}, 0, BA(OUT)}, ARG_STATUS}},
    {{"rnea_derivatives_batch", py_call, METH_VARARGS,
      "rnea_derivatives_batch(model, Q, QD, QDD, g, FX, friction, smooth, DQ, DQD, M, status)"},
     rnea_derivatives_rows, NULL, 12, {ARG_MODEL, ARG_Q, ARG_QD, ARG_X("QDD"), ARG_G, ARG_FX, ARG_FRICTION,
                                 ARG_MATRICES("DQ", "DQD", "M"), ARG_STATUS}},
    {{"aba_derivatives_batch", py_call, METH_VARARGS,
      "aba_derivatives_batch(model, Q, QD, TAU, g, FX, friction, smooth, DQ, DQD, MINV, status)"},
     aba_derivatives_rows, NULL, 12, {ARG_MODEL, ARG_Q, ARG_QD, ARG_X("TAU"), ARG_G, ARG_FX, ARG_FRICTION,
                                ARG_MATRICES("DQ", "DQD", "MINV"), ARG_STATUS}},
    {{"crba_batch", py_call, METH_VARARGS, "crba_batch(model, Q, H, status)"},
     crba_rows, NULL, 4, {ARG_MODEL, ARG_Q, {"H", A_OUT, 3, {S_N, S_NQ, S_NQ}, 0, BA(OUT)}, ARG_STATUS}},
    {{"energy_batch", py_call, METH_VARARGS, "energy_batch(model, Q, QD, g, OUT, status): kinetic, potential"},
     energy_rows, NULL, 6, {ARG_MODEL, ARG_Q, ARG_QD, ARG_G, {"OUT", A_OUT, 2, {S_N, 2}, 0, BA(OUT)}, ARG_STATUS}},
    {{"frame_poses_batch", py_call, METH_VARARGS, "frame_poses_batch(model, Q, frames, T)"},
     frame_poses_rows, NULL, 4, {ARG_MODEL, ARG_Q, {"frames", A_FRAMES, 1, {S_F}, 0, BA(frames)},
                           {"T", A_OUT, 4, {S_N, S_F, 4, 4}, 0, BA(OUT)}}},
    {{"jacobian_batch", py_call, METH_VARARGS, "jacobian_batch(model, Q, k, J)"},
     jacobian_rows, NULL, 4, {ARG_MODEL, ARG_Q, {"k", A_FRAME, 0, {0}, 0, BA(k)}, {"J", A_OUT, 3, {S_N, 6, S_NQ}, 0, BA(OUT)}}},
    {{"point_motion_batch", py_call, METH_VARARGS, "point_motion_batch(model, Q, QD, k, VEL, ACC)"},
     point_motion_rows, NULL, 6, {ARG_MODEL, ARG_Q, ARG_QD, {"k", A_FRAME, 0, {0}, 0, BA(k)},
                            {"VEL", A_OUT, 2, {S_N, 6}, 0, BA(OUT)}, {"ACC", A_OUT, 2, {S_N, 6}, 0, BA(OUT2)}}},
    {{"motion_batch", py_call, METH_VARARGS, "motion_batch(model, Q, QD, QDD, g, E, r, V, A)"},
     motion_rows, NULL, 9, {ARG_MODEL, ARG_Q, ARG_QD, ARG_X("QDD"), ARG_G, {"E", A_OUT, 3, {S_N, S_NB, 9}, 0, BA(OUT)},
                      {"r", A_OUT, 3, {S_N, S_NB, 3}, 0, BA(OUT2)}, {"V", A_OUT, 3, {S_N, S_NB1, 6}, 0, BA(OUT3)},
                      {"A", A_OUT, 3, {S_N, S_NB1, 6}, 0, BA(OUT4)}}},
    {{"friction_batch", py_call, METH_VARARGS, "friction_batch(model, QD, smooth, OUT): joint friction (Khalil [7.26])"},
     friction_rows, NULL, 4, {ARG_MODEL, ARG_QD, {"smooth", A_DOUBLE, 0, {0}, 0, BA(smooth)},
                        {"OUT", A_OUT, 2, {S_N, S_NQ}, 0, BA(OUT)}}},
};
#define BATCH_COUNT ((int)(sizeof batches / sizeof batches[0]))

/* -- a compiled closed loop ---------------------------------------------------------------------------- */

typedef struct {
    rd_sim s;
    rd_sim_log L;
    double *x;
    int k0, k1;
    rd_work *wc, *wp; /* the controller's and the plant's data (NULL: the call's own) */
} sim_call;

#define SC(field) offsetof(sim_call, field)
#define SIM_VECTOR(name, field, optional) {name, A_IN, 1, {S_NQ}, optional, SC(s.field)}
#define SIM_TICKS(name, kind, field, optional) {name, kind, 2, {S_K, S_NQ}, optional, SC(L.field)}

static const arg_spec simulate_args[] = {
    {"ctrl", A_MODEL, 0, {0}, 0, SC(s.ctrl)}, {"ctrl_data", A_DATA, 0, {0}, 1, SC(wc)},
    {"plant", A_MODEL, 0, {0}, 0, SC(s.plant)}, {"plant_data", A_DATA, 0, {0}, 1, SC(wp)}, {"law", A_INT, 0, {0}, 0, SC(s.law)},
    {"substeps", A_INT, 0, {0}, 0, SC(s.substeps)}, {"last", A_INT, 0, {0}, 0, SC(s.last)},
    {"position", A_BOOL, 0, {0}, 0, SC(s.position)}, {"predictive", A_BOOL, 0, {0}, 0, SC(s.predictive)},
    {"desired_friction", A_BOOL, 0, {0}, 0, SC(s.desired_friction)},
    {"plant_friction", A_BOOL, 0, {0}, 0, SC(s.plant_friction)},
    {"h", A_DOUBLE, 0, {0}, 0, SC(s.h)}, {"smooth", A_DOUBLE, 0, {0}, 0, SC(s.smooth)},
    SIM_VECTOR("kp", kp, 0), SIM_VECTOR("kd", kd, 0), SIM_VECTOR("limit", limit, 0),
    SIM_VECTOR("actuator_limit", actuator_limit, 1),
    {"ctrl_A_inv", A_IN, 1, {S_NQ2}, 1, SC(s.ctrl_A_inv)}, {"plant_A", A_IN, 1, {S_NQ2}, 1, SC(s.plant_A)},
    {"g_plant", A_IN, 1, {3}, 0, SC(s.g_plant)}, SIM_VECTOR("pos_std", pos_std, 0), SIM_VECTOR("vel_std", vel_std, 0),
    SIM_TICKS("QR", A_IN, qr, 0), SIM_TICKS("QDR", A_IN, qdr, 0), SIM_TICKS("QDDR", A_IN, qddr, 0),
    SIM_TICKS("ZQ", A_IN, zq, 1), SIM_TICKS("ZQD", A_IN, zqd, 1), SIM_TICKS("DIST", A_IN, dist, 0),
    SIM_TICKS("Q", A_OUT, q, 0), SIM_TICKS("QD", A_OUT, qd, 0), SIM_TICKS("QDD", A_OUT, qdd, 0),
    SIM_TICKS("TAU", A_OUT, tau, 0), SIM_TICKS("EFF", A_OUT, effort, 0),
    {"STATUS", A_STATUS, 1, {S_K}, 0, SC(L.status)}, {"CLIP", A_STATUS, 1, {S_K}, 0, SC(L.clip)},
    {"x", A_OUT, 1, {S_2NQ}, 0, SC(x)}, {"k0", A_INT, 0, {0}, 0, SC(k0)}, {"k1", A_INT, 0, {0}, 0, SC(k1)},
};

/* simulate(**rd_sim's fields) -> (code, done): keyword arguments named as rd_sim's and rd_sim_log's
 * fields (engine.h), the per-tick arrays (K, nq), STATUS and CLIP int64 (K,), x (2 nq) updated;
 * ctrl_data and plant_data, the models' Data, or absent: two of the call's own. */
static PyObject *py_simulate(PyObject *mod, PyObject *args, PyObject *kwargs)
{
    sim_call c = {{0}};
    npy_intp sym[S_COUNT];
    if (rd_module_parse_args(simulate_args, (int)(sizeof simulate_args / sizeof simulate_args[0]), args, kwargs, (char *)&c, sym))
        return NULL;
    c.s.n = c.s.ctrl->nq;
    if (c.s.n > RD_SIM_MAX_JOINTS) {
        PyErr_SetString(PyExc_ValueError, "simulate: more joints than RD_SIM_MAX_JOINTS");
        return NULL;
    }
    if (!(0 <= c.k0 && c.k0 <= c.k1 && c.k1 <= sym[SYM(S_K)] && c.s.last < sym[SYM(S_K)] && c.s.substeps >= 1 &&
          (c.s.law == RD_LAW_COMPUTED_TORQUE || c.s.law == RD_LAW_PD_GRAVITY))) {
        PyErr_SetString(PyExc_ValueError, "simulate: ticks out of range, or an unknown law");
        return NULL;
    }
    int done = c.k0;
    EngineData *own[2] = {c.wc ? NULL : rd_module_new_data(c.s.ctrl), c.wp ? NULL : rd_module_new_data(c.s.plant)};
    if ((!c.wc && !own[0]) || (!c.wp && !own[1])) {
        Py_XDECREF(own[0]), Py_XDECREF(own[1]);
        return NULL;
    }
    rd_work *wc = c.wc ? c.wc : &own[0]->work, *wp = c.wp ? c.wp : &own[1]->work;
    const int code = rd_simulate(&c.s, &c.L, c.k0, c.k1, c.x, &done, wc, wp);
    Py_XDECREF(own[0]), Py_XDECREF(own[1]);
    return Py_BuildValue("ii", code, done);
}

/* -- one period of a simulated arm (rd_plant_advance) ---------------------------------------------------- */

typedef struct {
    rd_plant_period p;
    double dt;
    const double *u, *k1;
    double *x, *applied;
    rd_work *w;
} advance_call;

#define AC(field) offsetof(advance_call, field)

static const arg_spec plant_advance_args[] = {
    {"model", A_MODEL, 0, {0}, 0, AC(p.plant.model)}, {"data", A_DATA, 0, {0}, 0, AC(w)},
    {"g", A_IN, 1, {3}, 0, AC(p.plant.g)},
    {"friction", A_BOOL, 0, {0}, 0, AC(p.plant.friction)}, {"smooth", A_DOUBLE, 0, {0}, 0, AC(p.plant.smooth)},
    {"substeps", A_INT, 0, {0}, 0, AC(p.substeps)}, {"max_step", A_DOUBLE, 0, {0}, 0, AC(p.max_step)},
    {"max_substeps", A_INT, 0, {0}, 0, AC(p.max_substeps)}, {"dt", A_DOUBLE, 0, {0}, 0, AC(dt)},
    {"x", A_OUT, 1, {S_2NQ}, 0, AC(x)}, {"k1", A_IN, 1, {S_2NQ}, 1, AC(k1)}, {"u", A_IN, 1, {S_NQ}, 1, AC(u)},
    {"applied", A_OUT, 1, {S_NQ}, 0, AC(applied)},
};

/* plant_advance(model, data, g, friction, smooth, substeps, max_step, max_substeps, dt, x, k1, u, applied)
 * -> (code, steps, h, braked, lagging): rd_plant_advance with rd_plant_period's fields; x (2 nq) and
 * applied (nq) written in place, k1 and u None for NULL. */
static PyObject *py_plant_advance(PyObject *mod, PyObject *args, PyObject *kwargs)
{
    advance_call c;
    memset(&c, 0, sizeof c);
    npy_intp sym[S_COUNT];
    if (rd_module_parse_args(plant_advance_args, (int)(sizeof plant_advance_args / sizeof plant_advance_args[0]), args, kwargs,
                   (char *)&c, sym))
        return NULL;
    rd_plant_report r;
    const int code = rd_plant_advance(&c.p, c.dt, c.u, c.k1, c.x, c.applied, &r, c.w);
    return Py_BuildValue("iidii", code, r.steps, r.h, r.braked, r.lagging);
}

/* linear_recurrence(Ad (m, m), Bd (m, p), x0 (m,), U (K, p), E (K, ne)): E[k] = x_k[:ne] of
 * x_k = Ad x_(k-1) + Bd U[k-1]. */
static PyObject *py_linear_recurrence(PyObject *mod, PyObject *args)
{
    PyObject *Ad, *Bd, *x0, *U, *E;
    if (!PyArg_ParseTuple(args, "OOOOO", &Ad, &Bd, &x0, &U, &E))
        return NULL;
    if (check_array(Ad, "Ad", NPY_DOUBLE, 2, (npy_intp[]){-1, -1}, 0))
        return NULL;
    const npy_intp m = PyArray_DIMS((PyArrayObject *)Ad)[0];
    if (check_array(Ad, "Ad", NPY_DOUBLE, 2, (npy_intp[]){m, m}, 0) || check_array(Bd, "Bd", NPY_DOUBLE, 2, (npy_intp[]){m, -1}, 0))
        return NULL;
    const npy_intp p = PyArray_DIMS((PyArrayObject *)Bd)[1];
    if (check_array(x0, "x0", NPY_DOUBLE, 1, (npy_intp[]){m}, 0) || check_array(U, "U", NPY_DOUBLE, 2, (npy_intp[]){-1, p}, 0))
        return NULL;
    const npy_intp K = PyArray_DIMS((PyArrayObject *)U)[0];
    if (check_array(E, "E", NPY_DOUBLE, 2, (npy_intp[]){K, -1}, 1))
        return NULL;
    const npy_intp ne = PyArray_DIMS((PyArrayObject *)E)[1];
    if (ne > m || m > 100000) {
        PyErr_SetString(PyExc_ValueError, "linear_recurrence: E has more columns than the state");
        return NULL;
    }
    double *work = malloc(sizeof(double) * 2 * (size_t)m);
    if (!work)
        return PyErr_NoMemory();
    const rd_linear_system sys = {(int)m, (int)p, DATA(Ad), DATA(Bd)};
    rd_linear_recurrence(&sys, (int)ne, (int)K, DATA(x0), DATA(U), DATA(E), work);
    free(work);
    Py_RETURN_NONE;
}

/* -- the tick stages, one state each -------------------------------------------------------------------
 * The functions of control.c and plant.c that the compiled loop sequences, for the Python controllers
 * and plant (robot_dynamics.engine.stages): the Python tick computes what the compiled loop computes.
 * Each takes its table's arguments, writes its outputs and returns the engine's status (an int). */

typedef struct {
    const rd_model *m;
    rd_work *w;
    const double *kp, *kd, *q, *qd, *qr, *qdr, *qddr, *g, *limit, *A_inv, *actuator_limit, *k1, *u;
    int position, predictive, desired_friction, friction, substeps;
    double smooth, h;
    double *out, *out2, *out3;
} stage_args;

static int computed_torque_stage(const void *args)
{
    const stage_args *a = args;
    const rd_computed_torque_options o = {a->kp, a->kd, a->position, a->predictive, a->desired_friction};
    const rd_reference r = {a->qr, a->qdr, a->qddr};
    return rd_computed_torque(a->m, &o, a->q, a->qd, &r, a->out, a->w);
}

static int pd_gravity_stage(const void *args)
{
    const stage_args *a = args;
    const rd_pd_gains k = {a->kp, a->kd};
    const rd_reference r = {a->qr, a->qdr, NULL};
    return rd_pd_gravity(a->m, &k, a->q, a->qd, &r, a->out, a->w);
}

static int saturate_stage(const void *args)
{
    const stage_args *a = args;
    return rd_saturate_effort(a->m->nq, a->limit, a->A_inv, a->actuator_limit, a->out, a->out2, a->out3);
}

static int plant_accel_stage(const void *args)
{
    const stage_args *a = args;
    const rd_plant p = {a->m, a->g, a->friction, a->smooth};
    return rd_plant_accel(&p, a->q, a->qd, a->u, a->out, a->w);
}

static int plant_step_stage(const void *args)
{
    const stage_args *a = args;
    const rd_plant p = {a->m, a->g, a->friction, a->smooth};
    return rd_plant_step(&p, a->h, a->substeps, a->out, a->k1, a->u, a->w);
}

#define ST(field) offsetof(stage_args, field)
#define STAGE_VECTOR(name, kind, field, optional) {name, kind, 1, {S_NQ}, optional, ST(field)}
#define STAGE_MODEL {"model", A_MODEL, 0, {0}, 0, ST(m)}, {"data", A_DATA, 0, {0}, 0, ST(w)}
#define STAGE_GAINS STAGE_VECTOR("kp", A_IN, kp, 0), STAGE_VECTOR("kd", A_IN, kd, 0)
#define STAGE_STATE STAGE_VECTOR("q", A_IN, q, 0), STAGE_VECTOR("qd", A_IN, qd, 0)
#define STAGE_PLANT STAGE_MODEL, {"g", A_IN, 1, {3}, 0, ST(g)}, {"friction", A_BOOL, 0, {0}, 0, ST(friction)}, \
                    {"smooth", A_DOUBLE, 0, {0}, 0, ST(smooth)}

static call_spec stages[] = {
    {{"computed_torque", py_call, METH_VARARGS,
      "computed_torque(model, data, kp, kd, position, predictive, desired_friction, q, qd, qr, qdr, qddr, tau) -> status"},
     NULL, computed_torque_stage, 13, {STAGE_MODEL, STAGE_GAINS, {"position", A_BOOL, 0, {0}, 0, ST(position)},
                                 {"predictive", A_BOOL, 0, {0}, 0, ST(predictive)},
                                 {"desired_friction", A_BOOL, 0, {0}, 0, ST(desired_friction)}, STAGE_STATE,
                                 STAGE_VECTOR("qr", A_IN, qr, 0), STAGE_VECTOR("qdr", A_IN, qdr, 0),
                                 STAGE_VECTOR("qddr", A_IN, qddr, 0), STAGE_VECTOR("tau", A_OUT, out, 0)}},
    {{"pd_gravity", py_call, METH_VARARGS, "pd_gravity(model, data, kp, kd, q, qd, qr, qdr, tau) -> status"},
     NULL, pd_gravity_stage, 9, {STAGE_MODEL, STAGE_GAINS, STAGE_STATE, STAGE_VECTOR("qr", A_IN, qr, 0),
                           STAGE_VECTOR("qdr", A_IN, qdr, 0), STAGE_VECTOR("tau", A_OUT, out, 0)}},
    {{"saturate", py_call, METH_VARARGS,
      "saturate(model, data, limit, A_inv, actuator_limit, tau, xi, flags) -> 1 when an actuator torque was clipped"},
     NULL, saturate_stage, 8, {STAGE_MODEL, STAGE_VECTOR("limit", A_IN, limit, 0),
                         {"A_inv", A_IN, 2, {S_NQ, S_NQ}, 1, ST(A_inv)}, STAGE_VECTOR("actuator_limit", A_IN, actuator_limit, 1),
                         STAGE_VECTOR("tau", A_OUT, out, 0), STAGE_VECTOR("xi", A_OUT, out2, 0),
                         STAGE_VECTOR("flags", A_OUT, out3, 0)}},
    {{"plant_accel", py_call, METH_VARARGS, "plant_accel(model, data, g, friction, smooth, q, qd, u, qdd) -> status"},
     NULL, plant_accel_stage, 9, {STAGE_PLANT, STAGE_STATE, STAGE_VECTOR("u", A_IN, u, 0), STAGE_VECTOR("qdd", A_OUT, out, 0)}},
    {{"plant_step", py_call, METH_VARARGS,
      "plant_step(model, data, g, friction, smooth, h, substeps, x, k1, u) -> status: x (2 nq) advanced in place"},
     NULL, plant_step_stage, 10, {STAGE_PLANT, {"h", A_DOUBLE, 0, {0}, 0, ST(h)}, {"substeps", A_INT, 0, {0}, 0, ST(substeps)},
                           {"x", A_OUT, 1, {S_2NQ}, 0, ST(out)}, {"k1", A_IN, 1, {S_2NQ}, 1, ST(k1)},
                           STAGE_VECTOR("u", A_IN, u, 0)}},
};
#define STAGE_COUNT ((int)(sizeof stages / sizeof stages[0]))

/* Every batch and stage: its table parses the arguments, then run_batch runs a batch's rows, or
 * the stage runs and its status is returned. self: the call_spec. */
static PyObject *py_call(PyObject *self, PyObject *args)
{
    const call_spec *spec = PyCapsule_GetPointer(self, NULL);
    union {
        batch_args b;
        stage_args s;
    } a;
    memset(&a, 0, sizeof a);
    npy_intp sym[S_COUNT];
    if (!spec || rd_module_parse_args(spec->args, spec->count, args, NULL, (char *)&a, sym))
        return NULL;
    if (spec->stage)
        return PyLong_FromLong(spec->stage(&a.s));
    a.b.nfx = sym[SYM(S_W)] < 0 ? 0 : (int)sym[SYM(S_W)];
    a.b.nframes = sym[SYM(S_F)] < 0 ? 0 : (int)sym[SYM(S_F)];
    if (run_batch(&a.b, spec->rows, sym[SYM(S_N)]))
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef loop_methods[] = {
    {"linear_recurrence", py_linear_recurrence, METH_VARARGS,
     "linear_recurrence(Ad, Bd, x0, U, E): E[k] = x_k[:ne] of x_k = Ad x_(k-1) + Bd U[k-1] (a zero-order-hold linear system)"},
    {"plant_advance", (PyCFunction)(void (*)(void))py_plant_advance, METH_VARARGS | METH_KEYWORDS,
     "plant_advance(model, data, g, friction, smooth, substeps, max_step, max_substeps, dt, x, k1, u, applied) -> (code, "
     "steps, h, braked, lagging): one period of a simulated arm (engine.h's rd_plant_advance), x and applied in place"},
    {"simulate", (PyCFunction)(void (*)(void))py_simulate, METH_VARARGS | METH_KEYWORDS,
     "simulate(ctrl=, plant=, law=, ..., x=, k0=, k1=) -> (code, done): ticks of joint-space computed torque or PD + "
     "gravity on a rigid plant, RK4; keyword arguments named as engine.h's rd_sim and rd_sim_log fields"},
    {NULL, NULL, 0, NULL},
};

/* Adds the functions of a table (ml_self: its entry) to the module. */
static int add_table(PyObject *mod, call_spec *table, int count)
{
    for (int k = 0; k < count; ++k) {
        PyObject *spec = PyCapsule_New(&table[k], NULL, NULL);
        PyObject *fn = spec ? PyCFunction_NewEx(&table[k].def, spec, NULL) : NULL;
        Py_XDECREF(spec);
        if (!fn || PyModule_AddObject(mod, table[k].def.ml_name, fn) < 0) {
            Py_XDECREF(fn);
            return -1;
        }
    }
    return 0;
}

int rd_module_add_batches(PyObject *mod)
{
    if (add_table(mod, batches, BATCH_COUNT) || add_table(mod, stages, STAGE_COUNT))
        return -1;
    if (PyModule_AddIntConstant(mod, "SERIAL_BELOW", RD_SERIAL_BELOW) < 0 ||
        PyModule_AddIntConstant(mod, "LAW_COMPUTED_TORQUE", RD_LAW_COMPUTED_TORQUE) < 0 ||
        PyModule_AddIntConstant(mod, "LAW_PD_GRAVITY", RD_LAW_PD_GRAVITY) < 0)
        return -1;
    return PyModule_AddFunctions(mod, loop_methods);
}
