"""Closed-loop simulation: plant = direct dynamics of the core, a sampled controller, metrics.

The controller is ticked at ``control_rate`` (default 1 kHz); its effort is held constant
between ticks (zero-order hold) while the plant ``qdd = aba(plant, q, qd, tau + d)`` is
integrated by fixed-step RK4 (``substeps`` steps per tick) or by an adaptive scipy solver
(``integrator="RK45"``, ``"DOP853"``, ``"LSODA"``...) over each tick. The plant may differ
from the controller's model (parameter errors); measurement noise and a torque disturbance
are optional. The result holds every tick (time, state, reference, torques, status) and the
metrics: RMS / max tracking error per joint, peak torques, actuator energy, and for computed
torque with a model error, the error that Khalil's [9.28] predicts.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .control.base import (
    ControllerBase,
    Reference,
    Status,
    TaskReference,
    actuator_to_joint,
    as_joint_reference,
    as_task_reference,
)
from .dynamics import aba
from .dynamics._common import joint_friction
from .errors import InputError
from .kinematics import frame_pose
from .model.robot_model import RobotModel

__all__ = ["simulate", "SimulationResult", "SimulationMetrics", "INTEGRATORS", "reference_function"]

Array = NDArray[np.float64]

#: Fixed-step RK4, or the name of a scipy.integrate.solve_ivp method (adaptive step).
INTEGRATORS = ("rk4", "RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")
MAX_TICKS = 5_000_000  # controller ticks of one run (its logs grow with ticks x joints)
DIVERGED = 1e150  # a plant state this large has left any physical range: the run stops as diverged


@dataclass(frozen=True)
class SimulationMetrics:
    """Summary of a run. Errors are e = q^d - q; per-joint arrays are (nq,).

    Attributes:
        rms_error, max_error, final_error: joint tracking error [rad or m] (NaN for a task reference).
        peak_torque: max |tau| per joint [N m or N]; peak_effort: max |effort| at the actuators.
        energy: actuator work int tau . qd dt [J]; energy_per_joint (nq,) [J].
        saturated_fraction: fraction of ticks with a saturated command.
        fault_count: ticks whose status was FAULT.
        singular_count: ticks with the damped inverse active.
        task_rms_error, task_max_error: frame position error [m] for task references, else None.
        predicted_rms_error: RMS of the error predicted by Khalil [9.28] (computed torque with a
            controller model that differs from the plant), else None.
        predicted_max_error: max of that prediction per joint, else None.
        diverged: True when the plant state became non-finite (the run stopped there).
    """

    rms_error: Array
    max_error: Array
    final_error: Array
    peak_torque: Array
    peak_effort: Array
    energy: float
    energy_per_joint: Array
    saturated_fraction: float
    fault_count: int
    singular_count: int
    task_rms_error: float | None = None
    task_max_error: float | None = None
    predicted_rms_error: Array | None = None
    predicted_max_error: Array | None = None
    diverged: bool = False

    def as_dict(self) -> dict[str, Any]:
        """Plain dict (arrays as lists) for JSON."""
        out: dict[str, Any] = {}
        for k, v in self.__dict__.items():
            out[k] = v.tolist() if isinstance(v, np.ndarray) else v
        return out


@dataclass(frozen=True)
class SimulationResult:
    """Every controller tick of a run; arrays have K = number of ticks rows.

    Attributes:
        joint_names: (nq,). robot: plant name. controller: controller name.
        t: (K,) [s]. q, qd, qdd: plant state and acceleration at each tick, (K, nq).
        q_ref, qd_ref, qdd_ref: joint reference (NaN for a task reference), (K, nq).
        tau: joint torques applied by the actuators (ZOH over the tick), (K, nq).
        effort: actuator commands, (K, nq). disturbance: torque disturbance, (K, nq).
        status: Status flags per tick, (K,) int.
        x, x_ref: controlled frame position and its reference (task references), (K, 3), else None.
        pose_ref: the task reference poses T_base_frame^d, (K, 4, 4), else None.
        qm: rotor positions (joint side) of an elastic-joint plant, (K, nq), else None.
        messages: (t, text) of the status messages, each logged once when it changes.
        control_rate [Hz], integrator: as simulated. metrics: :class:`SimulationMetrics`.
    """

    joint_names: tuple[str, ...]
    robot: str
    controller: str
    t: Array
    q: Array
    qd: Array
    qdd: Array
    q_ref: Array
    qd_ref: Array
    qdd_ref: Array
    tau: Array
    effort: Array
    disturbance: Array
    status: NDArray[np.int_]
    control_rate: float
    integrator: str
    metrics: SimulationMetrics
    x: Array | None = None
    x_ref: Array | None = None
    pose_ref: Array | None = None
    qm: Array | None = None
    frame: str | None = None
    messages: list[tuple[float, str]] = field(default_factory=list)

    @property
    def error(self) -> Array:
        """Joint tracking error e = q^d - q, (K, nq)."""
        return self.q_ref - self.q


def reference_function(reference: Any, nq: int) -> tuple[Callable[[float], Any], float | None, Callable[[Array], Any] | None]:
    """Turn what the user gives into ``f(t) -> Reference | TaskReference``.

    Accepted: a trajectory object with ``sample(t) -> (q, qd, qdd)`` (and ``duration``), a
    task-space motion with ``sample(t) -> (pose (4, 4), twist (6,), accel (6,))``, a
    callable ``t -> Reference | TaskReference | (q, qd, qdd)``, a :class:`Reference`, a
    :class:`TaskReference`, or a goal position (nq,) (regulation).

    Returns:
        (f, duration or None, vectorised sampler ``t (K,) -> (q, qd, qdd)`` or None).
    """
    if isinstance(reference, TaskReference):
        ref_t = as_task_reference(reference)
        return (lambda t: ref_t), None, None
    if hasattr(reference, "sample") and callable(reference.sample):
        duration = float(getattr(reference, "duration", 0.0))
        first = reference.sample(0.0)
        if np.shape(first[0]) == (4, 4):  # a task-space motion: (pose, twist, accel)

            def f_task(t: float) -> TaskReference:
                return as_task_reference(tuple(reference.sample(t)))

            def batch_task(t: Array) -> Any:
                P, V, A = reference.sample(t)
                return [TaskReference(P[k], V[k], A[k]) for k in range(len(t))]

            return f_task, duration, batch_task
        n = int(getattr(reference, "n", np.shape(first[0])[-1]))
        if n != nq:
            raise InputError(f"reference: trajectory has {n} coordinates, the robot {nq} joints")

        def f_traj(t: float) -> Reference:
            q, qd, qdd = reference.sample(t)
            return Reference(np.asarray(q, float), np.asarray(qd, float), np.asarray(qdd, float))

        def batch(t: Array) -> Any:
            return reference.sample(t)

        return f_traj, duration, batch
    if callable(reference):
        return reference, getattr(reference, "duration", None), None
    ref = as_joint_reference(reference if isinstance(reference, tuple) else np.asarray(reference, float), nq)
    return (lambda t: ref), None, None


def _noise_vector(value: ArrayLike, n: int, what: str) -> Array:
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,) or not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise InputError(f"{what}: expected a standard deviation >= 0, scalar or ({n},), got {value!r}")
    return arr


def rk4_step(f: Callable[[Array], Array], x: Array, h: float, k1: Array | None = None) -> Array:
    """One classical Runge-Kutta step of ``xdot = f(x)`` over ``h`` (``k1 = f(x)`` if known)."""
    k1 = f(x) if k1 is None else k1
    k2 = f(x + 0.5 * h * k1)
    k3 = f(x + 0.5 * h * k2)
    k4 = f(x + h * k3)
    return x + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)


def simulate(
    plant: RobotModel,
    controller: ControllerBase,
    reference: Any,
    duration: float | None = None,
    *,
    q0: ArrayLike | None = None,
    qd0: ArrayLike | None = None,
    control_rate: float = 1000.0,
    integrator: str = "rk4",
    substeps: int = 1,
    rtol: float = 1e-8,
    atol: float = 1e-10,
    settle: float = 0.5,
    friction: bool = True,
    coulomb_smoothing: float = 0.0,
    gravity: ArrayLike | None = None,
    position_noise: ArrayLike = 0.0,
    velocity_noise: ArrayLike = 0.0,
    disturbance: ArrayLike | Callable[[float], ArrayLike] | None = None,
    seed: int | None = 0,
    elastic_joints: bool = True,
    qm0: ArrayLike | None = None,
    qmd0: ArrayLike | None = None,
    predict_model_error: bool = True,
    progress: bool | None = None,
) -> SimulationResult:
    """Run the closed loop ``controller -> ZOH -> plant`` and measure it.

    Args:
        plant: the simulated robot (direct dynamics :func:`robot_dynamics.aba`, friction and
            rotor inertia included; its drive train maps actuator efforts to joint torques;
            elastic joints when its drive train has them).
        controller: a controller built on its own model (may differ from ``plant``).
        reference: trajectory (``sample(t)``), callable, :class:`Reference`,
            :class:`TaskReference` or goal (nq,); see :func:`reference_function`.
        duration: simulated time [s]; default the trajectory's duration + ``settle``.
        q0, qd0: initial state (nq,); default the reference at t = 0 (at rest for task refs:
            q0 is then required).
        control_rate: controller rate [Hz] (> 0); the ZOH period is 1 / rate.
        integrator: one of :data:`INTEGRATORS`.
        substeps: RK4 steps per controller period (>= 1).
        rtol, atol: tolerances of the adaptive solvers.
        friction, gravity: plant options as in :func:`robot_dynamics.aba`.
        coulomb_smoothing: velocity scale v_s [rad/s] of the plant's Coulomb friction
            ``Fc tanh(qd / v_s)`` instead of ``Fc sign(qd)``: with the sign, a fixed-step
            integration never comes to rest (the force flips every step) and chatters; 0 keeps
            the sign (the core's exact model, the default).
        position_noise, velocity_noise: std of white Gaussian measurement noise [rad, rad/s].
        disturbance: joint torque added to the plant, (nq,) constant or ``f(t) -> (nq,)``,
            sampled at the ticks and held.
        seed: random seed of the noise.
        elastic_joints: when the plant's drive train has an ``elastic`` section, simulate the
            doubled state of Khalil [7.35] (rotor positions qm; the actuator torque drives the
            rotors, the springs drive the links, a disturbance adds to the motor torque).
        qm0, qmd0: initial rotor state (default: the springs' static deflection, at rest).
        predict_model_error: for computed torque on a different model, compute Khalil [9.28]'s
            predicted error on the simulated motion.
        progress: show a progress bar (default: when the run is expected to take over 1 s).

    Returns:
        :class:`SimulationResult`.

    Raises:
        InputError: bad options (the loop itself never raises: a diverging plant stops the run
            with ``metrics.diverged``).
    """
    n = plant.nq
    if controller.model.nq != n or tuple(controller.model.joint_names) != tuple(plant.joint_names):
        raise InputError(
            f"controller joints {list(controller.model.joint_names)} do not match the plant's {list(plant.joint_names)}"
        )
    if integrator not in INTEGRATORS:
        raise InputError(f"integrator: expected one of {list(INTEGRATORS)}, got {integrator!r}")
    if not (isinstance(control_rate, (int, float)) and math.isfinite(control_rate) and control_rate > 0):
        raise InputError(f"control_rate: expected a positive number [Hz], got {control_rate!r}")
    if int(substeps) != substeps or substeps < 1:
        raise InputError(f"substeps: expected an integer >= 1, got {substeps!r}")
    ref_f, ref_duration, ref_batch = reference_function(reference, n)
    if duration is None:
        if ref_duration is None:
            raise InputError("duration: required when the reference has no duration")
        duration = ref_duration + settle
    if not (math.isfinite(duration) and duration > 0):
        raise InputError(f"duration: expected a positive number of seconds, got {duration!r}")
    pos_std = _noise_vector(position_noise, n, "position_noise")
    vel_std = _noise_vector(velocity_noise, n, "velocity_noise")
    rng = np.random.default_rng(seed)
    if disturbance is None:
        dist_f: Callable[[float], Array] = lambda t: np.zeros(n)  # noqa: E731
    elif callable(disturbance):
        dist_f = lambda t: np.asarray(disturbance(t), dtype=float).reshape(n)  # noqa: E731
    else:
        d_const = np.asarray(disturbance, dtype=float)
        if d_const.shape != (n,) or not np.all(np.isfinite(d_const)):
            raise InputError(f"disturbance: expected {n} finite torques or a function of t, got {disturbance!r}")
        dist_f = lambda t: d_const  # noqa: E731

    ticks = duration * control_rate
    if not ticks <= MAX_TICKS:
        raise InputError(
            f"duration * control_rate: {ticks:.3g} ticks, more than {MAX_TICKS:,}; shorten the duration or lower the rate"
        )
    dt = 1.0 / float(control_rate)
    K = int(round(ticks)) + 1
    t_grid = np.arange(K) * dt

    # References: vectorised when the trajectory allows it.
    task = False
    batch_out = ref_batch(t_grid) if ref_batch is not None else None
    if batch_out is not None and not isinstance(batch_out, list):
        Qr, Qdr, Qddr = (np.asarray(a, float).reshape(K, n) for a in batch_out)
        refs: list[Any] | None = None
    else:
        refs = batch_out if batch_out is not None else [ref_f(float(tk)) for tk in t_grid]
        task = isinstance(refs[0], TaskReference)
        if task:
            Qr = Qdr = Qddr = np.full((K, n), np.nan)
        else:
            # Keep what the callable returned for the controller (a bad reference is the
            # controller's FAULT to report, not the simulator's); NaN rows where unusable.
            Qr, Qdr, Qddr = (np.full((K, n), np.nan) for _ in range(3))
            for k, r in enumerate(refs):
                try:
                    rr = as_joint_reference(r, n)
                except InputError:
                    continue
                Qr[k], Qdr[k], Qddr[k] = rr.q, rr.qd, rr.qdd

    if q0 is None:
        if task:
            raise InputError("q0: required with a task-space reference")
        q = Qr[0].copy()
    else:
        q = np.asarray(q0, dtype=float).reshape(-1).copy()
    qd = np.zeros(n) if qd0 is None else np.asarray(qd0, dtype=float).reshape(-1).copy()
    for what, v in (("q0", q), ("qd0", qd)):
        if v.shape != (n,) or not np.all(np.isfinite(v)):
            raise InputError(f"{what}: expected {n} finite values ordered as {list(plant.joint_names)}")

    if not (math.isfinite(coulomb_smoothing) and coulomb_smoothing >= 0):
        raise InputError(f"coulomb_smoothing: expected a velocity >= 0 [rad/s], got {coulomb_smoothing!r}")
    smooth = friction and coulomb_smoothing > 0

    def accel(qs: Array, qds: Array, tau_j: Array) -> Array:
        if smooth:
            # Khalil [7.26] with sign(qd) regularised to tanh(qd / v_s) (plant only).
            tau_f = joint_friction(plant, qds, smoothing=coulomb_smoothing)
            return aba(plant, qs, qds, tau_j - tau_f, gravity=gravity, friction=False)
        return aba(plant, qs, qds, tau_j, gravity=gravity, friction=friction)

    # Elastic joints (Khalil [7.35]): the state doubles with the rotor positions qm.
    el = getattr(plant.drivetrain, "elastic", None) if plant.drivetrain is not None else None
    elastic = el is not None and elastic_joints
    if elastic:
        from .drivetrain import elastic_aba

        # rotors start where the springs hold the links still: k (qm - q) = A qdd + H at rest
        from .dynamics import gravity_torques

        stiff = np.asarray(el.stiffness, float)
        if np.any(stiff <= 0):
            raise InputError("elastic plant: every joint stiffness must be > 0 (set elastic_joints=False for a rigid plant)")
        qm = q + np.asarray(gravity_torques(plant, q, gravity), float) / stiff if qm0 is None else np.asarray(qm0, float).reshape(n)
        x = np.concatenate([q, qd, qm, np.zeros(n) if qmd0 is None else np.asarray(qmd0, float).reshape(n)])

        def f(xs: Array, u: Array) -> tuple[Array, Array]:
            qdd_, qmdd_ = elastic_aba(plant, xs[:n], xs[n : 2 * n], xs[2 * n : 3 * n], xs[3 * n :], u, gravity=gravity, friction=friction)
            return np.concatenate([xs[n : 2 * n], qdd_, xs[3 * n :], qmdd_]), qdd_
    else:
        x = np.concatenate([q, qd])

        def f(xs: Array, u: Array) -> tuple[Array, Array]:
            qdd_ = accel(xs[:n], xs[n:], u)
            return np.concatenate([xs[n:], qdd_]), qdd_

    solve_ivp: Any = None
    if integrator != "rk4":
        from scipy.integrate import solve_ivp as _solve_ivp

        solve_ivp = _solve_ivp

    X = np.empty((K, n))
    XD = np.empty((K, n))
    XDD = np.full((K, n), np.nan)
    TAU = np.zeros((K, n))
    EFF = np.zeros((K, n))
    DIST = np.zeros((K, n))
    STATUS = np.zeros(K, dtype=int)
    QM = np.full((K, n), np.nan)
    if elastic:
        QM[0] = x[2 * n : 3 * n]
    messages: list[tuple[float, str]] = []
    last_msg = ""
    diverged = False
    controller.reset()

    if progress is None:
        progress = K * (substeps * 4 + 2) * 3e-4 > 1.0  # rough cost model of one tick
    bar = None
    if progress:
        try:
            from ._progress import progress_bar

            bar = progress_bar(K, unit="tick", desc=f"simulate {plant.name}", leave=False, mininterval=0.2)
        except ImportError:  # pragma: no cover - tqdm is a dependency; degrade quietly
            bar = None

    k_end = K
    noisy_q, noisy_qd = bool(np.any(pos_std)), bool(np.any(vel_std))
    for k in range(K):
        tk = float(t_grid[k])
        X[k], XD[k] = q, qd
        q_meas = q + rng.normal(0.0, 1.0, n) * pos_std if noisy_q else q
        qd_meas = qd + rng.normal(0.0, 1.0, n) * vel_std if noisy_qd else qd
        ref_k = refs[k] if refs is not None else Reference(Qr[k], Qdr[k], Qddr[k])
        out = controller.update(tk, q_meas, qd_meas, ref_k)
        if out.message != last_msg:
            if out.message:
                messages.append((tk, out.message))
            last_msg = out.message
        STATUS[k] = int(out.status)
        EFF[k] = out.effort
        d = dist_f(tk)
        DIST[k] = d
        try:
            tau_j = actuator_to_joint(plant, q, out.effort)  # the plant's own drive train
            TAU[k] = tau_j
            u = tau_j + d
            k1, XDD[k] = f(x, u)
            if k == K - 1:
                break
            if integrator == "rk4":
                h = dt / substeps
                for s_ in range(substeps):
                    x = rk4_step(lambda xs: f(xs, u)[0], x, h, k1 if s_ == 0 else None)
            else:
                assert solve_ivp is not None
                sol = solve_ivp(lambda _t, xs: f(xs, u)[0], (tk, tk + dt), x, method=integrator, rtol=rtol, atol=atol)
                if not sol.success:
                    raise FloatingPointError(sol.message)
                x = sol.y[:, -1].copy()
            if not max(map(abs, x.tolist())) < DIVERGED:  # NaN compares false too
                raise FloatingPointError("non-finite plant state")
            q, qd = x[:n], x[n : 2 * n]
            if elastic:
                QM[k + 1] = x[2 * n : 3 * n]
        except Exception as exc:  # noqa: BLE001 - stop the run, report it
            diverged = True
            messages.append((tk, f"plant integration failed at t = {tk:.4f} s: {exc}"))
            k_end = k + 1
            break
        finally:
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()

    sl = slice(0, k_end)
    t_out = t_grid[sl]
    X, XD, XDD, TAU, EFF, DIST, STATUS, QM = X[sl], XD[sl], XDD[sl], TAU[sl], EFF[sl], DIST[sl], STATUS[sl], QM[sl]
    Qr, Qdr, Qddr = Qr[sl], Qdr[sl], Qddr[sl]
    if np.any(np.isnan(XDD[-1])):
        XDD[-1] = XDD[-2] if len(XDD) > 1 else 0.0

    x = x_ref = pose_ref = None
    frame = None
    task_rms = task_max = None
    if task and refs is not None:
        frame = getattr(controller, "frame", None) or plant.end_effector
        x = frame_pose(plant, X, frame)[:, :3, 3]
        pose_ref = np.array([np.asarray(r.pose, float) for r in refs[:k_end]])
        x_ref = pose_ref[:, :3, 3]
        ex = np.linalg.norm(x_ref - x, axis=1)
        task_rms = float(np.sqrt(np.mean(ex**2)))
        task_max = float(np.max(ex))

    err = Qr - X
    # Actuator work: the torque is held over each tick, so int tau . qd dt = sum tau_k . (q_k+1 - q_k).
    energy_j = np.sum(TAU[:-1] * np.diff(X, axis=0), axis=0) if len(t_out) > 1 else np.zeros(n)
    pred_rms = pred_max = None
    if predict_model_error and not task and not elastic and controller.model is not plant and hasattr(controller, "kp") and getattr(controller, "scheme", None) == "tracking":
        pred = _predicted_error(plant, controller, X, XD, XDD, t_out, err[0], Qdr[0] - XD[0])
        if pred is not None:
            pred_rms = np.sqrt(np.mean(pred**2, axis=0))
            pred_max = np.max(np.abs(pred), axis=0)
    metrics = SimulationMetrics(
        rms_error=np.sqrt(np.nanmean(err**2, axis=0)) if not task else np.full(n, np.nan),
        max_error=np.nanmax(np.abs(err), axis=0) if not task else np.full(n, np.nan),
        final_error=err[-1],
        peak_torque=np.max(np.abs(TAU), axis=0),
        peak_effort=np.max(np.abs(EFF), axis=0),
        energy=float(np.sum(energy_j)),
        energy_per_joint=np.asarray(energy_j),
        saturated_fraction=float(np.mean((STATUS & int(Status.SATURATED)) != 0)),
        fault_count=int(np.sum((STATUS & int(Status.FAULT)) != 0)),
        singular_count=int(np.sum((STATUS & int(Status.SINGULAR)) != 0)),
        task_rms_error=task_rms,
        task_max_error=task_max,
        predicted_rms_error=pred_rms,
        predicted_max_error=pred_max,
        diverged=diverged,
    )
    return SimulationResult(
        joint_names=tuple(plant.joint_names),
        robot=plant.name,
        controller=getattr(controller, "name", type(controller).__name__),
        t=t_out,
        q=X,
        qd=XD,
        qdd=XDD,
        q_ref=Qr,
        qd_ref=Qdr,
        qdd_ref=Qddr,
        tau=TAU,
        effort=EFF,
        disturbance=DIST,
        status=STATUS,
        control_rate=float(control_rate),
        integrator=integrator,
        metrics=metrics,
        x=x,
        x_ref=x_ref,
        pose_ref=pose_ref,
        qm=QM if elastic else None,
        frame=frame,
        messages=messages,
    )


def _predicted_error(
    plant: RobotModel, controller: Any, q: Array, qd: Array, qdd: Array, t: Array, e0: Array, ed0: Array
) -> Array | None:
    """Integrate Khalil [9.28] ``e'' + Kd e' + Kp e = A^^-1[(A - A^) qdd + H - H^]`` on the run."""
    from .control.computed_torque import model_error_excitation

    if getattr(controller, "predictive", False):
        return None
    try:
        eta = model_error_excitation(plant, controller.model, q, qd, qdd)
    except Exception:  # noqa: BLE001 - a prediction is optional
        return None
    kp, kd = controller.kp, controller.kd
    n = q.shape[1]
    e = np.empty_like(q)
    x = np.concatenate([e0, ed0])
    e[0] = e0
    # Exact discretisation of the linear error system with eta held over each tick.
    from scipy.linalg import expm

    h = float(t[1] - t[0]) if len(t) > 1 else 0.0
    A = np.zeros((2 * n, 2 * n))
    A[:n, n:] = np.eye(n)
    A[n:, :n] = -np.diag(kp)
    A[n:, n:] = -np.diag(kd)
    B = np.zeros((2 * n, n))
    B[n:] = np.eye(n)
    M = np.zeros((3 * n, 3 * n))
    M[: 2 * n, : 2 * n] = A * h
    M[: 2 * n, 2 * n :] = B * h
    Phi = expm(M)
    Ad, Bd = Phi[: 2 * n, : 2 * n], Phi[: 2 * n, 2 * n :]
    for k in range(1, len(t)):
        x = Ad @ x + Bd @ eta[k - 1]
        e[k] = x[:n]
    return e
