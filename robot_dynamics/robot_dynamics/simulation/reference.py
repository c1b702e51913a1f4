"""References of a simulation: what the user gives, turned into samples at the controller ticks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..control.base import Reference, TaskReference, as_joint_reference, as_task_reference
from ..errors import InputError
from ..trajectory.base import Trajectory

__all__ = ["reference_function", "ReferenceSamples", "sample_reference"]

Array = NDArray[np.float64]


def reference_function(reference: Any, nq: int) -> tuple[Callable[[float], Any], float | None, Callable[[Array], Any] | None]:
    """Turn what the user gives into ``f(t) -> Reference | TaskReference``.

    Accepted: a trajectory object with ``sample(t) -> (q, qd, qdd)`` (and ``duration``), a
    task-space motion with ``sample(t) -> (pose (4, 4), twist (6,), accel (6,))``, a
    callable ``t -> Reference | TaskReference | (q, qd, qdd)``, a :class:`Reference`, a
    :class:`TaskReference`, or a goal position (nq,) (regulation).

    Returns:
        (f, duration or None, vectorised sampler ``t (K,) -> (q, qd, qdd)`` or None).
    """
    if isinstance(reference, TaskReference):
        ref_t = as_task_reference(reference)
        return (lambda t: ref_t), None, None
    if hasattr(reference, "sample") and callable(reference.sample):
        return _trajectory_functions(reference, nq)
    if callable(reference):
        return reference, getattr(reference, "duration", None), None
    ref = as_joint_reference(reference if isinstance(reference, tuple) else np.asarray(reference, float), nq)
    return (lambda t: ref), None, None


def _trajectory_functions(reference: Any, nq: int) -> tuple[Callable[[float], Any], float, Callable[[Array], Any]]:
    """f(t), duration and the vectorised sampler of an object with ``sample(t)``."""
    duration = float(getattr(reference, "duration", 0.0))
    # the package's trajectories give (q, qd, qdd) by their class; anything else shows it by a sample
    first = None if isinstance(reference, Trajectory) else reference.sample(0.0)
    if first is not None and np.shape(first[0]) == (4, 4):  # a task-space motion: (pose, twist, accel)

        def f_task(t: float) -> TaskReference:
            return as_task_reference(tuple(reference.sample(t)))

        def batch_task(t: Array) -> Any:
            P, V, A = reference.sample(t)
            return [TaskReference(P[k], V[k], A[k]) for k in range(len(t))]

        return f_task, duration, batch_task
    n = int(reference.n if first is None else getattr(reference, "n", np.shape(first[0])[-1]))
    if n != nq:
        raise InputError(f"reference: trajectory has {n} coordinates, the robot {nq} joints")

    def f_traj(t: float) -> Reference:
        q, qd, qdd = reference.sample(t)
        return Reference(np.asarray(q, float), np.asarray(qd, float), np.asarray(qdd, float))

    def batch(t: Array) -> Any:
        return reference.sample(t)

    return f_traj, duration, batch


class ReferenceSamples(NamedTuple):
    """The reference at every tick.

    Attributes:
        q, qd, qdd: joint reference (K, nq); NaN rows where a tick's reference is not a usable
            joint reference (a task reference, a bad value: the controller's FAULT to report).
        items: what the controller receives per tick when it is not ``Reference(q[k], qd[k],
            qdd[k])`` (callables, task references), else None.
        task: True for a task-space reference.
    """

    q: Array
    qd: Array
    qdd: Array
    items: list[Any] | None
    task: bool


def sample_reference(f: Callable[[float], Any], batch: Callable[[Array], Any] | None, t: Array, n: int) -> ReferenceSamples:
    """Sample the reference at the ticks t (K,): vectorised when the trajectory allows it."""
    K = t.size
    out = batch(t) if batch is not None else None
    if out is not None and not isinstance(out, list):
        Qr, Qdr, Qddr = (np.asarray(a, float).reshape(K, n) for a in out)
        return ReferenceSamples(Qr, Qdr, Qddr, None, False)
    items = out if out is not None else [f(float(tk)) for tk in t]
    if isinstance(items[0], TaskReference):
        nan = np.full((K, n), np.nan)
        return ReferenceSamples(nan, nan, nan, items, True)
    # Keep what the callable returned for the controller (a bad reference is the controller's
    # FAULT to report, not the simulator's); NaN rows where unusable.
    Qr, Qdr, Qddr = (np.full((K, n), np.nan) for _ in range(3))
    for k, r in enumerate(items):
        try:
            rr = as_joint_reference(r, n)
        except InputError:
            continue
        Qr[k], Qdr[k], Qddr[k] = rr.q, rr.qd, rr.qdd
    return ReferenceSamples(Qr, Qdr, Qddr, items, False)
