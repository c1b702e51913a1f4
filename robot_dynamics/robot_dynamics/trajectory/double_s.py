"""Jerk-limited (double S) rest-to-rest law r(t) from 0 to 1, under limits on r', r'', r'''.

Seven phases of constant jerk +J, 0, -J (acceleration), 0 (cruise), -J, 0, +J
(deceleration); the deceleration mirrors the acceleration. The phase durations follow from
the limits by elementary integration (the same case analysis as Biagiotti and Melchiorri,
*Trajectory Planning for Automatic Machines and Robots*, section 3.4, written here for zero
boundary velocity and acceleration):

- acceleration phase that reaches the velocity V: if V J >= A^2, Tj = A/J and Ta = Tj + V/A,
  else Tj = sqrt(V/J) and Ta = 2 Tj; it covers V Ta / 2, so the cruise lasts Tv = 1/V - Ta;
- if Tv < 0 the velocity limit is not reached: Tv = 0, and either A is reached
  (1 >= 2 A^3 / J^2: Tj = A/J, Ta = Tj/2 + sqrt(Tj^2/4 + 1/A), from A (Ta - Tj) Ta = 1), or not
  (Tj = (1/(2J))^(1/3), Ta = 2 Tj, from 2 J Tj^3 = 1).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]

__all__ = ["DoubleSTiming", "double_s_timing", "double_s_evaluate"]


class DoubleSTiming(NamedTuple):
    """Phase durations of a unit double-S law, each (n,) [s].

    Attributes:
        Tj: duration of each constant-jerk phase; Ta: acceleration (= deceleration) time;
        Tv: cruise time; duration: 2 Ta + Tv; jerk: J used; v_peak: A (Ta - Tj) reached.
    """

    Tj: Array
    Ta: Array
    Tv: Array
    duration: Array
    jerk: Array
    v_peak: Array


def double_s_timing(V: Array, A: Array, J: Array) -> DoubleSTiming:
    """Minimum-time unit double-S phases under limits V, A, J on r', r'', r''' (all > 0).

    J must be finite where the timing is used; V and A may be infinite (unlimited).
    """
    V, A, J = (np.asarray(x, dtype=float) for x in np.broadcast_arrays(V, A, J))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # case 1: the velocity limit is reached
        full_a = V * J >= A * A
        Tj1 = np.where(full_a, A / J, np.sqrt(V / J))
        Ta1 = np.where(full_a, Tj1 + V / A, 2.0 * Tj1)
        Tv1 = 1.0 / V - Ta1
        # case 2: no cruise
        reach_a = 1.0 >= 2.0 * A**3 / J**2
        Tj2 = np.where(reach_a, A / J, np.cbrt(0.5 / J))
        Ta2 = np.where(reach_a, 0.5 * Tj2 + np.sqrt(0.25 * Tj2**2 + 1.0 / A), 2.0 * Tj2)
        cruise = np.isfinite(Tv1) & (Tv1 >= 0.0)
        Tj = np.where(cruise, Tj1, Tj2)
        Ta = np.where(cruise, Ta1, Ta2)
        Tv = np.where(cruise, Tv1, 0.0)
        v_peak = J * Tj * (Ta - Tj)
    return DoubleSTiming(Tj, Ta, Tv, 2.0 * Ta + Tv, J.copy(), v_peak)


def _acceleration_phase(t: Array, Tj: Array, Ta: Array, J: Array, vp: Array) -> tuple[Array, Array, Array]:
    """r, r', r'' on 0 <= t <= Ta (three constant-jerk pieces J, 0, -J)."""
    a_lim = J * Tj
    # piece 1: jerk +J
    p1 = J * t**3 / 6.0
    v1 = 0.5 * J * t**2
    a1 = J * t
    # piece 2: constant acceleration J Tj
    s = t - Tj
    p2 = J * Tj**3 / 6.0 + 0.5 * J * Tj**2 * s + 0.5 * a_lim * s**2
    v2 = 0.5 * J * Tj**2 + a_lim * s
    a2 = a_lim + 0.0 * s
    # piece 3: jerk -J; velocity mirrors piece 1 about (Ta/2, vp/2), r(Ta) = vp Ta / 2
    u = Ta - t
    p3 = 0.5 * vp * Ta - (vp * u - J * u**3 / 6.0)
    v3 = vp - 0.5 * J * u**2
    a3 = J * u
    in1 = t <= Tj
    in3 = t >= Ta - Tj
    r = np.where(in1, p1, np.where(in3, p3, p2))
    rd = np.where(in1, v1, np.where(in3, v3, v2))
    rdd = np.where(in1, a1, np.where(in3, a3, a2))
    return r, rd, rdd


def double_s_evaluate(t: Array, timing: DoubleSTiming) -> tuple[Array, Array, Array]:
    """r, r', r'' of the unit double-S law at times t (broadcast against the (n,) timing)."""
    Tj, Ta, Tv, T, J, vp = timing
    t = np.clip(t, 0.0, T)
    ra, rda, rdda = _acceleration_phase(np.minimum(t, Ta), Tj, Ta, J, vp)
    # deceleration: mirror image, r(t) = 1 - r_acc(T - t)
    rb, rdb, rddb = _acceleration_phase(np.minimum(T - t, Ta), Tj, Ta, J, vp)
    cruise_r = 0.5 * vp * Ta + vp * (t - Ta)
    in_acc = t <= Ta
    in_dec = t >= Ta + Tv
    r = np.where(in_acc, ra, np.where(in_dec, 1.0 - rb, cruise_r))
    rd = np.where(in_acc, rda, np.where(in_dec, rdb, vp))
    rdd = np.where(in_acc, rdda, np.where(in_dec, -rddb, 0.0))
    return r, rd, rdd
