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
    p.n = (int)n, p.m = (int)m;
    rd_path_timing t;
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

static PyMethodDef path_methods[] = {
    {"reachability", py_reachability, METH_VARARGS,
     "reachability(s, a, b, c, lo, hi, xmax, x_start, x_end, K_lo, K_hi, x, u) -> -1, or the first point whose "
     "controllable set is empty: TOPP-RA (engine.h's rd_reachability); K_lo, K_hi, x (n) and u (n - 1) written"},
    {NULL, NULL, 0, NULL},
};

int rd_module_add_path(PyObject *mod)
{
    return PyModule_AddFunctions(mod, path_methods);
}
