"""Fixed-rate tables of a trajectory (the rows of a trajectory_msgs/JointTrajectory) and back."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import InputError
from .base import Trajectory

Array = NDArray[np.float64]

__all__ = ["sample_times", "sample_table", "TabulatedTrajectory", "peaks", "MAX_SAMPLES"]

#: The most samples one table may have (duration x rate): a larger request is refused before any
#: work. 10^6 rows are 1,000 s at 1 kHz; the CLI took 72 s to write 7.9e6 rows and their plot.
MAX_SAMPLES = 1_000_000


def sample_times(duration: float, rate: float) -> Array:
    """Times 0, 1/rate, 2/rate, ... and ``duration`` itself as the last sample, (N,) [s].

    A last step shorter than half a period is merged (the end moves onto ``duration``), so
    the table always ends exactly at the goal. Duration 0 gives the single time 0.

    Raises:
        InputError: a rate that is not a finite number > 0, a duration that is not finite, or
            more than :data:`MAX_SAMPLES` samples (refused before any work).
    """
    try:
        rate, duration = float(rate), float(duration)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"rate, duration: expected numbers [Hz, s], got {rate!r}, {duration!r}") from None
    if not np.isfinite(rate) or rate <= 0.0:
        raise InputError(f"rate: expected a finite sampling rate > 0 Hz, got {rate}")
    if not np.isfinite(duration):
        raise InputError(f"duration: expected a finite time [s], got {duration}")
    if duration <= 0.0:
        return np.zeros(1)
    samples = duration * rate
    if not samples < MAX_SAMPLES:  # an infinite product too
        raise InputError(f"rate: {rate:g} Hz over {duration:g} s gives {samples:.3g} samples, more than "
                         f"{MAX_SAMPLES:,}; lower the rate or shorten the motion")
    k = int(np.floor(samples + 1e-9))
    t = np.arange(k + 1) / rate
    if duration - t[-1] < 0.5 / rate and k > 0:
        t[-1] = duration
    else:
        t = np.append(t, duration)
    return t


def sample_table(traj: Trajectory, rate: float) -> tuple[Array, Array, Array, Array]:
    """Sample ``traj`` at a fixed rate: (t (N,), q (N, n), qd (N, n), qdd (N, n)).

    The rows map one to one onto JointTrajectoryPoint(positions, velocities, accelerations,
    time_from_start=t); the last row is the goal at ``traj.duration``.
    """
    t = sample_times(traj.duration, rate)
    q, qd, qdd = traj.sample(t)
    return t, q, qd, qdd


def peaks(traj: Trajectory, rate: float = 1000.0) -> tuple[Array, Array]:
    """Largest |qd| and |qdd| per coordinate over a dense sampling, each (n,).

    Point-to-point profiles know theirs in closed form (``peak_velocity``); this works for any
    trajectory and is exact at the samples only.
    """
    _, _, qd, qdd = sample_table(traj, rate)
    return np.max(np.abs(qd), axis=0), np.max(np.abs(qdd), axis=0)


class TabulatedTrajectory(Trajectory):
    """A trajectory given by samples (t, q, qd, qdd): quintic Hermite between the samples.

    Between two samples position, velocity and acceleration match both ends exactly (a quintic
    per interval), so the table's rows are reproduced and the curve is C2.

    Args:
        t: strictly increasing times starting at 0, (N,) [s].
        q, qd, qdd: (N, n).
    """

    def __init__(self, t: ArrayLike, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike):
        self.t = np.asarray(t, dtype=float).reshape(-1)
        self.q = np.asarray(q, dtype=float)
        self.qd = np.asarray(qd, dtype=float)
        self.qdd = np.asarray(qdd, dtype=float)
        N = self.t.size
        if N == 0 or self.q.ndim != 2 or self.q.shape[0] != N or self.qd.shape != self.q.shape or self.qdd.shape != self.q.shape:
            raise InputError(
                f"table: expected t (N,) and q, qd, qdd (N, n); got {self.t.shape}, {self.q.shape}, "
                f"{self.qd.shape}, {self.qdd.shape}"
            )
        if not all(np.all(np.isfinite(a)) for a in (self.t, self.q, self.qd, self.qdd)):
            raise InputError("table: contains NaN or infinite values")
        if self.t[0] != 0.0 or np.any(np.diff(self.t) <= 0.0):
            raise InputError("table: times must start at 0 and increase strictly")
        self.n = self.q.shape[1]
        self.duration = float(self.t[-1])

    def _evaluate(self, t: Array) -> tuple[Array, Array, Array]:
        if self.t.size == 1:
            N = t.size
            return np.repeat(self.q, N, 0), np.zeros((N, self.n)), np.zeros((N, self.n))
        i = np.clip(np.searchsorted(self.t, t, side="right") - 1, 0, self.t.size - 2)
        h = (self.t[i + 1] - self.t[i])[:, None]
        s = ((t - self.t[i])[:, None]) / h
        p0, v0, a0 = self.q[i], self.qd[i] * h, self.qdd[i] * h**2
        p1, v1, a1 = self.q[i + 1], self.qd[i + 1] * h, self.qdd[i + 1] * h**2
        # quintic Hermite basis in s on [0, 1]
        s2, s3, s4, s5 = s**2, s**3, s**4, s**5
        h0 = 1 - 10 * s3 + 15 * s4 - 6 * s5
        h1 = s - 6 * s3 + 8 * s4 - 3 * s5
        h2 = 0.5 * s2 - 1.5 * s3 + 1.5 * s4 - 0.5 * s5
        h3 = 0.5 * s3 - s4 + 0.5 * s5
        h4 = -4 * s3 + 7 * s4 - 3 * s5
        h5 = 10 * s3 - 15 * s4 + 6 * s5
        d0 = -30 * s2 + 60 * s3 - 30 * s4
        d1 = 1 - 18 * s2 + 32 * s3 - 15 * s4
        d2 = s - 4.5 * s2 + 6 * s3 - 2.5 * s4
        d3 = 1.5 * s2 - 4 * s3 + 2.5 * s4
        d4 = -12 * s2 + 28 * s3 - 15 * s4
        d5 = -d0
        e0 = -60 * s + 180 * s2 - 120 * s3
        e1 = -36 * s + 96 * s2 - 60 * s3
        e2 = 1 - 9 * s + 18 * s2 - 10 * s3
        e3 = 3 * s - 12 * s2 + 10 * s3
        e4 = -24 * s + 84 * s2 - 60 * s3
        e5 = -e0
        q = h0 * p0 + h1 * v0 + h2 * a0 + h3 * a1 + h4 * v1 + h5 * p1
        qd = (d0 * p0 + d1 * v0 + d2 * a0 + d3 * a1 + d4 * v1 + d5 * p1) / h
        qdd = (e0 * p0 + e1 * v0 + e2 * a0 + e3 * a1 + e4 * v1 + e5 * p1) / h**2
        return q, qd, qdd
