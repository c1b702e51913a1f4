"""The fastest available inverse dynamics for a model, with a fallback to the core's rnea.

Use it where torques are computed in a loop (controllers, the dynamics node)::

    from robot_dynamics.codegen import inverse_dynamics_function
    tau_of = inverse_dynamics_function(model)      # once, at configuration time
    tau = tau_of(q, qd, qdd)                       # per tick: (nq,) -> (nq,), or (..., nq)

The returned callable computes exactly ``rd.rnea(model, q, qd, qdd)`` (model gravity,
friction and rotor inertia included, no external wrench). It is the compiled generated model
(Khalil's customised Newton-Euler model, 7.5) when numba can compile it, the generated numpy
model otherwise, and the core's rnea when code generation is not possible (a coupled gear
train, no writable cache, or ``ROBOT_DYNAMICS_NO_CODEGEN=1``). Inputs are not validated on
the compiled path beyond their shape.

The package itself calls the core's rnea (its engine, compiled at install) per tick
(:func:`tick_inverse_dynamics` and :func:`fastest_rnea` are the core's rnea, kept for existing
callers; the ROS nodes call ``rd.rnea`` directly): one path for every robot, geared or not,
with its inputs and outputs checked. The generated code serves what it is best at: operation counts
beside Khalil's tables, the symbolic model, and the largest batches of a rigid robot
(``robot-dynamics bench`` measures both).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._batch import kernel_array
from ..dynamics.rnea import rnea
from ..errors import InputError
from ..model.robot_model import RobotModel
from .generated import GeneratedModel, generate

__all__ = [
    "InverseDynamics",
    "inverse_dynamics_function",
    "tick_inverse_dynamics",
    "fastest_rnea",
    "NO_CODEGEN_ENV",
]

Array = NDArray[np.float64]
NO_CODEGEN_ENV = "ROBOT_DYNAMICS_NO_CODEGEN"
_REGISTRY_SIZE = 32
_REGISTRY: dict[tuple[int, bool | None], tuple[RobotModel, InverseDynamics]] = {}


class InverseDynamics(Protocol):
    """What :func:`inverse_dynamics_function` returns: ``tau = f(q, qd, qdd)`` over (..., nq).

    Attributes:
        model: the robot.
        path: ``'compiled'``, ``'numpy'`` or ``'core'`` (which implementation runs).
        generated: the :class:`GeneratedModel`, or None on the core path.
    """

    model: RobotModel
    path: str
    generated: GeneratedModel | None

    def __call__(self, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike) -> Array: ...


def _make(model: RobotModel, generated: GeneratedModel | None) -> InverseDynamics:
    """The callable for one model: a plain closure (one Python frame per call)."""
    nq = model.nq
    if generated is not None and generated.single is not None:
        into, batch = generated.into, generated.batch
        shape = (nq,)
        empty = np.empty

        def call(q: Any, qd: Any, qdd: Any) -> Array:
            try:
                if q.shape == shape and qd.shape == shape and qdd.shape == shape:
                    # numba boxes a returned array slowly; filling one made here is cheaper.
                    # (Integer arrays get their own compiled specialisation on first use.)
                    out = empty(nq)
                    into(q, qd, qdd, out)
                    return out
            except AttributeError:
                pass
            return _batched(batch, nq, q, qd, qdd)

    elif generated is not None:
        numpy_batch = generated.numpy_batch

        def call(q: Any, qd: Any, qdd: Any) -> Array:
            return _batched(numpy_batch, nq, q, qd, qdd)

    else:

        def call(q: Any, qd: Any, qdd: Any) -> Array:
            return rnea(model, q, qd, qdd)

    fn: Any = call
    fn.model = model
    fn.generated = generated
    fn.path = "core" if generated is None else ("compiled" if generated.compiled else "numpy")
    return fn  # type: ignore[no-any-return]


def _batched(fn: Callable[..., Array], nq: int, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike) -> Array:
    arrays = [np.asarray(x, dtype=float) for x in (q, qd, qdd)]
    for name, a in zip(("q", "qd", "qdd"), arrays):
        if (a.ndim == 0 and name == "q") or (a.ndim > 0 and a.shape[-1] != nq):
            raise InputError(f"{name}: expected shape (..., {nq}) (qd, qdd may be scalars), got {a.shape}")
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        raise InputError(f"q, qd, qdd: batch shapes {[a.shape for a in arrays]} do not broadcast") from None
    flat = [kernel_array(a if a.shape == shape else np.broadcast_to(a, shape)).reshape(-1, nq) for a in arrays]
    return np.asarray(fn(*flat)).reshape(shape)


def inverse_dynamics_function(
    model: RobotModel, *, compiled: bool | None = None, progress: Any = None
) -> InverseDynamics:
    """The fastest available ``tau = f(q, qd, qdd)`` for ``model`` (generated once, cached).

    Args:
        model: the robot.
        compiled: force (True) or refuse (False) the numba path; default: use it if installed.
        progress: optional callable receiving one-line progress messages while generating.

    Returns:
        :class:`InverseDynamics`; its ``path`` says which implementation runs.
    """
    no_codegen = os.environ.get(NO_CODEGEN_ENV, "") in ("1", "true", "yes")
    cached = _REGISTRY.get((id(model), compiled))
    if cached is not None and cached[0] is model and not no_codegen:
        return cached[1]
    generated: GeneratedModel | None = None
    if not no_codegen:
        try:
            generated = generate(model, compiled=compiled, progress=progress)
        except InputError:
            raise
        except Exception:  # noqa: BLE001 - no compiler, read-only cache...: fall back to the core
            generated = None
    fn = _make(model, generated)
    if not no_codegen:
        if len(_REGISTRY) >= _REGISTRY_SIZE:
            _REGISTRY.pop(next(iter(_REGISTRY)))  # forget the oldest (models hold arrays)
        _REGISTRY[(id(model), compiled)] = (model, fn)
    return fn


def tick_inverse_dynamics(model: RobotModel) -> InverseDynamics:
    """``tau = f(q, qd, qdd)`` for one state at a time (a controller tick, a service call).

    This is the core's :func:`robot_dynamics.rnea` (its engine): measured side by side
    (``bench/bench_core.py``), the generated code of this package saves about half a
    microsecond per call on a rigid 6-dof arm, which the rest of a tick dwarfs, and it covers
    neither geared drive trains nor external wrenches, so one path serves every robot.
    """
    return _make(model, None)


def fastest_rnea(
    model: RobotModel,
    q: ArrayLike,
    qd: ArrayLike,
    qdd: ArrayLike,
    gravity: ArrayLike | None = None,
    f_ext: Mapping[str, ArrayLike] | None = None,
    *,
    friction: bool = True,
    compiled: bool | None = None,
) -> Array:
    """Drop-in for :func:`robot_dynamics.rnea`, kept for existing callers: it is the core's rnea.

    ``compiled`` is accepted and ignored (the core is always compiled).
    """
    return rnea(model, q, qd, qdd, gravity=gravity, f_ext=f_ext, friction=friction)
