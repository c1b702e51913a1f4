"""Point-to-point motion in the task space (Khalil section 8.4).

The end effector goes from ``T_start = [Ai Pi]`` to ``T_goal = [Af Pf]`` along the straight
segment Pi -> Pf ([8.48], [8.53]) while its orientation turns by alpha about one axis u of the
end-effector frame, ``Ai rot(u, alpha) = Af`` ([8.49], [8.54]). The distance D and the angle
alpha are two coordinates of one synchronised point-to-point law (any profile of
:func:`plan`), limited by the task-space velocity and acceleration limits ([8.48]-[8.57]).

:func:`task_space_to_joint` samples the motion into joint positions through the core's
inverse kinematics, velocities and accelerations through the Jacobian, and refuses (with the
time and the reason) a path that leaves the workspace, meets a singularity, jumps between
inverse-kinematics branches or leaves the joint limits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import InputError, SingularityError
from ..spatial import log_so3, matrix_to_rpy, rotation_about_axis, rpy_rate_matrix, rpy_rate_matrix_dot, rpy_to_matrix
from .base import as_times, as_vector
from .planning import plan
from .profiles import PointToPoint
from .sampling import TabulatedTrajectory, sample_times

if TYPE_CHECKING:
    from ..kinematics import IKResult
    from ..model import RobotModel

Array = NDArray[np.float64]

__all__ = [
    "CartesianMotion",
    "EulerCartesianMotion",
    "cartesian_motion",
    "rotation_axis_angle",
    "euler_to_matrix",
    "matrix_to_euler",
    "task_space_to_joint",
    "JointPathReport",
]

#: Orientation interpolations of :func:`cartesian_motion`: a rotation about one axis ([8.54]),
#: Khalil's Euler angles rot(z, phi) rot(x, theta) rot(z, psi) ([8.55], section 3.6.1), or
#: roll-pitch-yaw Rz(yaw) Ry(pitch) Rx(roll) (section 3.6.2, the URDF convention).
ORIENTATIONS = ("axis", "euler", "rpy")


def _pose(T: ArrayLike, what: str) -> Array:
    arr = np.asarray(T, dtype=float)
    if arr.shape != (4, 4) or not np.all(np.isfinite(arr)):
        raise InputError(f"{what}: expected a finite (4, 4) homogeneous transform, got shape {arr.shape}")
    R = arr[:3, :3]
    if np.abs(R.T @ R - np.eye(3)).max() > 1e-6 or np.linalg.det(R) < 0:
        raise InputError(f"{what}: its 3x3 block is not a rotation matrix")
    return arr


def rotation_axis_angle(A_start: ArrayLike, A_goal: ArrayLike) -> tuple[Array, float]:
    """(u, alpha) with A_start rot(u, alpha) = A_goal, u in the end-effector frame (Khalil [8.49]).

    Khalil [8.50]-[8.51] read u and alpha from rot(u, alpha) = Ai^T Af; near alpha = pi (small
    sin alpha) his section 2.3.8 switches to the symmetric part, which the core's ``log_so3``
    does at every angle, so it is used here. alpha is in [0, pi]; u is z for alpha = 0.
    """
    w = log_so3(np.asarray(A_start, float).T @ np.asarray(A_goal, float))
    alpha = float(np.linalg.norm(w))
    u = w / alpha if alpha > 0.0 else np.array([0.0, 0.0, 1.0])
    return u, alpha


class CartesianMotion:
    """Straight-line translation with a synchronised rotation about a fixed axis.

    Attributes:
        T_start, T_goal: (4, 4) poses of the frame in the base frame.
        distance: D = ||Pf - Pi|| [m] ([8.48]); axis: u (3,) in the end-effector frame;
        angle: alpha [rad] ([8.51]).
        law: the synchronised 2-coordinate law s(t) in [0, D], theta(t) in [0, alpha].
        duration: [s].
    """

    def __init__(self, T_start: Array, T_goal: Array, law: PointToPoint, axis: Array, angle: float):
        self.T_start, self.T_goal = T_start, T_goal
        self.law = law
        self.axis, self.angle = axis, angle
        self.distance = float(np.linalg.norm(T_goal[:3, 3] - T_start[:3, 3]))
        d = T_goal[:3, 3] - T_start[:3, 3]
        self.direction = d / self.distance if self.distance > 0 else np.zeros(3)
        self.duration = law.duration

    @property
    def axis_base(self) -> Array:
        """The rotation axis in base axes, Ai u: the same motion written rot(Ai u, alpha) Ai = Af,
        Khalil's fixed-axis variant [8.56] (Ai rot(u, a) = rot(Ai u, a) Ai)."""
        return self.T_start[:3, :3] @ self.axis

    def sample(self, t: ArrayLike) -> tuple[Array, Array, Array]:
        """Pose (..., 4, 4), twist (..., 6) and its derivative (..., 6) at times t.

        Twists are [linear; angular] in base axes at the frame origin: v = s' (Pf - Pi) / D
        ([8.53]) and w = Ai u theta' ([8.57] expressed in the base frame).
        """
        flat, shape = as_times(t)
        x, xd, xdd = self.law.sample(flat)
        Ai, Pi = self.T_start[:3, :3], self.T_start[:3, 3]
        T = np.tile(np.eye(4), (flat.size, 1, 1))
        T[:, :3, :3] = Ai @ rotation_about_axis(self.axis, x[:, 1])  # [8.54]
        T[:, :3, 3] = Pi + x[:, :1] * self.direction  # [8.53]
        T[flat >= self.duration] = self.T_goal
        w_axis = Ai @ self.axis
        twist = np.concatenate([xd[:, :1] * self.direction, xd[:, 1:2] * w_axis], axis=1)
        accel = np.concatenate([xdd[:, :1] * self.direction, xdd[:, 1:2] * w_axis], axis=1)
        return T.reshape(shape + (4, 4)), twist.reshape(shape + (6,)), accel.reshape(shape + (6,))


def euler_to_matrix(angles: ArrayLike) -> Array:
    """Khalil's Euler angles (section 3.6.1): ``rot(z, phi) rot(x, theta) rot(z, psi)``.

    Args:
        angles: [phi, theta, psi], shape (..., 3) [rad].

    Returns:
        (..., 3, 3) rotation matrices.
    """
    a = np.asarray(angles, dtype=float)
    c1, s1 = np.cos(a[..., 0]), np.sin(a[..., 0])
    c2, s2 = np.cos(a[..., 1]), np.sin(a[..., 1])
    c3, s3 = np.cos(a[..., 2]), np.sin(a[..., 2])
    return np.stack(
        [
            np.stack([c1 * c3 - s1 * c2 * s3, -c1 * s3 - s1 * c2 * c3, s1 * s2], -1),
            np.stack([s1 * c3 + c1 * c2 * s3, -s1 * s3 + c1 * c2 * c3, -c1 * s2], -1),
            np.stack([s2 * s3, s2 * c3, c2], -1),
        ],
        -2,
    )


def matrix_to_euler(R: ArrayLike) -> Array:
    """Inverse of :func:`euler_to_matrix`, theta in [0, pi]; (..., 3, 3) -> (..., 3).

    At theta = 0 or pi only phi +/- psi is defined: psi is set to 0 there.
    """
    R = np.asarray(R, dtype=float)
    st = np.hypot(R[..., 0, 2], R[..., 1, 2])
    theta = np.arctan2(st, R[..., 2, 2])
    phi = np.arctan2(R[..., 0, 2], -R[..., 1, 2])
    psi = np.arctan2(R[..., 2, 0], R[..., 2, 1])
    lock = st < 1e-9
    if np.any(lock):
        psi = np.where(lock, 0.0, psi)
        phi = np.where(lock, np.arctan2(R[..., 1, 0], R[..., 0, 0]), phi)
    return np.stack([phi, theta, psi], -1)


def _euler_rates(angles: Array, rates: Array) -> tuple[Array, Array]:
    """E and dE/dt with omega = E angles_dot (base axes) for :func:`euler_to_matrix`.

    The columns of E are the base-frame axes of the three rotations: z, rot(z, phi) x and
    rot(z, phi) rot(x, theta) z.
    """
    c1, s1 = np.cos(angles[..., 0]), np.sin(angles[..., 0])
    c2, s2 = np.cos(angles[..., 1]), np.sin(angles[..., 1])
    d1, d2 = rates[..., 0], rates[..., 1]
    z, o = np.zeros_like(c1), np.ones_like(c1)
    E = np.stack([np.stack([z, c1, s1 * s2], -1), np.stack([z, s1, -c1 * s2], -1), np.stack([o, z, c2], -1)], -2)
    Ed = np.stack(
        [
            np.stack([z, -s1 * d1, c1 * s2 * d1 + s1 * c2 * d2], -1),
            np.stack([z, c1 * d1, s1 * s2 * d1 - c1 * c2 * d2], -1),
            np.stack([z, z, -s2 * d2], -1),
        ],
        -2,
    )
    return E, Ed


def _wrap(a: Array) -> Array:
    return (a + np.pi) % (2.0 * np.pi) - np.pi


class EulerCartesianMotion:
    """Straight-line translation with the three orientation angles interpolated (Khalil [8.55]).

    Four coordinates D, and the angle increments of the chosen convention, follow one
    synchronised law. Khalil prints [8.55] as ``A(t) = Ai rot(z, phi_i + r phi) ...``: with
    the initial angles inside, the leading ``Ai`` would turn the frame twice (A(0) = Ai Ai);
    the interpolation is ``A(t) = rot(z, phi_i + r phi) rot(x, theta_i + r theta)
    rot(z, psi_i + r psi)``, as built here.

    Attributes:
        T_start, T_goal: (4, 4) poses; convention: "euler" or "rpy".
        angles_start: (3,) initial angles [rad] (euler: [phi, theta, psi]; rpy: [roll, pitch,
        yaw]); increments: (3,) [rad], the azimuthal ones (phi, psi; roll, yaw) wrapped to
        (-pi, pi] so the frame takes the short way about those axes.
        distance: D [m]; law: the synchronised 4-coordinate law; duration [s].
    """

    def __init__(self, T_start: Array, T_goal: Array, law: PointToPoint, convention: str, a0: Array, da: Array):
        self.T_start, self.T_goal, self.law, self.convention = T_start, T_goal, law, convention
        self.angles_start, self.increments = a0, da
        d = T_goal[:3, 3] - T_start[:3, 3]
        self.distance = float(np.linalg.norm(d))
        self.direction = d / self.distance if self.distance > 0 else np.zeros(3)
        self.duration = law.duration

    def sample(self, t: ArrayLike) -> tuple[Array, Array, Array]:
        """Pose (..., 4, 4), twist (..., 6) and its derivative (..., 6) at times t.

        Twists are [linear; angular] in base axes at the frame origin; omega = E(a) a' with E
        the rate matrix of the convention, omega' = E a'' + E' a'.
        """
        flat, shape = as_times(t)
        x, xd, xdd = self.law.sample(flat)
        a, ad, add = self.angles_start + x[:, 1:], xd[:, 1:], xdd[:, 1:]
        if self.convention == "euler":
            R = euler_to_matrix(a)
            E, Ed = _euler_rates(a, ad)
        else:
            R = rpy_to_matrix(a)
            E, Ed = rpy_rate_matrix(a), rpy_rate_matrix_dot(a, ad)
        T = np.tile(np.eye(4), (flat.size, 1, 1))
        T[:, :3, :3] = R  # [8.55], without the leading Ai
        T[:, :3, 3] = self.T_start[:3, 3] + x[:, :1] * self.direction  # [8.53]
        T[flat >= self.duration] = self.T_goal
        w = np.einsum("nij,nj->ni", E, ad)
        wd = np.einsum("nij,nj->ni", E, add) + np.einsum("nij,nj->ni", Ed, ad)
        twist = np.concatenate([xd[:, :1] * self.direction, w], axis=1)
        accel = np.concatenate([xdd[:, :1] * self.direction, wd], axis=1)
        return T.reshape(shape + (4, 4)), twist.reshape(shape + (6,)), accel.reshape(shape + (6,))


def cartesian_motion(
    T_start: ArrayLike,
    T_goal: ArrayLike,
    linear_velocity: float | None = None,
    linear_acceleration: float | None = None,
    angular_velocity: float | None = None,
    angular_acceleration: float | None = None,
    *,
    profile: str = "trapezoidal",
    duration: float | None = None,
    linear_jerk: float | None = None,
    angular_jerk: float | None = None,
    orientation: str = "axis",
) -> CartesianMotion | EulerCartesianMotion:
    """Task-space point-to-point motion (Khalil 8.4) in minimum time under task limits.

    Args:
        T_start, T_goal: (4, 4) poses of the end-effector frame in the base frame.
        linear_velocity, linear_acceleration: kv1 [m/s], ka1 [m/s^2] of the translation.
        angular_velocity, angular_acceleration: kv2 [rad/s], ka2 [rad/s^2] of the rotation.
        profile: any point-to-point profile name of :func:`plan`.
        duration: [s], or None for the minimum time.
        linear_jerk, angular_jerk: for ``double_s``.
        orientation: "axis" (one rotation about u, [8.54]), "euler" (Khalil's Euler angles
            interpolated, [8.55]) or "rpy" (roll, pitch, yaw interpolated); for the angle
            conventions the angular limits apply to each of the three angles.
    """
    Ts, Tg = _pose(T_start, "T_start"), _pose(T_goal, "T_goal")
    if orientation not in ORIENTATIONS:
        raise InputError(f"orientation: expected one of {', '.join(ORIENTATIONS)}, got {orientation!r}")
    D = float(np.linalg.norm(Tg[:3, 3] - Ts[:3, 3]))

    def pair(a: float | None, b: float | None) -> Array | None:
        if a is None and b is None:
            return None
        return np.array([np.inf if a is None else a, np.inf if b is None else b], dtype=float)

    if orientation != "axis":
        to_angles = matrix_to_euler if orientation == "euler" else matrix_to_rpy
        a0, af = to_angles(Ts[:3, :3]), to_angles(Tg[:3, :3])
        da = af - a0  # phi = phi_f - phi_i, ... ([8.55])
        azimuthal = [0, 2]  # phi, psi (euler); roll, yaw (rpy): 2 pi periodic
        da[azimuthal] = _wrap(da[azimuthal])

        def four(a: float | None, b: float | None) -> Array | None:
            two = pair(a, b)
            return None if two is None else np.r_[two[0], two[1], two[1], two[1]]

        law4 = plan(
            profile,
            np.zeros(4),
            np.r_[D, da],
            four(linear_velocity, angular_velocity),
            four(linear_acceleration, angular_acceleration),
            four(linear_jerk, angular_jerk),
            duration,
        )
        return EulerCartesianMotion(Ts, Tg, law4, orientation, a0, da)
    u, alpha = rotation_axis_angle(Ts[:3, :3], Tg[:3, :3])
    law = plan(
        profile,
        [0.0, 0.0],
        [D, alpha],
        pair(linear_velocity, angular_velocity),
        pair(linear_acceleration, angular_acceleration),
        pair(linear_jerk, angular_jerk),
        duration,
    )
    return CartesianMotion(Ts, Tg, law, u, alpha)


class JointPathReport(NamedTuple):
    """What :func:`task_space_to_joint` found along the path.

    Attributes:
        trajectory: the joint trajectory (a :class:`TabulatedTrajectory` of the samples).
        t, q, qd, qdd: the samples, (N,) and (N, nq).
        min_singular_value: smallest singular value of J over the path (of the rows used).
        max_velocity_ratio: max_j,t |qd_j| / velocity limit (> 1: too fast for the joints).
        position_error, orientation_error: worst IK residuals [m], [rad].
    """

    trajectory: TabulatedTrajectory
    t: Array
    q: Array
    qd: Array
    qdd: Array
    min_singular_value: float
    max_velocity_ratio: float
    position_error: float
    orientation_error: float


#: The most samples :func:`task_space_to_joint` solves (duration x rate): each is an inverse
#: kinematics of 1.5 to 4 ms (measured, PUMA 560), so one call stays within 8 to 20 s (the CLI's
#: default 100 Hz covers a 50 s motion).
#: The answer is a C2 quintic Hermite table: solve at a lower rate and sample it densely.
MAX_TASK_SPACE_SAMPLES = 5_000


def _checked_rate(motion: CartesianMotion | EulerCartesianMotion, rate: Any) -> float:
    """``rate`` [Hz] as a float, refused (before any work) when the motion would take more than
    :data:`MAX_TASK_SPACE_SAMPLES` samples; a rate <= 0 or not finite is left to ``sample_times``."""
    try:
        rate = float(rate)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"rate: expected a sampling rate > 0 Hz, got {rate!r}") from None
    samples = float(motion.duration) * rate if np.isfinite(rate) and rate > 0 else 0.0  # else sample_times refuses
    if not samples <= MAX_TASK_SPACE_SAMPLES:  # refused before any work: an inverse kinematics per sample
        raise InputError(
            f"rate: {float(rate):g} Hz over the motion's {motion.duration:g} s gives {samples:.3g} samples, more than "
            f"{MAX_TASK_SPACE_SAMPLES:,} (each one an inverse kinematics, a few ms); lower the rate (the joint table it returns "
            "interpolates in between) or shorten the motion"
        )
    return rate


def _start_configuration(
    model: RobotModel, T_start: Array, fname: str, q_start: ArrayLike | None, position_only: bool
) -> Array:
    """Joint positions (nq,) at the start pose T_start (4, 4): ``q_start`` checked to reach it
    (within 1e-6), or solved by inverse kinematics inside the joint limits."""
    from ..kinematics import frame_pose, inverse_kinematics

    if q_start is None:
        ik = inverse_kinematics(model, T_start, fname, position_only=position_only, respect_limits=True)
        if not ik.success:
            raise SingularityError(f"task space: the start pose is not reachable by {fname!r}")
        return ik.q
    q_prev = as_vector(q_start, model.nq, "q_start", model.joint_names)
    T0 = frame_pose(model, q_prev, fname)
    err = np.linalg.norm(T0[:3, 3] - T_start[:3, 3]) + (
        0.0 if position_only else np.linalg.norm(log_so3(T_start[:3, :3] @ T0[:3, :3].T))
    )
    if err > 1e-6:
        raise InputError(f"q_start: its pose of {fname!r} is {err:.3g} away from T_start")
    return q_prev


def _solve_sample(
    model: RobotModel, target: Array, fname: str, guess: Array, position_only: bool, t_k: float
) -> IKResult:
    """Inverse kinematics of one sample's ``target`` (position (3,) or pose (4, 4)) from ``guess``;
    refuses a pose not reached within 1e-9."""
    from ..kinematics import inverse_kinematics

    ik = inverse_kinematics(model, target, fname, guess, position_only=position_only, respect_limits=False, tolerance=1e-12)
    if not ik.success and max(ik.position_error, ik.orientation_error) > 1e-9:
        raise SingularityError(
            f"task space: pose at t={t_k:.4g} s not reachable by {fname!r} (position error "
            f"{ik.position_error:.3g} m, orientation error {ik.orientation_error:.3g} rad)"
        )
    return ik


def _check_branch(model: RobotModel, qk: Array, q_prev: Array, t_k: float, max_joint_step: float) -> None:
    """Refuse a joint step larger than ``max_joint_step`` [rad or m] between two samples."""
    step = np.abs(qk - q_prev)
    if np.max(step) > max_joint_step:
        j = int(np.argmax(step))
        raise SingularityError(
            f"task space: joint {model.joint_names[j]!r} jumps by {step[j]:.3g} at t={t_k:.4g} s "
            "(inverse-kinematics branch change near a singularity)"
        )


def _check_inside_limits(model: RobotModel, qk: Array, t_k: float) -> None:
    """Refuse joint positions (nq,) outside [lower, upper] (1e-9 tolerance), naming the first joint."""
    lo, hi = model.lower, model.upper
    bad = (qk < lo - 1e-9) | (qk > hi + 1e-9)
    if np.any(bad):
        j = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"task space: joint {model.joint_names[j]!r} leaves its limits [{lo[j]:.4g}, {hi[j]:.4g}] "
            f"at t={t_k:.4g} s (q={qk[j]:.4g})"
        )


def _joint_rates(
    model: RobotModel, qk: Array, fname: str, rows: slice, twist_k: Array, accel_k: Array,
    singular_threshold: float, t_k: float,
) -> tuple[Array, Array, float]:
    """``(qd, qdd, s_min)`` at ``qk``: qd = J^+ twist and qdd = J^+ (twist' - Jdot qd) (Khalil
    [9.33]) on the Jacobian ``rows``, each (nq,), and the smallest singular value of J;
    refuses a singular configuration."""
    from ..kinematics import jacobian, jacobian_dot_qdot

    J = jacobian(model, qk, fname)[rows]
    sv = np.linalg.svd(J, compute_uv=False)
    s_small = float(sv[-1])  # the min(rows, nq)-th singular value: rank lost if ~0
    if s_small < singular_threshold:
        raise SingularityError(
            f"task space: singular configuration at t={t_k:.4g} s (smallest singular value of J "
            f"{s_small:.3g} < {singular_threshold:g})"
        )
    qd_k = np.linalg.lstsq(J, twist_k[rows], rcond=None)[0]
    bias = jacobian_dot_qdot(model, qk, qd_k, fname)[rows]
    qdd_k = np.linalg.lstsq(J, accel_k[rows] - bias, rcond=None)[0]
    return qd_k, qdd_k, s_small


def task_space_to_joint(
    model: RobotModel,
    motion: CartesianMotion | EulerCartesianMotion,
    q_start: ArrayLike | None = None,
    *,
    frame: str | None = None,
    rate: float = 100.0,
    position_only: bool = False,
    singular_threshold: float = 1e-3,
    max_joint_step: float = 0.25,
    check_limits: bool = True,
) -> JointPathReport:
    """Joint trajectory that moves ``frame`` along a task-space motion.

    Each sample is solved by :func:`robot_dynamics.inverse_kinematics` from the previous
    solution; qd = J^+ twist and qdd = J^+ (twist' - Jdot qd) (Khalil [9.33]).

    Args:
        model: the robot; frame: its frame (default the end effector).
        motion: from :func:`cartesian_motion`.
        q_start: joint positions at the start (its pose must be T_start); default: solved by IK
            from the middle of the joint limits.
        rate: samples per second [Hz].
        position_only: follow the position only (robots with fewer than 6 joints).
        singular_threshold: refuse when the smallest singular value of J drops below it.
        max_joint_step: refuse a jump larger than this [rad or m] between samples (a change
            of inverse-kinematics branch, Khalil's change of aspect).
        check_limits: refuse positions outside [lower, upper].

    Raises:
        SingularityError: unreachable pose, singular configuration or branch jump (with the time).
        InputError: a joint leaves its limits (with the time and the joint name), or more than
            :data:`MAX_TASK_SPACE_SAMPLES` samples (refused before any work).
    """
    fname = frame or model.end_effector
    model.frame_index(fname)
    rows = slice(0, 3) if position_only else slice(0, 6)
    rate = _checked_rate(motion, rate)
    t = sample_times(motion.duration, rate)
    T, twist, accel = motion.sample(t)
    N, n = t.size, model.nq
    q = np.zeros((N, n))
    qd = np.zeros((N, n))
    qdd = np.zeros((N, n))
    q_prev = _start_configuration(model, T[0], fname, q_start, position_only)
    smin = np.inf
    perr = oerr = 0.0
    for k in range(N):
        guess = q_prev if k == 0 else q_prev + qd[k - 1] * (t[k] - t[k - 1])
        target = T[k, :3, 3] if position_only else T[k]
        ik = _solve_sample(model, target, fname, guess, position_only, t[k])
        perr, oerr = max(perr, ik.position_error), max(oerr, ik.orientation_error)
        qk = ik.q
        if k > 0:
            _check_branch(model, qk, q_prev, t[k], max_joint_step)
        if check_limits:
            _check_inside_limits(model, qk, t[k])
        qd_k, qdd_k, s_small = _joint_rates(model, qk, fname, rows, twist[k], accel[k], singular_threshold, t[k])
        smin = min(smin, s_small)
        q[k], qd[k], qdd[k] = qk, qd_k, qdd_k
        q_prev = qk
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(np.isfinite(model.velocity_limit), np.abs(qd) / model.velocity_limit, 0.0)
    traj = TabulatedTrajectory(t, q, qd, qdd) if N > 1 else TabulatedTrajectory(t, q, qd * 0, qdd * 0)
    return JointPathReport(traj, t, q, qd, qdd, float(smin), float(np.max(ratio)), perr, oerr)
