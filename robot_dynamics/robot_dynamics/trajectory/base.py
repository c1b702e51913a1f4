"""The trajectory interface shared by every generator, and input validation at its boundary.

A trajectory is an object with ``n`` (number of coordinates), ``duration`` [s] and
``sample(t) -> (q, qd, qdd)``. Times before 0 give the start at rest, times after
``duration`` the goal at rest, so a controller may sample past the end without special cases.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._batch import as_batch, real_array
from ..errors import InputError

Array = NDArray[np.float64]

__all__ = ["Trajectory", "TimeScaled", "as_times", "as_vector", "as_limits"]


def as_times(t: ArrayLike) -> tuple[Array, tuple[int, ...]]:
    """Validate times: any shape, finite. Returns (flat (N,), original shape)."""
    try:
        arr = np.asarray(t, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"t: expected times in seconds, got {t!r}") from None
    if not np.all(np.isfinite(arr)):
        raise InputError("t: contains NaN or infinite values")
    return arr.reshape(-1), arr.shape


def as_vector(x: ArrayLike, n: int | None, what: str, names: Any = None) -> Array:
    """One finite vector of length ``n`` (any length when ``n`` is None)."""
    arr = real_array(x, what, "a vector of numbers")
    if n is None:
        if arr.ndim != 1 or arr.size == 0:
            raise InputError(f"{what}: expected a non-empty vector, got shape {arr.shape}")
        n = arr.size
    flat, batch = as_batch(arr, n, what, names)
    if batch != ():
        raise InputError(f"{what}: expected one vector of shape ({n},), got shape {arr.shape}")
    return flat[0].copy()


def as_limits(x: ArrayLike | None, n: int, what: str) -> Array | None:
    """Per-coordinate limits: a scalar or (n,), strictly positive, ``inf`` meaning unlimited.

    Returns None when ``x`` is None. NaN, zero and negative values raise :class:`InputError`.
    """
    if x is None:
        return None
    arr = real_array(x, what, f"a positive number or {n} of them")
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise InputError(f"{what}: expected a scalar or shape ({n},), got shape {arr.shape}")
    if not (arr > 0.0).all():  # NaN fails the test too
        if np.isnan(arr).any():
            raise InputError(f"{what}: contains NaN")
        raise InputError(f"{what}: limits must be > 0 (inf for unlimited), got {arr.tolist()}")
    return arr


class Trajectory(ABC):
    """A time law for ``n`` coordinates over ``[0, duration]``.

    Attributes:
        n: number of coordinates (joints, or task coordinates).
        duration: total time [s]; 0 for a trajectory that does not move.
    """

    n: int
    duration: float
    #: True for rest-to-rest laws: at t = duration, qd and qdd are the values at rest.
    rest_at_end: bool = False

    @abstractmethod
    def _evaluate(self, t: Array) -> tuple[Array, Array, Array]:
        """q, qd, qdd at times ``t`` (N,) already clipped to [0, duration]; each (N, n)."""

    def sample(self, t: ArrayLike) -> tuple[Array, Array, Array]:
        """Position, velocity and acceleration at times ``t``.

        Args:
            t: times [s], scalar or any shape (...); clipped to [0, duration].

        Returns:
            (q, qd, qdd), each of shape (..., n): a scalar ``t`` gives (n,), an array of
            ``N`` times gives (N, n). Units of the coordinates [rad or m], per s, per s^2.
            After ``duration`` qd = qdd = 0. Rest-to-rest profiles (``rest_at_end``) report the
            rest values at ``t = duration`` itself, where a trapezoid's acceleration steps.
        """
        flat, shape = as_times(t)
        inside = np.clip(flat, 0.0, self.duration)
        q, qd, qdd = self._evaluate(inside)
        end = (flat >= self.duration) if self.rest_at_end else (flat > self.duration)
        out = (flat < 0.0) | end
        if np.any(out):  # at rest before the start and after the end
            qd[out] = 0.0
            qdd[out] = 0.0
        return tuple(a.reshape(shape + (self.n,)) for a in (q, qd, qdd))  # type: ignore[return-value]

    def position(self, t: ArrayLike) -> Array:
        """Positions only, shape (..., n)."""
        return self.sample(t)[0]

    @property
    def q_start(self) -> Array:
        """Position at t = 0, (n,)."""
        return self.sample(0.0)[0]

    @property
    def q_goal(self) -> Array:
        """Position at t = duration, (n,)."""
        return self.sample(self.duration)[0]

    def time_scaled(self, factor: float) -> Trajectory:
        """The same path run ``factor`` times slower (factor > 1) or faster (factor < 1)."""
        return TimeScaled(self, factor)

    def with_duration(self, duration: float) -> Trajectory:
        """The same path stretched uniformly in time to last ``duration`` seconds."""
        try:
            duration = float(duration)
        except (TypeError, ValueError, OverflowError):  # text, a 400-digit integer
            raise InputError(f"duration: expected a finite time > 0 s, got {str(duration)[:40]}") from None
        if not np.isfinite(duration) or duration <= 0.0:
            raise InputError(f"duration: expected a finite time > 0 s, got {duration}")
        if self.duration == 0.0:
            raise InputError("with_duration: the trajectory does not move (duration 0)")
        return TimeScaled(self, duration / self.duration)


class TimeScaled(Trajectory):
    """Uniform time scaling q_c(t) = q(t / c) [Hollerbach 84a].

    Velocities scale by 1/c and accelerations by 1/c^2: the path is the same, every limit on
    velocity or acceleration is met for c large enough.
    """

    base: Trajectory
    factor: float

    def __init__(self, base: Trajectory, factor: float):
        factor = float(factor)
        if not np.isfinite(factor) or factor <= 0.0:
            raise InputError(f"time scaling factor: expected a finite number > 0, got {factor}")
        if isinstance(base, TimeScaled):  # flatten nested scalings
            factor *= base.factor
            base = base.base
        self.base = base
        self.factor = factor
        self.n = base.n
        self.duration = base.duration * factor

    def _evaluate(self, t: Array) -> tuple[Array, Array, Array]:
        q, qd, qdd = self.base.sample(t / self.factor)
        return q, qd / self.factor, qdd / self.factor**2

    def __repr__(self) -> str:
        return f"TimeScaled({self.base!r}, factor={self.factor:.6g})"
