"""Compiled kernels of the recursions (numba), and the Python side of calling them.

``import robot_dynamics`` does not import numba: the kernels module is loaded on the first
dynamics call (:func:`compiled`), and each kernel is compiled on its first use, or loaded from
numba's on-disk cache (beside the installed sources when that folder is writable, otherwise
in the user's cache folder, ``NUMBA_CACHE_DIR`` when set). The one-state entry points are
locked to one signature (float64 C-contiguous vectors), so any other input (a list, a batch,
integers) fails their dispatch at once with a TypeError and the caller takes the general,
validating path instead of triggering a compilation.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError, SingularityError
from ..model.robot_model import RobotModel
from .layout import KernelModel, kernel_model

__all__ = ["KernelModel", "kernel_model", "compiled", "one_state", "chunks", "check_status", "wrench_rows"]

_MODULE: ModuleType | None = None

# The parallel batches run on numba's OpenMP pool. GNU OpenMP's threads spin-wait after every
# parallel region (GOMP_SPINCOUNT, 300,000 spins, milliseconds), and on a machine with as many
# threads as cores they take the core from the thread that goes on with one-state calls: one
# simulate() per study point ran 1.6x slower in a process that had made four batch calls per
# point (31 ms against 19 ms, bench/bench_sweep.py). Sleeping threads cost a batch of 10,000
# states up to 10 % (rnea; aba and crba 1-2 %). Read by OpenMP when numba first loads it; a value the user set is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def compiled() -> ModuleType:
    """The compiled kernels module (imports numba on the first call)."""
    global _MODULE
    if _MODULE is None:
        from . import _compiled as module

        _MODULE = module
    return _MODULE


def one_state(name: str) -> Any:
    """A one-state entry point locked to float64 C-contiguous vectors (and a C matrix for crba);
    the last argument is the model's workspace (KernelModel.work or work_friction).

    Compiled (or loaded from the cache) on the first call; any other argument type then fails
    its dispatch with a TypeError instead of compiling a new specialisation.
    """
    from numba import types

    fn = getattr(compiled(), name)
    if fn.signatures:
        return fn
    vec = types.Array(types.float64, 1, "C")
    sig = (vec, vec, types.Array(types.float64, 2, "C"), vec) if name == "crba_one" else (vec,) * 6
    fn.compile(sig)
    fn.disable_compile()
    # A refused call (a list, a batch, integers) goes to the caller's general path. numba would
    # first type every argument in Python twice, to look for conversions to the one signature
    # (there are none from another dtype, layout or dimension) and to word its message: about
    # 70 us per refusal, more than the general path's own work on one state. Refuse at once.
    fn._search_new_conversions = _no_conversion
    fn._explain_matching_error = _refused
    return fn


def _no_conversion(*args: Any, **kwargs: Any) -> bool:
    return False


def _refused(*args: Any, **kwargs: Any) -> None:
    raise TypeError("not float64 C-contiguous vectors of the model's size")


#: Batches smaller than this run in the calling thread: waking the sleeping pool costs tens of
#: microseconds. Measured on the iiwa14 (2 threads), the calling thread alone is faster up to
#: about 128 states of rnea and 64 of aba.
SERIAL_BELOW = 64


def chunks(n: int) -> int:
    """How many chunks a batch of n states is cut into for the parallel kernels (4 per thread;
    one, run in the calling thread, below :data:`SERIAL_BELOW` states)."""
    if n < SERIAL_BELOW:
        return 1  # no thread count to ask for either (that alone costs a microsecond)
    from numba import get_num_threads

    return max(1, min(n, 4 * get_num_threads()))


def check_status(model: RobotModel, status: Any, what: str) -> None:
    """Turn a kernel status (an int, or an array of them over a batch) into the package's error."""
    st = np.asarray(status)
    bad = st[st != 0]
    if bad.size == 0:
        return
    code = int(bad.flat[0])
    sample = "" if st.ndim == 0 or st.size == 1 else f" (sample {int(np.flatnonzero(st.ravel() != 0)[0])} of the batch)"
    m = compiled()
    if code >= m.SINGULAR:
        joint = model.body_joint_names[code - m.SINGULAR]
        raise SingularityError(
            f"{what}: joint {joint!r} moves no inertia{sample}: its subtree is massless and it has "
            "no rotor inertia, so direct dynamics is undefined. Give the link an <inertial>, or "
            "the joint a rotor inertia or armature (joint-properties YAML)."
        )
    if code == m.NOT_POSITIVE_DEFINITE:
        raise SingularityError(
            f"{what}: the joint-space inertia matrix is not positive definite{sample}: some joints "
            "move no inertia. Give their links mass, or the joints a rotor inertia or armature."
        )
    if code == m.BAD_OUTPUT:
        raise InputError(
            f"{what}: the result is not finite{sample}: the inputs are too large for double "
            "precision (velocities, accelerations or torques of physical size are expected)"
        )
    raise InputError(f"{what}: expected finite joint vectors of {model.nq} values{sample}")


def wrench_rows(model: RobotModel, f_ext: Any, batch: tuple[int, ...], n: int) -> NDArray[np.float64]:
    """External wrenches as the kernels read them, (N, k, 10): body, point, force, moment.

    Each ``f_ext[link]`` is ``[force; moment]`` (..., 6) that the link exerts on the environment
    (Khalil's f_en [7.30]), base axes, moment about the link frame's origin. A wrench on a link
    fixed to the base is taken by the base and dropped.
    """
    from .._batch import as_batch

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
