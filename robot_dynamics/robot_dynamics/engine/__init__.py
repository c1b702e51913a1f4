"""The engine and the one boundary between the public functions and it.

The engine is a C extension (``_robot_dynamics_engine``, sources in ``src/engine/``) compiled
when the package is installed (``pip install``, ``colcon build``): nothing compiles at run
time. It is a top-level private module installed beside the package, so the package also
imports from its source tree (the test suite) with the installed engine.

This package is where the public functions meet it, the model/data pair made explicit as
Pinocchio's ``(model, data)``: the model packed once per RobotModel (``RobotModel.engine_model``,
the engine's ``Model``, written by :func:`~robot_dynamics.engine.layout.pack`), and the data, a
workspace (``Model.create_data()``, the engine's ``Data``), of which the engine keeps one per
thread for the calls that hide it (``engine().thread_data(model.engine_model)``): no workspace is
written by two threads. Here the inputs of any batch shape are validated (once), the engine is
called and its status turned into the package's error (:func:`check_status`). The public
one-state functions (:func:`engine_first`) call the engine directly (``engine().rnea(model.engine_model,
data, q, qd, qdd, friction)``) and come here when it answers NotImplemented (not float64 vectors of
the model's size, or not a clean state). :mod:`.layout` is the packer, :mod:`.stages` the tick's
stages.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._batch import as_batch, broadcast_batch, kernel_array
from ..errors import InputError, SingularityError

#: A :class:`robot_dynamics.model.RobotModel`, read through its arrays. The boundary sits below the
#: model layer and never imports it: the model packs itself through :mod:`.layout`
#: (``RobotModel.engine_model``), as Pinocchio's model makes its data.
RobotModel = Any

__all__ = [
    "engine",
    "engine_first",
    "joint_inputs",
    "gravity_vector",
    "wrench_rows",
    "check_status",
    "rnea",
    "aba",
    "rnea_derivatives",
    "aba_derivatives",
    "crba",
    "energies",
    "friction",
    "frame_poses",
    "jacobian",
    "point_motion",
    "motion",
    "task_space",
    "TASK_OUTPUTS",
    "set_num_threads",
    "get_num_threads",
]

Array = NDArray[np.float64]

#: The contract with the compiled engine (its LAYOUT constant): a stale build is refused at import.
LAYOUT = 9

# The batches run on OpenMP threads. GNU OpenMP's threads spin-wait after every parallel region
# (GOMP_SPINCOUNT, 300,000 spins, milliseconds), and on a machine with as many threads as cores
# they take the core from the thread that goes on with one-state calls: one simulate() per study
# point ran 1.6x slower in a process that had made four batch calls per point (31 ms against
# 19 ms, bench/bench_sweep.py). Sleeping threads cost a batch of 10,000 states up to 10 %.
# Sleeping at once costs the next batch a wake-up instead: a batch of 1,000 rnea states on two
# threads took 119-126 us, no faster than one thread (119 us), against 69-74 us when the threads
# spin a little before they sleep (GOMP_SPINCOUNT 1,000-30,000, the same at each; 100-300 spins
# were too few). 3,000 spins (three times the fewest that sufficed here) keep back-to-back
# batches warm and still free the core soon after the last one. A study's workers run
# their batches in their own thread (study/evaluate.py): spinning threads there took the core from
# the other worker (two workers, bench/bench_sweep.py: 573 points/s without the spin, 548 with it,
# 577 with it and single-thread chunks).
# libgomp reads both when it is loaded (with the engine, below); values the user set are kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("GOMP_SPINCOUNT", "3000")

_ENGINE: ModuleType | None = None


def engine() -> ModuleType:
    """The compiled engine module."""
    global _ENGINE
    if _ENGINE is None:
        try:
            import _robot_dynamics_engine as module
        except ImportError as exc:
            raise ImportError(
                "robot_dynamics: its compiled engine (_robot_dynamics_engine) is not installed; "
                "`pip install ./robot_dynamics` (or colcon build) compiles it with the system's C compiler"
            ) from exc
        if getattr(module, "LAYOUT", None) != LAYOUT:
            raise ImportError(
                f"robot_dynamics: the installed engine ({getattr(module, '__file__', module.__name__)}) is from another version "
                f"(layout {getattr(module, 'LAYOUT', None)}, expected {LAYOUT}); reinstall the package"
            )
        _ENGINE = module
    return _ENGINE


F = TypeVar("F", bound=Callable[..., Any])


def engine_first(name: str, fixed: int = 4, friction: bool = True) -> Callable[[F], F]:
    """Decorator of a public one-state function: one clean state goes straight to the engine.

    A call ``f(model, q, qd, x)`` (``fixed`` positional arguments; where ``friction``, also
    ``gravity=None, f_ext=None`` and ``friction=...``) runs the engine's one-state ``name`` on
    ``model.engine_model`` and the calling thread's data without a Python frame in between (about
    80 ns less a call); any other call, or one the engine answers
    NotImplemented (not float64 vectors of the model's size, or a state it cannot answer), runs the
    decorated function, the general path, whose name, documentation and signature the result
    carries (``__wrapped__``). The engine's ``EngineFirst`` (src/engine/module.c).
    """

    def wrap(general: F) -> F:
        first: F = engine().EngineFirst(getattr(engine(), name), general, fixed, friction)
        return first

    return wrap


def set_num_threads(n: int) -> None:
    """Threads of the batch algorithms (default: OpenMP's, ``OMP_NUM_THREADS`` or every core).

    Batches below ``SERIAL_BELOW`` states always run in the calling thread.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InputError(f"threads: expected a whole number >= 1, got {n!r}")
    engine().set_num_threads(int(n))


def get_num_threads() -> int:
    """Threads of the batch algorithms."""
    return int(engine().get_num_threads())


# -- validation at the boundary -----------------------------------------------------------------------
def joint_inputs(model: RobotModel, **arrays: ArrayLike) -> tuple[list[Array], tuple[int, ...]]:
    """Validate joint-space arrays of shape (..., nq) and broadcast them to one batch (N, nq)."""
    parsed = [as_batch(a, model.nq, name, model.joint_names) for name, a in arrays.items()]
    try:
        return broadcast_batch(parsed)
    except ValueError:
        shapes = {name: np.shape(a) for name, a in arrays.items()}
        raise InputError(f"Batch shapes do not broadcast: {shapes}") from None


def gravity_vector(model: RobotModel, gravity: ArrayLike | None) -> Array:
    """The gravity vector to use, (3,) [m/s^2] in the base frame: ``model.gravity`` by default."""
    if gravity is None:
        return np.array(model.gravity, dtype=float)
    try:
        g = np.asarray(gravity, dtype=float)
    except (TypeError, ValueError):
        g = np.zeros(0)
    if g.shape != (3,) or not np.all(np.isfinite(g)):
        raise InputError(f"gravity: expected 3 finite numbers [m/s^2] in the base frame, got {gravity!r}")
    return np.array(g)


def wrench_rows(model: RobotModel, f_ext: Any, batch: tuple[int, ...], n: int) -> Array:
    """External wrenches as the engine reads them, (N, k, 10): body, point, force, moment.

    Each ``f_ext[link]`` is ``[force; moment]`` (..., 6) that the link exerts on the environment
    (Khalil's f_en [7.30]), base axes, moment about the link frame's origin. A wrench on a link
    fixed to the base is taken by the base and dropped.
    """
    if not f_ext:
        return np.zeros((n, 0, 10))
    if not hasattr(f_ext, "items"):
        raise InputError(f"f_ext: expected a mapping {{link: wrench}}, got {type(f_ext).__name__}")
    rows = []
    for link, w in f_ext.items():
        k = model.frame_index(link)
        body = int(model.frame_body[k])
        wf, wb = as_batch(w, 6, f"f_ext[{link!r}] ([fx, fy, fz, tx, ty, tz])")
        try:
            wf = np.broadcast_to(wf.reshape(wb + (6,)), batch + (6,)).reshape(n, 6)
        except ValueError:
            raise InputError(f"f_ext[{link!r}]: batch shape {wb} does not match the state's {batch}") from None
        if body < 0:
            continue
        row = np.empty((n, 10))
        row[:, 0] = body
        row[:, 1:4] = model.frame_placement[k, :3, 3]
        row[:, 4:10] = wf
        rows.append(row)
    if not rows:
        return np.zeros((n, 0, 10))
    return np.ascontiguousarray(np.stack(rows, axis=1))


def check_status(model: RobotModel, status: Any, what: str) -> None:
    """Turn an engine status (an int, or an array of them over a batch) into the package's error."""
    st = np.asarray(status)
    bad = st[st != 0]
    if bad.size == 0:
        return
    code = int(bad.flat[0])
    sample = "" if st.ndim == 0 or st.size == 1 else f" (sample {int(np.flatnonzero(st.ravel() != 0)[0])} of the batch)"
    e = engine()
    if code >= e.SINGULAR:
        joint = model.body_joint_names[code - e.SINGULAR]
        raise SingularityError(
            f"{what}: joint {joint!r} moves no inertia{sample}: its subtree is massless and it has "
            "no rotor inertia, so direct dynamics is undefined. Give the link an <inertial>, or "
            "the joint a rotor inertia or armature (joint-properties YAML)."
        )
    if code == e.TASK_SINGULAR:
        raise SingularityError(
            f"{what}: the task rows are dependent{sample}: J A^-1 J^T is singular (a singular pose, or a "
            "frame no joint moves); choose other rows, another pose, or a damping > 0"
        )
    if code == e.NOT_POSITIVE_DEFINITE:
        raise SingularityError(
            f"{what}: the joint-space inertia matrix is not positive definite{sample}: some joints "
            "move no inertia. Give their links mass, or the joints a rotor inertia or armature."
        )
    if code == e.BAD_OUTPUT:
        raise InputError(
            f"{what}: the result is not finite{sample}: the inputs are too large for double "
            "precision (velocities, accelerations or torques of physical size are expected)"
        )
    raise InputError(f"{what}: expected finite joint vectors of {model.nq} values{sample}")


# -- the engine calls, any batch shape ----------------------------------------------------------------
def _dynamics(name: str, model: RobotModel, q: ArrayLike, qd: ArrayLike, x: ArrayLike, xname: str,
              gravity: ArrayLike | None, f_ext: Any, friction: bool, shapes: tuple[tuple[int, ...], ...]) -> list[Array]:
    """The engine's ``name``_batch over validated states; one output per shape of ``shapes``
    (per state: (nq,) for rnea/aba, three (nq, nq) for their derivatives), in the batch's shape."""
    (qf, qdf, xf), batch = joint_inputs(model, q=q, qd=qd, **{xname: x})
    g = gravity_vector(model, gravity)
    n = qf.shape[0]
    fx = wrench_rows(model, f_ext, batch, n)
    out = [np.empty((n,) + shape) for shape in shapes]
    status = np.empty(n, dtype=np.int64)
    getattr(engine(), name + "_batch")(model.engine_model, qf, qdf, xf, g, fx, bool(friction), 0.0, *out, status)
    check_status(model, status if batch else status[0], name)
    return [o.reshape(batch + shape) for o, shape in zip(out, shapes)]


def rnea(model: RobotModel, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, gravity: ArrayLike | None, f_ext: Any,
         friction: bool) -> Array:
    """Inverse dynamics of any batch (the general path of :func:`robot_dynamics.rnea`)."""
    return _dynamics("rnea", model, q, qd, qdd, "qdd", gravity, f_ext, friction, ((model.nq,),))[0]


def aba(model: RobotModel, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, gravity: ArrayLike | None, f_ext: Any,
        friction: bool) -> Array:
    """Direct dynamics of any batch (the general path of :func:`robot_dynamics.aba`)."""
    return _dynamics("aba", model, q, qd, tau, "tau", gravity, f_ext, friction, ((model.nq,),))[0]


def rnea_derivatives(model: RobotModel, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, gravity: ArrayLike | None,
                     f_ext: Any, friction: bool) -> tuple[Array, Array, Array]:
    """(dtau/dq, dtau/dqd, M) of any batch, each (..., nq, nq) (the general path of :func:`robot_dynamics.rnea_derivatives`)."""
    square = ((model.nq, model.nq),) * 3
    dq, dqd, M = _dynamics("rnea_derivatives", model, q, qd, qdd, "qdd", gravity, f_ext, friction, square)
    return dq, dqd, M


def aba_derivatives(model: RobotModel, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, gravity: ArrayLike | None,
                    f_ext: Any, friction: bool) -> tuple[Array, Array, Array]:
    """(dqdd/dq, dqdd/dqd, M^-1) of any batch, each (..., nq, nq) (the general path of :func:`robot_dynamics.aba_derivatives`)."""
    square = ((model.nq, model.nq),) * 3
    dq, dqd, Minv = _dynamics("aba_derivatives", model, q, qd, tau, "tau", gravity, f_ext, friction, square)
    return dq, dqd, Minv


def crba(model: RobotModel, q: ArrayLike) -> Array:
    """The joint-space inertia matrix of any batch, (..., nq, nq)."""
    (qf,), batch = joint_inputs(model, q=q)
    n = qf.shape[0]
    H = np.empty((n, model.nq, model.nq))
    status = np.empty(n, dtype=np.int64)
    engine().crba_batch(model.engine_model, qf, H, status)
    check_status(model, status if batch else status[0], "crba")
    return H.reshape(batch + (model.nq, model.nq))


def energies(model: RobotModel, q: ArrayLike, qd: ArrayLike | None, gravity: ArrayLike | None) -> tuple[Array, tuple[int, ...]]:
    """[kinetic, potential] of any batch, (N, 2), and the batch shape (qd None: at rest)."""
    if qd is None:
        (qf,), batch = joint_inputs(model, q=q)
        qdf = np.zeros_like(qf)
    else:
        (qf, qdf), batch = joint_inputs(model, q=q, qd=qd)
    g = gravity_vector(model, gravity)
    out = np.empty((qf.shape[0], 2))
    status = np.empty(qf.shape[0], dtype=np.int64)
    engine().energy_batch(model.engine_model, qf, qdf, g, out, status)
    check_status(model, status if batch else status[0], "energy")
    return out, batch


def friction(model: RobotModel, qd: ArrayLike, smoothing: float) -> Array:
    """Joint friction (Khalil [7.26]) of any batch of velocities, (..., nq)."""
    qdf, batch = as_batch(qd, model.nq, "qd", model.joint_names)
    if not (np.isfinite(smoothing) and smoothing >= 0):
        raise InputError(f"smoothing: expected a velocity >= 0 [rad/s], got {smoothing!r}")
    qdf = kernel_array(qdf)
    out = np.empty_like(qdf)
    engine().friction_batch(model.engine_model, qdf, float(smoothing), out)
    return out.reshape(batch + (model.nq,))


def frame_poses(model: RobotModel, qf: Array, frames: NDArray[np.int64]) -> Array:
    """T_base_frame of the listed frames, (N, len(frames), 4, 4), for validated (N, nq) q."""
    T = np.empty((qf.shape[0], frames.shape[0], 4, 4))
    engine().frame_poses_batch(model.engine_model, kernel_array(qf), np.ascontiguousarray(frames, dtype=np.int64), T)
    return T


def jacobian(model: RobotModel, qf: Array, k: int) -> Array:
    """Geometric Jacobians of frame k, (N, 6, nq), for validated (N, nq) q."""
    J = np.empty((qf.shape[0], 6, model.nq))
    engine().jacobian_batch(model.engine_model, kernel_array(qf), int(k), J)
    return J


def point_motion(model: RobotModel, qf: Array, qdf: Array, k: int) -> tuple[Array, Array]:
    """Twist (N, 6) of frame k's origin and its acceleration at qdd = 0 without gravity (Jdot qd)."""
    vel = np.empty((qf.shape[0], 6))
    acc = np.empty((qf.shape[0], 6))
    engine().point_motion_batch(model.engine_model, kernel_array(qf), kernel_array(qdf), int(k), vel, acc)
    return vel, acc


def motion(model: RobotModel, q: Array, qd: Array, qdd: Array, gravity: Array) -> tuple[Array, Array, Array, Array]:
    """The forward recursion's E (N, nb, 9), r (N, nb, 3), v and a (N, nb + 1, 6) of validated states."""
    N, nb = q.shape[0], model.nb
    E = np.empty((N, nb, 9))
    r = np.empty((N, nb, 3))
    v = np.empty((N, nb + 1, 6))
    a = np.empty((N, nb + 1, 6))
    c = [kernel_array(x) for x in (q, qd, qdd, gravity)]
    engine().motion_batch(model.engine_model, *c, E, r, v, a)
    return E, r, v, a


#: The outputs of :func:`task_space`, in the engine's order (module_task.c), and each one's shape per
#: state for r task rows and nq joints.
TASK_OUTPUTS = ("T", "J", "vel", "bias", "Lambda", "Jbar", "N")


def _task_shape(name: str, r: int, nq: int) -> tuple[int, ...]:
    return {"T": (4, 4), "J": (r, nq), "vel": (r,), "bias": (r,), "Lambda": (r, r), "Jbar": (nq, r), "N": (nq, nq)}[name]


_TASK_WANTS: dict[tuple[str, ...], tuple[int, list[int] | None]] = {}


def _task_bits(want: tuple[str, ...]) -> tuple[int, list[int] | None]:
    """The engine's bits of the outputs ``want`` and where each one is in its answer (None: in order)."""
    known = _TASK_WANTS.get(want)
    if known is None:
        order = sorted(want, key=TASK_OUTPUTS.index)
        known = (sum(1 << TASK_OUTPUTS.index(name) for name in want),
                 None if order == list(want) else [order.index(name) for name in want])
        _TASK_WANTS[want] = known
    return known


def task_space(model: RobotModel, q: ArrayLike, qd: ArrayLike | None, k: int, reference: int, rows: int,
               damping: float, want: tuple[str, ...], what: str = "task space") -> list[Array]:
    """The engine's ``rd_task_space`` of frame ``k`` for any batch: the outputs named in ``want``
    (of :data:`TASK_OUTPUTS`), each of the batch's shape followed by its own.

    One state of float64 vectors goes straight to the engine's one-state call (with the calling
    thread's data); anything else, or a state the engine does not answer with RD_OK, is validated
    here, run as a batch and its status turned into the package's error (naming ``what``). ``reference``: the
    engine's LOCAL_WORLD_ALIGNED or LOCAL; ``rows``: a task-row mask (bits 0-5, 0: all six).
    """
    e = engine()
    bits, where = _task_bits(want)
    motion = bits & 12  # vel, bias
    em = model.engine_model
    if type(q) is np.ndarray and q.ndim == 1:
        fast = e.task_space(em, e.thread_data(em), q, qd if motion else None, k, reference, rows, damping, bits)
        if fast is not NotImplemented:
            return list(fast) if where is None else [fast[i] for i in where]
    if motion:
        (qf, qdf), batch = joint_inputs(model, q=q, qd=qd)
    else:
        (qf,), batch = joint_inputs(model, q=q)
        qdf = None
    n, r = qf.shape[0], sum(1 for i in range(6) if rows == 0 or rows >> i & 1)
    out = {name: np.empty((n,) + _task_shape(name, r, model.nq)) for name in want}
    status = np.empty(n, dtype=np.int64)
    e.task_space_batch(em, qf, qdf, int(k), int(reference), int(rows), float(damping),
                       *(out.get(name) for name in TASK_OUTPUTS), status)
    check_status(model, status if batch else status[0], what)
    return [out[name].reshape(batch + _task_shape(name, r, model.nq)) for name in want]
