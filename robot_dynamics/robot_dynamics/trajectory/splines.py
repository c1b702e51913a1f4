"""Multi-point trajectories through via points: cubic and quintic splines, trigonometric splines.

- :class:`PolynomialSpline` (degree 3 or 5): one polynomial per segment, the global spline with
  every derivative up to degree - 1 continuous at the via points (cubic: C2, quintic: C4), at
  rest at both ends (cubic: zero velocity; quintic: zero velocity and acceleration).
- :class:`TrigonometricSpline`: third-order trigonometric splines (the interpolation of Lopes,
  Stewart platform paper, section 5). Each segment is
  ``H(theta) = a0 + sum_{k=1..3} (a_k cos k theta + b_k sin k theta)``, theta from 0 to pi/2
  over the segment, matching position, velocity and acceleration at both ends: C2 at every via
  point, each segment solved on its own (no global linear system). The 7th coefficient is
  fixed by minimising the integral of the squared third derivative over the segment.

Durations of the segments are given, or chosen from the limits; :func:`spline_through` then
stretches the spline uniformly in time so that the velocity and acceleration limits are met and
reached (the minimum time of the path shape, as Table 8.1 does for one segment).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import InputError, UnknownNameError
from .base import Trajectory, as_limits

Array = NDArray[np.float64]

__all__ = [
    "SPLINES",
    "PolynomialSpline",
    "TrigonometricSpline",
    "trigonometric_spline",
    "spline_through",
    "exact_peaks",
]

SPLINES = ("cubic_spline", "quintic_spline", "trigonometric_spline")


def _points(points: ArrayLike) -> Array:
    try:
        P = np.asarray(points, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"points: expected an array (m+1, n) of via points, got {points!r}") from None
    if P.ndim == 1:
        P = P[:, None]
    if P.ndim != 2 or P.shape[0] < 2 or P.shape[1] < 1:
        raise InputError(f"points: expected shape (m+1, n) with at least 2 points, got {P.shape}")
    if not np.all(np.isfinite(P)):
        raise InputError("points: contains NaN or infinite values")
    return P


def _durations(durations: ArrayLike, m: int) -> Array:
    h = np.asarray(durations, dtype=float).reshape(-1)
    if h.size == 1 and m > 1:
        h = np.full(m, float(h[0]))
    if h.shape != (m,):
        raise InputError(f"durations: expected {m} segment durations, got {h.size}")
    if not np.all(np.isfinite(h)) or np.any(h <= 0):
        raise InputError(f"durations: every segment needs a finite duration > 0 s, got {h.tolist()}")
    return h


class _Segmented(Trajectory):
    """A trajectory made of segments between knot times ``knots`` (m+1,)."""

    knots: Array
    points: Array

    def _locate(self, t: Array) -> tuple[NDArray[np.intp], Array]:
        i = np.clip(np.searchsorted(self.knots, t, side="right") - 1, 0, self.knots.size - 2)
        return i, t - self.knots[i]

    @property
    def durations(self) -> Array:
        """Segment durations, (m,) [s]."""
        return np.diff(self.knots)


class PolynomialSpline(_Segmented):
    """Global polynomial spline of odd degree through via points, at rest at both ends.

    Args:
        points: via points including start and goal, (m+1, n).
        durations: segment durations (m,) or one for all [s].
        degree: 3 (C2, zero end velocities) or 5 (C4, zero end velocities and accelerations).

    Attributes:
        coefficients: (m, degree+1, n), q = sum_k c_k (t - t_i)^k on segment i.
    """

    def __init__(self, points: ArrayLike, durations: ArrayLike, degree: int = 3):
        if degree not in (3, 5):
            raise InputError(f"degree: expected 3 or 5, got {degree}")
        P = _points(points)
        m, self.n = P.shape[0] - 1, P.shape[1]
        h = _durations(durations, m)
        self.points, self.degree = P, degree
        self.knots = np.concatenate([[0.0], np.cumsum(h)])
        self.duration = float(self.knots[-1])
        self.coefficients = self._solve(P, h, degree)

    @staticmethod
    def _row(tau: float, d: int, p: int) -> Array:
        """Row of d-th derivative of [1, tau, ..., tau^p] at tau."""
        row = np.zeros(p + 1)
        for k in range(d, p + 1):
            row[k] = math.factorial(k) / math.factorial(k - d) * tau ** (k - d)
        return row

    def _solve(self, P: Array, h: Array, p: int) -> Array:
        m = h.size
        size = m * (p + 1)
        M = np.zeros((size, size))
        rhs = np.zeros((size, P.shape[1]))
        r = 0
        for i in range(m):  # interpolation of both ends of every segment
            c = slice(i * (p + 1), (i + 1) * (p + 1))
            M[r, c] = self._row(0.0, 0, p)
            rhs[r] = P[i]
            M[r + 1, c] = self._row(h[i], 0, p)
            rhs[r + 1] = P[i + 1]
            r += 2
        for i in range(1, m):  # continuity of derivatives 1..p-1 at the via points
            a = slice((i - 1) * (p + 1), i * (p + 1))
            b = slice(i * (p + 1), (i + 1) * (p + 1))
            for d in range(1, p):
                M[r, a] = self._row(h[i - 1], d, p)
                M[r, b] = -self._row(0.0, d, p)
                r += 1
        k = (p - 1) // 2
        for d in range(1, k + 1):  # at rest at both ends
            M[r, 0 : p + 1] = self._row(0.0, d, p)
            M[r + 1, (m - 1) * (p + 1) :] = self._row(h[-1], d, p)
            r += 2
        try:
            with np.errstate(all="ignore"):
                sol = np.linalg.solve(M, rhs)
        except np.linalg.LinAlgError:
            sol = np.full(M.shape[:1] + rhs.shape[1:], np.nan)
        if not np.all(np.isfinite(sol)):
            raise InputError("spline: the segment durations are too extreme to solve for the coefficients "
                             f"(durations from {float(np.min(h)):.3g} to {float(np.max(h)):.3g} s); give finite, moderate limits")
        return np.asarray(sol, dtype=float).reshape(m, p + 1, -1)

    def _evaluate(self, t: Array) -> tuple[Array, Array, Array]:
        i, tau = self._locate(t)
        c = self.coefficients[i]  # (N, p+1, n)
        powers = np.arange(self.degree + 1)
        T = tau[:, None] ** powers  # (N, p+1)
        q = np.einsum("nk,nkj->nj", T, c)
        k1 = powers[1:]
        qd = np.einsum("nk,nkj->nj", T[:, :-1] * k1, c[:, 1:])
        k2 = powers[2:] * (powers[2:] - 1)
        qdd = np.einsum("nk,nkj->nj", T[:, :-2] * k2, c[:, 2:])
        q[t >= self.duration] = self.points[-1]
        return q, qd, qdd

    def peak_values(self) -> tuple[Array, Array]:
        """Exact max |qd| and |qdd| per coordinate (roots of the derivative polynomials), (n,)."""
        vmax = np.zeros(self.n)
        amax = np.zeros(self.n)
        for i, h_i in enumerate(self.durations):
            h = float(h_i)
            for j in range(self.n):
                c = self.coefficients[i, :, j]
                v = np.polynomial.Polynomial(c).deriv(1)
                a, jk = v.deriv(1), v.deriv(2)
                for poly, dpoly, out in ((v, a, vmax), (a, jk, amax)):
                    cands = [0.0, h]
                    if dpoly.degree() > 0 and np.any(dpoly.coef != 0):
                        roots = np.asarray(dpoly.roots(), dtype=complex)
                        real = roots.real[(np.abs(roots.imag) < 1e-9) & (roots.real >= 0) & (roots.real <= h)]
                        cands += [float(x) for x in real]
                    out[j] = max(out[j], float(np.max(np.abs(poly(np.array(cands))))))
        return vmax, amax


# --- trigonometric splines ------------------------------------------------------------------

def _trig_basis(theta: Array, d: int) -> Array:
    """d-th theta-derivative of [1, cos t, sin t, cos 2t, sin 2t, cos 3t, sin 3t], (..., 7)."""
    th = np.asarray(theta, dtype=float)[..., None]
    out = np.zeros(th.shape[:-1] + (7,))
    out[..., 0] = 1.0 if d == 0 else 0.0
    for k in (1, 2, 3):
        # d/dtheta^d cos(k t) = k^d cos(k t + d pi/2); sin likewise
        out[..., 2 * k - 1] = k**d * np.cos(k * th[..., 0] + d * np.pi / 2)
        out[..., 2 * k] = k**d * np.sin(k * th[..., 0] + d * np.pi / 2)
    return out


def _trig_operator() -> Array:
    """G (7, 6): coefficients = G @ [H(0), H'(0), H''(0), H(pi/2), H'(pi/2), H''(pi/2)].

    Minimum of int_0^{pi/2} H'''^2 dtheta under the six end conditions (a KKT system); the
    integral is computed exactly enough by 64-point Gauss-Legendre (smooth integrand).
    """
    x, w = np.polynomial.legendre.leggauss(64)
    theta = (x + 1.0) * np.pi / 4.0
    w = w * np.pi / 4.0
    B3 = _trig_basis(theta, 3)
    Q = (B3 * w[:, None]).T @ B3
    C = np.vstack([_trig_basis(np.array(th), d) for th in (0.0, np.pi / 2) for d in (0, 1, 2)])
    K = np.block([[Q, C.T], [C, np.zeros((6, 6))]])
    rhs = np.vstack([np.zeros((7, 6)), np.eye(6)])
    return np.linalg.solve(K, rhs)[:7]


_TRIG_G: Array | None = None


class TrigonometricSpline(_Segmented):
    """Third-order trigonometric spline through via points with given velocities, accelerations.

    Args:
        points: via points (m+1, n) (joint or task coordinates).
        durations: segment durations (m,) or one for all [s].
        velocities, accelerations: at every via point, (m+1, n); default: zero at both ends and,
            at the interior points, those of the quintic spline through the same points and
            times (a smooth, C4 reference), so the trigonometric spline is C2.

    Attributes:
        coefficients: (m, 7, n) on theta = (pi/2) (t - t_i) / h_i.
    """

    def __init__(
        self,
        points: ArrayLike,
        durations: ArrayLike,
        velocities: ArrayLike | None = None,
        accelerations: ArrayLike | None = None,
    ):
        global _TRIG_G
        P = _points(points)
        m, self.n = P.shape[0] - 1, P.shape[1]
        h = _durations(durations, m)
        self.points = P
        self.knots = np.concatenate([[0.0], np.cumsum(h)])
        self.duration = float(self.knots[-1])
        if velocities is None or accelerations is None:
            ref = PolynomialSpline(P, h, degree=5)
            _, v_ref, a_ref = ref.sample(self.knots)
            v_ref[[0, -1]] = 0.0
            a_ref[[0, -1]] = 0.0
        Vel = v_ref if velocities is None else self._knot_values(velocities, P.shape, "velocities")
        Acc = a_ref if accelerations is None else self._knot_values(accelerations, P.shape, "accelerations")
        self.velocities, self.accelerations = Vel, Acc
        if _TRIG_G is None:
            _TRIG_G = _trig_operator()
        k = (2.0 * h / np.pi)[:, None]  # dt/dtheta
        ends = np.stack(
            [P[:-1], Vel[:-1] * k, Acc[:-1] * k**2, P[1:], Vel[1:] * k, Acc[1:] * k**2], axis=1
        )  # (m, 6, n)
        self.coefficients = np.einsum("ce,men->mcn", _TRIG_G, ends)

    @staticmethod
    def _knot_values(x: ArrayLike, shape: tuple[int, ...], what: str) -> Array:
        arr = np.asarray(x, dtype=float)
        if arr.ndim == 1 and shape[1] == 1:
            arr = arr[:, None]
        if arr.shape != shape:
            raise InputError(f"{what}: expected shape {shape} (one row per via point), got {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise InputError(f"{what}: contains NaN or infinite values")
        return arr.copy()

    def _evaluate(self, t: Array) -> tuple[Array, Array, Array]:
        i, tau = self._locate(t)
        w = (np.pi / 2.0) / self.durations[i]  # dtheta/dt
        theta = tau * w
        c = self.coefficients[i]
        q = np.einsum("nk,nkj->nj", _trig_basis(theta, 0), c)
        qd = np.einsum("nk,nkj->nj", _trig_basis(theta, 1), c) * w[:, None]
        qdd = np.einsum("nk,nkj->nj", _trig_basis(theta, 2), c) * (w**2)[:, None]
        q[t >= self.duration] = self.points[-1]
        return q, qd, qdd

    def peak_values(self) -> tuple[Array, Array]:
        """max |qd| and |qdd| per coordinate: dense grid refined by bisection on the derivative."""
        return exact_peaks(self)


def exact_peaks(traj: _Segmented, per_segment: int = 400) -> tuple[Array, Array]:
    """Peak |qd| and |qdd| of a smooth segmented trajectory, refined to ~1e-13 s.

    On a grid of ``per_segment`` points per segment, every sign change of the next derivative
    (estimated by central differences of the sampled one) is refined by bisection.
    """
    peaks = [np.zeros(traj.n), np.zeros(traj.n)]
    lo_l: list[Array] = []
    hi_l: list[Array] = []
    which: list[NDArray[np.intp]] = []
    col: list[NDArray[np.intp]] = []
    for a, b in zip(traj.knots[:-1], traj.knots[1:]):
        t = np.linspace(a, b, per_segment + 1)
        t[-1] = np.nextafter(b, a)  # stay on this segment
        _, qd, qdd = traj.sample(t)
        for k, f in enumerate((qd, qdd)):
            g = np.abs(f)
            peaks[k] = np.maximum(peaks[k], np.max(g, axis=0))
            # local maxima of the samples, the segment ends included (a peak may sit between
            # the first two samples); refine over the neighbouring sample intervals
            pad = np.vstack([np.full((1, g.shape[1]), -np.inf), g, np.full((1, g.shape[1]), -np.inf)])
            i, j = np.nonzero((pad[1:-1] >= pad[:-2]) & (pad[1:-1] >= pad[2:]))
            last = t.size - 1
            lo_l.append(t[np.maximum(i - 1, 0)])
            hi_l.append(t[np.minimum(i + 1, last)])
            which.append(np.full(i.size, k))
            col.append(j)
    lo, hi = np.concatenate(lo_l), np.concatenate(hi_l)
    k_all, j_all = np.concatenate(which), np.concatenate(col)
    if lo.size:

        def value(x: Array) -> Array:
            _, d1, d2 = traj.sample(x)
            rows = np.arange(x.size)
            return np.abs(np.where(k_all == 0, d1[rows, j_all], d2[rows, j_all]))

        for _ in range(70):  # ternary search of each unimodal local maximum, all at once
            m1 = lo + (hi - lo) / 3
            m2 = hi - (hi - lo) / 3
            left = value(m1) < value(m2)
            lo = np.where(left, m1, lo)
            hi = np.where(left, hi, m2)
        best = value(0.5 * (lo + hi))
        for k in (0, 1):
            sel = k_all == k
            np.maximum.at(peaks[k], j_all[sel], best[sel])
    return peaks[0], peaks[1]


def _initial_durations(P: Array, kv: Array | None, ka: Array | None) -> Array:
    """Segment durations proportional to the slowest joint's time per segment (before scaling)."""
    dq = np.abs(np.diff(P, axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        tv = np.zeros(dq.shape[0]) if kv is None else np.max(np.where(dq > 0, dq / kv, 0.0), axis=1)
        ta = np.zeros(dq.shape[0]) if ka is None else np.max(np.where(dq > 0, np.sqrt(dq / ka), 0.0), axis=1)
    h = np.maximum(tv, ta)
    if not np.any(h > 0):
        h = np.max(dq, axis=1)
    positive = h[h > 0]
    floor = 0.1 * float(np.mean(positive)) if positive.size else 1.0
    return np.maximum(h, floor)  # repeated points still get a pause of some length


def spline_through(
    kind: str,
    points: ArrayLike,
    durations: ArrayLike | None = None,
    velocity_limit: ArrayLike | None = None,
    acceleration_limit: ArrayLike | None = None,
    *,
    velocities: ArrayLike | None = None,
    accelerations: ArrayLike | None = None,
) -> PolynomialSpline | TrigonometricSpline:
    """A spline through via points; with limits and no durations, in minimum time.

    Without ``durations`` the segment durations start proportional to the per-segment travel
    time of the slowest joint, then the whole spline is stretched uniformly in time by
    ``c = max_j max(|qd_j|max / kv_j, sqrt(|qdd_j|max / ka_j))`` so that at least one limit is
    reached and none is exceeded (time scaling of a path, as Table 8.1 for one segment).

    Args:
        kind: ``cubic_spline``, ``quintic_spline`` or ``trigonometric_spline``.
        points: via points (m+1, n), start and goal included.
        durations: segment durations (m,) [s], or None for the minimum time.
        velocity_limit, acceleration_limit: kv, ka (scalar or (n,)), needed without durations.
        velocities, accelerations: via-point values for the trigonometric spline.
    """
    if kind not in SPLINES:
        raise UnknownNameError("spline", kind, SPLINES)
    P = _points(points)
    n = P.shape[1]
    kv = as_limits(velocity_limit, n, "velocity_limit")
    ka = as_limits(acceleration_limit, n, "acceleration_limit")

    def build(h: Array) -> PolynomialSpline | TrigonometricSpline:
        if kind == "trigonometric_spline":
            return TrigonometricSpline(P, h, velocities, accelerations)
        return PolynomialSpline(P, h, 3 if kind == "cubic_spline" else 5)

    if durations is not None:
        return build(_durations(durations, P.shape[0] - 1))
    if not np.any(np.diff(P, axis=0) != 0):
        raise InputError("points: all via points are equal; give durations for a pause")
    if (kv is None or not np.any(np.isfinite(kv))) and (ka is None or not np.any(np.isfinite(ka))):
        raise InputError(f"{kind}: give durations or finite velocity/acceleration limits")
    if kind == "trigonometric_spline" and velocities is not None:
        raise InputError("trigonometric_spline: via-point velocities need explicit durations")
    h = _initial_durations(P, kv, ka)
    spline = build(h)
    vpk, apk = spline.peak_values()
    with np.errstate(divide="ignore", invalid="ignore"):
        cv = np.max(np.where(vpk > 0, vpk / (np.inf if kv is None else kv), 0.0))
        ca = np.max(np.where(apk > 0, np.sqrt(apk / (np.inf if ka is None else ka)), 0.0))
    c = max(cv, ca)
    return build(h * c)


def trigonometric_spline(
    points: ArrayLike,
    durations: ArrayLike,
    velocities: ArrayLike | None = None,
    accelerations: ArrayLike | None = None,
) -> TrigonometricSpline:
    """Third-order trigonometric spline through ``points`` (m+1, n) with segment ``durations``.

    ``sample(t)`` gives position, velocity and acceleration, each (N, n). See
    :class:`TrigonometricSpline`.
    """
    return TrigonometricSpline(points, durations, velocities, accelerations)
