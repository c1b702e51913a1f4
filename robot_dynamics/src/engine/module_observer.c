/* _robot_dynamics_engine's momentum observer (observer.c) for robot_dynamics.observers: one update a call,
 * its state in the caller's arrays, parsed by a table as module_batch.c's tick stages are. */

#include "module.h"

/* What an update reads: the model and its data, the options, the state's arrays, the measurement. */
typedef struct {
    const rd_model *m;
    rd_work *w;
    rd_observer_options o;
    double *state; /* (8, nq): r, p, z, b, tau, model, threshold, q (rd_observer's arrays in that order) */
    double *clock; /* (4,): t, started, collision, joint */
    double t;
    const double *q, *qd, *tau;
    double *p, *ctq;
} observer_args;

#define OA(field) offsetof(observer_args, field)
#define OBS_VECTOR(name, kind, field, optional) {name, kind, 1, {S_NQ}, optional, OA(field)}
#define OBS_MODEL {"model", A_MODEL, 0, {0}, 0, OA(m)}, {"data", A_DATA, 0, {0}, 0, OA(w)}

static const arg_spec update_args[] = {
    OBS_MODEL, OBS_VECTOR("gain", A_IN, o.gain, 0), OBS_VECTOR("threshold", A_IN, o.threshold, 0),
    OBS_VECTOR("relative", A_IN, o.relative, 0), {"gravity", A_IN, 1, {3}, 1, OA(o.gravity)},
    {"friction", A_BOOL, 0, {0}, 0, OA(o.friction)}, {"smooth", A_DOUBLE, 0, {0}, 0, OA(o.smooth)},
    {"hold", A_BOOL, 0, {0}, 0, OA(o.hold)}, {"state", A_OUT, 2, {8, S_NQ}, 0, OA(state)},
    {"clock", A_OUT, 1, {4}, 0, OA(clock)}, {"t", A_DOUBLE, 0, {0}, 0, OA(t)}, OBS_VECTOR("q", A_IN, q, 0),
    OBS_VECTOR("qd", A_IN, qd, 0), OBS_VECTOR("tau", A_IN, tau, 0),
};

static const arg_spec momentum_args[] = {
    OBS_MODEL, OBS_VECTOR("q", A_IN, q, 0), OBS_VECTOR("qd", A_IN, qd, 0), OBS_VECTOR("p", A_OUT, p, 0),
    OBS_VECTOR("ctq", A_OUT, ctq, 0),
};

#define COUNT(table) ((int)(sizeof table / sizeof table[0]))

/* rd_observer over the arrays of a call (clock's flags read as integers). */
static rd_observer observer_of(const observer_args *a)
{
    const int nq = a->m->nq;
    double *x = a->state;
    const rd_observer s = {x,          x + nq,     x + 2 * nq,  x + 3 * nq,         x + 4 * nq,         x + 5 * nq,
                           x + 6 * nq, x + 7 * nq, a->clock[0], a->clock[1] != 0.0, a->clock[2] != 0.0, (int)a->clock[3]};
    return s;
}

/* momentum_observer_update(model, data, gain, threshold, relative, gravity, friction, smooth, hold, state,
 * clock, t, q, qd, tau) -> status: rd_momentum_observer_update on the state (7, nq) and clock (4,) in place. */
static PyObject *py_update(PyObject *self, PyObject *args)
{
    (void)self;
    observer_args a;
    memset(&a, 0, sizeof a);
    npy_intp sym[S_COUNT];
    if (rd_module_parse_args(update_args, COUNT(update_args), args, NULL, (char *)&a, sym))
        return NULL;
    rd_observer s = observer_of(&a);
    const int code = rd_momentum_observer_update(a.m, &a.o, &s, a.t, a.q, a.qd, a.tau, a.w);
    a.clock[0] = s.t, a.clock[1] = s.started, a.clock[2] = s.collision, a.clock[3] = s.joint;
    return PyLong_FromLong(code);
}

/* momentum(model, data, q, qd, p, ctq) -> status: rd_momentum, p = A(q) qd and ctq = C^T(q, qd) qd. */
static PyObject *py_momentum(PyObject *self, PyObject *args)
{
    (void)self;
    observer_args a;
    memset(&a, 0, sizeof a);
    npy_intp sym[S_COUNT];
    if (rd_module_parse_args(momentum_args, COUNT(momentum_args), args, NULL, (char *)&a, sym))
        return NULL;
    return PyLong_FromLong(rd_momentum(a.m, a.q, a.qd, a.p, a.ctq, a.w));
}

static PyMethodDef observer_methods[] = {
    {"momentum_observer_update", py_update, METH_VARARGS,
     "momentum_observer_update(model, data, gain, threshold, relative, gravity, friction, smooth, hold, state, clock, "
     "t, q, qd, tau) -> status: one update of the generalized momentum observer (engine.h's "
     "rd_momentum_observer_update); state (8, nq): r, p, z, b, tau, model, threshold, q; clock (4,): t, started, "
     "collision, joint; both in place"},
    {"momentum", py_momentum, METH_VARARGS,
     "momentum(model, data, q, qd, p, ctq) -> status: p = A(q) qd and ctq = C^T(q, qd) qd (engine.h's rd_momentum)"},
    {NULL, NULL, 0, NULL},
};

int rd_module_add_observer(PyObject *mod) { return PyModule_AddFunctions(mod, observer_methods); }
