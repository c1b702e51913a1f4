"""Minimum travelling time and synchronisation of the joints (Khalil section 8.3).

Every point-to-point profile is written ``q(t) = qi + r(t) D`` (Khalil [8.1]) with r going
from 0 to 1. Dividing joint j's limits by its distance |Dj| gives the limits of r alone:
``V_j = kv_j / |Dj|``, ``A_j = ka_j / |Dj|`` (and ``J_j`` for jerk). One joint alone moves in
minimum time with its own (V_j, A_j). Synchronised joints share one r(t), which must obey
every joint's limits: ``V = min_j V_j``, ``A = min_j A_j``. This is Khalil's homothetic
synchronisation [8.23]-[8.34]: with joint 1 as reference, lambda_1 kv1 = |D1| V and
upsilon_1 ka1 = |D1| A, so [8.33] tau = V / A and [8.25] tf = tau + 1 / V.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import InputError, UnknownNameError

Array = NDArray[np.float64]

__all__ = [
    "PROFILES",
    "minimum_time",
    "unit_limits",
    "trapezoid_timing",
    "continuous_acceleration_timing",
    "polynomial_minimum_time",
    "SynchronizedTrapezoid",
    "synchronized_trapezoid",
    "synchronized_continuous_acceleration",
]

#: Valid point-to-point profile names, in the order of Khalil's chapter 8 (+ double S).
PROFILES = (
    "linear",
    "cubic",
    "quintic",
    "bang_bang",
    "trapezoidal",
    "continuous_acceleration",
    "double_s",
)

def _check_profile(profile: str) -> str:
    """``profile`` if it is one of :data:`PROFILES`; UnknownNameError otherwise."""
    if profile not in PROFILES:
        raise UnknownNameError("profile", profile, PROFILES)
    return profile


# Peak |r'| tf and |r''| tf^2 of the polynomial laws (Khalil [8.8], [8.9], [8.12], [8.13],
# [8.16], [8.17]); linear has an infinite acceleration at both ends.
POLYNOMIAL_PEAKS = {
    "linear": (1.0, np.inf),
    "cubic": (1.5, 6.0),
    # [8.13] and Table 8.1: 10 / sqrt(3), printed "10 / 3" in the extracted text (root lost)
    "quintic": (15.0 / 8.0, 10.0 / np.sqrt(3.0)),
    "bang_bang": (2.0, 4.0),
}


def _ratio(limit: Array, distance: Array) -> Array:
    """limit / distance with an infinite result for a joint that does not move."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.where(distance > 0.0, limit / np.where(distance > 0.0, distance, 1.0), np.inf)


def unit_limits(displacement: Array, limit: Array | None, synchronize: bool) -> Array:
    """Limits on r(t) per joint: limit_j / |Dj| (inf when unlimited or not moving), (n,).

    With ``synchronize`` every joint gets the smallest one (homothetic profiles, [8.23]).
    """
    D = np.abs(displacement)
    if limit is None:
        out = np.full(D.shape, np.inf)
    else:
        out = _ratio(limit, D)
    if synchronize and out.size:
        out = np.full(D.shape, np.min(out))
    return out


def polynomial_minimum_time(profile: str, V: Array, A: Array) -> Array:
    """Minimum duration of a polynomial/bang-bang law under unit limits V, A (Table 8.1).

    From |r'|max = cv / tf <= V and |r''|max = ca / tf^2 <= A:
    tf = max(cv / V, sqrt(ca / A)).
    """
    cv, ca = POLYNOMIAL_PEAKS[profile]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t_v = np.where(np.isinf(V), 0.0, cv / V)
        t_a = np.where(np.isinf(A) | np.isinf(ca), 0.0, np.sqrt(ca / A))
    return np.maximum(t_v, t_a)


def trapezoid_timing(V: Array, A: Array) -> tuple[Array, Array, Array]:
    """(tau, tf, V') of the minimum-time unit trapezoid under unit limits V, A.

    The velocity saturates when V^2 < A (Khalil [8.18] divided by |D|^2); otherwise the
    reachable peak is V' = sqrt(A) ([8.35]). Then tau = V'/A ([8.20]) and tf = tau + 1/V'
    ([8.22]).
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        Vp = np.minimum(V, np.sqrt(A))
        tau = np.where(np.isinf(A), 0.0, Vp / A)
        tf = tau + np.where(np.isinf(Vp), 0.0, 1.0 / Vp)
    return tau, tf, Vp


def continuous_acceleration_timing(V: Array, A: Array) -> tuple[Array, Array, Array]:
    """(tau, tf, V') of the minimum-time unit continuous-acceleration profile (section 8.3.4).

    The peak acceleration 3 V' / (2 tau) ([8.40]) is set to A, so tau = 3 V' / (2 A) ([8.41]);
    the velocity saturates when 3 V^2 < 2 A ([8.46]), otherwise V' = sqrt(2 A / 3) ([8.47]);
    tf = tau + 1 / V' ([8.45]).
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        Vp = np.minimum(V, np.sqrt(2.0 * A / 3.0))
        tau = np.where(np.isinf(A), 0.0, 1.5 * Vp / A)
        tf = tau + np.where(np.isinf(Vp), 0.0, 1.0 / Vp)
    return tau, tf, Vp


def minimum_time(
    profile: str,
    displacement: ArrayLike,
    velocity_limit: ArrayLike | None,
    acceleration_limit: ArrayLike | None,
    jerk_limit: ArrayLike | None = None,
) -> Array:
    """Minimum travelling time of each joint moving alone, tf_j (Table 8.1, [8.22], [8.45]).

    The synchronised minimum time of polynomial laws is ``max_j tf_j`` ([8.14]); for the
    trapezoidal and continuous-acceleration profiles it is the larger homothetic time of
    :func:`synchronized_trapezoid`.

    Args:
        profile: one of :data:`PROFILES`.
        displacement: D = qf - qi, (n,) [rad or m].
        velocity_limit, acceleration_limit, jerk_limit: kv, ka, kj, (n,), inf for unlimited.

    Returns:
        tf_j, (n,) [s]; 0 for a joint that does not move; inf when the limits do not bound it.
    """
    from .double_s import double_s_timing

    _check_profile(profile)
    D = np.asarray(displacement, dtype=float)
    n = D.size
    kv = np.full(n, np.inf) if velocity_limit is None else np.broadcast_to(np.asarray(velocity_limit, float), (n,))
    ka = np.full(n, np.inf) if acceleration_limit is None else np.broadcast_to(np.asarray(acceleration_limit, float), (n,))
    kj = np.full(n, np.inf) if jerk_limit is None else np.broadcast_to(np.asarray(jerk_limit, float), (n,))
    V, A, J = _ratio(kv, np.abs(D)), _ratio(ka, np.abs(D)), _ratio(kj, np.abs(D))
    if profile in POLYNOMIAL_PEAKS:
        tf = polynomial_minimum_time(profile, V, A)
    elif profile == "trapezoidal":
        tf = trapezoid_timing(V, A)[1]
    elif profile == "continuous_acceleration":
        tf = continuous_acceleration_timing(V, A)[1]
    else:
        tf = double_s_timing(V, A, J).duration
    unbounded = (np.abs(D) > 0) & (tf == 0.0)
    tf = np.where(unbounded, np.inf, tf)
    return np.where(np.abs(D) > 0, tf, 0.0)


class SynchronizedTrapezoid(NamedTuple):
    """Khalil's synchronised trapezoid (or continuous-acceleration profile).

    Attributes:
        tau: common acceleration time [s] ([8.33] or [8.41]).
        duration: common travelling time tf [s] ([8.25] or [8.45]).
        velocity_ratio: lambda_j, peak velocity of joint j over kv_j, (n,) ([8.34]).
        acceleration_ratio: upsilon_j, peak acceleration of joint j over ka_j, (n,).
    """

    tau: float
    duration: float
    velocity_ratio: Array
    acceleration_ratio: Array


def _synchronized(timing, displacement: ArrayLike, kv: ArrayLike, ka: ArrayLike, peak) -> SynchronizedTrapezoid:  # type: ignore[no-untyped-def]
    D = np.abs(np.asarray(displacement, dtype=float))
    kv_a = np.broadcast_to(np.asarray(kv, dtype=float), D.shape)
    ka_a = np.broadcast_to(np.asarray(ka, dtype=float), D.shape)
    if np.any(~(kv_a > 0)) or np.any(~(ka_a > 0)):
        raise InputError("limits must be > 0 (inf for unlimited)")
    if not np.any(D > 0):
        return SynchronizedTrapezoid(0.0, 0.0, np.zeros(D.shape), np.zeros(D.shape))
    V = float(np.min(_ratio(kv_a, D)))
    A = float(np.min(_ratio(ka_a, D)))
    if np.isinf(A):
        raise InputError("a trapezoidal profile needs a finite acceleration limit on a moving joint")
    tau, tf, Vp = (float(x) for x in timing(np.array(V), np.array(A)))
    lam = Vp * D / kv_a
    ups = peak(Vp, tau) * D / ka_a
    return SynchronizedTrapezoid(tau, tf, lam, ups)


def synchronized_trapezoid(displacement: ArrayLike, velocity_limit: ArrayLike, acceleration_limit: ArrayLike) -> SynchronizedTrapezoid:
    """Homothetic trapezoids with a common acceleration time (Khalil [8.25]-[8.35])."""
    return _synchronized(trapezoid_timing, displacement, velocity_limit, acceleration_limit, lambda V, tau: V / tau)


def synchronized_continuous_acceleration(
    displacement: ArrayLike, velocity_limit: ArrayLike, acceleration_limit: ArrayLike
) -> SynchronizedTrapezoid:
    """Homothetic continuous-acceleration profiles (Khalil [8.36]-[8.47])."""
    return _synchronized(
        continuous_acceleration_timing, displacement, velocity_limit, acceleration_limit, lambda V, tau: 1.5 * V / tau
    )
