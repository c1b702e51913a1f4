"""One point of a study: its plant, its controller, its run, its row of metrics.

Runs inside a Dask worker (or the calling process): the robot is loaded once per process and
kept (:func:`~robot_dynamics.study.description.base_model`), every point then derives its plant and controller models from it.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..engine import get_num_threads, set_num_threads
from ..model.robot_model import RobotModel
from .description import Study, base_model

__all__ = ["base_model", "points", "evaluate_point", "run_chunk", "METRICS"]

#: Columns of a row besides the point and the axes.
METRICS = (
    "rms_error",
    "max_error",
    "final_error",
    "predicted_rms_error",
    "peak_torque",
    "rms_torque",
    "saturated_fraction",
    "energy",
    "fault_count",
    "diverged",
    "status",
    "message",
)

def points(study: Study) -> list[dict[str, float]]:
    """Every point of the study, in order: the grid axes' product, times ``samples`` draws.

    Each point holds ``point`` (its index), ``sample`` and one value per axis. The draw of
    random axis k for sample s uses a generator seeded by (seed, s, k): the points do not
    depend on how the study is executed.
    """
    import itertools

    grids = [a for a in study.axes if not a.random]
    out: list[dict[str, float]] = []
    for combo in itertools.product(*[a.values for a in grids]):
        for s in range(study.samples):
            p: dict[str, float] = {"point": float(len(out)), "sample": float(s)}
            g = iter(combo)
            for k, a in enumerate(study.axes):
                p[a.name] = float(next(g)) if not a.random else a.draw(np.random.default_rng([study.seed, s, k]))
            out.append(p)
    return out


def _with_point_mass(model: RobotModel, link: str, mass: float) -> RobotModel:
    """The model with a point mass at the origin of ``link`` (a payload), lumped into its body."""
    if mass == 0.0:
        return model
    k = model.frame_index(link)
    b = int(model.frame_body[k])
    if b < 0:
        return model  # carried by the base
    p = model.frame_placement[k, :3, 3]
    m0, c0, I0 = model.mass[b], model.com[b], model.inertia_com[b]
    m = m0 + mass
    c = (m0 * c0 + mass * p) / m

    def shift(mm: float, d: np.ndarray) -> np.ndarray:  # parallel axis: m (|d|^2 1 - d d^T)
        return mm * (float(d @ d) * np.eye(3) - np.outer(d, d))

    masses, coms, inertias = model.mass.copy(), model.com.copy(), model.inertia_com.copy()
    masses[b], coms[b], inertias[b] = m, c, I0 + shift(m0, c0 - c) + shift(mass, p - c)
    return model.replace(mass=masses, com=coms, inertia_com=inertias)


def _models(study: Study, p: dict[str, float]) -> tuple[RobotModel, RobotModel]:
    """(plant, controller model) of a point."""
    model = base_model(study)
    plant = model
    s = p.get("gear_ratio_scale", 1.0)
    if s != 1.0:
        plant = plant.replace(rotor_inertia=model.rotor_inertia * s**2, effort_limit=model.effort_limit * s)
    ctrl = plant
    f = p.get("friction_scale", 1.0)
    if f != 1.0:
        plant = plant.replace(
            viscous=plant.viscous * f,
            coulomb=plant.coulomb * f,
            static_friction=None if plant.static_friction is None else plant.static_friction * f,
        )
    for a in study.axes:
        if a.name == "payload":
            plant = _with_point_mass(plant, str(a.link), p["payload"])
    e = p.get("mass_error", 0.0)
    if e != 0.0:
        ctrl = ctrl.replace(mass=ctrl.mass * (1.0 + e), inertia_com=ctrl.inertia_com * (1.0 + e))
    return plant, ctrl


def _controller(study: Study, model: RobotModel, p: dict[str, float]) -> Any:
    from ..control import ComputedTorque, JointPID, PDGravity

    kind = study.controller["type"]
    omega = p.get("omega", study.controller["omega"])
    xi = p.get("xi", study.controller["xi"])
    if kind == "computed_torque":
        return ComputedTorque(model, omega=omega, xi=xi, friction_velocity="desired")
    if kind == "pd_gravity":
        return PDGravity.from_bandwidth(model, omega, xi)
    return JointPID.from_bandwidth(model, omega)


def _move(study: Study, model: RobotModel, p: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    lo = np.where(np.isfinite(model.lower), model.lower, -np.inf)
    hi = np.where(np.isfinite(model.upper), model.upper, np.inf)
    start = np.clip(np.zeros(model.nq) if study.motion["start"] is None else np.asarray(study.motion["start"], float), lo, hi)
    if study.motion["goal"] is not None and "goal_delta" not in p:
        return start, np.clip(np.asarray(study.motion["goal"], float), lo, hi)
    prismatic = np.array([model.joint_type[model.body_joint_names.index(j)] == "prismatic" for j in model.joint_names])
    step = np.full(model.nq, p["goal_delta"]) if "goal_delta" in p else np.where(prismatic, 0.1, 0.5)
    base = start if study.motion["goal"] is None else np.asarray(study.motion["goal"], float) - step
    return start, np.clip(base + step, lo, hi)


def evaluate_point(study: Study, p: dict[str, float]) -> dict[str, Any]:
    """Simulate one point; its row: the point, the axis values and :data:`METRICS`.

    Never raises: a point whose run fails has status ``failed`` and the reason in ``message``.
    """
    from ..simulation import Integration, Logging, Noise, PlantOptions, Simulation, SimulationOptions
    from ..trajectory import plan

    row: dict[str, Any] = dict(p)
    nan = float("nan")
    row.update({k: nan for k in METRICS})
    row.update(status="failed", message="", diverged=False, fault_count=0)
    try:
        plant, ctrl_model = _models(study, p)
        controller = _controller(study, ctrl_model, p)
        start, goal = _move(study, plant, p)
        traj = plan(study.motion["profile"], start, goal, duration=study.motion["duration"])
        seed = int(p["seed"]) if "seed" in p else int(np.random.default_rng([study.seed, int(p["point"])]).integers(2**31))
        sigma = p.get("disturbance", 0.0)
        disturbance = np.random.default_rng([seed, 1]).normal(0.0, sigma, plant.nq) if sigma > 0 else None
        sim = study.simulation
        options = SimulationOptions(
            integration=Integration(rate=sim["control_rate"], integrator=sim["integrator"], substeps=sim["substeps"]),
            noise=Noise(position=p.get("position_noise", 0.0), velocity=p.get("velocity_noise", 0.0),
                        disturbance=disturbance, seed=seed),
            plant=PlantOptions(coulomb_smoothing=sim["coulomb_smoothing"]),
            logging=Logging(progress=False),
        )
        duration = study.motion["duration"] + study.motion["settle"]
        result = Simulation(plant, controller, traj, duration, options).run()
        m = result.metrics
        row.update(
            rms_error=float(np.sqrt(np.mean(m.rms_error**2))),
            max_error=float(np.max(m.max_error)),
            final_error=float(np.linalg.norm(m.final_error)),
            predicted_rms_error=nan if m.predicted_rms_error is None else float(np.sqrt(np.mean(m.predicted_rms_error**2))),
            peak_torque=float(np.max(m.peak_torque)),
            rms_torque=float(np.sqrt(np.mean(result.tau**2))),
            saturated_fraction=float(m.saturated_fraction),
            energy=float(m.energy),
            fault_count=int(m.fault_count),
            diverged=bool(m.diverged),
            status="diverged" if m.diverged else "ok",
            message=result.messages[-1][1] if m.diverged and result.messages else "",
        )
    except Exception as exc:  # noqa: BLE001 - one bad point is a row, not a dead study
        row["message"] = f"{type(exc).__name__}: {exc}"
    return row


def run_chunk(study: dict[str, Any], chunk: list[dict[str, float]]) -> tuple[list[dict[str, Any]], float]:
    """Evaluate a chunk of points (the unit of work of a Dask task): (rows, seconds spent).

    The engine's batches run in the calling thread meanwhile: a study runs a worker per core, and
    OpenMP threads of each worker would compete with the other workers for the cores (2 workers
    on 2 cores: 548 points/s with them, 577 without, bench/bench_sweep.py).
    """
    st = Study.from_dict(study)
    threads = get_num_threads()
    set_num_threads(1)
    t0 = time.perf_counter()
    try:
        rows = [evaluate_point(st, p) for p in chunk]
    finally:
        set_num_threads(threads)
    return rows, time.perf_counter() - t0
