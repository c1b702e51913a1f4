"""``plan``: one entry point for point-to-point joint-space profiles, minimum time by default."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import InputError
from .base import as_limits, as_vector
from .double_s import DoubleSTiming, double_s_timing
from .profiles import (
    BangBangProfile,
    ContinuousAccelerationProfile,
    CubicProfile,
    DoubleSProfile,
    LinearProfile,
    PointToPoint,
    QuinticProfile,
    TrapezoidalProfile,
)
from .synchronization import (
    POLYNOMIAL_PEAKS,
    _check_profile,
    continuous_acceleration_timing,
    polynomial_minimum_time,
    trapezoid_timing,
    unit_limits,
)

if TYPE_CHECKING:
    from ..model import RobotModel

Array = NDArray[np.float64]

__all__ = ["plan", "model_limits", "DEFAULT_JERK_PER_ACCELERATION"]

_POLY = {"linear": LinearProfile, "cubic": CubicProfile, "quintic": QuinticProfile, "bang_bang": BangBangProfile}
_TRAPEZOIDS = {"trapezoidal": TrapezoidalProfile, "continuous_acceleration": ContinuousAccelerationProfile}

# Shape of a law when only its duration is given (no limits): unit limits on r', r'', r'''
# whose minimum-time law is then stretched to the duration. The trapezoids get tau = tf / 3
# (peak velocity 1.5 D / tf, as the cubic).
_SHAPE_V, _SHAPE_A_TRAP, _SHAPE_A_CONT, _SHAPE_A_S, _SHAPE_J_S = 1.5, 4.5, 6.75, 6.0, 60.0

#: Jerk limit of a robot (URDF has none) when a model gives the defaults: this many times its
#: acceleration limit [1/s], i.e. the acceleration builds up in 0.1 s.
DEFAULT_JERK_PER_ACCELERATION = 10.0


def model_limits(model: RobotModel, samples: int = 64, seed: int = 0) -> tuple[Array, Array]:
    """Default joint velocity and acceleration limits of a robot, each (nq,).

    kv_j is the URDF ``<limit velocity>``; ka_j is Khalil's estimate (section 8.3): the maximum
    torque over the largest diagonal inertia, ``effort_j / max_q A_jj(q)``, the maximum taken
    over ``samples`` random configurations inside the joint limits (and q = 0). Joints without
    an effort or velocity limit get inf (unlimited).
    """
    from ..dynamics import crba

    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    q = np.vstack([np.clip(np.zeros(model.nq), lo, hi), rng.uniform(lo, hi, (samples, model.nq))])
    M = crba(model, q)
    a_max = np.max(np.diagonal(M, axis1=-2, axis2=-1), axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ka = np.where(np.isfinite(model.effort_limit) & (a_max > 0), model.effort_limit / a_max, np.inf)
    kv = np.where(np.isfinite(model.velocity_limit) & (model.velocity_limit > 0), model.velocity_limit, np.inf)
    return np.asarray(kv, dtype=float), np.asarray(ka, dtype=float)


def _stretch(duration: float | None, t_min: Array, moving: Array, profile: str) -> Array:
    """Time-scaling factor per joint taking the minimum-time law to ``duration`` (>= 1)."""
    if duration is None:
        return np.ones(t_min.shape)
    slowest = float(np.max(t_min[moving]))
    if duration < slowest * (1.0 - 1e-12):
        raise InputError(
            f"duration: {duration:.6g} s is shorter than the minimum {slowest:.6g} s of the {profile} "
            "profile under the given limits"
        )
    return np.where(moving, duration / np.where(moving, t_min, 1.0), 1.0)


def _finite_rates(plan_law: Callable[..., PointToPoint]) -> Callable[..., PointToPoint]:
    """plan() with its result checked: a duration too short for the displacement (5e-324 s)
    gives infinite velocities, and that is refused, not returned."""

    @functools.wraps(plan_law)
    def checked(profile: str, *args: Any, **kwargs: Any) -> PointToPoint:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # the result is checked here
            traj = plan_law(profile, *args, **kwargs)
            v, a = traj.peak_velocity, traj.peak_acceleration
        # the linear law's acceleration is infinite by design (velocity steps at both ends)
        if not (np.all(np.isfinite(v)) and (profile == "linear" or np.all(np.isfinite(a)))):
            raise InputError(
                f"duration: {traj.duration:.3g} s is too short for this motion (its peak velocity or acceleration "
                f"is not a finite number); give a longer duration or finite limits"
            )
        if not _evaluates_finite(traj):
            raise InputError(
                f"duration: {traj.duration:.3g} s with a displacement of {float(np.max(np.abs(traj.displacement))):.3g} "
                f"is beyond what the {profile} law can evaluate in double precision (its powers of time overflow); "
                "give a shorter duration, a smaller displacement or larger limits"
            )
        return traj

    return checked


def _evaluates_finite(traj: PointToPoint) -> bool:
    """Whether the law evaluates to finite numbers over its whole duration: sampled at 33 even
    times and at the double-S phase ends, where each piece's powers of time are largest (the
    pieces are polynomials in their own local time, so an overflow shows at their ends)."""
    T = float(traj.duration)
    if not T > 0.0:
        return True
    times = [np.linspace(0.0, T, 33)]
    timing = getattr(traj, "timing", None)
    if timing is not None:
        Tj, Ta, Tv = (np.ravel(x) for x in (timing.Tj, timing.Ta, timing.Tv))
        ends = np.concatenate([Tj, Ta - Tj, Ta, Ta + Tv, Ta + Tv + Tj, T - Tj])
        times.append(np.clip(ends[np.isfinite(ends)], 0.0, T))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        q, qd, qdd = traj.sample(np.concatenate(times))
    return bool(np.all(np.isfinite(q)) and np.all(np.isfinite(qd)) and np.all(np.isfinite(qdd)))


def _limits_from_model(
    model: RobotModel, profile: str, kv: Array | None, ka: Array | None, kj: Array | None
) -> tuple[Array | None, Array | None, Array | None]:
    """(kv, ka, kj) with the limits not given taken from ``model``: :func:`model_limits`, and
    kj = :data:`DEFAULT_JERK_PER_ACCELERATION` ka for the double S."""
    if kv is None or ka is None:
        kv_m, ka_m = model_limits(model)
        kv = kv_m if kv is None else kv
        ka = ka_m if ka is None else ka
    if kj is None and profile == "double_s":
        kj = DEFAULT_JERK_PER_ACCELERATION * ka
    return kv, ka, kj


def _check_goal_inside(model: RobotModel, qg: Array) -> None:
    """Refuse a goal (n,) [rad or m] outside the model's joint limits (naming the first joint)."""
    outside = (qg < model.lower - 1e-9) | (qg > model.upper + 1e-9)
    if np.any(outside):
        j = int(np.flatnonzero(outside)[0])
        raise InputError(
            f"q_goal: joint {model.joint_names[j]!r} = {qg[j]:.6g} is outside its limits "
            f"[{model.lower[j]:.6g}, {model.upper[j]:.6g}]"
        )


def _as_duration(duration: Any) -> float | None:
    """``duration`` as a finite time >= 0 [s], or None."""
    if duration is None:
        return None
    try:
        duration = float(duration)
    except (TypeError, ValueError, OverflowError):  # text, a 400-digit integer
        raise InputError(f"duration: expected a finite time >= 0 s, got {str(duration)[:40]}") from None
    if not np.isfinite(duration) or duration < 0.0:
        raise InputError(f"duration: expected a finite time >= 0 s, got {duration}")
    return duration


def _at_rest(profile: str, qs: Array, qg: Array, n: int) -> PointToPoint:
    """The zero-length trajectory of ``profile`` (no joint moves), duration 0."""
    if profile == "double_s":
        z = np.zeros(n)
        return DoubleSProfile(qs, qg, DoubleSTiming(z, z, z, z, z, z))
    if profile in _TRAPEZOIDS:
        return _TRAPEZOIDS[profile](qs, qg, 0.0, 0.0)
    return _POLY[profile](qs, qg, 0.0)


def _polynomial_law(
    profile: str, qs: Array, qg: Array, V: Array, A: Array, moving: Array, duration: float | None
) -> PointToPoint:
    """Linear, cubic, quintic or bang-bang law under unit limits V, A (Khalil Table 8.1)."""
    n = qs.size
    t_min = polynomial_minimum_time(profile, V, np.full(n, np.inf) if profile == "linear" else A)
    bounded = np.all(t_min[moving] > 0)
    if not bounded:
        if duration is None:
            raise InputError(_unbounded_message(profile, "velocity_limit or acceleration_limit"))
        return _POLY[profile](qs, qg, duration)
    c = _stretch(duration, t_min, moving, profile)
    return _POLY[profile](qs, qg, t_min * c)


def _trapezoid_law(
    profile: str, qs: Array, qg: Array, V: Array, A: Array, moving: Array, duration: float | None
) -> PointToPoint:
    """Trapezoidal ([8.14]-[8.22]) or continuous-acceleration law under unit limits V, A; a
    fixed shape stretched to ``duration`` when A bounds no moving joint."""
    law_timing = trapezoid_timing if profile == "trapezoidal" else continuous_acceleration_timing
    cls = _TRAPEZOIDS[profile]
    tau, t_min, _ = law_timing(V, A)
    if not np.all(np.isfinite(A[moving])):
        if duration is None:
            raise InputError(_unbounded_message(profile, "acceleration_limit"))
        shape_a = _SHAPE_A_TRAP if profile == "trapezoidal" else _SHAPE_A_CONT
        tau1, tf1, _ = law_timing(np.array(_SHAPE_V), np.array(shape_a))
        return cls(qs, qg, float(tau1) * duration / float(tf1), duration)
    c = _stretch(duration, t_min, moving, profile)
    return cls(qs, qg, tau * c, t_min * c)


def _double_s_law(
    profile: str, qs: Array, qg: Array, V: Array, A: Array, J: Array, moving: Array, duration: float | None
) -> PointToPoint:
    """Double-S law under unit limits V, A, J; a fixed shape stretched to ``duration`` when J
    bounds no moving joint."""
    n = qs.size
    if not np.all(np.isfinite(J[moving])):
        if duration is None:
            raise InputError(_unbounded_message(profile, "jerk_limit"))
        unit = double_s_timing(np.array(_SHAPE_V), np.array(_SHAPE_A_S), np.array(_SHAPE_J_S))
        c = np.full(n, duration / float(unit.duration))
        unit = DoubleSTiming(*(np.full(n, float(x)) for x in unit))
    else:
        unit = double_s_timing(V, A, J)
        c = _stretch(duration, unit.duration, moving, profile)
    # time scaling by c: durations * c, jerk / c^3, peak velocity / c
    timing = DoubleSTiming(unit.Tj * c, unit.Ta * c, unit.Tv * c, unit.duration * c, unit.jerk / c**3, unit.v_peak / c)
    return DoubleSProfile(qs, qg, timing)


@_finite_rates
def plan(
    profile: str,
    q_start: ArrayLike,
    q_goal: ArrayLike,
    velocity_limit: ArrayLike | None = None,
    acceleration_limit: ArrayLike | None = None,
    jerk_limit: ArrayLike | None = None,
    duration: float | None = None,
    *,
    synchronize: bool = True,
    model: RobotModel | None = None,
) -> PointToPoint:
    """A rest-to-rest joint-space trajectory from ``q_start`` to ``q_goal``.

    Without ``duration`` the trajectory takes the minimum time allowed by the limits (Khalil
    Table 8.1, [8.14], [8.22], [8.33], [8.45]; double S for the jerk limit). With
    ``synchronize`` (default) all joints start and stop together on homothetic profiles
    ([8.23]-[8.34]); otherwise each joint moves in its own minimum time and then holds. With
    ``duration`` the minimum-time law is stretched in time to last exactly ``duration``
    (an error if shorter than the minimum); with a duration and no limits, a fixed shape is used.

    Args:
        profile: one of ``linear, cubic, quintic, bang_bang, trapezoidal,
            continuous_acceleration, double_s``.
        q_start, q_goal: (n,) [rad or m].
        velocity_limit, acceleration_limit, jerk_limit: kv, ka, kj > 0, scalar or (n,)
            [rad/s, rad/s^2, rad/s^3 or m/...]; inf for unlimited. Default: from ``model``
            (:func:`model_limits`; kj = :data:`DEFAULT_JERK_PER_ACCELERATION` ka) when given,
            else unlimited. The linear law ignores ka (its velocity steps), and only double_s
            uses kj.
        duration: total time [s], or None for the minimum time.
        synchronize: one common law for every joint (True) or each joint alone.
        model: robot whose limits are the defaults; n must equal model.nq, and the goal must
            be inside its joint limits (the straight joint-space path then stays inside).

    Returns:
        A :class:`PointToPoint` trajectory (``duration``, ``sample(t)``, peaks). A zero
        displacement gives a trajectory of duration 0.

    Raises:
        UnknownNameError: unknown profile. InputError: NaN, wrong lengths, limits <= 0, no
        duration and no limit bounding the motion, or a duration below the minimum.
    """
    _check_profile(profile)
    names = model.joint_names if model is not None else None
    qs = as_vector(q_start, model.nq if model is not None else None, "q_start", names)
    n = qs.size
    qg = as_vector(q_goal, n, "q_goal", names)
    kv = as_limits(velocity_limit, n, "velocity_limit")
    ka = as_limits(acceleration_limit, n, "acceleration_limit")
    kj = as_limits(jerk_limit, n, "jerk_limit")
    if model is not None:
        kv, ka, kj = _limits_from_model(model, profile, kv, ka, kj)
        _check_goal_inside(model, qg)
    duration = _as_duration(duration)
    D = qg - qs
    moving = D != 0.0
    if not np.any(moving):  # nothing to do: a zero-length trajectory
        return _at_rest(profile, qs, qg, n)
    if duration == 0.0:
        raise InputError("duration: a motion needs a duration > 0 s")

    V = unit_limits(D, kv, synchronize)
    A = unit_limits(D, ka, synchronize)
    J = unit_limits(D, kj, synchronize)
    if profile in POLYNOMIAL_PEAKS:
        return _polynomial_law(profile, qs, qg, V, A, moving, duration)
    if profile in _TRAPEZOIDS:
        return _trapezoid_law(profile, qs, qg, V, A, moving, duration)
    return _double_s_law(profile, qs, qg, V, A, J, moving, duration)


def _unbounded_message(profile: str, what: str) -> str:
    return f"{profile}: give a duration or a finite {what} for the moving joints (limits must bound the motion)"
