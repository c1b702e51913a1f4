"""The momentum observer's thresholds from a recording of collision-free motion: the false-alarm
margin the data shows.

The observer runs over the recorded joint states at their own sample times, with the settings it
will run with (gain, friction, Coulomb smoothing, torque input). Every residual it leaves there is
by assumption not a collision: what the model does not explain (its parameter errors, friction it
lacks, velocity noise, sensor offsets). A threshold that keeps a safety factor ``margin`` over each
of them raises no alarm on that recording, and on motion like it: the false-alarm margin is the
smallest ratio of the threshold to ``|r|`` over the recording, at least ``margin`` by construction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..control.base import gain_vector
from ..errors import InputError
from ..model.robot_model import RobotModel
from .momentum import DEFAULT_GAIN, DEFAULT_RELATIVE, MomentumObserver

__all__ = ["DEFAULT_MARGIN", "ThresholdTuning", "tune_thresholds"]

Array = NDArray[np.float64]

#: The safety factor of the thresholds over the largest residual of the recording by default.
DEFAULT_MARGIN = 1.5


@dataclass(frozen=True)
class ThresholdTuning:
    """Thresholds of a :class:`~robot_dynamics.observers.MomentumObserver` fitted to a recording.

    The thresholds are ``threshold + relative * explained(t)`` per joint, as the observer forms them.

    Attributes:
        joint_names: (nq,) model order.
        gain: K_O [1/s] (nq,). relative: the part that grows with the model torque [-] (nq,).
        threshold: the fixed part chosen [N m or N] (nq,).
        margin: the safety factor asked for [-].
        peak: the largest ``|r_j|`` over the recording [N m or N] (nq,); peak_time: where [s] (nq,).
        worst_margin: the smallest ratio of the threshold to ``|r_j|`` over the recording [-] (nq,):
            the false-alarm margin the data shows (>= margin; inf where r_j stayed 0).
        t: (K,) [s] the recording's times. residual: (K, nq) r. explained: (K, nq) the torque the model
            explains, ``|tau - r|`` through the residual's lag [N m or N].
        velocity: "recorded", or "differentiated" (the recording had none: central differences of q).
        torque, friction, coulomb_smoothing: the observer's settings used.
        source: the recording's name.
    """

    joint_names: tuple[str, ...]
    gain: Array
    relative: Array
    threshold: Array
    margin: float
    peak: Array
    peak_time: Array
    worst_margin: Array
    t: Array
    residual: Array
    explained: Array
    velocity: str
    torque: str
    friction: bool
    coulomb_smoothing: float
    source: str = ""

    def thresholds(self) -> Array:
        """The threshold of each joint at each sample, (K, nq) [N m or N]."""
        return self.threshold + self.relative * self.explained

    def false_alarms(self) -> int:
        """Samples of the recording where some ``|r_j|`` passes its threshold (0 by construction)."""
        return int(np.count_nonzero(np.any(np.abs(self.residual) > self.thresholds(), axis=1)))

    def parameters(self) -> dict[str, Any]:
        """The observer's parameters, per joint in model order: ``joints``, ``gain`` [1/s],
        ``thresholds`` (the fixed parts) [N m or N], ``relative`` [-]."""
        return {"joints": list(self.joint_names), "gain": self.gain.tolist(), "thresholds": self.threshold.tolist(),
                "relative": self.relative.tolist()}

    def observer(self, model: RobotModel, **options: Any) -> MomentumObserver:
        """A :class:`MomentumObserver` of ``model`` with these thresholds and settings (``options``
        passes the others, e.g. ``gravity``)."""
        return MomentumObserver(model, gain=self.gain, threshold=self.threshold, relative=self.relative,
                                friction=self.friction, coulomb_smoothing=self.coulomb_smoothing, torque=self.torque,
                                **options)

    def rows(self) -> list[list[Any]]:
        """Per joint: name, peak |r|, its time, relative, fixed threshold, worst margin."""
        return [[name, float(self.peak[j]), float(self.peak_time[j]), float(self.relative[j]), float(self.threshold[j]),
                 float(self.worst_margin[j])] for j, name in enumerate(self.joint_names)]

    def table(self) -> str:
        """A text table, one row per joint."""
        headers = ["joint", "peak |r|", "at t [s]", "relative", "threshold", "margin"]
        cells = [[r[0], f"{r[1]:.4g}", f"{r[2]:.4g}", f"{r[3]:.4g}", f"{r[4]:.4g}",
                  "inf" if math.isinf(r[5]) else f"{r[5]:.3g}"] for r in self.rows()]
        widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
        lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)), "  ".join("-" * w for w in widths)]
        lines += ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
                  for row in cells]
        return "\n".join(lines)


def _recorded(model: RobotModel, recording: Any) -> tuple[Array, Array, Array | None, Array, NDArray[np.int_]]:
    """t, q, qd (or None), tau and the segments of a recording, checked against the model."""
    names = getattr(recording, "joint_names", None)
    if names is not None and tuple(names) != tuple(model.joint_names):
        raise InputError(f"recording: joints {list(names)} differ from the model's {list(model.joint_names)}")
    try:
        t = np.asarray(recording.t, dtype=float)
        q, tau = np.asarray(recording.q, dtype=float), np.asarray(recording.tau, dtype=float)
        qd = None if recording.qd is None else np.asarray(recording.qd, dtype=float)
    except (AttributeError, TypeError, ValueError):
        raise InputError("recording: expected t (K,), q, qd (or None) and tau (K, nq) of numbers, as a "
                         "robot_dynamics.identification.Recording holds") from None
    K, n = t.size, model.nq
    for what, a in (("q", q), ("qd", qd), ("tau", tau)):
        if a is not None and a.shape != (K, n):
            raise InputError(f"recording: {what} expected shape ({K}, {n}) for {K} times, got {a.shape}")
        if a is not None and not np.all(np.isfinite(a)):
            raise InputError(f"recording: {what} has NaN or infinite values")
    if t.ndim != 1 or K < 2 or not np.all(np.isfinite(t)):
        raise InputError(f"recording: expected at least 2 finite times, got shape {t.shape}")
    segment = getattr(recording, "segment", None)
    segment = np.zeros(K, dtype=int) if segment is None else np.asarray(segment)
    if segment.shape != (K,):
        raise InputError(f"recording: segment expected shape ({K},), got {segment.shape}")
    for s in np.unique(segment):
        if np.any(np.diff(t[segment == s]) <= 0):
            raise InputError(f"recording: the times of segment {int(s)} are not strictly increasing")
    return t, q, qd, tau, segment


def _differentiate(t: Array, q: Array, segment: NDArray[np.int_]) -> Array:
    """Velocities by central differences of the positions within each segment (zero for a lone sample)."""
    qd = np.zeros_like(q)
    for s in np.unique(segment):
        idx = np.flatnonzero(segment == s)
        if idx.size >= 2:
            qd[idx] = np.gradient(q[idx], t[idx], axis=0)
    return qd


def _upper_hull(x: Array, y: Array) -> tuple[Array, Array]:
    """The vertices of the upper convex hull of the points (x, y), by increasing x."""
    order = np.lexsort((-y, x))
    xs, ys = x[order], y[order]
    keep = np.concatenate(([True], np.diff(xs) > 0))  # the highest point of each x
    xs, ys = xs[keep], ys[keep]
    hull: list[int] = []
    for i in range(xs.size):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            if (xs[b] - xs[a]) * (ys[i] - ys[a]) - (ys[b] - ys[a]) * (xs[i] - xs[a]) >= 0:
                hull.pop()  # b lies on or below the chord a-i
            else:
                break
        hull.append(i)
    return xs[hull], ys[hull]


def _fit_relative(s: Array, need: Array, floor: float) -> tuple[float, float]:
    """(relative, fixed) >= (0, floor) with ``fixed + relative s_k >= need_k`` for every sample and the
    smallest mean threshold over the recording: a linear program in two unknowns whose optimum lies
    on a slope of the upper hull of (s_k, need_k) or on a line from (0, floor) to one of its vertices."""
    hx, hy = _upper_hull(s, need)
    slopes = [0.0] + [float((hy[i + 1] - hy[i]) / (hx[i + 1] - hx[i])) for i in range(hx.size - 1)]
    slopes += [float((hy[i] - floor) / hx[i]) for i in range(hx.size) if hx[i] > 0]
    mean_s = float(np.mean(s))
    best = (math.inf, 0.0, 0.0)
    for rho in (r for r in slopes if r >= 0 and math.isfinite(r)):
        fixed = max(floor, float(np.max(hy - rho * hx)))
        cost = fixed + rho * mean_s
        if cost < best[0] - 1e-12 * max(1.0, abs(cost)):
            best = (cost, rho, fixed)
    return best[1], best[2]


def _run(obs: MomentumObserver, t: Array, q: Array, qd: Array, tau: Array,
         segment: NDArray[np.int_]) -> tuple[Array, Array]:
    """The residual and the explained torque at each sample, the observer restarted at each segment."""
    K, n = q.shape
    r, s = np.empty((K, n)), np.empty((K, n))
    previous = None
    for k in range(K):
        if segment[k] != previous:
            obs.reset()
            previous = segment[k]
        out = obs.update(float(t[k]), q[k], qd[k], tau[k])
        r[k], s[k] = out.external_torque, out.threshold  # fixed part 0, relative 1: the threshold is s
    return r, s


def tune_thresholds(model: RobotModel, recording: Any, *, gain: ArrayLike = DEFAULT_GAIN, margin: float = DEFAULT_MARGIN,
                    relative: ArrayLike | str = DEFAULT_RELATIVE, floor: ArrayLike = 0.0, friction: bool = True,
                    coulomb_smoothing: float = 0.0, gravity: ArrayLike | None = None,
                    torque: str = "held") -> ThresholdTuning:
    """The thresholds of a momentum observer that keep a safety factor ``margin`` over every residual
    of a recording of collision-free motion (the false-alarm margin the data shows).

    The method: the observer (these settings, a fixed threshold of 0 and a relative part of 1, so
    that its threshold is the torque the model explains, ``s_j = |tau_j - r_j|`` through the
    residual's lag) runs over the recording at its own sample times, restarted at each segment;
    every residual r_j(t_k) it leaves is taken as no collision. Per joint, the fixed part is then

        threshold_j = max(floor_j, max_k (margin |r_j(t_k)| - relative_j s_j(t_k))),

    the smallest that keeps ``threshold_j + relative_j s_j >= margin |r_j|`` at every sample: the
    observer with these thresholds raises no alarm over the recording, with at least ``margin``
    to spare. With ``relative="fit"`` the relative part is chosen too: the pair (relative_j >= 0,
    threshold_j >= floor_j) that keeps that margin at every sample with the smallest mean threshold
    over the recording (the residual's peaks against the model torque: a residual that grows with
    the torque, from a model's parameter errors, is then covered by the relative part, noise by the
    fixed part; Sotoudehnejad et al. 2012 fit their time-varying threshold to collision-free data
    the same way). The thresholds hold for motion like the recording's: record the speeds, loads
    and poses the arm will meet.

    Args:
        model: the observer's model (the one it will run with, not the true arm).
        recording: joint states in model order, e.g. a :class:`robot_dynamics.identification.Recording`
            (``read_recording``): t (K,) [s], q (K, nq) [rad or m], qd (K, nq) [rad/s or m/s] or None
            (then central differences of q), tau (K, nq) [N m or N], optional segment (K,).
        gain: K_O [1/s], scalar or (nq,). margin: the safety factor over the largest residual, >= 1.
        relative: the part that grows with the model torque [-], scalar or (nq,) >= 0, or "fit".
        floor: the least fixed part [N m or N], scalar or (nq,) >= 0.
        friction, coulomb_smoothing, gravity, torque: as :class:`MomentumObserver` takes them.

    Returns:
        A :class:`ThresholdTuning`: per joint the peak residual and its time, the fixed part, the
        relative part, the worst margin; the residual over time; ``observer(model)`` builds it.

    Raises:
        InputError: a recording of other joints or shapes, NaN, times not increasing; a bad margin,
            relative, floor or observer setting (named).
    """
    n, names = model.nq, model.joint_names
    if not (isinstance(margin, (int, float)) and math.isfinite(margin) and margin >= 1.0):
        raise InputError(f"margin: expected a safety factor >= 1, got {margin!r}")
    fit = isinstance(relative, str)
    if fit and relative != "fit":
        raise InputError(f"relative: expected a number, {n} numbers or 'fit', got {relative!r}")
    rho = np.zeros(n) if fit else gain_vector(relative, n, "relative", names)
    low = gain_vector(floor, n, "floor", names)
    t, q, qd, tau, segment = _recorded(model, recording)
    obs = MomentumObserver(model, gain=gain, threshold=0.0, relative=1.0, friction=friction,
                           coulomb_smoothing=coulomb_smoothing, gravity=gravity, torque=torque)
    velocity = "recorded" if qd is not None else "differentiated"
    r, s = _run(obs, t, q, _differentiate(t, q, segment) if qd is None else qd, tau, segment)
    need = margin * np.abs(r)
    fixed = np.empty(n)
    for j in range(n):
        if fit:
            rho[j], fixed[j] = _fit_relative(s[:, j], need[:, j], float(low[j]))
        else:
            fixed[j] = max(float(low[j]), float(np.max(need[:, j] - rho[j] * s[:, j])))
    peak_at = np.argmax(np.abs(r), axis=0)
    level = fixed + rho * s
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(np.abs(r) > 0, level / np.abs(r), np.inf)
    return ThresholdTuning(tuple(names), obs.gain.copy(), rho, fixed, float(margin), np.abs(r).max(axis=0),
                           t[peak_at], ratio.min(axis=0), t, r, s, velocity, torque, bool(friction),
                           float(coulomb_smoothing), str(getattr(recording, "source", "")))
