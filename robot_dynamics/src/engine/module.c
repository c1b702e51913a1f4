/* _robot_dynamics_engine: the Python side of the engine (CPython and numpy C API).
 *
 * Model(...): a RobotModel packed into the C structs of engine.h, once per model (the Python
 * package keeps it on the immutable RobotModel). It owns the one-state workspace: one-state
 * calls hold the GIL, so two of them never share it at once.
 *
 * One state: rnea(model, q, qd, qdd, friction), aba(model, q, qd, tau, friction), crba(model, q)
 * take float64 C-contiguous vectors of length nq exactly (checked here, cheaply) and return a new
 * array; for anything else (a list, a batch, integers, a bad value, a singular state) they return
 * NotImplemented, and the caller takes its general, validating path, which words the error.
 * ``model`` is an engine Model or a RobotModel that carries one as ``_engine``.
 *
 * Batches: X_batch(model, arrays...) over N states, the arrays validated by the caller (shapes
 * are checked again here), the GIL released, OpenMP threads over chunks of samples with a
 * workspace per thread; below SERIAL_BELOW states (or with one thread) the calling thread alone.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "engine.h"

/* The contract between this module and the Python package: bump it when either side changes
 * what it passes or expects, so that a stale build is refused at import rather than misread. */
#define RD_LAYOUT 4

/* Batches smaller than this run in the calling thread: starting the OpenMP team costs more than
 * their work (measured by bench/bench_core.py --threshold). */
#define RD_SERIAL_BELOW 64

static int rd_threads = 1;

/* -- the model ----------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    rd_model m;   /* its block holds the one-state workspace too */
    rd_work work;
} EngineModel;

static PyTypeObject EngineModelType;

static void model_dealloc(EngineModel *self)
{
    rd_model_free(&self->m);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A keyword argument as a C-contiguous float64 array of `count` values (copied by numpy if needed). */
static PyArrayObject *field(PyObject *kwargs, const char *name, npy_intp count)
{
    PyObject *obj = PyDict_GetItemString(kwargs, name);
    if (!obj) {
        PyErr_Format(PyExc_TypeError, "Model: missing field %s", name);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(obj, NPY_DOUBLE, 0, 0, NPY_ARRAY_IN_ARRAY);
    if (!a)
        return NULL;
    if (PyArray_SIZE(a) != count) {
        PyErr_Format(PyExc_ValueError, "Model: field %s has %zd values, expected %zd", name,
                     (Py_ssize_t)PyArray_SIZE(a), (Py_ssize_t)count);
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

static int int_field(PyObject *kwargs, const char *name, int *out)
{
    PyObject *obj = PyDict_GetItemString(kwargs, name);
    if (!obj) {
        PyErr_Format(PyExc_TypeError, "Model: missing field %s", name);
        return -1;
    }
    long v = PyLong_AsLong(obj);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v < 0 || v > 1000000) {
        PyErr_Format(PyExc_ValueError, "Model: %s = %ld out of range", name, v);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* A new Python Model around *m (built), its workspace at `work`. */
static PyObject *wrap_model(PyTypeObject *type, rd_model *m, void *work)
{
    EngineModel *self = (EngineModel *)type->tp_alloc(type, 0);
    if (!self) {
        rd_model_free(m);
        return NULL;
    }
    self->m = *m;
    rd_work_bind(&self->work, work, m->nb, m->nq);
    return (PyObject *)self;
}

/* Model(**fields): the fields of engine.h's RD_MODEL_FIELDS (robot_dynamics.kernels.layout.pack)
 * and the sizes nb, nq, nr, nf, tree. */
static PyObject *model_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    rd_model_size z;
    if (PyTuple_GET_SIZE(args) != 0 || !kwargs) {
        PyErr_SetString(PyExc_TypeError, "Model: keyword arguments only");
        return NULL;
    }
    if (int_field(kwargs, "nb", &z.nb) || int_field(kwargs, "nq", &z.nq) || int_field(kwargs, "nr", &z.nr) ||
        int_field(kwargs, "nf", &z.nf) || int_field(kwargs, "tree", &z.tree))
        return NULL;
    PyArrayObject *arr[RD_FIELD_COUNT] = {0};
    const double *x[RD_FIELD_COUNT];
    PyObject *result = NULL;
    for (int k = 0; k < RD_FIELD_COUNT; ++k) {
        arr[k] = field(kwargs, rd_model_field_names[k], (npy_intp)rd_model_field_length(k, &z));
        if (!arr[k])
            goto done;
        x[k] = (const double *)PyArray_DATA(arr[k]);
    }
    rd_model m;
    void *work;
    char err[256];
    if (rd_model_build(&m, &z, x, rd_work_bytes(z.nb, z.nq), &work, err, sizeof err) != RD_OK) {
        PyErr_SetString(PyExc_ValueError, err);
        goto done;
    }
    result = wrap_model(type, &m, work);
done:
    for (int k = 0; k < RD_FIELD_COUNT; ++k)
        Py_XDECREF(arr[k]);
    return result;
}

/* parse_model(text) -> Model: the text form (engine.h, rd_model_parse), as C and C++ users load it. */
static PyObject *py_parse_model(PyObject *mod, PyObject *arg)
{
    const char *text = PyUnicode_AsUTF8(arg);
    if (!text)
        return NULL;
    rd_model m;
    rd_model_size z;
    void *work;
    char err[256];
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = rd_model_text_size(text, &z, err, sizeof err);
    if (st == RD_OK)
        st = rd_model_parse(&m, text, rd_work_bytes(z.nb, z.nq), &work, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (st != RD_OK) {
        PyErr_SetString(PyExc_ValueError, err);
        return NULL;
    }
    PyObject *out = wrap_model(&EngineModelType, &m, work);
    if (!out)
        return NULL;
    /* the description's side, for the caller to check: joint names and effort limits */
    PyObject *names = PyTuple_New(m.nq), *limits = PyTuple_New(m.nq);
    if (!names || !limits) {
        Py_XDECREF(names), Py_XDECREF(limits), Py_DECREF(out);
        return NULL;
    }
    for (int k = 0; k < m.nq; ++k) {
        PyTuple_SET_ITEM(names, k, PyUnicode_FromString(m.joint_name[k]));
        PyTuple_SET_ITEM(limits, k, PyFloat_FromDouble(m.effort_limit[k]));
    }
    return Py_BuildValue("NNN", out, names, limits);
}

static PyObject *model_get_nq(EngineModel *self, void *closure) { return PyLong_FromLong(self->m.nq); }
static PyObject *model_get_nb(EngineModel *self, void *closure) { return PyLong_FromLong(self->m.nb); }
static PyObject *model_get_tree(EngineModel *self, void *closure) { return PyBool_FromLong(self->m.tree); }
static PyObject *model_get_work_bytes(EngineModel *self, void *closure)
{
    return PyLong_FromSize_t(rd_work_bytes(self->m.nb, self->m.nq));
}

static PyGetSetDef model_getset[] = {
    {"nq", (getter)model_get_nq, NULL, "independent joints", NULL},
    {"nb", (getter)model_get_nb, NULL, "moving bodies", NULL},
    {"tree", (getter)model_get_tree, NULL, "True when the articulated-body recursion applies", NULL},
    {"work_bytes", (getter)model_get_work_bytes, NULL, "bytes of one state's workspace", NULL},
    {NULL},
};

static PyTypeObject EngineModelType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_robot_dynamics_engine.Model",
    .tp_basicsize = sizeof(EngineModel),
    .tp_dealloc = (destructor)model_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A RobotModel packed for the engine (keyword fields; see robot_dynamics.kernels.layout).",
    .tp_new = model_new,
    .tp_getset = model_getset,
};

/* -- one state --------------------------------------------------------------------------------------- */

static PyObject *str_engine; /* "_engine" */

/* The engine model of `obj` (an engine Model or a RobotModel carrying one), borrowed; NULL if none. */
static EngineModel *engine_of(PyObject *obj)
{
    if (Py_TYPE(obj) == &EngineModelType)
        return (EngineModel *)obj;
    PyObject **dict = _PyObject_GetDictPtr(obj);
    if (!dict || !*dict)
        return NULL;
    PyObject *em = PyDict_GetItemWithError(*dict, str_engine);
    if (!em || Py_TYPE(em) != &EngineModelType) {
        PyErr_Clear();
        return NULL;
    }
    return (EngineModel *)em;
}

/* x is a float64 C-contiguous vector of n finite values. */
static inline int fast_vector(PyObject *x, int n)
{
    if (!PyArray_CheckExact(x))
        return 0;
    PyArrayObject *a = (PyArrayObject *)x;
    return PyArray_NDIM(a) == 1 && PyArray_DIMS(a)[0] == n && PyArray_TYPE(a) == NPY_DOUBLE &&
           PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISALIGNED(a) && rd_finite((const double *)PyArray_DATA(a), n);
}

typedef int (*one_state_fn)(const rd_model *, const double *, const double *, const double *, const double *,
                            const double *, int, int, double, double *, rd_work *);

static PyObject *one_state(PyObject *const *args, Py_ssize_t nargs, one_state_fn fn)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "expected (model, q, qd, x, friction)");
        return NULL;
    }
    EngineModel *em = engine_of(args[0]);
    if (!em)
        Py_RETURN_NOTIMPLEMENTED;
    const int nq = em->m.nq;
    if (!fast_vector(args[1], nq) || !fast_vector(args[2], nq) || !fast_vector(args[3], nq))
        Py_RETURN_NOTIMPLEMENTED;
    npy_intp dim = nq;
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(1, &dim, NPY_DOUBLE);
    if (!out)
        return NULL;
    const int friction = PyObject_IsTrue(args[4]);
    if (friction < 0) {
        Py_DECREF(out);
        return NULL;
    }
    const int st = fn(&em->m, PyArray_DATA((PyArrayObject *)args[1]), PyArray_DATA((PyArrayObject *)args[2]),
                      PyArray_DATA((PyArrayObject *)args[3]), em->m.gravity, NULL, 0, friction, 0.0,
                      (double *)PyArray_DATA(out), &em->work);
    if (st != RD_OK) {
        Py_DECREF(out);
        Py_RETURN_NOTIMPLEMENTED; /* the general path words the error */
    }
    return (PyObject *)out;
}

static PyObject *py_rnea(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) { return one_state(args, nargs, rd_rnea); }
static PyObject *py_aba(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) { return one_state(args, nargs, rd_aba); }

static PyObject *py_crba(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "expected (model, q)");
        return NULL;
    }
    EngineModel *em = engine_of(args[0]);
    if (!em || !fast_vector(args[1], em->m.nq))
        Py_RETURN_NOTIMPLEMENTED;
    npy_intp dims[2] = {em->m.nq, em->m.nq};
    PyArrayObject *H = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    if (!H)
        return NULL;
    if (rd_crba(&em->m, PyArray_DATA((PyArrayObject *)args[1]), (double *)PyArray_DATA(H), &em->work) != RD_OK) {
        Py_DECREF(H);
        Py_RETURN_NOTIMPLEMENTED;
    }
    return (PyObject *)H;
}

typedef int (*derivatives_fn)(const rd_model *, const double *, const double *, const double *, const double *,
                              const double *, int, int, double, double *, double *, double *, rd_work *);

/* (d/dq, d/dqd, M or M^-1) of one state, three new (nq, nq) arrays, or NotImplemented. */
static PyObject *one_state_derivatives(PyObject *const *args, Py_ssize_t nargs, derivatives_fn fn)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "expected (model, q, qd, x, friction)");
        return NULL;
    }
    EngineModel *em = engine_of(args[0]);
    if (!em)
        Py_RETURN_NOTIMPLEMENTED;
    const int nq = em->m.nq;
    if (!fast_vector(args[1], nq) || !fast_vector(args[2], nq) || !fast_vector(args[3], nq))
        Py_RETURN_NOTIMPLEMENTED;
    const int friction = PyObject_IsTrue(args[4]);
    if (friction < 0)
        return NULL;
    npy_intp dims[2] = {nq, nq};
    PyObject *out[3] = {NULL, NULL, NULL};
    for (int k = 0; k < 3; ++k)
        if (!(out[k] = PyArray_SimpleNew(2, dims, NPY_DOUBLE))) {
            Py_XDECREF(out[0]), Py_XDECREF(out[1]);
            return NULL;
        }
    const int st = fn(&em->m, PyArray_DATA((PyArrayObject *)args[1]), PyArray_DATA((PyArrayObject *)args[2]),
                      PyArray_DATA((PyArrayObject *)args[3]), em->m.gravity, NULL, 0, friction, 0.0,
                      (double *)PyArray_DATA((PyArrayObject *)out[0]), (double *)PyArray_DATA((PyArrayObject *)out[1]),
                      (double *)PyArray_DATA((PyArrayObject *)out[2]), &em->work);
    if (st != RD_OK) {
        Py_DECREF(out[0]), Py_DECREF(out[1]), Py_DECREF(out[2]);
        Py_RETURN_NOTIMPLEMENTED; /* the general path words the error */
    }
    PyObject *t = PyTuple_New(3);
    if (!t) {
        Py_DECREF(out[0]), Py_DECREF(out[1]), Py_DECREF(out[2]);
        return NULL;
    }
    for (int k = 0; k < 3; ++k)
        PyTuple_SET_ITEM(t, k, out[k]);
    return t;
}

static PyObject *py_rnea_derivatives(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    return one_state_derivatives(args, nargs, rd_rnea_derivatives);
}

static PyObject *py_aba_derivatives(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    return one_state_derivatives(args, nargs, rd_aba_derivatives);
}

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

/* Run rows [0, N) of a batch: chunks of samples over the OpenMP threads, one workspace per thread. */
static int run_batch(const batch_args *b, rows_fn fn, npy_intp N)
{
    const int nb = b->m->nb, nq = b->m->nq;
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
                    fn(b, &w, ch * N / nc, (ch + 1) * N / nc);
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

static void rnea_rows(const batch_args *b, rd_work *w, npy_intp lo, npy_intp hi)
{
    const int nq = b->m->nq;
    for (npy_intp n = lo; n < hi; ++n)
        b->status[n] = rd_rnea(b->m, b->Q + n * nq, b->QD + n * nq, b->X + n * nq, b->g, b->FX + n * b->nfx * RD_WRENCH,
                               b->nfx, b->friction, b->smooth, b->OUT + n * nq, w);
}

static void aba_rows(const batch_args *b, rd_work *w, npy_intp lo, npy_intp hi)
{
    const int nq = b->m->nq;
    for (npy_intp n = lo; n < hi; ++n)
        b->status[n] = rd_aba(b->m, b->Q + n * nq, b->QD + n * nq, b->X + n * nq, b->g, b->FX + n * b->nfx * RD_WRENCH,
                              b->nfx, b->friction, b->smooth, b->OUT + n * nq, w);
}

static void derivatives_rows(const batch_args *b, rd_work *w, npy_intp lo, npy_intp hi, derivatives_fn fn)
{
    const int nq = b->m->nq;
    const npy_intp nn = (npy_intp)nq * nq;
    for (npy_intp n = lo; n < hi; ++n)
        b->status[n] = fn(b->m, b->Q + n * nq, b->QD + n * nq, b->X + n * nq, b->g, b->FX + n * b->nfx * RD_WRENCH,
                          b->nfx, b->friction, b->smooth, b->OUT + n * nn, b->OUT2 + n * nn, b->OUT3 + n * nn, w);
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

/* rnea_batch / aba_batch(model, Q, QD, X, g, FX, friction, smooth, OUT, status): OUT (N, nq);
 * rnea_derivatives_batch / aba_derivatives_batch(..., OUT, OUT2, OUT3, status): three (N, nq, nq). */
static PyObject *dynamics_batch(PyObject *args, rows_fn fn, int matrices)
{
    PyObject *model, *Q, *QD, *X, *g, *FX, *OUT, *OUT2 = NULL, *OUT3 = NULL, *status;
    int friction;
    double smooth;
    if (matrices ? !PyArg_ParseTuple(args, "OOOOOOpdOOOO", &model, &Q, &QD, &X, &g, &FX, &friction, &smooth, &OUT,
                                     &OUT2, &OUT3, &status)
                 : !PyArg_ParseTuple(args, "OOOOOOpdOO", &model, &Q, &QD, &X, &g, &FX, &friction, &smooth, &OUT, &status))
        return NULL;
    EngineModel *em = model_arg(model);
    if (!em || check_array(Q, "Q", NPY_DOUBLE, 2, (npy_intp[]){-1, em->m.nq}, 0))
        return NULL;
    const npy_intp N = PyArray_DIMS((PyArrayObject *)Q)[0], nq = em->m.nq;
    const npy_intp vec[2] = {N, nq}, mat[3] = {N, nq, nq};
    if (check_array(QD, "QD", NPY_DOUBLE, 2, (npy_intp[]){N, nq}, 0) || check_array(X, "X", NPY_DOUBLE, 2, (npy_intp[]){N, nq}, 0) ||
        check_array(g, "g", NPY_DOUBLE, 1, (npy_intp[]){3}, 0) ||
        check_array(FX, "FX", NPY_DOUBLE, 3, (npy_intp[]){N, -1, RD_WRENCH}, 0) ||
        check_array(OUT, "OUT", NPY_DOUBLE, matrices ? 3 : 2, matrices ? mat : vec, 1) ||
        (matrices && (check_array(OUT2, "OUT2", NPY_DOUBLE, 3, mat, 1) || check_array(OUT3, "OUT3", NPY_DOUBLE, 3, mat, 1))) ||
        check_array(status, "status", NPY_INT64, 1, (npy_intp[]){N}, 1))
        return NULL;
    const int nfx = (int)PyArray_DIMS((PyArrayObject *)FX)[1];
    const double *fx = DATA(FX);
    for (npy_intp r = 0; r < N * nfx; ++r)
        if (!(fx[r * RD_WRENCH] >= 0 && fx[r * RD_WRENCH] < em->m.nb)) {
            PyErr_SetString(PyExc_ValueError, "FX: a wrench row names no body");
            return NULL;
        }
    batch_args b = {.m = &em->m, .Q = DATA(Q), .QD = DATA(QD), .X = DATA(X), .g = DATA(g), .FX = fx, .nfx = nfx,
                    .friction = friction, .smooth = smooth, .OUT = DATA(OUT), .status = IDATA(status)};
    if (matrices)
        b.OUT2 = DATA(OUT2), b.OUT3 = DATA(OUT3);
    if (run_batch(&b, fn, N))
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_rnea_batch(PyObject *mod, PyObject *args) { return dynamics_batch(args, rnea_rows, 0); }
static PyObject *py_aba_batch(PyObject *mod, PyObject *args) { return dynamics_batch(args, aba_rows, 0); }
static PyObject *py_rnea_derivatives_batch(PyObject *mod, PyObject *args) { return dynamics_batch(args, rnea_derivatives_rows, 1); }
static PyObject *py_aba_derivatives_batch(PyObject *mod, PyObject *args) { return dynamics_batch(args, aba_derivatives_rows, 1); }

/* crba_batch(model, Q, H, status) */
static PyObject *py_crba_batch(PyObject *mod, PyObject *args)
{
    PyObject *model, *Q, *H, *status;
    if (!PyArg_ParseTuple(args, "OOOO", &model, &Q, &H, &status))
        return NULL;
    EngineModel *em = model_arg(model);
    if (!em || check_array(Q, "Q", NPY_DOUBLE, 2, (npy_intp[]){-1, em->m.nq}, 0))
        return NULL;
    const npy_intp N = PyArray_DIMS((PyArrayObject *)Q)[0], nq = em->m.nq;
    if (check_array(H, "H", NPY_DOUBLE, 3, (npy_intp[]){N, nq, nq}, 1) ||
        check_array(status, "status", NPY_INT64, 1, (npy_intp[]){N}, 1))
        return NULL;
    batch_args b = {.m = &em->m, .Q = DATA(Q), .OUT = DATA(H), .status = IDATA(status)};
    if (run_batch(&b, crba_rows, N))
        return NULL;
    Py_RETURN_NONE;
}

/* energy_batch(model, Q, QD, g, OUT (N, 2), status) */
static PyObject *py_energy_batch(PyObject *mod, PyObject *args)
{
    PyObject *model, *Q, *QD, *g, *OUT, *status;
    if (!PyArg_ParseTuple(args, "OOOOOO", &model, &Q, &QD, &g, &OUT, &status))
        return NULL;
    EngineModel *em = model_arg(model);
    if (!em || check_array(Q, "Q", NPY_DOUBLE, 2, (npy_intp[]){-1, em->m.nq}, 0))
        return NULL;
    const npy_intp N = PyArray_DIMS((PyArrayObject *)Q)[0], nq = em->m.nq;
    if (check_array(QD, "QD", NPY_DOUBLE, 2, (npy_intp[]){N, nq}, 0) || check_array(g, "g", NPY_DOUBLE, 1, (npy_intp[]){3}, 0) ||
        check_array(OUT, "OUT", NPY_DOUBLE, 2, (npy_intp[]){N, 2}, 1) ||
        check_array(status, "status", NPY_INT64, 1, (npy_intp[]){N}, 1))
        return NULL;
    batch_args b = {.m = &em->m, .Q = DATA(Q), .QD = DATA(QD), .g = DATA(g), .OUT = DATA(OUT), .status = IDATA(status)};
    if (run_batch(&b, energy_rows, N))
        return NULL;
    Py_RETURN_NONE;
}

static int frame_arg(EngineModel *em, int k)
{
    if (k < 0 || k >= em->m.nf) {
        PyErr_Format(PyExc_ValueError, "frame index %d out of range (%d frames)", k, em->m.nf);
        return -1;
    }
    return 0;
}

/* frame_poses_batch(model, Q, frames (F,) int64, T (N, F, 4, 4)) */
static PyObject *py_frame_poses_batch(PyObject *mod, PyObject *args)
{
    PyObject *model, *Q, *frames, *T;
    if (!PyArg_ParseTuple(args, "OOOO", &model, &Q, &frames, &T))
        return NULL;
    EngineModel *em = model_arg(model);
    if (!em || check_array(Q, "Q", NPY_DOUBLE, 2, (npy_intp[]){-1, em->m.nq}, 0) ||
        check_array(frames, "frames", NPY_INT64, 1, (npy_intp[]){-1}, 0))
        return NULL;
    const npy_intp N = PyArray_DIMS((PyArrayObject *)Q)[0], F = PyArray_DIMS((PyArrayObject *)frames)[0];
    if (check_array(T, "T", NPY_DOUBLE, 4, (npy_intp[]){N, F, 4, 4}, 1))
        return NULL;
    for (npy_intp f = 0; f < F; ++f)
        if (frame_arg(em, (int)IDATA(frames)[f]))
            return NULL;
    batch_args b = {.m = &em->m, .Q = DATA(Q), .frames = IDATA(frames), .nframes = (int)F, .OUT = DATA(T)};
    if (run_batch(&b, frame_poses_rows, N))
        return NULL;
    Py_RETURN_NONE;
}

/* jacobian_batch(model, Q, k, J (N, 6, nq)) */
static PyObject *py_jacobian_batch(PyObject *mod, PyObject *args)
{
    PyObject *model, *Q, *J;
    int k;
    if (!PyArg_ParseTuple(args, "OOiO", &model, &Q, &k, &J))
        return NULL;
    EngineModel *em = model_arg(model);
    if (!em || frame_arg(em, k) || check_array(Q, "Q", NPY_DOUBLE, 2, (npy_intp[]){-1, em->m.nq}, 0))
        return NULL;
    const npy_intp N = PyArray_DIMS((PyArrayObject *)Q)[0];
    if (check_array(J, "J", NPY_DOUBLE, 3, (npy_intp[]){N, 6, em->m.nq}, 1))
        return NULL;
    batch_args b = {.m = &em->m, .Q = DATA(Q), .k = k, .OUT = DATA(J)};
    if (run_batch(&b, jacobian_rows, N))
        return NULL;
    Py_RETURN_NONE;
}

/* point_motion_batch(model, Q, QD, k, VEL (N, 6), ACC (N, 6)) */
static PyObject *py_point_motion_batch(PyObject *mod, PyObject *args)
{
    PyObject *model, *Q, *QD, *VEL, *ACC;
    int k;
    if (!PyArg_ParseTuple(args, "OOOiOO", &model, &Q, &QD, &k, &VEL, &ACC))
        return NULL;
    EngineModel *em = model_arg(model);
    if (!em || frame_arg(em, k) || check_array(Q, "Q", NPY_DOUBLE, 2, (npy_intp[]){-1, em->m.nq}, 0))
        return NULL;
    const npy_intp N = PyArray_DIMS((PyArrayObject *)Q)[0];
    if (check_array(QD, "QD", NPY_DOUBLE, 2, (npy_intp[]){N, em->m.nq}, 0) ||
        check_array(VEL, "VEL", NPY_DOUBLE, 2, (npy_intp[]){N, 6}, 1) ||
        check_array(ACC, "ACC", NPY_DOUBLE, 2, (npy_intp[]){N, 6}, 1))
        return NULL;
    batch_args b = {.m = &em->m, .Q = DATA(Q), .QD = DATA(QD), .k = k, .OUT = DATA(VEL), .OUT2 = DATA(ACC)};
    if (run_batch(&b, point_motion_rows, N))
        return NULL;
    Py_RETURN_NONE;
}

/* motion_batch(model, Q, QD, QDD, g, E (N, nb, 9), r (N, nb, 3), V, A (N, nb + 1, 6)) */
static PyObject *py_motion_batch(PyObject *mod, PyObject *args)
{
    PyObject *model, *Q, *QD, *QDD, *g, *E, *r, *V, *A;
    if (!PyArg_ParseTuple(args, "OOOOOOOOO", &model, &Q, &QD, &QDD, &g, &E, &r, &V, &A))
        return NULL;
    EngineModel *em = model_arg(model);
    if (!em || check_array(Q, "Q", NPY_DOUBLE, 2, (npy_intp[]){-1, em->m.nq}, 0))
        return NULL;
    const npy_intp N = PyArray_DIMS((PyArrayObject *)Q)[0], nq = em->m.nq, nb = em->m.nb;
    if (check_array(QD, "QD", NPY_DOUBLE, 2, (npy_intp[]){N, nq}, 0) ||
        check_array(QDD, "QDD", NPY_DOUBLE, 2, (npy_intp[]){N, nq}, 0) ||
        check_array(g, "g", NPY_DOUBLE, 1, (npy_intp[]){3}, 0) ||
        check_array(E, "E", NPY_DOUBLE, 3, (npy_intp[]){N, nb, 9}, 1) ||
        check_array(r, "r", NPY_DOUBLE, 3, (npy_intp[]){N, nb, 3}, 1) ||
        check_array(V, "V", NPY_DOUBLE, 3, (npy_intp[]){N, nb + 1, 6}, 1) ||
        check_array(A, "A", NPY_DOUBLE, 3, (npy_intp[]){N, nb + 1, 6}, 1))
        return NULL;
    batch_args b = {.m = &em->m, .Q = DATA(Q), .QD = DATA(QD), .X = DATA(QDD), .g = DATA(g),
                    .OUT = DATA(E), .OUT2 = DATA(r), .OUT3 = DATA(V), .OUT4 = DATA(A)};
    if (run_batch(&b, motion_rows, N))
        return NULL;
    Py_RETURN_NONE;
}

/* friction_batch(model, QD, smooth, OUT): joint friction (Khalil [7.26]) of N velocity vectors. */
static PyObject *py_friction_batch(PyObject *mod, PyObject *args)
{
    PyObject *model, *QD, *OUT;
    double smooth;
    if (!PyArg_ParseTuple(args, "OOdO", &model, &QD, &smooth, &OUT))
        return NULL;
    EngineModel *em = model_arg(model);
    if (!em || check_array(QD, "QD", NPY_DOUBLE, 2, (npy_intp[]){-1, em->m.nq}, 0))
        return NULL;
    const npy_intp N = PyArray_DIMS((PyArrayObject *)QD)[0], nq = em->m.nq;
    if (check_array(OUT, "OUT", NPY_DOUBLE, 2, (npy_intp[]){N, nq}, 1))
        return NULL;
    const double *qd = DATA(QD);
    double *out = DATA(OUT);
    for (npy_intp n = 0; n < N; ++n)
        for (int k = 0; k < nq; ++k)
            out[n * nq + k] = rd_friction(&em->m, k, qd[n * nq + k], smooth);
    Py_RETURN_NONE;
}

/* -- a compiled closed loop ---------------------------------------------------------------------------- */

/* A float64 vector of n values, or NULL for None (optional). */
static int opt_vector(PyObject *obj, const char *what, npy_intp n, const double **out)
{
    if (obj == Py_None) {
        *out = NULL;
        return 0;
    }
    if (check_array(obj, what, NPY_DOUBLE, 1, (npy_intp[]){n}, 0))
        return -1;
    *out = DATA(obj);
    return 0;
}

/* simulate(ctrl, plant, flags, scalars, kp, kd, limit, actuator_limit, ctrl_A_inv, plant_A, g_plant, pos_std,
 *          vel_std, QR, QDR, QDDR, ZQ, ZQD, DIST, Q, QD, QDD, TAU, EFF, STATUS, CLIP, x, k0, k1) -> (code, done)
 * flags: int64 [substeps, last, position, predictive, desired_friction, plant_friction]; scalars: [h, smooth];
 * matrices flattened (n * n); per-tick arrays (K, n), STATUS and CLIP int64 (K,); None where optional. */
static PyObject *py_simulate(PyObject *mod, PyObject *args)
{
    PyObject *o[27];
    int k0, k1;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOOOOOOOOOOOOOOOOii", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &o[7],
                          &o[8], &o[9], &o[10], &o[11], &o[12], &o[13], &o[14], &o[15], &o[16], &o[17], &o[18], &o[19],
                          &o[20], &o[21], &o[22], &o[23], &o[24], &o[25], &o[26], &k0, &k1))
        return NULL;
    EngineModel *ec = model_arg(o[0]), *ep = ec ? model_arg(o[1]) : NULL;
    if (!ec || !ep)
        return NULL;
    const npy_intp n = ec->m.nq;
    if (ep->m.nq != n || n > RD_SIM_MAX_JOINTS) {
        PyErr_SetString(PyExc_ValueError, "simulate: the models' joints differ or exceed RD_SIM_MAX_JOINTS");
        return NULL;
    }
    if (check_array(o[2], "flags", NPY_INT64, 1, (npy_intp[]){6}, 0) || check_array(o[3], "scalars", NPY_DOUBLE, 1, (npy_intp[]){2}, 0) ||
        check_array(o[13], "QR", NPY_DOUBLE, 2, (npy_intp[]){-1, n}, 0))
        return NULL;
    const npy_intp K = PyArray_DIMS((PyArrayObject *)o[13])[0];
    const int64_t *fl = IDATA(o[2]);
    const double *sc = DATA(o[3]);
    rd_sim s = {.ctrl = &ec->m, .plant = &ep->m, .n = (int)n, .substeps = (int)fl[0], .last = (int)fl[1],
                .position = (int)fl[2], .predictive = (int)fl[3], .desired_friction = (int)fl[4],
                .plant_friction = (int)fl[5], .h = sc[0], .smooth = sc[1]};
    rd_sim_log L;
    const char *vec_names[] = {"kp", "kd", "limit", "actuator_limit", "ctrl_A_inv", "plant_A", "g_plant", "pos_std", "vel_std"};
    const npy_intp vec_sizes[] = {n, n, n, n, n * n, n * n, 3, n, n};
    const double **vec_out[] = {&s.kp, &s.kd, &s.limit, &s.actuator_limit, &s.ctrl_A_inv, &s.plant_A, &s.g_plant, &s.pos_std, &s.vel_std};
    for (int i = 0; i < 9; ++i) {
        const int required = i != 3 && i != 4 && i != 5;
        if ((required && o[4 + i] == Py_None) || opt_vector(o[4 + i], vec_names[i], vec_sizes[i], vec_out[i]))
            return required && o[4 + i] == Py_None ? (PyErr_Format(PyExc_TypeError, "%s: required", vec_names[i]), NULL) : NULL;
    }
    const char *in_names[] = {"QR", "QDR", "QDDR", "ZQ", "ZQD", "DIST"};
    const double **in_out[] = {&L.qr, &L.qdr, &L.qddr, &L.zq, &L.zqd, &L.dist};
    for (int i = 0; i < 6; ++i) {
        if (o[13 + i] == Py_None && (i == 3 || i == 4)) {
            *in_out[i] = NULL;
            continue;
        }
        if (check_array(o[13 + i], in_names[i], NPY_DOUBLE, 2, (npy_intp[]){K, n}, 0))
            return NULL;
        *in_out[i] = DATA(o[13 + i]);
    }
    const char *log_names[] = {"Q", "QD", "QDD", "TAU", "EFF"};
    double **log_out[] = {&L.q, &L.qd, &L.qdd, &L.tau, &L.effort};
    for (int i = 0; i < 5; ++i) {
        if (check_array(o[19 + i], log_names[i], NPY_DOUBLE, 2, (npy_intp[]){K, n}, 1))
            return NULL;
        *log_out[i] = DATA(o[19 + i]);
    }
    if (check_array(o[24], "STATUS", NPY_INT64, 1, (npy_intp[]){K}, 1) || check_array(o[25], "CLIP", NPY_INT64, 1, (npy_intp[]){K}, 1) ||
        check_array(o[26], "x", NPY_DOUBLE, 1, (npy_intp[]){2 * n}, 1))
        return NULL;
    L.status = IDATA(o[24]), L.clip = IDATA(o[25]);
    if (!(0 <= k0 && k0 <= k1 && k1 <= K && s.last < K && s.substeps >= 1)) {
        PyErr_SetString(PyExc_ValueError, "simulate: ticks out of range");
        return NULL;
    }
    int done = k0;
    const int code = rd_simulate(&s, &L, k0, k1, DATA(o[26]), &done, &ec->work, &ep->work);
    return Py_BuildValue("ii", code, done);
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
    rd_linear_recurrence((int)m, (int)p, (int)ne, (int)K, DATA(Ad), DATA(Bd), DATA(x0), DATA(U), DATA(E), work);
    free(work);
    Py_RETURN_NONE;
}

/* -- threads ------------------------------------------------------------------------------------------ */

static PyObject *py_set_num_threads(PyObject *mod, PyObject *arg)
{
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 1) {
        PyErr_Format(PyExc_ValueError, "threads: expected a count >= 1, got %ld", n);
        return NULL;
    }
#ifdef _OPENMP
    rd_threads = (int)n;
#endif
    Py_RETURN_NONE;
}

static PyObject *py_get_num_threads(PyObject *mod, PyObject *unused) { return PyLong_FromLong(rd_threads); }

/* set_tangent_derivatives(flag) -> the previous flag: 1 computes every derivative by the
 * recursion's tangents (the general method), to compare it with the base-frame formulas of trees. */
static PyObject *py_set_tangent_derivatives(PyObject *mod, PyObject *arg)
{
    const int flag = PyObject_IsTrue(arg);
    if (flag < 0)
        return NULL;
    const int old = rd_tangent_derivatives;
    rd_tangent_derivatives = flag;
    return PyBool_FromLong(old);
}

static PyMethodDef methods[] = {
    {"parse_model", py_parse_model, METH_O,
     "parse_model(text) -> (Model, joint_names, effort_limits): the model's text form, as C loads it"},
    {"rnea", (PyCFunction)(void (*)(void))py_rnea, METH_FASTCALL,
     "rnea(model, q, qd, qdd, friction) -> tau (nq,), or NotImplemented when not the fast shape or not OK"},
    {"aba", (PyCFunction)(void (*)(void))py_aba, METH_FASTCALL,
     "aba(model, q, qd, tau, friction) -> qdd (nq,), or NotImplemented when not the fast shape or not OK"},
    {"crba", (PyCFunction)(void (*)(void))py_crba, METH_FASTCALL,
     "crba(model, q) -> H (nq, nq), or NotImplemented when not the fast shape or not OK"},
    {"rnea_derivatives", (PyCFunction)(void (*)(void))py_rnea_derivatives, METH_FASTCALL,
     "rnea_derivatives(model, q, qd, qdd, friction) -> (dtau_dq, dtau_dqd, M), or NotImplemented"},
    {"aba_derivatives", (PyCFunction)(void (*)(void))py_aba_derivatives, METH_FASTCALL,
     "aba_derivatives(model, q, qd, tau, friction) -> (dqdd_dq, dqdd_dqd, Minv), or NotImplemented"},
    {"rnea_derivatives_batch", py_rnea_derivatives_batch, METH_VARARGS,
     "rnea_derivatives_batch(model, Q, QD, QDD, g, FX, friction, smooth, DQ, DQD, M, status)"},
    {"aba_derivatives_batch", py_aba_derivatives_batch, METH_VARARGS,
     "aba_derivatives_batch(model, Q, QD, TAU, g, FX, friction, smooth, DQ, DQD, MINV, status)"},
    {"rnea_batch", py_rnea_batch, METH_VARARGS, "rnea_batch(model, Q, QD, QDD, g, FX, friction, smooth, OUT, status)"},
    {"aba_batch", py_aba_batch, METH_VARARGS, "aba_batch(model, Q, QD, TAU, g, FX, friction, smooth, OUT, status)"},
    {"crba_batch", py_crba_batch, METH_VARARGS, "crba_batch(model, Q, H, status)"},
    {"energy_batch", py_energy_batch, METH_VARARGS, "energy_batch(model, Q, QD, g, OUT, status): kinetic, potential"},
    {"frame_poses_batch", py_frame_poses_batch, METH_VARARGS, "frame_poses_batch(model, Q, frames, T)"},
    {"jacobian_batch", py_jacobian_batch, METH_VARARGS, "jacobian_batch(model, Q, k, J)"},
    {"point_motion_batch", py_point_motion_batch, METH_VARARGS, "point_motion_batch(model, Q, QD, k, VEL, ACC)"},
    {"motion_batch", py_motion_batch, METH_VARARGS, "motion_batch(model, Q, QD, QDD, g, E, r, V, A)"},
    {"friction_batch", py_friction_batch, METH_VARARGS, "friction_batch(model, QD, smooth, OUT)"},
    {"linear_recurrence", py_linear_recurrence, METH_VARARGS,
     "linear_recurrence(Ad, Bd, x0, U, E): E[k] = x_k[:ne] of x_k = Ad x_(k-1) + Bd U[k-1] (a zero-order-hold linear system)"},
    {"simulate", py_simulate, METH_VARARGS,
     "simulate(ctrl, plant, flags, scalars, kp, kd, limit, actuator_limit, ctrl_A_inv, plant_A, g_plant, pos_std, vel_std, "
     "QR, QDR, QDDR, ZQ, ZQD, DIST, Q, QD, QDD, TAU, EFF, STATUS, CLIP, x, k0, k1) -> (code, done): "
     "ticks of joint-space computed torque on a rigid plant, RK4"},
    {"set_num_threads", py_set_num_threads, METH_O, "threads of the batches (1: the calling thread alone)"},
    {"get_num_threads", py_get_num_threads, METH_NOARGS, "threads of the batches"},
    {"set_tangent_derivatives", py_set_tangent_derivatives, METH_O,
     "set_tangent_derivatives(flag) -> previous: derivatives by the recursion's tangents only (a test switch)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_robot_dynamics_engine",
    "The compiled engine of robot_dynamics (rnea, crba, aba and kinematics over a packed model).", -1, methods,
};

PyMODINIT_FUNC PyInit__robot_dynamics_engine(void)
{
    import_array();
    if (PyType_Ready(&EngineModelType) < 0)
        return NULL;
    str_engine = PyUnicode_InternFromString("_engine");
    if (!str_engine)
        return NULL;
#ifdef _OPENMP
    rd_threads = omp_get_max_threads();
    const int openmp = 1;
#else
    const int openmp = 0;
#endif
    PyObject *mod = PyModule_Create(&moduledef);
    if (!mod)
        return NULL;
    Py_INCREF(&EngineModelType);
    if (PyModule_AddObject(mod, "Model", (PyObject *)&EngineModelType) < 0 ||
        PyModule_AddIntConstant(mod, "LAYOUT", RD_LAYOUT) < 0 || PyModule_AddIntConstant(mod, "OPENMP", openmp) < 0 ||
        PyModule_AddIntConstant(mod, "SERIAL_BELOW", RD_SERIAL_BELOW) < 0 ||
        PyModule_AddIntConstant(mod, "OK", RD_OK) < 0 || PyModule_AddIntConstant(mod, "BAD_SIZE", RD_BAD_SIZE) < 0 ||
        PyModule_AddIntConstant(mod, "BAD_INPUT", RD_BAD_INPUT) < 0 ||
        PyModule_AddIntConstant(mod, "BAD_OUTPUT", RD_BAD_OUTPUT) < 0 ||
        PyModule_AddIntConstant(mod, "NOT_POSITIVE_DEFINITE", RD_NOT_POSITIVE_DEFINITE) < 0 ||
        PyModule_AddIntConstant(mod, "SINGULAR", RD_SINGULAR) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    PyObject *fields = PyTuple_New(RD_FIELD_COUNT); /* the packed model's field list, engine.h's */
    for (int k = 0; fields && k < RD_FIELD_COUNT; ++k)
        PyTuple_SET_ITEM(fields, k, PyUnicode_FromString(rd_model_field_names[k]));
    if (!fields || PyModule_AddObject(mod, "FIELDS", fields) < 0) {
        Py_XDECREF(fields);
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
