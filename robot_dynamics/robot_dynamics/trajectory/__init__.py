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
from .planning import DEFAULT_JERK_PER_ACCELERATION, model_limits, plan
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
from .sampling import MAX_SAMPLES, TabulatedTrajectory, peaks, sample_table, sample_times
from .splines import (
    SPLINES,
    PolynomialSpline,
    TrigonometricSpline,
    exact_peaks,
    spline_through,
    trigonometric_spline,
)
from .synchronization import (
    PROFILES,
    SynchronizedTrapezoid,
    minimum_time,
    synchronized_continuous_acceleration,
    synchronized_trapezoid,
)
from .time_optimal import CHECK_RATE, TimeOptimalTrajectory, path_through, time_optimal
from .torque_scaling import MAX_CHECK_SAMPLES, TorqueCheck, check_torques, scale_to_torque_limits
from .task_space import (
    MAX_TASK_SPACE_SAMPLES,
    CartesianMotion,
    EulerCartesianMotion,
    JointPathReport,
    cartesian_motion,
    euler_to_matrix,
    matrix_to_euler,
    rotation_axis_angle,
    task_space_to_joint,
)

__all__ = [
    "MAX_CHECK_SAMPLES",
    "MAX_SAMPLES",
    "MAX_TASK_SPACE_SAMPLES",
    "DEFAULT_JERK_PER_ACCELERATION",
    "PROFILES",
    "SPLINES",
    "CartesianMotion",
    "EulerCartesianMotion",
    "euler_to_matrix",
    "matrix_to_euler",
    "JointPathReport",
    "PolynomialSpline",
    "TrigonometricSpline",
    "cartesian_motion",
    "exact_peaks",
    "rotation_axis_angle",
    "spline_through",
    "task_space_to_joint",
    "trigonometric_spline",
    "TorqueCheck",
    "TimeOptimalTrajectory",
    "path_through",
    "time_optimal",
    "check_torques",
    "scale_to_torque_limits",
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
