"""The bundled simulation cases whose results are pinned (test_simulation_golden.py).

Each case is a function returning ``simulate(...)``'s result; the digest keeps, per array of
the result, its first, middle and last rows and the per-column sums of |x| at full precision.
``python -m test.simulation_cases`` (from robot_dynamics/) rewrites the stored digests: only
when a change of the results is intended and explained.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

import robot_dynamics as rd
from robot_dynamics.control import ComputedTorque, JointPID, Reference, TaskComputedTorque, build_controller
from robot_dynamics.simulation import simulate
from robot_dynamics.trajectory import cartesian_motion, plan

GOLDEN = Path(__file__).parent / "data" / "simulation_golden.json"
ARRAYS = ("t", "q", "qd", "qdd", "q_ref", "qd_ref", "qdd_ref", "tau", "effort", "disturbance", "status", "x", "x_ref", "qm")
METRICS = ("rms_error", "max_error", "final_error", "peak_torque", "peak_effort", "energy", "energy_per_joint",
           "saturated_fraction", "fault_count", "singular_count", "task_rms_error", "task_max_error",
           "predicted_rms_error", "predicted_max_error", "diverged")


def main_job():
    """The README's main job (``robot-dynamics simulate``): PUMA 560, computed torque with the
    friction feed-forward, quintic move of 0.5 rad per joint in 1 s + 0.5 s, 1 kHz, RK4."""
    m = rd.load_robot("puma560")
    start = np.clip(np.zeros(m.nq), m.lower, m.upper)
    goal = np.where(start + 0.5 <= m.upper, start + 0.5, np.maximum(start - 0.5, m.lower))
    ctrl = build_controller(m, "computed_torque", omega=20.0, xi=1.0, scheme="tracking", predictive=False,
                            friction_velocity="desired")
    return simulate(m, ctrl, plan("quintic", start, goal, duration=1.0), duration=1.5, q0=start, control_rate=1000.0,
                    integrator="rk4", progress=False)


def geared():
    m = rd.load_robot("three_dof_geared")
    move = plan("quintic", np.zeros(3), [0.3, -0.2, 0.4], duration=0.4)
    return simulate(m, ComputedTorque(m, omega=30.0), move, duration=0.5, progress=False)


def mass_error():
    """Computed torque on a model 20 % heavier: Khalil [9.28]'s prediction, position scheme too."""
    m = rd.load_robot("puma560")
    est = m.replace(mass=m.mass * 1.2, inertia_com=m.inertia_com * 1.2)
    move = plan("quintic", np.zeros(6), np.full(6, 0.4), duration=0.3)
    return simulate(m, ComputedTorque(est, omega=25.0), move, duration=0.35, substeps=2, progress=False)


def saturated():
    """Effort limits that clip: status and messages."""
    m = rd.load_robot("planar2")
    move = plan("quintic", [0.0, 0.0], [1.0, -0.8], duration=0.2)
    ctrl = ComputedTorque(m, omega=40.0, effort_limit=[30.0, 8.0], scheme="position")
    return simulate(m, ctrl, move, duration=0.3, coulomb_smoothing=0.05, gravity=[0.0, 0.0, -9.0], progress=False)


def elastic():
    planar2 = rd.load_robot("planar2")
    spec = {
        "shoulder": {"stiffness": 2e3, "motor_inertia": 0.05, "motor_viscous": 0.5},
        "elbow": {"stiffness": 1e3, "motor_inertia": 0.02, "motor_viscous": 0.3},
    }
    me = rd.load_urdf(planar2.description, drivetrain={"elastic": spec})
    rigid = planar2.replace(rotor_inertia=planar2.rotor_inertia + [0.05, 0.02], viscous=planar2.viscous + [0.5, 0.3])
    move = plan("quintic", [0.0, 0.0], [0.3, 0.3], duration=0.2)
    return simulate(me, ComputedTorque(rigid, omega=10.0), move, duration=0.25, substeps=2, progress=False)


def noisy():
    """Measurement noise on q and qd, a disturbance function of t, a seed; a PID."""
    m = rd.load_robot("planar2")
    goal = np.array([0.3, 0.2])
    pid = JointPID(m, kp=[300.0, 150.0], kd=[20.0, 10.0], ki=[50.0, 20.0], gravity_compensation=True)
    return simulate(m, pid, goal, duration=0.2, q0=[0.25, 0.1], position_noise=[1e-3, 2e-3], velocity_noise=0.01,
                    disturbance=lambda t: [0.5 * np.sin(20 * t), -0.3], seed=11, control_rate=500.0, progress=False)


def noisy_ct():
    """Predictive computed torque [9.31] with noise on q and qd and a constant disturbance."""
    m = rd.load_robot("puma560")
    move = plan("quintic", np.zeros(6), np.full(6, 0.3), duration=0.2)
    return simulate(m, ComputedTorque(m, omega=20.0, predictive=True), move, duration=0.25, position_noise=1e-4, velocity_noise=1e-3,
                    disturbance=[0.5, -0.5, 0.2, 0.0, 0.0, 0.1], seed=5, progress=False)


def task_space():
    m = rd.load_robot("iiwa14")
    q0 = np.array([0.2, -0.5, 0.4, 0.9, 0.6, -0.2, 0.1])
    T0 = rd.frame_pose(m, q0)
    T1 = T0.copy()
    T1[:3, 3] += [0.1, 0.05, -0.08]
    motion = cartesian_motion(T0, T1, duration=0.15, profile="quintic")
    return simulate(m, TaskComputedTorque(m, omega=50.0), motion, duration=0.2, q0=q0, progress=False)


def adaptive():
    m = rd.load_robot("planar2")
    move = plan("quintic", [0.0, 0.0], [0.4, 0.3], duration=0.1)
    return simulate(m, ComputedTorque(m, omega=20.0), move, duration=0.12, integrator="DOP853", rtol=1e-10, atol=1e-12,
                    progress=False)


def fault():
    """A reference with NaN for 10 ms: FAULT ticks and their messages."""
    m = rd.load_robot("planar2")
    move = plan("quintic", [0.0, 0.0], [0.3, 0.3], duration=0.1)

    def reference(t):
        q, qd, qdd = move.sample(t)
        if 0.05 <= t < 0.06:
            q = np.array([np.nan, 0.0])
        return Reference(q, qd, qdd)

    return simulate(m, ComputedTorque(m, omega=30.0), reference, duration=0.12, progress=False)


CASES = {f.__name__: f for f in (main_job, geared, mass_error, saturated, elastic, noisy, noisy_ct, task_space, adaptive, fault)}


def digest(result) -> dict:
    """Rows 0, K // 2 and K - 1 and the per-column sums of |x| of every array; metrics; messages."""
    out: dict = {"K": int(result.t.size)}
    for name in ARRAYS:
        a = getattr(result, name)
        if a is None:
            out[name] = None
            continue
        a = np.asarray(a, float)
        K = a.shape[0]
        out[name] = {"rows": a[[0, K // 2, K - 1]].tolist(), "abs_sum": np.abs(a).sum(axis=0).tolist()}
    m = result.metrics
    out["metrics"] = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in ((k, getattr(m, k)) for k in METRICS)}
    out["messages"] = [[t, msg] for t, msg in result.messages]
    return out


def _write(data: dict) -> None:
    """Atomically: a temporary file beside the target, then a rename."""
    fd, tmp = tempfile.mkstemp(dir=GOLDEN.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=1, allow_nan=True)
    os.chmod(tmp, 0o644)
    os.replace(tmp, GOLDEN)


if __name__ == "__main__":
    names = sys.argv[1:] or list(CASES)
    data = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    for name in names:
        data[name] = digest(CASES[name]())
        print(name, data[name]["K"])
    _write(data)
