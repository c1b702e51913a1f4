/* _robot_dynamics_engine's task space (task_space.c): one frame's pose, Jacobian, twist, Jdot qd and
 * the operational-space quantities, one state (task_space) and batched (task_space_batch), for
 * robot_dynamics.kinematics and robot_dynamics.dynamics.operational_space; and the compliant laws on
 * them (compliant.c), one tick a call, for robot_dynamics.engine.stages. */

#include "module.h"

/* The outputs of a call, in this order: the bits of `want` (one state) and the arrays of a batch. */
enum { W_T = 1, W_J = 2, W_VEL = 4, W_BIAS = 8, W_LAMBDA = 16, W_JBAR = 32, W_N = 64, W_COUNT = 7 };

/* What a batch's rows read: the model, the states, the task and the output arrays (NULL: not wanted). */
typedef struct {
    const rd_model *m;
    const double *Q, *QD;
    rd_task t;
    double *out[W_COUNT]; /* T (N, 4, 4), J (N, r, nq), VEL (N, r), BIAS (N, r), LAMBDA (N, r, r), JBAR (N, nq, r), NS (N, nq, nq) */
    int64_t *status;
    int r;
} task_args;

/* rd_task_space's output struct at row n of the arrays a (NULL where not wanted). */
static rd_task_space_out task_out(double *const a[W_COUNT], npy_intp n, int r, int nq)
{
    const npy_intp size[W_COUNT] = {16, (npy_intp)r * nq, r, r, (npy_intp)r * r, (npy_intp)nq * r, (npy_intp)nq * nq};
    double *p[W_COUNT];
    for (int k = 0; k < W_COUNT; ++k)
        p[k] = a[k] ? a[k] + n * size[k] : NULL;
    const rd_task_space_out o = {p[0], p[1], p[2], p[3], p[4], p[5], p[6]};
    return o;
}

static void task_rows(const void *args, rd_work *w, npy_intp lo, npy_intp hi)
{
    const task_args *b = args;
    const int nq = b->m->nq;
    for (npy_intp n = lo; n < hi; ++n) {
        const rd_input in = {b->Q + n * nq, b->QD ? b->QD + n * nq : NULL, NULL, NULL, NULL, 0};
        const rd_task_space_out o = task_out(b->out, n, b->r, nq);
        b->status[n] = rd_task_space(b->m, &in, &b->t, &o, w);
    }
}

#define TA(field) offsetof(task_args, field)
#define TASK_OUT(name, k, nd, ...) {name, A_OUT, nd, {S_N, __VA_ARGS__}, 1, TA(out[k])}

static const arg_spec batch_args_table[] = {
    {"model", A_MODEL, 0, {0}, 0, TA(m)}, {"Q", A_IN, 2, {S_N, S_NQ}, 0, TA(Q)}, {"QD", A_IN, 2, {S_N, S_NQ}, 1, TA(QD)},
    {"k", A_FRAME, 0, {0}, 0, TA(t.frame)}, {"reference", A_INT, 0, {0}, 0, TA(t.reference)},
    {"rows", A_ROWS, 0, {0}, 0, TA(t.rows)}, {"damping", A_DOUBLE, 0, {0}, 0, TA(t.damping)},
    TASK_OUT("T", 0, 3, 4, 4), TASK_OUT("J", 1, 3, S_R, S_NQ), TASK_OUT("VEL", 2, 2, S_R), TASK_OUT("BIAS", 3, 2, S_R),
    TASK_OUT("LAMBDA", 4, 3, S_R, S_R), TASK_OUT("JBAR", 5, 3, S_NQ, S_R), TASK_OUT("NS", 6, 3, S_NQ, S_NQ),
    {"status", A_STATUS, 1, {S_N}, 0, TA(status)},
};

#define COUNT(table) ((int)(sizeof table / sizeof table[0]))

/* task_space_batch(model, Q, QD, k, reference, rows, damping, T, J, VEL, BIAS, LAMBDA, JBAR, NS, status):
 * rd_task_space of every row; each output None (not computed) or its (N, ...) array; QD None unless
 * VEL or BIAS is wanted. */
static PyObject *py_task_space_batch(PyObject *self, PyObject *args)
{
    (void)self;
    task_args a;
    memset(&a, 0, sizeof a);
    npy_intp sym[S_COUNT];
    if (rd_module_parse_args(batch_args_table, COUNT(batch_args_table), args, NULL, (char *)&a, sym))
        return NULL;
    if ((a.out[2] || a.out[3]) && !a.QD) {
        PyErr_SetString(PyExc_ValueError, "QD: required for VEL and BIAS");
        return NULL;
    }
    a.r = (int)sym[SYM(S_R)];
    if (rd_module_run_rows(a.m, task_rows, &a, sym[SYM(S_N)]))
        return NULL;
    Py_RETURN_NONE;
}

/* task_space(model, data, q, qd, k, reference, rows, damping, want) -> a tuple of new arrays, those of the
 * bits of want in the order T (4, 4), J (r, nq), vel (r,), bias (r,), Lambda (r, r), Jbar (nq, r),
 * N (nq, nq); NotImplemented when q (or qd, which None leaves out) is not a float64 vector of nq finite
 * values or the engine answers a status other than RD_OK: the general path words the error. */
static PyObject *py_task_space(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 9 || Py_TYPE(args[0]) != &EngineModelType) {
        PyErr_SetString(PyExc_TypeError, "expected (model, data, q, qd, k, reference, rows, damping, want)");
        return NULL;
    }
    const rd_model *m = &((EngineModel *)args[0])->m;
    rd_work *w = rd_module_data(args[1], m);
    if (!w)
        return NULL;
    rd_task t;
    const long k = PyLong_AsLong(args[4]), reference = PyLong_AsLong(args[5]), rows = PyLong_AsLong(args[6]),
               want = PyLong_AsLong(args[8]);
    t.damping = PyFloat_AsDouble(args[7]);
    if (PyErr_Occurred())
        return NULL;
    if (k < 0 || k >= m->nf || reference < 0 || reference > 1 || rows < 0 || rows > RD_TASK_ALL_ROWS || want < 0 ||
        want >= 1 << W_COUNT) {
        PyErr_SetString(PyExc_ValueError, "task_space: frame, reference, rows or want out of range");
        return NULL;
    }
    t.frame = (int)k, t.reference = (int)reference, t.rows = (int)rows;
    const int nq = m->nq, motion = (want & (W_VEL | W_BIAS)) != 0;
    if (!fast_vector(args[2], nq) || (motion ? !fast_vector(args[3], nq) : args[3] != Py_None && !fast_vector(args[3], nq)))
        Py_RETURN_NOTIMPLEMENTED;
    int r = 0;
    for (int i = 0; i < 6; ++i)
        r += rows == 0 || (rows >> i & 1);
    const npy_intp dims[W_COUNT][2] = {{4, 4}, {r, nq}, {r, 0}, {r, 0}, {r, r}, {nq, r}, {nq, nq}};
    const int ndim[W_COUNT] = {2, 2, 1, 1, 2, 2, 2};
    PyObject *arrays[W_COUNT] = {NULL};
    double *data[W_COUNT] = {NULL};
    int count = 0, failed = 0;
    for (int j = 0; j < W_COUNT; ++j)
        if (want >> j & 1) {
            arrays[j] = PyArray_SimpleNew(ndim[j], (npy_intp *)dims[j], NPY_DOUBLE);
            failed |= !arrays[j];
            data[j] = arrays[j] ? (double *)PyArray_DATA((PyArrayObject *)arrays[j]) : NULL;
            ++count;
        }
    PyObject *answer = NULL;
    if (!failed) {
        const rd_input in = {PyArray_DATA((PyArrayObject *)args[2]),
                             args[3] == Py_None ? NULL : PyArray_DATA((PyArrayObject *)args[3]), NULL, NULL, NULL, 0};
        const rd_task_space_out o = task_out(data, 0, r, nq);
        if (rd_task_space(m, &in, &t, &o, w) != RD_OK)
            answer = Py_NewRef(Py_NotImplemented);
        else if ((answer = PyTuple_New(count)))
            for (int j = 0, at = 0; j < W_COUNT; ++j)
                if (arrays[j]) {
                    PyTuple_SET_ITEM(answer, at++, arrays[j]);
                    arrays[j] = NULL;
                }
    }
    for (int j = 0; j < W_COUNT; ++j)
        Py_XDECREF(arrays[j]);
    return answer;
}

/* -- the compliant laws (compliant.c), one tick a call ------------------------------------------------ */

/* What a tick of rd_compliant_control reads and writes. */
typedef struct {
    const rd_model *m;
    rd_work *w;
    rd_compliant_options o;
    rd_compliant_input in;
    double *tau, *info;
} compliant_args;

#define CA(field) offsetof(compliant_args, field)
#define CA_DOUBLE(name, field) {name, A_DOUBLE, 0, {0}, 0, CA(field)}

static const arg_spec compliant_table[] = {
    {"model", A_MODEL, 0, {0}, 0, CA(m)}, {"data", A_DATA, 0, {0}, 0, CA(w)}, {"law", A_INT, 0, {0}, 0, CA(o.law)},
    {"k", A_FRAME, 0, {0}, 0, CA(o.task.frame)}, {"rows", A_ROWS, 0, {0}, 0, CA(o.task.rows)},
    {"kp", A_IN, 1, {S_R}, 0, CA(o.kp)}, {"kd", A_IN, 1, {S_R}, 1, CA(o.kd)}, CA_DOUBLE("damping_ratio", o.damping_ratio),
    {"null_stiffness", A_IN, 1, {S_NQ}, 0, CA(o.null_stiffness)}, CA_DOUBLE("null_damping_ratio", o.null_damping_ratio),
    {"posture", A_IN, 1, {S_NQ}, 0, CA(o.posture)}, CA_DOUBLE("max_force", o.max_force),
    CA_DOUBLE("max_moment", o.max_moment), CA_DOUBLE("max_torque_rate", o.max_torque_rate),
    CA_DOUBLE("singular_threshold", o.singular_threshold), CA_DOUBLE("damping", o.task.damping),
    {"lower", A_IN, 1, {S_NQ}, 1, CA(o.lower)}, {"upper", A_IN, 1, {S_NQ}, 1, CA(o.upper)},
    CA_DOUBLE("limit_margin", o.limit_margin), CA_DOUBLE("limit_frequency", o.limit_frequency),
    {"velocity", A_IN, 1, {S_NQ}, 1, CA(o.velocity)},
    {"q", A_IN, 1, {S_NQ}, 0, CA(in.q)}, {"qd", A_IN, 1, {S_NQ}, 0, CA(in.qd)}, {"pose", A_IN, 2, {4, 4}, 0, CA(in.pose)},
    {"twist", A_IN, 1, {6}, 0, CA(in.twist)}, {"accel", A_IN, 1, {6}, 1, CA(in.accel)},
    {"tau_prev", A_IN, 1, {S_NQ}, 1, CA(in.tau_prev)}, CA_DOUBLE("dt", in.dt), {"tau", A_OUT, 1, {S_NQ}, 0, CA(tau)},
    {"info", A_OUT, 1, {3}, 0, CA(info)},
};

/* compliant(model, data, law, k, rows, kp, kd, damping_ratio, null_stiffness, null_damping_ratio, posture,
 * max_force, max_moment, max_torque_rate, singular_threshold, damping, lower, upper, limit_margin,
 * limit_frequency, velocity, q, qd, pose, twist, accel, tau_prev, dt, tau, info) -> status: rd_compliant_control
 * (reference: base axes), tau (nq) and info (3,): s_min, lambda, singular written; kd, lower, upper, velocity,
 * accel and tau_prev None for NULL. */
static PyObject *py_compliant(PyObject *self, PyObject *args)
{
    (void)self;
    compliant_args a;
    memset(&a, 0, sizeof a);
    npy_intp sym[S_COUNT];
    if (rd_module_parse_args(compliant_table, COUNT(compliant_table), args, NULL, (char *)&a, sym))
        return NULL;
    a.o.task.reference = RD_LOCAL_WORLD_ALIGNED;
    rd_compliant_info info = {0.0, 0.0, 0};
    const int code = rd_compliant_control(a.m, &a.o, &a.in, a.tau, &info, a.w);
    a.info[0] = info.s_min, a.info[1] = info.lambda, a.info[2] = info.singular;
    return PyLong_FromLong(code);
}

/* What rd_impedance_damping reads and writes. */
typedef struct {
    const double *K, *Lambda;
    double zeta, *D;
} damping_args;

#define DA(field) offsetof(damping_args, field)

static const arg_spec damping_table[] = {
    {"K", A_IN, 2, {S_N, S_R}, 0, DA(K)}, {"Lambda", A_IN, 2, {S_R, S_R}, 0, DA(Lambda)},
    {"zeta", A_DOUBLE, 0, {0}, 0, DA(zeta)}, {"D", A_OUT, 2, {S_R, S_R}, 0, DA(D)},
};

/* impedance_damping(K (r, r), Lambda (r, r), zeta, D (r, r)) -> status: rd_impedance_damping into D. */
static PyObject *py_impedance_damping(PyObject *self, PyObject *args)
{
    (void)self;
    damping_args a;
    memset(&a, 0, sizeof a);
    npy_intp sym[S_COUNT];
    if (rd_module_parse_args(damping_table, COUNT(damping_table), args, NULL, (char *)&a, sym))
        return NULL;
    if (sym[SYM(S_N)] != sym[SYM(S_R)] || sym[SYM(S_R)] > 6) {
        PyErr_SetString(PyExc_ValueError, "impedance_damping: expected square matrices of at most 6 rows");
        return NULL;
    }
    return PyLong_FromLong(rd_impedance_damping((int)sym[SYM(S_R)], a.K, a.Lambda, a.zeta, a.D));
}

static PyMethodDef task_methods[] = {
    {"compliant", py_compliant, METH_VARARGS,
     "compliant(model, data, law, k, rows, kp, kd, damping_ratio, null_stiffness, null_damping_ratio, posture, max_force, "
     "max_moment, max_torque_rate, singular_threshold, damping, lower, upper, limit_margin, limit_frequency, velocity, "
     "q, qd, "
     "pose, twist, accel, tau_prev, dt, tau, info) -> "
     "status: one tick of a compliant law (engine.h's rd_compliant_control), tau (nq) and info (s_min, lambda, "
     "singular) in place"},
    {"impedance_damping", py_impedance_damping, METH_VARARGS,
     "impedance_damping(K, Lambda, zeta, D) -> status: the impedance's damping design into D (engine.h's "
     "rd_impedance_damping)"},
    {"task_space", (PyCFunction)(void (*)(void))py_task_space, METH_FASTCALL,
     "task_space(model, data, q, qd, k, reference, rows, damping, want) -> (arrays of want's bits: T, J, vel, bias, "
     "Lambda, Jbar, N), or NotImplemented when not the fast shape or not OK (engine.h's rd_task_space)"},
    {"task_space_batch", py_task_space_batch, METH_VARARGS,
     "task_space_batch(model, Q, QD, k, reference, rows, damping, T, J, VEL, BIAS, LAMBDA, JBAR, NS, status): "
     "rd_task_space of N states, each output None or its (N, ...) array"},
    {NULL, NULL, 0, NULL},
};

int rd_module_add_task(PyObject *mod)
{
    if (PyModule_AddIntConstant(mod, "LOCAL_WORLD_ALIGNED", RD_LOCAL_WORLD_ALIGNED) < 0 ||
        PyModule_AddIntConstant(mod, "LOCAL", RD_LOCAL) < 0 || PyModule_AddIntConstant(mod, "TASK_SINGULAR", RD_TASK_SINGULAR) < 0 ||
        PyModule_AddIntConstant(mod, "CARTESIAN_IMPEDANCE", RD_CARTESIAN_IMPEDANCE) < 0 ||
        PyModule_AddIntConstant(mod, "OPERATIONAL_SPACE", RD_OPERATIONAL_SPACE) < 0)
        return -1;
    return PyModule_AddFunctions(mod, task_methods);
}
