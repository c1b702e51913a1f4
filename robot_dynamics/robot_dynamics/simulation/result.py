"""What a simulation records: the log of its ticks, the result of a run and its metrics."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..control.base import Status
from ..engine import engine
from ..kinematics import frame_pose
from ..model.robot_model import RobotModel

__all__ = ["SimulationLog", "SimulationMetrics", "SimulationResult", "make_result"]

Array = NDArray[np.float64]


@dataclass
class TickArrays:
    """The arrays of every tick that a simulation's log and its result share: t (K,) [s]; q, qd, qdd
    (K, nq); the joint reference q_ref, qd_ref, qdd_ref (K, nq); tau, effort, disturbance (K, nq);
    status (K,) int."""

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


_TICK_NAMES = tuple(f.name for f in fields(TickArrays))


@dataclass
class SimulationLog(TickArrays):
    """Every tick of a simulation, allocated for its K ticks up front; rows [0, ticks) are written.

    Attributes:
        t: (K,) [s]. q, qd, qdd: plant state and acceleration at each tick, (K, nq).
        q_ref, qd_ref, qdd_ref: joint reference (NaN where not a joint reference), (K, nq).
        tau: joint torques of the actuators (held over the tick), (K, nq). effort: actuator
            commands, (K, nq). disturbance: (K, nq). status: :class:`Status` flags, (K,) int.
        qm: rotor positions of an elastic plant (NaN otherwise), (K, nq).
        messages: (t, text) of the controller's and the plant's messages, each once when it changes.
        ticks: rows written.
    """

    qm: Array
    messages: list[tuple[float, str]] = field(default_factory=list)
    ticks: int = 0

    @classmethod
    def empty(cls, t: Array, n: int, q_ref: Array, qd_ref: Array, qdd_ref: Array) -> SimulationLog:
        """A log for the ticks t (K,) of an nq = n robot and the sampled reference."""
        K = t.size
        return cls(t=t, q=np.empty((K, n)), qd=np.empty((K, n)), qdd=np.full((K, n), np.nan), q_ref=q_ref, qd_ref=qd_ref,
                   qdd_ref=qdd_ref, tau=np.zeros((K, n)), effort=np.zeros((K, n)), disturbance=np.zeros((K, n)),
                   status=np.zeros(K, dtype=np.int64), qm=np.full((K, n), np.nan))


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


@dataclass
class SimulationResult(TickArrays):
    """Every controller tick of a run; arrays have K = number of ticks rows (the tick arrays are
    read-only views of the simulation's log: ``np.array(result.q)`` gives a copy to change).

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
    control_rate: float
    integrator: str
    metrics: SimulationMetrics
    messages: list[tuple[float, str]] = field(default_factory=list)
    # a task-space run's frame and its motion, an elastic plant's rotors (None otherwise)
    frame: str | None = None
    x: Array | None = None
    x_ref: Array | None = None
    pose_ref: Array | None = None
    qm: Array | None = None

    @property
    def error(self) -> Array:
        """Joint tracking error e = q^d - q, (K, nq)."""
        return self.q_ref - self.q


@dataclass(frozen=True)
class RunContext:
    """What the result of a run needs besides its log."""

    plant: RobotModel
    controller: Any
    control_rate: float
    integrator: str
    task_items: list[Any] | None  # the task references per tick (task-space runs), else None
    elastic: bool
    predict_model_error: bool
    diverged: bool


def _rows(a: Array, k_end: int) -> Array:
    """Rows [0, k_end) of a log's array, read-only: the result shares them with the log, whose
    written rows never change (a reset gives the simulation a new log once a result holds these)."""
    view = a[:k_end]
    view.flags.writeable = False
    return view


def make_result(log: SimulationLog, ctx: RunContext) -> SimulationResult:
    """The result of the ticks [0, log.ticks) of a log: its rows (read-only views), the metrics."""
    k_end = log.ticks
    rows = {name: _rows(getattr(log, name), k_end) for name in _TICK_NAMES + ("qm",)}
    qdd = rows["qdd"]
    if k_end and np.any(np.isnan(qdd[-1])):  # a last tick without its acceleration: the one before
        qdd = rows["qdd"] = qdd.copy()
        qdd[-1] = qdd[-2] if len(qdd) > 1 else 0.0
    task = _task_part(log, ctx, rows["q"])
    metrics = _metrics(rows, ctx, task)
    plant = ctx.plant
    return SimulationResult(
        joint_names=tuple(plant.joint_names), robot=plant.name,
        controller=getattr(ctx.controller, "name", type(ctx.controller).__name__),
        **{name: rows[name] for name in _TICK_NAMES}, control_rate=float(ctx.control_rate), integrator=ctx.integrator, metrics=metrics,
        x=task.get("x"), x_ref=task.get("x_ref"), pose_ref=task.get("pose_ref"), qm=rows["qm"] if ctx.elastic else None,
        frame=task.get("frame"), messages=list(log.messages),
    )


def _task_part(log: SimulationLog, ctx: RunContext, X: Array) -> dict[str, Any]:
    """The controlled frame's position, its reference and their error (task-space runs)."""
    if ctx.task_items is None:
        return {}
    frame = getattr(ctx.controller, "frame", None) or ctx.plant.end_effector
    x = frame_pose(ctx.plant, X, frame)[:, :3, 3]
    pose_ref = np.array([np.asarray(r.pose, float) for r in ctx.task_items[: log.ticks]])
    x_ref = pose_ref[:, :3, 3]
    ex = np.linalg.norm(x_ref - x, axis=1)
    return {"frame": frame, "x": x, "x_ref": x_ref, "pose_ref": pose_ref,
            "task_rms": float(np.sqrt(np.mean(ex**2))), "task_max": float(np.max(ex))}


def _per_joint_reductions(rows: dict[str, Array], is_task: bool) -> dict[str, Array]:
    """The per-joint reductions of a run's (K, n) arrays: rms, max and final error, peak torque
    and effort, energy per joint. Each array is reduced as (n, K) rows in one (n, K) buffer:
    numpy reduces a contiguous row several times faster than a column, and a run's metrics then
    touch two new arrays, not eight (new pages cost more than the arithmetic here)."""
    X, K, n = rows["q"], *rows["q"].shape
    errT = np.subtract(rows["q_ref"].T, X.T, order="C")  # e = q^d - q, (n, K)
    out = {"final_error": errT[:, -1].copy(), "e0": errT[:, 0].copy()}
    buf = np.empty((n, K))
    if is_task:  # no joint reference
        out["rms_error"] = out["max_error"] = np.full(n, np.nan)
    else:
        out["max_error"] = np.nanmax(np.abs(errT, out=buf), axis=1)
        sq = np.multiply(errT, errT, out=errT)
        tot = sq.sum(axis=1)  # nanmean's sum when no tick lacks its reference
        out["rms_error"] = np.sqrt(tot / K) if not np.isnan(tot).any() else np.sqrt(np.nanmean(sq, axis=1))
    for name, key in (("tau", "peak_torque"), ("effort", "peak_effort")):
        out[key] = np.max(np.abs(rows[name].T, out=buf), axis=1)
    # Actuator work: the torque is held over each tick, so int tau . qd dt = sum tau_k . (q_k+1 - q_k).
    dq = np.subtract(X[1:], X[:-1], out=buf.reshape(-1)[: (K - 1) * n].reshape(K - 1, n))
    out["energy_per_joint"] = np.einsum("kj,kj->j", rows["tau"][:-1], dq)
    return out


def _metrics(rows: dict[str, Array], ctx: RunContext, task: dict[str, Any]) -> SimulationMetrics:
    X, STATUS = rows["q"], rows["status"]
    is_task = ctx.task_items is not None
    joint = _per_joint_reductions(rows, is_task)
    pred_rms = pred_max = None
    controller = ctx.controller
    if (ctx.predict_model_error and not is_task and not ctx.elastic and controller.model is not ctx.plant
            and hasattr(controller, "kp") and getattr(controller, "scheme", None) == "tracking"):
        pred = _predicted_error(ctx.plant, controller, X, rows["qd"], rows["qdd"], rows["t"], joint["e0"],
                                rows["qd_ref"][0] - rows["qd"][0])
        if pred is not None:
            pred_rms = np.sqrt(np.mean(pred**2, axis=0))
            pred_max = np.max(np.abs(pred), axis=0)
    return SimulationMetrics(
        rms_error=joint["rms_error"],
        max_error=joint["max_error"],
        final_error=joint["final_error"],
        peak_torque=joint["peak_torque"],
        peak_effort=joint["peak_effort"],
        energy=float(np.sum(joint["energy_per_joint"])),
        energy_per_joint=joint["energy_per_joint"],
        saturated_fraction=float(np.count_nonzero(STATUS & int(Status.SATURATED)) / len(STATUS)),
        fault_count=int(np.count_nonzero(STATUS & int(Status.FAULT))),
        singular_count=int(np.count_nonzero(STATUS & int(Status.SINGULAR))),
        task_rms_error=task.get("task_rms"),
        task_max_error=task.get("task_max"),
        predicted_rms_error=pred_rms,
        predicted_max_error=pred_max,
        diverged=ctx.diverged,
    )


def _predicted_error(
    plant: RobotModel, controller: Any, q: Array, qd: Array, qdd: Array, t: Array, e0: Array, ed0: Array
) -> Array | None:
    """Integrate Khalil [9.28] ``e'' + Kd e' + Kp e = A^^-1[(A - A^) qdd + H - H^]`` on the run."""
    from ..control.computed_torque import model_error_excitation

    if getattr(controller, "predictive", False):
        return None
    try:
        eta = model_error_excitation(plant, controller.model, q, qd, qdd)
    except Exception:  # noqa: BLE001 - a prediction is optional
        return None
    h = float(t[1] - t[0]) if len(t) > 1 else 0.0
    Ad, Bd = _error_system(np.asarray(controller.kp, float), np.asarray(controller.kd, float), h)
    e = np.empty_like(q)
    # x_k = Ad x_k-1 + Bd eta_k-1 from x_0 = (e0, ed0), in the engine (a loop over the ticks)
    engine().linear_recurrence(Ad, Bd, np.concatenate([e0, ed0]), np.ascontiguousarray(eta, dtype=float), e)
    return e


_ERROR_SYSTEMS: dict[tuple[bytes, bytes, float], tuple[Array, Array]] = {}


def _error_system(kp: Array, kd: Array, h: float) -> tuple[Array, Array]:
    """(Ad, Bd): the exact discretisation over h of e'' + Kd e' + Kp e = eta with eta held, state
    (e, e'); kept per (Kp, Kd, h), which every point of a study shares."""
    key = (kp.tobytes(), kd.tobytes(), h)
    found = _ERROR_SYSTEMS.get(key)
    if found is not None:
        return found
    from scipy.linalg import expm

    n = kp.size
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
    found = np.ascontiguousarray(Phi[: 2 * n, : 2 * n]), np.ascontiguousarray(Phi[: 2 * n, 2 * n :])
    for a in found:
        a.setflags(write=False)
    if len(_ERROR_SYSTEMS) >= 64:
        _ERROR_SYSTEMS.clear()
    _ERROR_SYSTEMS[key] = found
    return found
