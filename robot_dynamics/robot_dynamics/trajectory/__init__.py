"""Trajectory generation (Khalil chapter 8 and beyond): joint-space profiles with minimum time
and synchronisation, jerk-limited profiles, splines through via points, task-space straight
lines with a rotation about one axis, fixed-rate tables and time scaling against the torques.

    >>> from robot_dynamics import trajectory as tr
    >>> traj = tr.plan("trapezoidal", q0, q1, velocity_limit=kv, acceleration_limit=ka)
    >>> q, qd, qdd = traj.sample(t)            # t (N,) -> each (N, n)
    >>> t, q, qd, qdd = tr.sample_table(traj, rate=100.0)

Every trajectory has ``n``, ``duration`` and ``sample(t)``; see :class:`Trajectory`.
"""

from .base import TimeScaled, Trajectory
from .double_s import DoubleSTiming, double_s_timing
from .planning import model_limits, plan
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
from .sampling import TabulatedTrajectory, peaks, sample_table, sample_times
from .synchronization import (
    PROFILES,
    SynchronizedTrapezoid,
    minimum_time,
    synchronized_continuous_acceleration,
    synchronized_trapezoid,
)

__all__ = [
    "PROFILES",
    "BangBangProfile",
    "ContinuousAccelerationProfile",
    "CubicProfile",
    "DoubleSProfile",
    "DoubleSTiming",
    "LinearProfile",
    "PointToPoint",
    "QuinticProfile",
    "SynchronizedTrapezoid",
    "TabulatedTrajectory",
    "TimeScaled",
    "Trajectory",
    "TrapezoidalProfile",
    "double_s_timing",
    "minimum_time",
    "model_limits",
    "peaks",
    "plan",
    "sample_table",
    "sample_times",
    "synchronized_continuous_acceleration",
    "synchronized_trapezoid",
]
