"""Point-to-point joint-space profiles q(t) = qi + r(t) D (Khalil [8.1]-[8.3]).

Each class holds per-joint timing arrays, so the same code gives synchronised joints (all
durations equal, one law r(t)) and joints moving alone (each with its own r_j(t), holding its
goal after its own end). Build them with :func:`robot_dynamics.trajectory.plan`, which
computes the minimum time from the limits; the constructors take the timing directly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import InputError
from .base import Trajectory, as_vector
from .double_s import DoubleSTiming, double_s_evaluate

Array = NDArray[np.float64]
Mask = NDArray[np.bool_]

__all__ = [
    "PointToPoint",
    "LinearProfile",
    "CubicProfile",
    "QuinticProfile",
    "BangBangProfile",
    "TrapezoidalProfile",
    "ContinuousAccelerationProfile",
    "DoubleSProfile",
]


def _per_joint(x: ArrayLike, n: int, what: str) -> Array:
    arr = np.broadcast_to(np.asarray(x, dtype=float), (n,)).copy()
    if np.any(~np.isfinite(arr)) or np.any(arr < 0.0):
        raise InputError(f"{what}: expected finite times >= 0 s, got {arr.tolist()}")
    return arr


class PointToPoint(Trajectory):
    """Base of the rest-to-rest laws q_j(t) = qi_j + r_j(t) D_j.

    Attributes:
        q_initial, q_final: (n,) [rad or m]; displacement: D = qf - qi, (n,).
        joint_durations: tf_j, (n,) [s]; 0 for a joint that does not move.
        duration: max_j tf_j [s].
        profile: the profile name (as in :data:`PROFILES`).
    """

    profile = ""
    rest_at_end = True

    def __init__(self, q_start: ArrayLike, q_goal: ArrayLike, duration: ArrayLike):
        self.q_initial = as_vector(q_start, None, "q_start")
        self.n = self.q_initial.size
        self.q_final = as_vector(q_goal, self.n, "q_goal")
        self.displacement = self.q_final - self.q_initial
        tf = _per_joint(duration, self.n, "duration")
        moving = self.displacement != 0.0
        if np.any(moving & (tf <= 0.0)):
            raise InputError("duration: a moving joint needs a duration > 0 s")
        self.joint_durations = np.where(moving, tf, 0.0)
        self.duration = float(np.max(self.joint_durations)) if self.n else 0.0

    def _unit(self, t: Array, idx: Mask) -> tuple[Array, Array, Array]:
        """r, r', r'' of the joints ``idx`` at times t, (N, k), 0 <= t <= tf_j."""
        raise NotImplementedError

    def unit_peaks(self) -> tuple[Array, Array]:
        """Peak |r'| and |r''| per joint (0 for joints that do not move), each (n,)."""
        raise NotImplementedError

    @property
    def peak_velocity(self) -> Array:
        """max_t |qd_j(t)|, (n,), in closed form ([8.8], [8.12], [8.16], kv_j lambda_j ...)."""
        return np.abs(self.displacement) * self.unit_peaks()[0]

    @property
    def peak_acceleration(self) -> Array:
        """max_t |qdd_j(t)|, (n,) (inf for the linear law's velocity steps)."""
        rdd = self.unit_peaks()[1]
        D = np.abs(self.displacement)
        return np.where(D > 0, D * np.where(D > 0, rdd, 0.0), 0.0)

    def _evaluate(self, t: Array) -> tuple[Array, Array, Array]:
        N = t.size
        idx = self.joint_durations > 0.0
        if np.all(idx):  # every joint moves: no scatter into the full arrays
            r, rd, rdd = self._unit_clamped(t, idx)
        else:
            r, rd, rdd = np.ones((N, self.n)), np.zeros((N, self.n)), np.zeros((N, self.n))
            if np.any(idx):
                r[:, idx], rd[:, idx], rdd[:, idx] = self._unit_clamped(t, idx)
        D = self.displacement
        q = self.q_initial + r * D  # Khalil [8.1]
        done = t[:, None] >= self.joint_durations
        np.copyto(q, self.q_final, where=done)  # the goal exactly, not qi + 1.0 * D rounded
        return q, rd * D, rdd * D  # Khalil [8.2]

    def _unit_clamped(self, t: Array, idx: Mask) -> tuple[Array, Array, Array]:
        """_unit of the joints idx at times t (N,), held at rest after each joint's own end: (N, k),
        or (N, 1) when those joints share one law (synchronised), evaluated once for all."""
        laws = [np.asarray(a)[idx] for a in self._law_parameters()]
        if all(np.all(a == a[0]) for a in laws):
            idx = idx & (np.cumsum(idx) == 1)  # the first of them stands for all
        tf = self.joint_durations[idx]
        r, rd, rdd = self._unit(np.minimum(t[:, None], tf), idx)
        after = t[:, None] > tf
        np.putmask(rd, after, 0.0)
        np.putmask(rdd, after, 0.0)
        return r, rd, rdd

    def _law_parameters(self) -> tuple[Array, ...]:
        """The per-joint arrays (n,) that _unit reads: joints equal in all of them share r(t)."""
        return (self.joint_durations,)

    def _params(self) -> dict[str, Any]:
        return {"duration": self.duration}

    def __repr__(self) -> str:
        extra = ", ".join(f"{k}={v:.6g}" for k, v in self._params().items())
        return f"{type(self).__name__}(n={self.n}, {extra})"


class LinearProfile(PointToPoint):
    """Linear interpolation r = t / tf (Khalil [8.4]): C0, the velocity steps at both ends."""

    profile = "linear"

    def _unit(self, t: Array, idx: Mask) -> tuple[Array, Array, Array]:
        tf = self.joint_durations[idx]
        return t / tf, np.broadcast_to(1.0 / tf, t.shape).copy(), np.zeros(t.shape)

    def unit_peaks(self) -> tuple[Array, Array]:
        tf = self.joint_durations
        with np.errstate(divide="ignore"):
            return np.where(tf > 0, 1.0 / np.where(tf > 0, tf, 1.0), 0.0), np.where(tf > 0, np.inf, 0.0)


class CubicProfile(PointToPoint):
    """Cubic polynomial r = 3 s^2 - 2 s^3, s = t / tf (Khalil [8.5]-[8.7]): C1."""

    profile = "cubic"

    def _unit(self, t: Array, idx: Mask) -> tuple[Array, Array, Array]:
        tf = self.joint_durations[idx]
        s = t / tf
        return s * s * (3.0 - 2.0 * s), 6.0 * s * (1.0 - s) / tf, (6.0 - 12.0 * s) / tf / tf

    def unit_peaks(self) -> tuple[Array, Array]:
        tf = np.where(self.joint_durations > 0, self.joint_durations, np.inf)
        return 1.5 / tf, 6.0 / tf / tf  # Khalil [8.8], [8.9]


class QuinticProfile(PointToPoint):
    """Quintic polynomial r = 10 s^3 - 15 s^4 + 6 s^5 (Khalil [8.10]-[8.11]): C2."""

    profile = "quintic"

    def _unit(self, t: Array, idx: Mask) -> tuple[Array, Array, Array]:
        tf = self.joint_durations[idx]
        s = t / tf
        u = s * (1.0 - s)
        r = s * s * s * (10.0 + s * (6.0 * s - 15.0))  # products, not numpy's slower powers
        rd = 30.0 * u * u / tf
        rdd = 60.0 * u * (1.0 - 2.0 * s) / tf / tf  # tf * tf overflows past 1e154 s
        return r, rd, rdd

    def unit_peaks(self) -> tuple[Array, Array]:
        tf = np.where(self.joint_durations > 0, self.joint_durations, np.inf)
        # Khalil [8.12] 15/8; [8.13] is 10 / sqrt(3) (the peak of 60 s (1-s)(1-2s) at
        # s = 1/2 -+ sqrt(3)/6); the extracted text reads "10/3": its square root was lost.
        return 15.0 / 8.0 / tf, 10.0 / np.sqrt(3.0) / tf / tf


class BangBangProfile(PointToPoint):
    """Bang-bang acceleration, switching at tf / 2 (Khalil [8.15]): C1."""

    profile = "bang_bang"

    def _unit(self, t: Array, idx: Mask) -> tuple[Array, Array, Array]:
        tf = self.joint_durations[idx]
        s = t / tf
        first = s <= 0.5
        r = np.where(first, 2 * s**2, -1 + 4 * s - 2 * s**2)
        rd = np.where(first, 4 * s, 4 - 4 * s) / tf
        rdd = np.where(first, 4.0, -4.0) / tf / tf
        return r, rd, rdd

    def unit_peaks(self) -> tuple[Array, Array]:
        tf = np.where(self.joint_durations > 0, self.joint_durations, np.inf)
        return 2.0 / tf, 4.0 / tf / tf  # Khalil [8.16], [8.17]


class _Trapezoid(PointToPoint):
    """A rest-to-rest law with acceleration time tau_j and total time tf_j per joint."""

    def __init__(self, q_start: ArrayLike, q_goal: ArrayLike, tau: ArrayLike, duration: ArrayLike, max_tau_ratio: float):
        super().__init__(q_start, q_goal, duration)
        tau_a = _per_joint(tau, self.n, "tau")
        moving = self.joint_durations > 0
        if np.any(moving & ((tau_a <= 0) | (tau_a > max_tau_ratio * self.joint_durations * (1 + 1e-12)))):
            raise InputError(
                f"tau: the acceleration time must be in (0, {max_tau_ratio:g} tf], got tau={tau_a.tolist()}, "
                f"tf={self.joint_durations.tolist()}"
            )
        self.tau = np.where(moving, np.minimum(tau_a, max_tau_ratio * self.joint_durations), 0.0)

    def _law_parameters(self) -> tuple[Array, ...]:
        return self.joint_durations, self.tau

    def _params(self) -> dict[str, Any]:
        return {"tau": float(np.max(self.tau)) if self.n else 0.0, "duration": self.duration}


class TrapezoidalProfile(_Trapezoid):
    """Trapezoidal velocity, acceleration time tau (Khalil [8.19], written as r(t)): C1.

    r = t^2 / (2 tau (tf - tau)) on [0, tau], (2 t - tau) / (2 (tf - tau)) on the cruise,
    1 - (tf - t)^2 / (2 tau (tf - tau)) on [tf - tau, tf]. tau = tf / 2 is the bang-bang law.
    """

    profile = "trapezoidal"

    def __init__(self, q_start: ArrayLike, q_goal: ArrayLike, tau: ArrayLike, duration: ArrayLike):
        super().__init__(q_start, q_goal, tau, duration, 0.5)

    def _unit(self, t: Array, idx: Mask) -> tuple[Array, Array, Array]:
        tf, tau = self.joint_durations[idx], self.tau[idx]
        # written as ratios (t / tau) / (tf - tau): t^2 and tau (tf - tau) overflow for durations
        # past 1e154 s where the ratios stay in range
        cruise = tf - tau
        u = tf - t
        acc, dec = t <= tau, t >= tf - tau
        r = np.where(acc, 0.5 * (t / tau) * (t / cruise),
                     np.where(dec, 1.0 - 0.5 * (u / tau) * (u / cruise), (2 * t - tau) / (2 * cruise)))
        rd = np.where(acc, (t / tau) / cruise, np.where(dec, (u / tau) / cruise, 1.0 / cruise))
        k = (1.0 / tau) / cruise
        rdd = np.where(acc, k, np.where(dec, -k, 0.0)) + 0.0 * t
        return r, rd, rdd

    def unit_peaks(self) -> tuple[Array, Array]:
        tf, tau = self.joint_durations, self.tau
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.where(tf > 0, 1.0 / np.where(tf > 0, tf - tau, 1.0), 0.0)
            a = np.where(tf > 0, v / np.where(tf > 0, tau, 1.0), 0.0)
        return v, a


class ContinuousAccelerationProfile(_Trapezoid):
    """Trapezoid with second-degree acceleration ramps (Khalil section 8.3.4): C2.

    On [0, tau]: r = (2 t^3 / tau^2 - t^4 / tau^3) / (2 (tf - tau)), the book's closing
    formula of 8.3.4, equal to [8.37] with lambda_j kv_j sign(Dj) = Dj / (tf - tau). (The
    extracted [8.37] reads "(2 t - tau) t^3"; the factor is (t / 2 - tau) t^3 / tau^3 with a minus
    sign, as its derivatives [8.38]-[8.39] confirm.) The cruise is linear; the deceleration mirrors
    the acceleration: r(t) = 1 - r_acc(tf - t) (the source numbers this [13.43] for [8.43]).
    """

    profile = "continuous_acceleration"

    def __init__(self, q_start: ArrayLike, q_goal: ArrayLike, tau: ArrayLike, duration: ArrayLike):
        super().__init__(q_start, q_goal, tau, duration, 0.5)

    def _unit(self, t: Array, idx: Mask) -> tuple[Array, Array, Array]:
        tf, tau = self.joint_durations[idx], self.tau[idx]
        c = 1.0 / (2 * (tf - tau))

        def ramp(x: Array) -> tuple[Array, Array, Array]:
            s = x / tau  # in s = x / tau: the powers of x overflow for durations past 1e77 s
            return (
                (tau * c) * (2 * s**3 - s**4),
                c * (6 * s**2 - 4 * s**3),
                (c / tau) * (12 * s - 12 * s**2),
            )

        ra, rda, rdda = ramp(np.minimum(t, tau))
        rb, rdb, rddb = ramp(np.minimum(tf - t, tau))
        acc, dec = t <= tau, t >= tf - tau
        r = np.where(acc, ra, np.where(dec, 1.0 - rb, (2 * t - tau) * c))
        rd = np.where(acc, rda, np.where(dec, rdb, 2 * c))
        rdd = np.where(acc, rdda, np.where(dec, -rddb, 0.0))
        return r, rd, rdd

    def unit_peaks(self) -> tuple[Array, Array]:
        tf, tau = self.joint_durations, self.tau
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.where(tf > 0, 1.0 / np.where(tf > 0, tf - tau, 1.0), 0.0)
            a = np.where(tf > 0, 1.5 * v / np.where(tf > 0, tau, 1.0), 0.0)  # Khalil [8.40]
        return v, a


class DoubleSProfile(PointToPoint):
    """Jerk-limited double-S law per joint (see :mod:`.double_s`): C2, jerk bounded.

    Args:
        timing: unit phase durations (n,) each, from :func:`double_s_timing`; joints that do not
            move are ignored.
    """

    profile = "double_s"

    def __init__(self, q_start: ArrayLike, q_goal: ArrayLike, timing: DoubleSTiming):
        D = as_vector(q_goal, None, "q_goal") - as_vector(q_start, None, "q_start")
        T = np.where(D != 0, np.broadcast_to(timing.duration, D.shape), 0.0)
        super().__init__(q_start, q_goal, T)
        self.timing = DoubleSTiming(*(np.broadcast_to(np.asarray(x, float), (self.n,)).copy() for x in timing))

    def _unit(self, t: Array, idx: Mask) -> tuple[Array, Array, Array]:
        return double_s_evaluate(t, DoubleSTiming(*(x[idx] for x in self.timing)))

    def _law_parameters(self) -> tuple[Array, ...]:
        return (self.joint_durations, *self.timing)

    def unit_peaks(self) -> tuple[Array, Array]:
        moving = self.joint_durations > 0
        with np.errstate(invalid="ignore", over="ignore"):  # joints that do not move may hold inf * 0
            a_peak = self.timing.jerk * self.timing.Tj
        return np.where(moving, self.timing.v_peak, 0.0), np.where(moving, a_peak, 0.0)

    @property
    def peak_jerk(self) -> Array:
        """max_t |q'''_j(t)|, (n,)."""
        with np.errstate(invalid="ignore", over="ignore"):
            jerk = np.abs(self.displacement) * self.timing.jerk
        return np.where(self.joint_durations > 0, jerk, 0.0)

    def _params(self) -> dict[str, Any]:
        return {"duration": self.duration}
