/* _robot_dynamics_engine's path timing: reachability.c's TOPP-RA for robot_dynamics.trajectory.time_optimal. */

#include "module.h"

/* obj as a C-contiguous float64 array of `size` values (writeable when asked): its data, or NULL with a ValueError. */
static double *path_array(PyObject *obj, const char *what, npy_intp size, int writeable)
{
    if (!PyArray_Check(obj) || PyArray_TYPE((PyArrayObject *)obj) != NPY_DOUBLE ||
        !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)obj) || PyArray_SIZE((PyArrayObject *)obj) != size ||
        (writeable && !PyArray_ISWRITEABLE((PyArrayObject *)obj))) {
        PyErr_Format(PyExc_ValueError, "%s: expected a C-contiguous%s float64 array of %zd values", what,
                     writeable ? " writeable" : "", (Py_ssize_t)size);
        return NULL;
    }
    return PyArray_DATA((PyArrayObject *)obj);
}

static PyObject *py_reachability(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *s, *a, *b, *c, *lo, *hi, *xmax, *K_lo, *K_hi, *x, *u;
    rd_path_constraints p;
    if (!PyArg_ParseTuple(args, "OOOOOOOddOOOO", &s, &a, &b, &c, &lo, &hi, &xmax, &p.x_start, &p.x_end, &K_lo, &K_hi,
                          &x, &u))
        return NULL;
    if (!PyArray_Check(a) || PyArray_NDIM((PyArrayObject *)a) != 2)
        return PyErr_Format(PyExc_ValueError, "a: expected an (n, m) float64 array");
    const npy_intp n = PyArray_DIM((PyArrayObject *)a, 0), m = PyArray_DIM((PyArrayObject *)a, 1);
    if (n < 2 || n > INT_MAX / 4 || m > INT_MAX / 8)
        return PyErr_Format(PyExc_ValueError, "a: expected at least 2 grid points, got %zd", (Py_ssize_t)n);
    p.n = (int)n, p.m = (int)m, p.mid = NULL, p.keep = 0, p.changed_from = 0;
    rd_path_timing t;
    t.defining = NULL;
    if (!(p.s = path_array(s, "s", n, 0)) || !(p.a = path_array(a, "a", n * m, 0)) ||
        !(p.b = path_array(b, "b", n * m, 0)) || !(p.c = path_array(c, "c", n * m, 0)) ||
        !(p.lo = path_array(lo, "lo", n * m, 0)) || !(p.hi = path_array(hi, "hi", n * m, 0)) ||
        !(p.xmax = path_array(xmax, "xmax", n, 0)) || !(t.K_lo = path_array(K_lo, "K_lo", n, 1)) ||
        !(t.K_hi = path_array(K_hi, "K_hi", n, 1)) || !(t.x = path_array(x, "x", n, 1)) ||
        !(t.u = path_array(u, "u", n - 1, 1)))
        return NULL;
    for (npy_intp i = 0; i + 1 < n; ++i)
        if (!(p.s[i + 1] > p.s[i]))
            return PyErr_Format(PyExc_ValueError, "s: expected an increasing grid");
    t.work = PyMem_Malloc(rd_reachability_work(p.m));
    if (!t.work)
        return PyErr_NoMemory();
    int failed;
    Py_BEGIN_ALLOW_THREADS failed = rd_reachability(&p, &t);
    Py_END_ALLOW_THREADS PyMem_Free(t.work);
    return PyLong_FromLong(failed);
}

/* An (n, k) C-contiguous float64 array's data and its k (n given), or NULL with a ValueError. */
static const double *rows_of(PyObject *obj, const char *what, npy_intp n, npy_intp *k)
{
    if (!PyArray_Check(obj) || PyArray_NDIM((PyArrayObject *)obj) != 2 || PyArray_DIM((PyArrayObject *)obj, 0) != n) {
        PyErr_Format(PyExc_ValueError, "%s: expected a float64 array of %zd rows", what, (Py_ssize_t)n);
        return NULL;
    }
    *k = PyArray_DIM((PyArrayObject *)obj, 1);
    return path_array(obj, what, n * *k, 0);
}

static PyObject *py_time_optimal(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *model, *s, *a, *b, *g, *dq, *knot, *T, *limit, *vmax, *x, *u, *K_lo, *K_hi, *times;
    rd_topp_problem p;
    rd_topp_result r;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOiidOOOOO", &model, &s, &a, &b, &g, &dq, &knot, &T, &limit, &vmax,
                          &p.speed_friction, &p.max_solves, &p.tolerance, &x, &u, &K_lo, &K_hi, &times))
        return NULL;
    if (model != Py_None && !PyObject_TypeCheck(model, &EngineModelType))
        return PyErr_Format(PyExc_TypeError, "model: expected an engine Model or None");
    p.model = model == Py_None ? NULL : &((EngineModel *)model)->m;
    if (!PyArray_Check(s) || PyArray_NDIM((PyArrayObject *)s) != 1 || PyArray_DIM((PyArrayObject *)s, 0) < 2)
        return PyErr_Format(PyExc_ValueError, "s: expected a grid of at least 2 points");
    const npy_intp n = PyArray_DIM((PyArrayObject *)s, 0);
    npy_intp m, mb, mg, nq, nqt;
    if (!(p.s = path_array(s, "s", n, 0)) || !(p.a = rows_of(a, "a", n, &m)) || !(p.b = rows_of(b, "b", n, &mb)) ||
        !(p.g = rows_of(g, "g", n, &mg)) || !(p.dq = rows_of(dq, "dq", n, &nq)) ||
        !(p.knot = path_array(knot, "knot", n, 0)) || !(p.T = rows_of(T, "T", m, &nqt)) ||
        !(p.limit = path_array(limit, "limit", m, 0)) || !(p.vmax = path_array(vmax, "vmax", nq, 0)) ||
        !(r.x = path_array(x, "x", n, 1)) || !(r.u = path_array(u, "u", n - 1, 1)) ||
        !(r.K_lo = path_array(K_lo, "K_lo", n, 1)) || !(r.K_hi = path_array(K_hi, "K_hi", n, 1)) ||
        !(r.t = path_array(times, "t", n, 1)))
        return NULL;
    if (mb != m || mg != m || nqt != nq || (p.model && p.model->nq != nq) || n > INT_MAX / 8 || m > INT_MAX / 8)
        return PyErr_Format(PyExc_ValueError, "a, b, g (n, m), dq (n, nq), T (m, nq): sizes differ");
    for (npy_intp i = 0; i + 1 < n; ++i)
        if (!(p.s[i + 1] > p.s[i]))
            return PyErr_Format(PyExc_ValueError, "s: expected an increasing grid");
    p.n = (int)n, p.m = (int)m, p.nq = (int)nq;
    r.work = PyMem_Malloc(rd_time_optimal_work(p.n, p.m, p.nq));
    if (!r.work)
        return PyErr_NoMemory();
    int status;
    Py_BEGIN_ALLOW_THREADS status = rd_time_optimal(&p, &r);
    Py_END_ALLOW_THREADS PyMem_Free(r.work);
    return Py_BuildValue("iii", status, r.failed, r.solves);
}

/* rd_path_coefficients over chunks of the grid's points (rd_module_run_rows). */
typedef struct {
    const rd_model *m;
    const double *q, *dq, *ddq, *gravity;
    double *a, *b, *g;
    int status;
} coefficient_rows;

static void coefficients_rows(const void *args, rd_work *w, npy_intp lo, npy_intp hi)
{
    coefficient_rows *c = (coefficient_rows *)args;
    const size_t o = (size_t)lo * c->m->nq;
    const rd_input in = {c->q + o, c->dq + o, c->ddq + o, NULL, NULL, 0};
    if (rd_path_coefficients(c->m, (int)(hi - lo), &in, c->gravity, c->a + o, c->b + o, c->g + o, w) != RD_OK)
        c->status = RD_BAD_OUTPUT; /* a race of equal writes only */
}

static PyObject *py_path_coefficients(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *model, *Q, *DQ, *DDQ, *gravity, *A, *B, *G;
    if (!PyArg_ParseTuple(args, "OOOOOOOO", &model, &Q, &DQ, &DDQ, &gravity, &A, &B, &G))
        return NULL;
    if (!PyObject_TypeCheck(model, &EngineModelType))
        return PyErr_Format(PyExc_TypeError, "model: expected an engine Model");
    coefficient_rows c = {&((EngineModel *)model)->m, NULL, NULL, NULL, NULL, NULL, NULL, NULL, RD_OK};
    const npy_intp nq = c.m->nq;
    npy_intp n = PyArray_Check(Q) && PyArray_NDIM((PyArrayObject *)Q) == 2 ? PyArray_DIM((PyArrayObject *)Q, 0) : -1;
    if (n < 0 || n > INT_MAX / (nq + 1))
        return PyErr_Format(PyExc_ValueError, "Q: expected an (n, %zd) float64 array", (Py_ssize_t)nq);
    if (!(c.q = path_array(Q, "Q", n * nq, 0)) || !(c.dq = path_array(DQ, "DQ", n * nq, 0)) ||
        !(c.ddq = path_array(DDQ, "DDQ", n * nq, 0)) || !(c.gravity = path_array(gravity, "g", 3, 0)) ||
        !(c.a = path_array(A, "A", n * nq, 1)) || !(c.b = path_array(B, "B", n * nq, 1)) ||
        !(c.g = path_array(G, "G", n * nq, 1)))
        return NULL;
    if (rd_module_run_rows(c.m, coefficients_rows, &c, n))
        return NULL;
    return PyLong_FromLong(c.status);
}

static PyObject *py_ppoly_derivatives(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *x, *c, *s, *Q, *DQ, *DDQ;
    if (!PyArg_ParseTuple(args, "OOOOOO", &x, &c, &s, &Q, &DQ, &DDQ))
        return NULL;
    if (!PyArray_Check(c) || PyArray_NDIM((PyArrayObject *)c) != 3 || !PyArray_Check(s) ||
        PyArray_NDIM((PyArrayObject *)s) != 1)
        return PyErr_Format(PyExc_ValueError, "c: expected (order, pieces, nq) and s (n,) float64 arrays");
    const npy_intp order = PyArray_DIM((PyArrayObject *)c, 0), pieces = PyArray_DIM((PyArrayObject *)c, 1);
    const npy_intp nq = PyArray_DIM((PyArrayObject *)c, 2), n = PyArray_DIM((PyArrayObject *)s, 0);
    if (order < 1 || order > RD_PPOLY_MAX_ORDER || pieces < 1 || nq < 1 || order * pieces * nq > INT_MAX ||
        n * nq > INT_MAX)
        return PyErr_Format(PyExc_ValueError, "c: expected 1 to %d coefficients, at least one piece and joint",
                            (int)RD_PPOLY_MAX_ORDER);
    rd_ppoly pp = {(int)order, (int)pieces, (int)nq, NULL, NULL};
    const double *sv;
    double *q, *dq, *ddq;
    if (!(pp.x = path_array(x, "x", pieces + 1, 0)) || !(pp.c = path_array(c, "c", order * pieces * nq, 0)) ||
        !(sv = path_array(s, "s", n, 0)) || !(q = path_array(Q, "Q", n * nq, 1)) ||
        !(dq = path_array(DQ, "DQ", n * nq, 1)) || !(ddq = path_array(DDQ, "DDQ", n * nq, 1)))
        return NULL;
    return PyLong_FromLong(rd_ppoly_derivatives(&pp, (int)n, sv, q, dq, ddq));
}

static PyObject *py_spline_through(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *Y, *S, *C;
    if (!PyArg_ParseTuple(args, "OOO", &Y, &S, &C))
        return NULL;
    if (!PyArray_Check(Y) || PyArray_NDIM((PyArrayObject *)Y) != 2)
        return PyErr_Format(PyExc_ValueError, "Y: expected a (K, nq) float64 array");
    const npy_intp K = PyArray_DIM((PyArrayObject *)Y, 0), nq = PyArray_DIM((PyArrayObject *)Y, 1);
    if (K < 3 || nq < 1 || K * (nq + 3) > INT_MAX / 4)
        return PyErr_Format(PyExc_ValueError, "Y: expected at least 3 waypoints of at least one joint");
    const double *y;
    double *s, *c, *work;
    if (!(y = path_array(Y, "Y", K * nq, 0)) || !(s = path_array(S, "S", K, 1)) ||
        !(c = path_array(C, "C", 4 * (K - 1) * nq, 1)))
        return NULL;
    if (!(work = PyMem_Malloc(sizeof(double) * (size_t)(K * (nq + 3)))))
        return PyErr_NoMemory();
    const int status = rd_spline_through((int)K, (int)nq, y, s, c, work);
    PyMem_Free(work);
    return PyLong_FromLong(status);
}

static PyObject *py_path_grid(PyObject *self, PyObject *args)
{
    (void)self;
    int count;
    PyObject *knots, *S, *F;
    if (!PyArg_ParseTuple(args, "iOOO", &count, &knots, &S, &F))
        return NULL;
    if (count < 2 || !PyArray_Check(knots) || PyArray_NDIM((PyArrayObject *)knots) != 1)
        return PyErr_Format(PyExc_ValueError, "path_grid: expected count >= 2 and knots (k,)");
    const npy_intp k = PyArray_DIM((PyArrayObject *)knots, 0);
    if (k > INT_MAX / 2 - count)
        return PyErr_Format(PyExc_ValueError, "knots: too many");
    const double *kv;
    double *s, *f, *work;
    if (!(kv = path_array(knots, "knots", k, 0)) || !(s = path_array(S, "S", count + k, 1)) ||
        !(f = path_array(F, "F", count + k, 1)))
        return NULL;
    if (!(work = PyMem_Malloc(sizeof(double) * (size_t)(k + 1))))
        return PyErr_NoMemory();
    const int size = rd_path_grid(count, (int)k, kv, s, f, work);
    PyMem_Free(work);
    return PyLong_FromLong(size);
}

static PyMethodDef path_methods[] = {
    {"time_optimal", py_time_optimal, METH_VARARGS,
     "time_optimal(model, s, a, b, g, dq, knot, T, limit, vmax, speed_friction, max_solves, tolerance, x, u, K_lo, K_hi, "
     "t) -> (status, failed, solves): engine.h's rd_time_optimal; x, u, K_lo, K_hi, t written"},
    {"reachability", py_reachability, METH_VARARGS,
     "reachability(s, a, b, c, lo, hi, xmax, x_start, x_end, K_lo, K_hi, x, u) -> -1, or the first point whose "
     "controllable set is empty: TOPP-RA (engine.h's rd_reachability); K_lo, K_hi, x (n) and u (n - 1) written"},
    {"path_coefficients", py_path_coefficients, METH_VARARGS,
     "path_coefficients(model, Q, DQ, DDQ, g, A, B, G) -> status: engine.h's rd_path_coefficients at the "
     "path's points (q, q', q'' rows); A, B, G (n, nq) written"},
    {"ppoly_derivatives", py_ppoly_derivatives, METH_VARARGS,
     "ppoly_derivatives(x, c, s, Q, DQ, DDQ) -> -1, or the first derivative not finite: engine.h's "
     "rd_ppoly_derivatives of scipy's PPoly (x, c) at s; Q, DQ, DDQ (n, nq) written"},
    {"path_grid", py_path_grid, METH_VARARGS,
     "path_grid(count, knots, S, F) -> the points, or -1 (knots not increasing inside (0, 1)): engine.h's "
     "rd_path_grid; S and F (count + len(knots)) written"},
    {"spline_through", py_spline_through, METH_VARARGS,
     "spline_through(Y, S, C) -> -1, -2 (a waypoint not finite) or k (waypoints k and k + 1 equal): engine.h's "
     "rd_spline_through; S (K) and C (4, K - 1, nq) written"},
    {NULL, NULL, 0, NULL},
};

int rd_module_add_path(PyObject *mod)
{
    return PyModule_AddFunctions(mod, path_methods);
}
