/* _robot_dynamics_engine: the Python side of the engine (CPython and numpy C API).
 *
 * Model(...): a RobotModel packed into the C structs of engine.h, once per model (the Python
 * package keeps it as RobotModel.engine_model), never written after. Data(model), or
 * model.create_data(): a workspace of its own (Pinocchio's model.createData()). A Data is written
 * by one thread at a time; the library keeps one per thread (thread_data) for the calls that hide
 * it, as the public one-state functions do.
 *
 * One state: rnea(model, data, q, qd, qdd, friction), aba(model, data, q, qd, tau, friction),
 * crba(model, data, q) take float64 C-contiguous vectors of length nq exactly (checked here,
 * cheaply) and return a new array; for anything else (a list, a batch, integers, a bad value, a
 * singular state) they return NotImplemented, and the caller takes its general, validating path,
 * which words the error.
 *
 * The batches and the compiled loop: module_batch.c.
 */
#define RD_MODULE_INIT /* this file imports numpy's C API for both */
#include "module.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* The contract between this module and the Python package: bump it when either side changes
 * what it passes or expects, so that a stale build is refused at import rather than misread. */
#define RD_LAYOUT 9

int rd_threads = 1;

/* -- the model ----------------------------------------------------------------------------------- */

static PyObject *str_engine_model; /* "engine_model": RobotModel's accessor of its engine Model */
static PyObject *str_thread_data;  /* the key of the calling thread's Data in its thread-state dict */
static Py_tss_t thread_slot = Py_tss_NEEDS_INIT; /* that Data again, borrowed, without the dict lookup */

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

/* A new Python Model around *m (built). */
static PyObject *wrap_model(PyTypeObject *type, rd_model *m)
{
    EngineModel *self = (EngineModel *)type->tp_alloc(type, 0);
    if (!self) {
        rd_model_free(m);
        return NULL;
    }
    self->m = *m;
    return (PyObject *)self;
}

/* Model(**fields): the fields of engine.h's RD_MODEL_FIELDS (robot_dynamics.engine.layout.pack)
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
    char err[256];
    if (rd_model_build(&m, &z, x, 0, NULL, err, sizeof err) != RD_OK) {
        PyErr_SetString(PyExc_ValueError, err);
        goto done;
    }
    result = wrap_model(type, &m);
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
    char err[256];
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = rd_model_parse(&m, text, 0, NULL, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (st != RD_OK) {
        PyErr_SetString(PyExc_ValueError, err);
        return NULL;
    }
    PyObject *out = wrap_model(&EngineModelType, &m);
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

/* The frames' names of a parsed model's text (its frame_names line), in frame order; () when none. */
static PyObject *model_get_frame_names(EngineModel *self, void *closure)
{
    const int n = self->m.frame_name ? self->m.nf : 0;
    PyObject *names = PyTuple_New(n);
    for (int k = 0; names && k < n; ++k) {
        PyObject *name = PyUnicode_FromString(self->m.frame_name[k]);
        if (!name) {
            Py_DECREF(names);
            return NULL;
        }
        PyTuple_SET_ITEM(names, k, name);
    }
    return names;
}

static PyGetSetDef model_getset[] = {
    {"nq", (getter)model_get_nq, NULL, "independent joints", NULL},
    {"nb", (getter)model_get_nb, NULL, "moving bodies", NULL},
    {"tree", (getter)model_get_tree, NULL, "True when the articulated-body recursion applies", NULL},
    {"work_bytes", (getter)model_get_work_bytes, NULL, "bytes of one state's workspace (a Data's block)", NULL},
    {"frame_names", (getter)model_get_frame_names, NULL, "the frames' names of a parsed text, frame order (): none", NULL},
    {NULL},
};

/* create_data() -> Data: a workspace of its own for this model (Pinocchio's model.createData()). */
static PyObject *model_create_data(EngineModel *self, PyObject *unused) { return (PyObject *)rd_module_new_data(&self->m); }

/* frame_index(name) -> int: rd_frame_index, the frame's index or -1 (unknown, or no names). */
static PyObject *model_frame_index(EngineModel *self, PyObject *arg)
{
    const char *name = PyUnicode_AsUTF8(arg);
    return name ? PyLong_FromLong(rd_frame_index(&self->m, name)) : NULL;
}

static PyMethodDef model_methods[] = {
    {"create_data", (PyCFunction)model_create_data, METH_NOARGS, "create_data() -> Data: a workspace for this model"},
    {"frame_index", (PyCFunction)model_frame_index, METH_O,
     "frame_index(name) -> int: the index of the frame named name, -1 when unknown or the model has no names"},
    {NULL},
};

/* The slots every type of this module sets: its name, C struct, destructor, constructor and doc. */
#define MODULE_TYPE(name, type, dealloc, new, doc)                                                       \
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_robot_dynamics_engine." name, .tp_basicsize = sizeof(type), \
    .tp_dealloc = (destructor)(dealloc), .tp_flags = Py_TPFLAGS_DEFAULT, .tp_new = (new), .tp_doc = (doc)

PyTypeObject EngineModelType = {
    MODULE_TYPE("Model", EngineModel, model_dealloc, model_new,
                "A RobotModel packed for the engine (keyword fields; see robot_dynamics.engine.layout)."),
    .tp_getset = model_getset,
    .tp_methods = model_methods,
};

/* -- the data ------------------------------------------------------------------------------------------ */

EngineData *rd_module_new_data(const rd_model *m)
{
    EngineData *self = (EngineData *)EngineDataType.tp_alloc(&EngineDataType, 0);
    if (!self)
        return NULL;
    self->memory = calloc(1, rd_work_bytes(m->nb, m->nq)); /* zeroed: rd_work.zero stays zero */
    if (!self->memory) {
        Py_DECREF(self);
        return (EngineData *)PyErr_NoMemory();
    }
    self->nb = m->nb, self->nq = m->nq;
    rd_work_bind(&self->work, self->memory, m->nb, m->nq);
    return self;
}

rd_work *rd_module_data(PyObject *obj, const rd_model *m)
{
    if (Py_TYPE(obj) != &EngineDataType || ((EngineData *)obj)->nb != m->nb || ((EngineData *)obj)->nq != m->nq) {
        PyErr_SetString(PyExc_TypeError, "expected an engine Data of the model (model.create_data())");
        return NULL;
    }
    return &((EngineData *)obj)->work;
}

static void data_dealloc(EngineData *self)
{
    if (PyThread_tss_is_created(&thread_slot) && PyThread_tss_get(&thread_slot) == self)
        PyThread_tss_set(&thread_slot, NULL); /* the thread's dict dropped it (a new one, the thread's end) */
    Py_CLEAR(self->served);
    Py_CLEAR(self->served_engine);
    free(self->memory);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Data(model): a workspace for the engine Model `model`. */
static PyObject *data_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *model;
    if ((kwargs && PyDict_GET_SIZE(kwargs)) || !PyArg_ParseTuple(args, "O!:Data", &EngineModelType, &model))
        return NULL;
    return (PyObject *)rd_module_new_data(&((EngineModel *)model)->m);
}

static PyObject *data_get_nb(EngineData *self, void *closure) { return PyLong_FromLong(self->nb); }
static PyObject *data_get_nq(EngineData *self, void *closure) { return PyLong_FromLong(self->nq); }

static PyGetSetDef data_getset[] = {
    {"nb", (getter)data_get_nb, NULL, "moving bodies of the models it serves", NULL},
    {"nq", (getter)data_get_nq, NULL, "independent joints of the models it serves", NULL},
    {NULL},
};

PyTypeObject EngineDataType = {
    MODULE_TYPE("Data", EngineData, data_dealloc, data_new,
                "Data(model): a workspace (engine.h's rd_work) for the engine Model's sizes, written by one thread at a "
                "time."),
    .tp_getset = data_getset,
};

/* The calling thread's Data for m's sizes, borrowed (its thread-state dict holds it, and drops it
 * with the thread; thread_slot points to it, so that a call finds it without a dict lookup): made
 * on the thread's first call, made again when a model of other sizes comes. NULL with the exception. */
static EngineData *thread_data(const rd_model *m)
{
    EngineData *cached = PyThread_tss_get(&thread_slot);
    if (cached && cached->nb == m->nb && cached->nq == m->nq)
        return cached;
    PyObject *dict = PyThreadState_GetDict();
    if (!dict) {
        PyErr_SetString(PyExc_RuntimeError, "the engine's data: no thread state");
        return NULL;
    }
    PyObject *d = PyDict_GetItemWithError(dict, str_thread_data);
    if (d && Py_TYPE(d) == &EngineDataType && ((EngineData *)d)->nb == m->nb && ((EngineData *)d)->nq == m->nq)
        return PyThread_tss_set(&thread_slot, d) ? (EngineData *)PyErr_NoMemory() : (EngineData *)d;
    if (PyErr_Occurred())
        return NULL;
    EngineData *made = rd_module_new_data(m);
    if (!made)
        return NULL;
    const int st = PyDict_SetItem(dict, str_thread_data, (PyObject *)made);
    Py_DECREF(made); /* the dict's reference keeps it */
    if (st < 0 || PyThread_tss_set(&thread_slot, made)) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return NULL;
    }
    return made;
}

/* thread_data(model) -> Data: the calling thread's workspace for the engine Model (one per thread,
 * as the public one-state functions use it); a new one replaces it for a model of other sizes. */
static PyObject *py_thread_data(PyObject *mod, PyObject *arg)
{
    if (Py_TYPE(arg) != &EngineModelType) {
        PyErr_SetString(PyExc_TypeError, "thread_data: expected an engine Model");
        return NULL;
    }
    return Py_XNewRef((PyObject *)thread_data(&((EngineModel *)arg)->m));
}

/* -- one state --------------------------------------------------------------------------------------- */

/* The engine Model of `obj`: itself, or a RobotModel's `engine_model` (a new reference either way);
 * NULL, no exception set, when it has none. Once built, RobotModel.engine_model (a cached_property)
 * lives in the instance's __dict__: found there first (a third of the attribute lookup's cost),
 * else by the attribute, which builds it. */
static EngineModel *engine_of(PyObject *obj)
{
    if (Py_TYPE(obj) == &EngineModelType)
        return (EngineModel *)Py_NewRef(obj);
    PyObject *dict = PyObject_GenericGetDict(obj, NULL);
    PyObject *em = dict ? PyDict_GetItemWithError(dict, str_engine_model) : NULL;
    Py_XDECREF(dict);
    if (em && Py_TYPE(em) == &EngineModelType)
        return (EngineModel *)Py_NewRef(em);
    PyErr_Clear();
    em = PyObject_GetAttr(obj, str_engine_model);
    if (!em || Py_TYPE(em) != &EngineModelType) {
        Py_XDECREF(em);
        PyErr_Clear();
        return NULL;
    }
    return (EngineModel *)em;
}

/* x is a float64 C-contiguous (N, n) array of N >= 1 rows, like `like` when given. */
static inline int fast_rows(PyObject *x, int n, PyObject *like)
{
    if (!PyArray_CheckExact(x))
        return 0;
    PyArrayObject *a = (PyArrayObject *)x;
    return PyArray_NDIM(a) == 2 && PyArray_DIMS(a)[1] == n && PyArray_DIMS(a)[0] >= 1 &&
           PyArray_TYPE(a) == NPY_DOUBLE && PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISALIGNED(a) &&
           (!like || PyArray_DIMS(a)[0] == PyArray_DIMS((PyArrayObject *)like)[0]);
}

/* The model and data of a one-state call (args[0], args[1]): an engine Model and a Data of its
 * sizes; NULL with a TypeError otherwise. */
static const rd_model *model_and_data(PyObject *const *args, rd_work **w)
{
    if (Py_TYPE(args[0]) != &EngineModelType) {
        PyErr_SetString(PyExc_TypeError, "expected an engine Model (RobotModel.engine_model)");
        return NULL;
    }
    const rd_model *m = &((EngineModel *)args[0])->m;
    return (*w = rd_module_data(args[1], m)) ? m : NULL;
}

/* One state (model, data, q, qd, x, friction) by fn, a new (nq,) array, or by dfn, a tuple of three
 * new (nq, nq) arrays (d/dq, d/dqd, M or M^-1); for rnea and aba also N states, three (N, nq) arrays
 * (fast_rows), as a batch (its own workspaces). NotImplemented when q, qd, x are not clean vectors
 * (fast_vector) or rows, or the engine fails: the general path words the error. */
static PyObject *one_state(PyObject *const *args, Py_ssize_t nargs, one_state_fn fn, derivatives_fn dfn)
{
    rd_work *w;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "expected (model, data, q, qd, x, friction)");
        return NULL;
    }
    const rd_model *m = model_and_data(args, &w);
    if (!m)
        return NULL;
    const int nq = m->nq, friction = PyObject_IsTrue(args[5]);
    if (friction < 0)
        return NULL;
    args += 1; /* q, qd, x at args[1..3] */
    if (fn && fast_rows(args[1], nq, NULL) && fast_rows(args[2], nq, args[1]) && fast_rows(args[3], nq, args[1]))
        return rd_module_states(m, fn == rd_aba, args[1], args[2], args[3], friction);
    if (!fast_vector(args[1], nq) || !fast_vector(args[2], nq) || !fast_vector(args[3], nq))
        Py_RETURN_NOTIMPLEMENTED;
    const int count = dfn ? 3 : 1;
    npy_intp dims[2] = {nq, nq};
    PyObject *out[3] = {NULL, NULL, NULL};
    double *data[3] = {NULL, NULL, NULL};
    for (int k = 0; k < count; ++k) {
        if (!(out[k] = PyArray_SimpleNew(dfn ? 2 : 1, dims, NPY_DOUBLE))) {
            Py_XDECREF(out[0]), Py_XDECREF(out[1]);
            return NULL;
        }
        data[k] = (double *)PyArray_DATA((PyArrayObject *)out[k]);
    }
    const double *q = PyArray_DATA((PyArrayObject *)args[1]), *qd = PyArray_DATA((PyArrayObject *)args[2]),
                 *x = PyArray_DATA((PyArrayObject *)args[3]);
    const int aba = fn == rd_aba || dfn == rd_aba_derivatives;
    const rd_input in = {q, qd, aba ? NULL : x, aba ? x : NULL, NULL, 0};
    const rd_options o = {NULL, friction, 0.0}; /* the model's gravity */
    const int st = dfn ? dfn(m, &in, &o, data[0], data[1], data[2], w) : fn(m, &in, &o, data[0], w);
    PyObject *answer = st != RD_OK ? Py_NewRef(Py_NotImplemented) : dfn ? PyTuple_New(3) : Py_NewRef(out[0]);
    for (int k = 0; k < count; ++k)
        if (answer && PyTuple_Check(answer))
            PyTuple_SET_ITEM(answer, k, out[k]);
        else
            Py_DECREF(out[k]);
    return answer;
}

static PyObject *py_rnea(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    return one_state(args, nargs, rd_rnea, NULL);
}

static PyObject *py_aba(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) { return one_state(args, nargs, rd_aba, NULL); }

static PyObject *py_crba(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    rd_work *w;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "expected (model, data, q)");
        return NULL;
    }
    const rd_model *m = model_and_data(args, &w);
    if (!m)
        return NULL;
    if (!fast_vector(args[2], m->nq))
        Py_RETURN_NOTIMPLEMENTED;
    npy_intp dims[2] = {m->nq, m->nq};
    PyArrayObject *H = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    if (!H)
        return NULL;
    if (rd_crba(m, PyArray_DATA((PyArrayObject *)args[2]), (double *)PyArray_DATA(H), w) != RD_OK) {
        Py_DECREF(H);
        Py_RETURN_NOTIMPLEMENTED;
    }
    return (PyObject *)H;
}

static PyObject *py_rnea_derivatives(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    return one_state(args, nargs, NULL, rd_rnea_derivatives);
}

static PyObject *py_aba_derivatives(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    return one_state(args, nargs, NULL, rd_aba_derivatives);
}

/* -- the public one-state functions ------------------------------------------------------------------ */

/* EngineFirst(one_state, general, fixed, friction): a public function of the package. A call of the
 * fast shape goes straight to the engine's one-state function `one_state` (rnea, aba, crba or their
 * derivatives, above), with the model's engine Model (its `engine_model`) and the calling thread's
 * Data; any other call, or one the engine answers NotImplemented, runs the Python
 * function `general`, the general, validating path, whose name, documentation and signature it
 * carries (its __wrapped__, as functools.wraps). The fast shape: `fixed` positional arguments (model
 * and the joint vectors), then, where `friction`, the optional (gravity, f_ext), both None, by
 * position or by name, and the keyword-only friction (default True), as the engine's last argument.
 * No Python frame runs in between: a one-state call costs about 80 ns less, a sixth of rnea's.
 * numpy's array-function dispatcher is written in C for the same reason. */
typedef PyObject *(*fastcall_fn)(PyObject *, PyObject *const *, Py_ssize_t); /* a METH_FASTCALL function */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *one_state; /* the engine's METH_FASTCALL function */
    PyObject *general;   /* the Python function */
    int fixed, friction;
} EngineFirst;

static PyObject *str_gravity, *str_f_ext, *str_friction; /* the keywords of the fast shape */

static inline int is_name(PyObject *name, PyObject *expected)
{
    return name == expected || PyUnicode_Compare(name, expected) == 0;
}

static PyObject *engine_first_call(PyObject *obj, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    EngineFirst *self = (EngineFirst *)obj;
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    int fast = nargs >= self->fixed && nargs <= self->fixed + 2 * self->friction && (self->friction || !nkw);
    for (Py_ssize_t k = self->fixed; fast && k < nargs; ++k)
        fast = args[k] == Py_None;
    PyObject *friction = Py_True;
    for (Py_ssize_t k = 0; fast && k < nkw; ++k) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k), *value = args[nargs + k];
        if (is_name(name, str_friction))
            friction = value;
        else if (is_name(name, str_gravity))
            fast = value == Py_None && nargs == self->fixed; /* given twice: the general path's TypeError */
        else if (is_name(name, str_f_ext))
            fast = value == Py_None && nargs <= self->fixed + 1;
        else
            fast = 0;
    }
    /* the model's engine Model and this thread's data: the ones of the thread's last call when it
     * served this very model (an identity kept alive by the data), else looked up and remembered */
    EngineData *data = fast ? PyThread_tss_get(&thread_slot) : NULL;
    EngineModel *em = NULL;
    if (data && data->served == args[0]) {
        em = (EngineModel *)Py_NewRef(data->served_engine);
    } else if (fast && (em = engine_of(args[0])) && (data = thread_data(&em->m))) {
        Py_XSETREF(data->served, Py_NewRef(args[0]));
        Py_XSETREF(data->served_engine, Py_NewRef((PyObject *)em));
    }
    if (em && data) {
        PyObject *pass[8] = {(PyObject *)em, (PyObject *)data};
        Py_ssize_t n = 2;
        for (Py_ssize_t k = 1; k < self->fixed; ++k)
            pass[n++] = args[k];
        if (self->friction)
            pass[n++] = friction;
        const fastcall_fn fn = (fastcall_fn)(void (*)(void))PyCFunction_GET_FUNCTION(self->one_state);
        PyObject *out = fn(PyCFunction_GET_SELF(self->one_state), pass, n);
        Py_DECREF(em);
        if (out != Py_NotImplemented)
            return out; /* the answer, or NULL with the engine module's exception */
        Py_DECREF(out);
    } else if (em) {
        Py_DECREF(em);
        return NULL; /* thread_data's exception */
    }
    return PyObject_Vectorcall(self->general, args, nargsf, kwnames);
}

static PyObject *engine_first_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *one_state, *general;
    int fixed, friction;
    if (!PyArg_ParseTuple(args, "OOip:EngineFirst", &one_state, &general, &fixed, &friction))
        return NULL;
    if ((kwargs && PyDict_GET_SIZE(kwargs)) || !PyCFunction_Check(one_state) || (PyCFunction_GET_FLAGS(one_state) & ~METH_COEXIST) != METH_FASTCALL ||
        !PyCallable_Check(general) || fixed < 1 || fixed > 6) {
        PyErr_SetString(PyExc_TypeError,
                        "EngineFirst: expected (an engine one-state function, a Python function, 1-6 fixed arguments, friction)");
        return NULL;
    }
    EngineFirst *self = (EngineFirst *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    self->vectorcall = engine_first_call;
    self->one_state = Py_NewRef(one_state);
    self->general = Py_NewRef(general);
    self->fixed = fixed;
    self->friction = friction;
    return (PyObject *)self;
}

static int engine_first_traverse(EngineFirst *self, visitproc visit, void *arg)
{
    Py_VISIT(self->one_state);
    Py_VISIT(self->general);
    return 0;
}

static int engine_first_clear(EngineFirst *self)
{
    Py_CLEAR(self->one_state);
    Py_CLEAR(self->general);
    return 0;
}

static void engine_first_dealloc(EngineFirst *self)
{
    PyObject_GC_UnTrack(self);
    engine_first_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Its attributes are the general function's (__name__, __doc__, __code__, ...). */
static PyObject *engine_first_getattro(PyObject *obj, PyObject *name)
{
    PyObject *value = PyObject_GenericGetAttr(obj, name);
    if (value || !PyErr_ExceptionMatches(PyExc_AttributeError))
        return value;
    PyErr_Clear();
    return PyObject_GetAttr(((EngineFirst *)obj)->general, name);
}

static PyObject *general_attribute(EngineFirst *self, void *name) { return PyObject_GetAttrString(self->general, name); }

static PyObject *general_function(EngineFirst *self, void *unused) { return Py_NewRef(self->general); }

/* A function bound as a method where it is a class attribute, as Python's functions are. */
static PyObject *engine_first_get(PyObject *obj, PyObject *instance, PyObject *owner)
{
    return instance && instance != Py_None ? PyMethod_New(obj, instance) : Py_NewRef(obj);
}

static PyObject *engine_first_repr(EngineFirst *self) { return PyObject_Repr(self->general); }

/* Pickled by name, as a function. */
static PyObject *engine_first_reduce(EngineFirst *self, PyObject *unused) { return PyObject_GetAttrString(self->general, "__qualname__"); }

static PyGetSetDef engine_first_getset[] = {
    {"__wrapped__", (getter)general_function, NULL, "the general path", NULL},
    {"__doc__", (getter)general_attribute, NULL, NULL, "__doc__"},
    {"__module__", (getter)general_attribute, NULL, NULL, "__module__"},
    {"__name__", (getter)general_attribute, NULL, NULL, "__name__"},
    {"__qualname__", (getter)general_attribute, NULL, NULL, "__qualname__"},
    {NULL},
};

static PyMethodDef engine_first_methods[] = {
    {"__reduce__", (PyCFunction)engine_first_reduce, METH_NOARGS, NULL},
    {NULL},
};

static PyTypeObject EngineFirstType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_robot_dynamics_engine.EngineFirst",
    .tp_basicsize = sizeof(EngineFirst),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = engine_first_new,
    .tp_dealloc = (destructor)engine_first_dealloc,
    .tp_traverse = (traverseproc)engine_first_traverse,
    .tp_clear = (inquiry)engine_first_clear,
    .tp_vectorcall_offset = offsetof(EngineFirst, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_getattro = engine_first_getattro,
    .tp_descr_get = engine_first_get,
    .tp_repr = (reprfunc)engine_first_repr,
    .tp_getset = engine_first_getset,
    .tp_methods = engine_first_methods,
};

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
    {"thread_data", py_thread_data, METH_O,
     "thread_data(model) -> Data: the calling thread's workspace for the engine Model (one per thread)"},
    {"parse_model", py_parse_model, METH_O,
     "parse_model(text) -> (Model, joint_names, effort_limits): the model's text form, as C loads it"},
    {"rnea", (PyCFunction)(void (*)(void))py_rnea, METH_FASTCALL,
     "rnea(model, data, q, qd, qdd, friction) -> tau (nq,), or NotImplemented when not the fast shape or not OK"},
    {"aba", (PyCFunction)(void (*)(void))py_aba, METH_FASTCALL,
     "aba(model, data, q, qd, tau, friction) -> qdd (nq,), or NotImplemented when not the fast shape or not OK"},
    {"crba", (PyCFunction)(void (*)(void))py_crba, METH_FASTCALL,
     "crba(model, data, q) -> H (nq, nq), or NotImplemented when not the fast shape or not OK"},
    {"rnea_derivatives", (PyCFunction)(void (*)(void))py_rnea_derivatives, METH_FASTCALL,
     "rnea_derivatives(model, data, q, qd, qdd, friction) -> (dtau_dq, dtau_dqd, M), or NotImplemented"},
    {"aba_derivatives", (PyCFunction)(void (*)(void))py_aba_derivatives, METH_FASTCALL,
     "aba_derivatives(model, data, q, qd, tau, friction) -> (dqdd_dq, dqdd_dqd, Minv), or NotImplemented"},
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
    if (PyType_Ready(&EngineModelType) < 0 || PyType_Ready(&EngineDataType) < 0 || PyType_Ready(&EngineFirstType) < 0)
        return NULL;
    if (!PyThread_tss_is_created(&thread_slot) && PyThread_tss_create(&thread_slot))
        return PyErr_NoMemory();
    str_engine_model = PyUnicode_InternFromString("engine_model");
    str_thread_data = PyUnicode_InternFromString("robot_dynamics.engine_data");
    str_gravity = PyUnicode_InternFromString("gravity");
    str_f_ext = PyUnicode_InternFromString("f_ext");
    str_friction = PyUnicode_InternFromString("friction");
    if (!str_engine_model || !str_thread_data || !str_gravity || !str_f_ext || !str_friction)
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
    Py_INCREF(&EngineDataType);
    Py_INCREF(&EngineFirstType);
    if (PyModule_AddObject(mod, "Model", (PyObject *)&EngineModelType) < 0 ||
        PyModule_AddObject(mod, "Data", (PyObject *)&EngineDataType) < 0 ||
        PyModule_AddObject(mod, "EngineFirst", (PyObject *)&EngineFirstType) < 0 ||
        PyModule_AddIntConstant(mod, "LAYOUT", RD_LAYOUT) < 0 || PyModule_AddIntConstant(mod, "OPENMP", openmp) < 0 ||
        PyModule_AddIntConstant(mod, "LANES", RD_LANES) < 0 ||
        PyModule_AddIntConstant(mod, "OK", RD_OK) < 0 || PyModule_AddIntConstant(mod, "BAD_SIZE", RD_BAD_SIZE) < 0 ||
        PyModule_AddIntConstant(mod, "BAD_INPUT", RD_BAD_INPUT) < 0 ||
        PyModule_AddIntConstant(mod, "BAD_OUTPUT", RD_BAD_OUTPUT) < 0 ||
        PyModule_AddIntConstant(mod, "NOT_POSITIVE_DEFINITE", RD_NOT_POSITIVE_DEFINITE) < 0 ||
        PyModule_AddIntConstant(mod, "SINGULAR", RD_SINGULAR) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    if (rd_module_add_batches(mod) < 0 || rd_module_add_path(mod) < 0 || rd_module_add_observer(mod) < 0 ||
        rd_module_add_task(mod) < 0) {
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
