"""What the dynamics node does, without rclpy: model loading and the service callbacks.

Every callback of ``dynamics_node`` is one call into :class:`DynamicsServices`; the methods
read a request object (the real field layout of the robot_dynamics_interfaces services),
call the core (``rnea``, ``aba``, ``crba``, ``linearize``), fill the response and return it. They never
raise: any bad request (unknown joint, wrong length, NaN, unknown link) gets
``success = False`` and a one-line ``message``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelError, RobotDynamicsError
from ..model import RobotModel, apply_sidecar, load_robot, load_urdf
from . import conversion as cv

__all__ = ["load_model_from_parameters", "DynamicsServices", "guarded", "actuator_efforts", "joint_efforts"]

Array = NDArray[np.float64]


def load_model_from_parameters(params: Mapping[str, Any]) -> RobotModel:
    """The robot from ``robot_description`` (URDF text), else ``urdf_path``, else ``robot``.

    The drive-train YAML (``drivetrain``) is applied on top, and ``gravity`` set.

    Raises:
        ModelError: no source given, or the description cannot be loaded.
    """
    description = str(params.get("robot_description") or "").strip()
    urdf_path = str(params.get("urdf_path") or "").strip()
    robot = str(params.get("robot") or "").strip()
    drivetrain = str(params.get("drivetrain") or "").strip() or None
    if description:
        model = load_urdf(description, drivetrain=drivetrain)
    elif urdf_path:
        model = load_urdf(urdf_path, drivetrain=drivetrain)
    elif robot:
        model = load_robot(robot)
        if drivetrain:
            model = apply_sidecar(model, drivetrain)
    else:
        raise ModelError(
            "No robot given: set the 'robot_description' parameter (URDF text), 'urdf_path' (a URDF/xacro "
            "file) or 'robot' (a bundled robot name)"
        )
    gravity = params.get("gravity")
    if gravity is not None:
        try:
            if isinstance(gravity, (str, bytes)) or np.iscomplexobj(gravity):
                raise TypeError
            g = np.asarray(gravity, dtype=float)
        except (TypeError, ValueError, OverflowError):
            g = np.full(1, np.nan)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ModelError(f"gravity: expected 3 finite numbers [m/s^2], got {str(gravity)[:80]!r}")
        model = model.replace(gravity=g)
    return model


def guarded(response: Any, work: Callable[[], None]) -> Any:
    """Run ``work`` (which fills ``response``); any error becomes success False + message.

    Errors of the package give their own message; anything else (a bug) is reported with its
    type so the node keeps serving.
    """
    try:
        work()
        response.success = True
        if not getattr(response, "message", ""):
            response.message = "ok"
    except RobotDynamicsError as exc:
        response.success = False
        response.message = str(exc)
    except Exception as exc:  # noqa: BLE001 - a callback must never raise
        response.success = False
        response.message = f"internal error ({type(exc).__name__}): {exc}"
    return response


def actuator_efforts(model: RobotModel, q: Array, tau: Array) -> Array:
    """Efforts at the actuators for joint efforts ``tau`` (the control layer's drive-train map).

    The identity for a model without a drive train (rotor inertia and friction are then
    already in ``tau``, referred to the joint side).
    """
    from ..control import joint_to_actuator

    return np.asarray(joint_to_actuator(model, q, tau), dtype=float)


def joint_efforts(model: RobotModel, q: Array, actuator: Array) -> Array:
    """Joint efforts produced by actuator efforts (inverse of :func:`actuator_efforts`)."""
    from ..control import actuator_to_joint

    return np.asarray(actuator_to_joint(model, q, actuator), dtype=float)


#: Finite-difference rates beyond these are no motion of the arm but points too close in time.
ABSURD_VELOCITY_FACTOR = 10.0  # times the joint's velocity limit
ABSURD_VELOCITY = 1.0e3  # [rad/s or m/s] for a joint without a velocity limit
ABSURD_ACCELERATION = 1.0e5  # [rad/s^2 or m/s^2]


def _check_estimated_rates(model: RobotModel, arrays: Any) -> None:
    """Refuse estimated velocities or accelerations that no arm reaches (points too close in time)."""
    from ..errors import InputError

    vmax = np.where(np.isfinite(model.velocity_limit), ABSURD_VELOCITY_FACTOR * model.velocity_limit, ABSURD_VELOCITY)
    for what, values, bound, unit in (
        ("velocities", arrays.velocity, vmax, "rad/s or m/s"),
        ("accelerations", arrays.acceleration, np.full(model.nq, ABSURD_ACCELERATION), "rad/s^2 or m/s^2"),
    ):
        if what not in arrays.estimated:
            continue
        over = np.abs(values) > bound
        if np.any(over):
            k, j = (int(x) for x in np.argwhere(over)[0])
            dt = np.diff(arrays.time)
            closest = float(dt.min()) if dt.size else 0.0
            raise InputError(
                f"the {what} estimated by finite differences reach {abs(values[k, j]):.3g} {unit} on joint "
                f"{model.joint_names[j]!r} at point {k} (bound {bound[j]:.3g}): points are as close as {closest:.3g} s "
                "in time. Space the points, or give velocities and accelerations in every point"
            )


class DynamicsServices:
    """The dynamics node's callbacks as plain methods over a :class:`RobotModel`.

    Args:
        model: the robot.
        friction: include joint friction in inverse and forward dynamics.
    """

    def __init__(self, model: RobotModel, *, friction: bool = True):
        self.model = model
        self.friction = friction
        self.names = list(model.joint_names)
        self._zeros = np.zeros(model.nq)

    # -- services ------------------------------------------------------------------------
    def inverse_dynamics(self, request: Any, response: Any) -> Any:
        """InverseDynamics: efforts = rnea(q, qd, qdd, f_ext) and the actuator efforts."""
        import robot_dynamics as rd

        def work() -> None:
            m, names = self.model, request.joint_names
            q = cv.request_vector(names, request.positions, self.names, "positions", empty_is_zero=False)
            qd = cv.request_vector(names, request.velocities, self.names, "velocities", empty_is_zero=True)
            qdd = cv.request_vector(names, request.accelerations, self.names, "accelerations", empty_is_zero=True)
            f_ext = None
            link = str(request.wrench_link).strip()
            if link:
                m.frame_index(link)  # UnknownNameError lists the valid links
                f_ext = {link: cv.wrench_to_array(request.wrench)}
            tau = rd.rnea(m, q, qd, qdd, f_ext=f_ext, friction=self.friction)
            response.joint_names = list(self.names)
            response.efforts = cv.to_list(tau)
            response.actuator_efforts = cv.to_list(actuator_efforts(m, q, tau))

        return guarded(response, work)

    def forward_dynamics(self, request: Any, response: Any) -> Any:
        """ForwardDynamics: accelerations = aba(q, qd, efforts)."""
        import robot_dynamics as rd

        def work() -> None:
            names = request.joint_names
            q = cv.request_vector(names, request.positions, self.names, "positions", empty_is_zero=False)
            qd = cv.request_vector(names, request.velocities, self.names, "velocities", empty_is_zero=True)
            effort = cv.request_vector(names, request.efforts, self.names, "efforts", empty_is_zero=False)
            if request.actuator_efforts:
                effort = joint_efforts(self.model, q, effort)
            qdd = rd.aba(self.model, q, qd, effort, friction=self.friction)
            response.joint_names = list(self.names)
            response.accelerations = cv.to_list(qdd)

        return guarded(response, work)

    def mass_matrix(self, request: Any, response: Any) -> Any:
        """MassMatrix: M(q), row-major."""
        import robot_dynamics as rd

        def work() -> None:
            q = cv.request_vector(request.joint_names, request.positions, self.names, "positions", empty_is_zero=False)
            M = rd.crba(self.model, q)
            response.joint_names = list(self.names)
            response.mass_matrix = cv.to_list(M)
            response.size = self.model.nq

        return guarded(response, work)

    def linearize(self, request: Any, response: Any) -> Any:
        """Linearize: (A, B) of the dynamics about (positions, velocities, efforts), row-major.

        The continuous model ``dx/dt = A dx + B du`` of x = (q, qd), u = efforts, or with
        ``dt > 0`` its zero-order-hold discretisation (:func:`robot_dynamics.linearize`).
        """
        import robot_dynamics as rd
        from ..errors import InputError

        def work() -> None:
            names = request.joint_names
            q = cv.request_vector(names, request.positions, self.names, "positions", empty_is_zero=False)
            qd = cv.request_vector(names, request.velocities, self.names, "velocities", empty_is_zero=True)
            tau = cv.request_vector(names, request.efforts, self.names, "efforts", empty_is_zero=False)
            try:
                dt = float(request.dt)
            except (TypeError, ValueError):
                raise InputError(f"dt: expected a period [s], got {str(request.dt)[:40]!r}") from None
            if not (np.isfinite(dt) and dt >= 0.0):
                raise InputError(f"dt: expected a sampling period > 0 [s], or 0 for the continuous model; got {dt!r}")
            with np.errstate(over="ignore", invalid="ignore"):  # a dt too long overflows expm: refused below
                A, B = rd.linearize(self.model, q, qd, tau, dt if dt > 0.0 else None, friction=self.friction)
            if not (np.all(np.isfinite(A)) and np.all(np.isfinite(B))):
                raise InputError("the linearisation is not finite at this state (velocities or efforts too large)")
            response.joint_names = list(self.names)
            response.a, response.a_rows, response.a_cols = cv.to_list(A), A.shape[0], A.shape[1]
            response.b, response.b_rows, response.b_cols = cv.to_list(B), B.shape[0], B.shape[1]
            response.message = f"discrete, zero-order hold at dt = {dt:g} s" if dt > 0.0 else "continuous"

        return guarded(response, work)

    def trajectory_effort(self, request: Any, response: Any, point_type: Callable[[], Any]) -> Any:
        """TrajectoryEffort: rnea at every point, peaks per joint, feasibility against the limits.

        Args:
            point_type: the JointTrajectoryPoint class (the response's points are built with it).
        """

        def work() -> None:
            traj = request.trajectory
            arrays = cv.trajectory_to_arrays(traj, self.names)
            import robot_dynamics as rd

            # a whole trajectory at once: one batch call
            if arrays.estimated:
                _check_estimated_rates(self.model, arrays)
            tau = rd.rnea(self.model, arrays.position, arrays.velocity, arrays.acceleration, friction=self.friction)
            order = [self.names.index(n) for n in traj.joint_names]  # back to the request's order
            out = response.trajectory
            out.header = traj.header
            cv.fill_joint_trajectory(
                out, point_type, self.names, arrays.time, arrays.position, arrays.velocity,
                arrays.acceleration, tau,
            )
            # Keep the caller's joint order in the answer: reorder the columns.
            out.joint_names = list(traj.joint_names)
            for p in out.points:
                for attr in ("positions", "velocities", "accelerations", "effort"):
                    values = np.asarray(getattr(p, attr))
                    setattr(p, attr, cv.to_list(values[order]))
            peak = np.max(np.abs(tau), axis=0)
            limit = np.asarray(self.model.effort_limit, dtype=float)
            over = peak > limit
            response.peak_efforts = cv.to_list(peak[order])
            response.effort_limits = cv.to_list(limit[order])
            response.violating_joints = [self.names[i] for i in order if over[i]]
            response.feasible = not bool(np.any(over))
            notes = []
            if arrays.estimated:
                notes.append(f"{' and '.join(arrays.estimated)} estimated by finite differences")
            notes.append("feasible" if response.feasible else f"effort limits exceeded by {response.violating_joints}")
            response.message = "; ".join(notes)

        return guarded(response, work)

    # -- topic ---------------------------------------------------------------------------
    def gravity_compensation(self, joint_state: Any) -> tuple[bool, Array, str]:
        """Gravity torques G(q) for a JointState; (ok, values in model order, status)."""
        try:
            state = cv.joint_state_to_arrays(joint_state, self.names)
            import robot_dynamics as rd

            tau_g = rd.rnea(self.model, state.position, self._zeros, self._zeros, friction=self.friction)
            return True, tau_g, "ok"
        except RobotDynamicsError as exc:
            return False, np.zeros(self.model.nq), str(exc)
        except Exception as exc:  # noqa: BLE001 - a callback must never raise
            return False, np.zeros(self.model.nq), f"internal error ({type(exc).__name__}): {exc}"
