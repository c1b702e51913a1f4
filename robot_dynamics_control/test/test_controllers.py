"""The controllers of robot_dynamics_control against robot_dynamics' Python controllers.

controller_probe (test/controller_probe.cpp) runs one controller plugin class on plain doubles:
configured from a parameters file (its robot_model made here by `robot-dynamics engine-model`, as a
launch makes it: strict unless allow_nonphysical_model, --allow-no-effort-limit with effort_limits),
activated, fed states and references, updated; it prints the
efforts it writes. The expected values come from the Python package on the same robots:
gravity compensation from rd.rnea at rest (+ joint friction at the measured velocity), PD + gravity
from robot_dynamics.control.PDGravity, computed torque from robot_dynamics.control.ComputedTorque
(and rd.aba undoing it), trajectory sampling from scipy's Hermite splines. The controllers' joint
order is the model's reversed, so every vector crosses the name matching.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
import yaml

import robot_dynamics as rd
from robot_dynamics.control import ComputedTorque, PDGravity, Reference, gains_from_bandwidth
from robot_dynamics.dynamics._common import joint_friction
from robot_dynamics.model.registry import robot_files

PROBE = os.environ.get("RD_CONTROLLER_PROBE", "")
pytestmark = pytest.mark.skipif(
    not PROBE, reason="RD_CONTROLLER_PROBE is not set (colcon test of robot_dynamics_control sets it)"
)

ROBOTS = ("puma560", "three_dof_geared")
TOL = 1e-9
NO_LIMIT = 1e12


def to_controller(model, x) -> list[float]:
    """Model order -> the controllers' order (the model's reversed)."""
    return [float(v) for v in np.asarray(x, dtype=float)[::-1]]


class Probe:
    """One controller in controller_probe; vectors in and out in model order."""

    def __init__(self, kind: str, robot: str, params: dict, *, chained: bool = False):
        params = dict(params)
        self.model = rd.load_robot(robot)
        urdf, drivetrain = robot_files(robot)
        self.n = self.model.nq
        self.joints = params.pop("joints", None) or list(reversed(self.model.joint_names))  # the controller's order
        self.perm = [self.model.joint_names.index(j) for j in self.joints if j in self.model.joint_names]  # controller i -> model index
        # the state interfaces: the commanded joints, then the model's others in model order
        self.read_order = self.perm + [k for k in range(self.n) if k not in self.perm]
        description = params.pop("robot_description", None) or Path(urdf).read_text()
        drivetrain = params.pop("drivetrain", str(drivetrain) if drivetrain else "")
        self.refused = ""  # the command's reason where it refuses to make the model text
        if "robot_model" not in params:
            params["robot_model"] = self._model_text(description, drivetrain, params)
        full = {"joints": self.joints, **params}
        self.kind, self.chained, self.lines = kind, chained, []
        self._params = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
        yaml.safe_dump({"/**": {"ros__parameters": full}}, self._params)
        self._params.close()

    def _model_text(self, description: str, drivetrain: str, params: dict) -> str:
        """`robot-dynamics engine-model` of the URDF text and drive-train YAML, with the options a
        launch gives it for a controller with ``params`` ("" where it refuses: self.refused)."""
        with tempfile.TemporaryDirectory() as folder:
            urdf = Path(folder) / "robot.urdf"
            urdf.write_text(description, encoding="utf-8")
            args = [sys.executable, "-m", "robot_dynamics.cli", "engine-model", "--urdf", str(urdf)]
            args += ["--drivetrain", drivetrain] if drivetrain else []
            args += [] if params.get("allow_nonphysical_model") else ["--strict"]
            args += ["--allow-no-effort-limit"] if params.get("effort_limits") else []
            r = subprocess.run(args, capture_output=True, text=True, timeout=120)
        self.refused = r.stderr if r.returncode else ""
        return r.stdout if r.returncode == 0 else ""

    def c(self, x) -> list[float]:
        """Model order -> controller order."""
        x = np.asarray(x, dtype=float)
        return [float(x[k]) for k in self.perm]

    def m(self, values) -> np.ndarray:
        """Controller order -> model order (NaN for the joints not commanded)."""
        out = np.full(self.n, np.nan)
        out[self.perm] = np.asarray(values, dtype=float)
        return out

    def send(self, line: str) -> None:
        self.lines.append(line)

    def state(self, q, qd) -> None:
        q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
        self.send("state " + " ".join(repr(float(v)) for v in list(q[self.read_order]) + list(qd[self.read_order])))

    def update(self, t: float = 0.0) -> None:
        self.send(f"update {t!r}")

    def chained_reference(self, qr, qdr, qddr) -> None:
        self.send("chained " + " ".join(repr(v) for v in self.c(qr) + self.c(qdr) + self.c(qddr)))

    def trajectory(self, times, q, qd=None, qdd=None, stamp: float = 0.0) -> None:
        self.send(f"trajectory {stamp!r} {len(times)} {int(qd is not None)} {int(qdd is not None)}")
        for p, t in enumerate(times):
            row = [t] + self.c(q[p]) + (self.c(qd[p]) if qd is not None else []) + (self.c(qdd[p]) if qdd is not None else [])
            self.send(" ".join(repr(float(v)) for v in row))

    def param(self, name: str, values) -> None:
        self.send(f"param {name} " + " ".join(repr(float(v)) for v in values))

    def param_double(self, name: str, value: float) -> None:
        self.send(f"param_double {name} {float(value)!r}")

    def run(self) -> tuple[list[np.ndarray], list[int], list[np.ndarray], list[str]]:
        """(efforts, statuses, references (3, n), other lines) in model order, one per update."""
        args = [PROBE, self.kind, self._params.name] + (["--chained"] if self.chained else [])
        try:
            r = subprocess.run(args, input="\n".join(self.lines) + "\n", capture_output=True, text=True, timeout=120)
        finally:
            os.unlink(self._params.name)
        assert r.returncode == 0, f"controller_probe failed ({r.returncode}):\n{r.stderr[-3000:]}"
        efforts, statuses, references, other = [], [], [], []
        for line in r.stdout.splitlines():
            if line.startswith("effort "):
                values, status = line[len("effort "):].split(" | status ")
                efforts.append(self.m(values.split()))
                statuses.append(int(status))
            elif line.startswith("reference "):
                v = np.array(line.split()[1:], dtype=float).reshape(3, self.n)
                references.append(np.array([self.m(row) for row in v]))
            else:
                other.append(line)
        return efforts, statuses, references, other

    def fails(self) -> str:
        """Runs expecting a configuration failure; its stderr (the command's, where it refused to
        make the model text)."""
        if self.refused:
            os.unlink(self._params.name)
            return self.refused
        args = [PROBE, self.kind, self._params.name]
        try:
            r = subprocess.run(args, input="", capture_output=True, text=True, timeout=120)
        finally:
            os.unlink(self._params.name)
        assert r.returncode != 0
        return r.stderr


def inside(model, u, fraction: float = 0.8) -> np.ndarray:
    """u in [-1, 1] per joint -> positions within the central `fraction` of the joints' limits."""
    lo, hi = np.asarray(model.lower, dtype=float), np.asarray(model.upper, dtype=float)
    mid, half = (lo + hi) / 2, fraction * (hi - lo) / 2
    return mid + np.asarray(u, dtype=float) * half


def random_states(model, count: int, seed: int):
    """(q, qd, qr, qdr, qddr): the measured state anywhere, the reference within the joints' limits."""
    rng = np.random.default_rng(seed)
    n = model.nq
    for _ in range(count):
        yield rng.uniform(-2.0, 2.0, n), rng.uniform(-1.5, 1.5, n), inside(model, rng.uniform(-1, 1, n)), \
            rng.uniform(-1.5, 1.5, n), rng.uniform(-3.0, 3.0, n)


def close(actual, expected, what: str) -> None:
    actual, expected = np.asarray(actual), np.asarray(expected)
    err = np.max(np.abs(actual - expected) / np.maximum(1.0, np.abs(expected)))
    assert err <= TOL, f"{what}: relative error {err:.3g}\n C++    {actual}\n Python {expected}"


@pytest.mark.parametrize("robot", ROBOTS)
@pytest.mark.parametrize("friction", [False, True])
def test_gravity_compensation(robot, friction):
    n = rd.load_robot(robot).nq
    p = Probe("gravity", robot, {"friction_feedforward": friction, "effort_limits": [NO_LIMIT] * n,
                                 "friction_smoothing_velocity": 0.0})
    states = list(random_states(p.model, 12, seed=1 + friction))
    for q, qd, *_ in states:
        p.state(q, qd)
        p.update()
    efforts, statuses, _, _ = p.run()
    assert len(efforts) == len(states)
    z = np.zeros(p.n)
    for (q, qd, *_), effort, status in zip(states, efforts, statuses):
        expected = rd.rnea(p.model, q, z, z, friction=False)
        if friction:
            expected = expected + joint_friction(p.model, qd)
        assert status == 0
        close(effort, expected, f"{robot} gravity compensation")
    if friction:  # the friction term is really there
        assert np.max(np.abs(joint_friction(p.model, states[0][1]))) > 1e-3


@pytest.mark.parametrize("robot", ROBOTS)
def test_pd_gravity(robot):
    """Each goal is reached along its profile: the update long after it compares with PDGravity."""
    model = rd.load_robot(robot)
    rng = np.random.default_rng(7)
    kp, kd = rng.uniform(10.0, 200.0, model.nq), rng.uniform(1.0, 30.0, model.nq)
    p = Probe("pd", robot, {"kp": to_controller(model, kp), "kd": to_controller(model, kd),
                            "effort_limits": [NO_LIMIT] * model.nq})
    states = list(random_states(model, 10, seed=3))
    # before any reference: hold the position at activation (the probe's states start at zero)
    q, qd = states[0][0], states[0][1]
    p.state(q, qd)
    p.update(0.0)
    t = 0.0
    for q, qd, qr, qdr, _ in states:
        p.trajectory([0.5, 1.0], [qr, qr], [qdr * 0, qdr])  # the last point is the goal
        p.state(q, qd)
        p.update(t + 1.0)  # the profile starts
        p.update(t + 1000.0)  # ... and has ended
        t += 2000.0
    # positions alone: zero goal velocity
    q, qd, qr = states[1][0], states[1][1], states[2][2]
    p.trajectory([1.0], [qr])
    p.state(q, qd)
    p.update(t + 1.0)
    p.update(t + 1000.0)
    # gains changed while running
    kp2 = kp * 0.5
    p.param("kp", p.c(kp2))
    p.update(t + 1001.0)
    efforts, statuses, _, other = p.run()
    assert other.count("ok") == len(states) + 2, other
    z = np.zeros(model.nq)
    pd = PDGravity(model, kp, kd, effort_limit=NO_LIMIT)
    expected = [pd.update(0.0, states[0][0], states[0][1], Reference(z, z, z)).tau]
    expected += [pd.update(0.0, q, qd, Reference(qr, qdr, z)).tau for q, qd, qr, qdr, _ in states]
    expected.append(pd.update(0.0, states[1][0], states[1][1], Reference(states[2][2], z, z)).tau)
    pd2 = PDGravity(model, kp2, kd, effort_limit=NO_LIMIT)
    expected.append(pd2.update(0.0, states[1][0], states[1][1], Reference(states[2][2], z, z)).tau)
    ended = [efforts[0]] + efforts[2:-1:2] + [efforts[-1]]  # each goal's update after its profile
    assert len(ended) == len(expected) and len(efforts) == 2 * (len(states) + 1) + 2
    for k, (effort, tau) in enumerate(zip(ended, expected)):
        close(effort, tau, f"{robot} PD + gravity, update {k}")
    assert statuses == [0] * len(efforts)


def test_pd_goal_profile():
    """A new goal is reached along a synchronised cubic whose peak velocity is goal_velocity_scaling
    times the slowest joint's velocity limit: the reference read back from the efforts (kd = 0)."""
    model = rd.load_robot("puma560")
    n = model.nq
    kp = 400.0
    p = Probe("pd", "puma560", {"kp": [kp], "kd": [0.0], "effort_limits": [NO_LIMIT] * n,
                                "goal_velocity_scaling": 0.5})
    goal = inside(model, np.linspace(-0.5, 0.5, n))
    q = np.zeros(n)
    p.state(q, q)
    p.update(10.0)
    p.trajectory([1.0], [goal])
    times = [10.5, 10.5 + 0.25, 10.5 + 0.5, 10.5 + 0.75, 10.5 + 10.0]
    for t in times:
        p.update(t)
    efforts, statuses, _, other = p.run()
    assert other == ["ok"]
    g = rd.rnea(model, q, q, q, friction=False)
    duration = np.max(1.5 * np.abs(goal) / (0.5 * np.asarray(model.velocity_limit)))
    for t, effort in zip(times, efforts[1:]):
        s = min((t - 10.5) / duration, 1.0)
        expected = goal * s * s * (3 - 2 * s)
        close((effort - g) / kp, expected, f"PD reference at {t - 10.5:.2f} s of {duration:.3f} s")
    assert duration > 0.75  # the samples lie inside the profile, the last after it


@pytest.mark.parametrize("robot", ROBOTS)
@pytest.mark.parametrize("scheme", ["tracking", "position"])
@pytest.mark.parametrize("friction_velocity", ["measured", "desired"])
def test_computed_torque_chained(robot, scheme, friction_velocity):
    model = rd.load_robot(robot)
    rng = np.random.default_rng(11)
    kp, kd = rng.uniform(50.0, 400.0, model.nq), rng.uniform(5.0, 40.0, model.nq)
    params = {"kp": to_controller(model, kp), "kd": to_controller(model, kd), "scheme": scheme, "friction_velocity": friction_velocity,
              "effort_limits": [NO_LIMIT] * model.nq, "friction_smoothing_velocity": 0.0}
    p = Probe("ct", robot, params, chained=True)
    states = list(random_states(model, 10, seed=5))
    for q, qd, qr, qdr, qddr in states:
        p.chained_reference(qr, qdr, qddr)
        p.state(q, qd)
        p.update()
    efforts, statuses, _, _ = p.run()
    ct = ComputedTorque(model, kp=kp, kd=kd, scheme=scheme, friction_velocity=friction_velocity, effort_limit=NO_LIMIT)
    assert len(efforts) == len(states)
    for (q, qd, qr, qdr, qddr), effort in zip(states, efforts):
        close(effort, ct.update(0.0, q, qd, Reference(qr, qdr, qddr)).tau, f"{robot} computed torque")
        if scheme == "tracking" and friction_velocity == "measured":
            # the exact model: the closed loop's acceleration is w (Khalil [9.25])
            w = qddr + kd * (qdr - qd) + kp * (qr - q)
            close(rd.aba(model, q, qd, effort), w, f"{robot} aba(q, qd, computed torque)")
    assert statuses == [0] * len(states)


@pytest.mark.parametrize("robot", ROBOTS)
def test_computed_torque_gains_from_bandwidth_and_unset_references(robot):
    model = rd.load_robot(robot)
    p = Probe("ct", robot, {"omega": [12.0], "xi": [0.8], "friction_velocity": "measured",
                            "friction_smoothing_velocity": 0.0}, chained=True)
    q, qd, qr, qdr, qddr = next(random_states(model, 1, seed=9))
    nan = np.full(model.nq, np.nan)
    p.chained_reference(qr, qdr, qddr)
    p.state(q, qd)
    p.update()
    p.chained_reference(nan, nan, nan)  # nothing commanded: the position at activation (zero), at rest
    p.update()
    efforts, _, _, _ = p.run()
    kp, kd = gains_from_bandwidth(12.0, 0.8, model.nq)
    ct = ComputedTorque(model, kp=kp, kd=kd)  # the model's own effort limits
    z = np.zeros(model.nq)
    close(efforts[0], ct.update(0.0, q, qd, Reference(qr, qdr, qddr)).tau, f"{robot} computed torque (omega, xi)")
    close(efforts[1], ct.update(0.0, q, qd, Reference(z, z, z)).tau, f"{robot} computed torque (hold)")


def hermite_reference(times, q, qd, qdd, s):
    """scipy's piecewise Hermite polynomials through (0, hold at rest) and the points: (3, n) at s."""
    from scipy.interpolate import BPoly

    n = q.shape[1]
    t = np.concatenate([[0.0], times])
    out = np.zeros((3, n))
    for j in range(n):
        pos = np.concatenate([[0.0], q[:, j]])
        if qd is None:  # positions alone: linear
            out[0, j] = np.interp(s, t, pos)
            k = min(max(np.searchsorted(t, s, side="right") - 1, 0), len(t) - 2)
            out[1, j] = (pos[k + 1] - pos[k]) / (t[k + 1] - t[k])
            continue
        vel = np.concatenate([[0.0], qd[:, j]])
        if qdd is None:
            # the first segment starts from the hold's zero acceleration but is cubic like the others
            derivs = [[pos[i], vel[i]] for i in range(len(t))]
        else:
            acc = np.concatenate([[0.0], qdd[:, j]])
            derivs = [[pos[i], vel[i], acc[i]] for i in range(len(t))]
        poly = BPoly.from_derivatives(t, derivs)
        out[:, j] = [poly(s), poly.derivative(1)(s), poly.derivative(2)(s)]
    return out


@pytest.mark.parametrize("robot", ROBOTS)
@pytest.mark.parametrize("order", ["linear", "cubic", "quintic"])
def test_computed_torque_trajectory(robot, order):
    model = rd.load_robot(robot)
    rng = np.random.default_rng(13)
    n = model.nq
    times = np.array([0.3, 0.7, 1.2])
    # small steps about zero: within the joints' position and velocity limits (both clamp the reference)
    q = rng.uniform(-0.2, 0.2, (3, n))
    qd = rng.uniform(-0.3, 0.3, (3, n)) if order != "linear" else None
    qdd = rng.uniform(-0.5, 0.5, (3, n)) if order == "quintic" else None
    if qd is not None:
        qd[-1] = 0.0
    kp, kd = 100.0, 20.0
    p = Probe("ct", robot, {"kp": [kp], "kd": [kd], "effort_limits": [NO_LIMIT] * n, "friction_velocity": "measured",
                            "friction_smoothing_velocity": 0.0})
    t0 = 5.0
    # between the waypoints (a cubic's acceleration jumps at them), then the end and past it
    samples = [0.0, 0.1, 0.25, 0.45, 0.65, 0.95, 1.15, 1.2, 1.5]
    qm, qdm, *_ = next(random_states(model, 1, seed=17))
    p.state(qm, qdm)
    p.update(t0 - 0.01)  # before a trajectory: hold zero
    p.trajectory(times, q, qd, qdd)  # stamp 0: starts at the next update
    for s in samples:
        p.update(t0 + s)
    efforts, statuses, references, other = p.run()
    assert other == ["ok"]
    ct = ComputedTorque(model, kp=np.full(n, kp), kd=np.full(n, kd), effort_limit=NO_LIMIT)
    z = np.zeros(n)
    close(references[0], np.zeros((3, n)), "hold before the trajectory")
    close(efforts[0], ct.update(0.0, qm, qdm, Reference(z, z, z)).tau, f"{robot} hold")
    for s, ref, effort in zip(samples, references[1:], efforts[1:]):
        expected = hermite_reference(times, q, qd, qdd, s)
        if s >= times[-1]:  # after the end: the last position, at rest
            expected = np.stack([q[-1], z, z])
        assert np.all(np.abs(expected[1]) <= model.velocity_limit), "the case stays within the velocity limits"
        close(ref, expected, f"{robot} {order} sample at {s} s")
        close(effort, ct.update(0.0, qm, qdm, Reference(*ref)).tau, f"{robot} computed torque at {s} s")
    assert statuses == [0] * len(efforts)


@pytest.mark.parametrize("robot", ROBOTS)
def test_saturation_and_fault(robot):
    """The model's effort limits clip; a NaN measurement gives the gravity torque of the last valid
    position (ControllerBase._fault's hold)."""
    model = rd.load_robot(robot)
    n = model.nq
    kp = np.full(n, 1e5)
    p = Probe("pd", robot, {"kp": [1e5], "kd": [10.0]})
    q, qd, qr, qdr, _ = next(random_states(model, 1, seed=19))
    p.trajectory([1.0], [qr], [qdr])
    p.state(q, qd)
    p.update(1.0)
    p.update(1000.0)  # the goal reached along its profile
    bad = q.copy()
    bad[0] = np.nan
    p.state(bad, qd)
    p.update(1001.0)
    efforts, statuses, _, _ = p.run()
    efforts, statuses = efforts[1:], statuses[1:]
    pd = PDGravity(model, kp, np.full(n, 10.0))
    out = pd.update(0.0, q, qd, Reference(qr, qdr, np.zeros(n)))
    assert out.status & 1 and statuses[0] & 1, "saturated"
    close(efforts[0], out.tau, f"{robot} saturated PD")
    fault = pd.update(0.0, bad, qd, Reference(qr, qdr, np.zeros(n)))
    assert statuses[1] & 4 and fault.status & 4
    close(efforts[1], fault.tau, f"{robot} fault: hold the gravity torque")


def test_configuration_errors_name_the_valid_choices():
    joints = list(reversed(rd.load_robot("puma560").joint_names))
    p2 = Probe("gravity", "puma560", {"joints": joints[:-1] + ["elbow"]})
    err = p2.fails()
    assert "Invalid joint name 'elbow'" in err and "'joint1'" in err, err
    p3 = Probe("gravity", "puma560", {"joints": joints[:-1] + ["joint2"]})
    err = p3.fails()
    assert "'joints' must only contain unique values" in err, err
    p4 = Probe("ct", "puma560", {"kp": [1.0, 2.0], "kd": [1.0]})
    err = p4.fails()
    assert "parameter 'kp': expected one value (every joint) or 6" in err and "got 2" in err, err
    p5 = Probe("ct", "puma560", {"kp": [1.0]})
    err = p5.fails()
    assert "kp and kd: give both" in err, err


# -- the safety of issue 42: stop behaviour, activation, limits, parameters, friction, joints ------

def gravity(model, q):
    z = np.zeros(model.nq)
    return rd.rnea(model, q, z, z, friction=False)


@pytest.mark.parametrize("stop", ["hold", "zero", "brake"])
def test_stop_behaviour_on_deactivation_and_the_first_command(stop):
    """Deactivation writes the stop behaviour (hold: the gravity torque of that pose); activation
    computes and writes the first command itself (the hold at that pose), no cycle of zeros."""
    model = rd.load_robot("puma560")
    n = model.nq
    kd = 3.0
    p = Probe("pd", "puma560", {"kp": [100.0], "kd": [kd], "stop_behaviour": stop})
    q1, qd1, *_ = next(random_states(model, 1, seed=21))
    q1 = inside(model, np.clip(q1, -1, 1))
    p.state(q1, qd1)
    p.update(1.0)
    p.send("deactivate")
    q2 = inside(model, np.linspace(-0.3, 0.3, n))
    qd2 = np.linspace(0.1, 0.6, n)
    p.state(q2, qd2)
    p.send("activate")
    efforts, statuses, _, _ = p.run()
    stopped, first = efforts[1], efforts[2]
    expected = {"hold": gravity(model, q1), "zero": np.zeros(n), "brake": np.full(n, np.nan)}[stop]
    if stop == "brake":
        assert np.all(np.isnan(stopped))
    else:
        close(stopped, np.clip(expected, -model.effort_limit, model.effort_limit), f"{stop} at deactivation")
    assert statuses[1] & 16, "holding"
    # activation: PD towards the pose just read (the hold), written before any update
    close(first, np.clip(gravity(model, q2) - kd * qd2, -model.effort_limit, model.effort_limit), "first command")
    assert statuses[2] == 0


def test_activation_on_a_nan_state_latches_the_first_valid_one():
    """A driver that reports NaN until its first read: the controller holds nothing (zero) and
    reports a fault, then latches the hold at the first valid state, never at the NaN one."""
    model = rd.load_robot("puma560")
    n = model.nq
    kp, kd = 100.0, 3.0
    p = Probe("ct", "puma560", {"kp": [kp], "kd": [kd], "friction_velocity": "measured",
                                "friction_smoothing_velocity": 0.0, "effort_limits": [NO_LIMIT] * n})
    p.send("deactivate")
    nan = np.full(n, np.nan)
    p.state(nan, nan)
    p.send("activate")
    p.update(1.0)
    q3 = inside(model, np.linspace(0.2, -0.2, n))
    p.state(q3, np.zeros(n))
    p.update(1.001)
    q4 = q3 + 0.01
    p.state(q4, np.zeros(n))
    p.update(1.002)
    efforts, statuses, references, _ = p.run()
    at_nan, latched, after = efforts[2], efforts[3], efforts[4]
    assert np.all(at_nan == 0.0) and statuses[2] & 4 and statuses[2] & 16, (at_nan, statuses[2])
    close(references[1][0], q3, "the hold: the first valid state")
    z = np.zeros(n)
    ct = ComputedTorque(model, kp=np.full(n, kp), kd=np.full(n, kd), effort_limit=NO_LIMIT)
    close(latched, ct.update(0.0, q3, z, Reference(q3, z, z)).tau, "hold at the first valid state")
    close(after, ct.update(0.0, q4, z, Reference(q3, z, z)).tau, "towards the latched hold")
    assert statuses[3] == 0 and statuses[4] == 0


@pytest.mark.parametrize("by_hardware", [False, True])
def test_tracking_error_faults_and_holds_until_activation(by_hardware):
    """|q_r - q| above max_tracking_error: fault, the hold (gravity minus damping; the damping alone
    when the hardware compensates gravity), latched until the controller is activated again."""
    model = rd.load_robot("puma560")
    n = model.nq
    damping = 7.0
    p = Probe("pd", "puma560", {"kp": [50.0], "kd": [1.0], "max_tracking_error": [0.1],
                                "hold_damping": [damping], "gravity_compensated_by_hardware": by_hardware,
                                "effort_limits": [NO_LIMIT] * n})
    q = np.zeros(n)
    p.state(q, q)
    p.update(1.0)
    moved = q.copy()
    moved[1] = 0.3  # joint2 pushed 0.3 rad away from the hold
    qd = np.linspace(-0.2, 0.2, n)
    p.state(moved, qd)
    p.update(1.001)
    p.state(q, qd)  # back within the error: still latched
    p.update(1.002)
    p.send("deactivate")
    p.send("activate")
    p.update(1.003)
    efforts, statuses, _, _ = p.run()
    g = (lambda x: np.zeros(n)) if by_hardware else (lambda x: gravity(model, x))
    assert statuses[0] == 0
    assert statuses[1] & 4 and statuses[1] & 16
    close(efforts[1], g(moved) - damping * qd, "hold at the tracking fault")
    assert statuses[2] & 4, "latched"
    close(efforts[2], g(q) - damping * qd, "still holding")
    assert statuses[4] == 0 and statuses[5] == 0, "activated again: the law"


def test_references_outside_the_limits_and_in_the_past_are_refused():
    model = rd.load_robot("puma560")
    n = model.nq
    beyond = np.zeros(n)
    beyond[0] = model.upper[0] + 3.0  # joint1, 3 rad past its limit
    p = Probe("pd", "puma560", {"kp": [100.0], "kd": [1.0]})
    p.trajectory([1.0], [beyond])
    p.update(1.0)
    _, _, _, other = p.run()
    assert other[0].startswith("rejected:") and "'joint1'" in other[0] and "2.79253" in other[0], other
    p = Probe("ct", "puma560", {"kp": [100.0], "kd": [20.0]})
    p.trajectory([0.5, 1.0], [np.zeros(n), beyond])
    p.trajectory([0.5, 1.0], [np.zeros(n), np.full(n, 0.1)], stamp=1.0)  # 1970: ended long ago
    p.trajectory([0.5, 1.0], [np.zeros(n), np.full(n, 0.1)])  # stamp 0: starts now, accepted
    _, _, _, other = p.run()
    assert other[0].startswith("rejected: point 1:") and "'joint1'" in other[0], other
    assert other[1].startswith("rejected: the trajectory ends in the past"), other
    assert other[2] == "ok", other


def test_chained_references_are_clamped_to_the_limits():
    model = rd.load_robot("puma560")
    n = model.nq
    p = Probe("ct", "puma560", {"kp": [100.0], "kd": [20.0]}, chained=True)
    qr = np.zeros(n)
    qr[0] = model.upper[0] + 3.0
    qdr = np.zeros(n)
    qdr[1] = 10.0 * model.velocity_limit[1]
    p.chained_reference(qr, qdr, np.ones(n))
    p.state(np.zeros(n), np.zeros(n))
    p.update(1.0)
    _, statuses, references, _ = p.run()
    ref = references[-1]
    # the limit less the overshoot of the error equation stopped at once from the velocity limit
    margin = model.velocity_limit[0] / (np.e * np.sqrt(100.0))
    assert ref[0][0] == pytest.approx(model.upper[0] - margin) and ref[1][0] == 0.0 and ref[2][0] == 0.0
    assert ref[1][1] == pytest.approx(model.velocity_limit[1]) and ref[2][1] == 0.0
    assert statuses[-1] & 8, "limited"


def test_parameters_the_parameter_server_refuses():
    model = rd.load_robot("puma560")
    n = model.nq
    p = Probe("ct", "puma560", {"kp": [100.0], "kd": [20.0]})
    p.param("kp", [np.nan])
    p.param("kd", [np.inf] * n)
    p.param("kp", [1.0, 2.0])
    p.param("hold_damping", [1.0] * (n + 1))
    p.param("effort_limits", [10.0] * n)
    p.param_double("friction_smoothing_velocity", np.inf)
    p.param("kp", [150.0] * n)  # a valid change of length (1 -> n) after the refusals
    p.update(1.0)
    _, statuses, _, other = p.run()
    assert [o.split(":")[0] for o in other] == ["rejected"] * 6 + ["ok"], other
    assert "finite" in other[0] and "finite" in other[1]
    assert "one value (every joint) or 6" in other[2] and "got 2" in other[2]
    assert "got 7" in other[3]
    assert "read-only" in other[4]
    assert "finite" in other[5]
    nan_in_file = Probe("pd", "puma560", {"kp": [float("nan")], "kd": [1.0]})
    err = nan_in_file.fails()
    assert "'kp'" in err and "finite" in err, err


def test_friction_feedforward_sign_is_smoothed():
    """Gravity compensation's friction at the measured velocity: tanh(qd / v_s), not sign(qd)."""
    model = rd.load_robot("puma560")
    n = model.nq
    p = Probe("gravity", "puma560", {"friction_feedforward": True, "friction_smoothing_velocity": 0.05,
                                     "effort_limits": [NO_LIMIT] * n})
    q = inside(model, np.linspace(-0.4, 0.4, n))
    qd = np.array([1e-4, -1e-4, 0.02, -0.3, 0.0, 1.0])
    p.state(q, qd)
    p.update(1.0)
    efforts, _, _, _ = p.run()
    close(efforts[-1], gravity(model, q) + joint_friction(model, qd, smoothing=0.05), "smoothed friction")
    assert abs(efforts[-1][0] - gravity(model, q)[0]) < 0.1 * abs(joint_friction(model, [1.0] * n)[0])


def test_a_subset_of_the_joints_is_commanded():
    """The arm joints of a description with more joints: the others are read, never commanded."""
    model = rd.load_robot("puma560")
    joints = ["joint3", "joint1", "joint2"]
    p = Probe("gravity", "puma560", {"joints": joints, "effort_limits": [NO_LIMIT] * 3})
    q = inside(model, np.linspace(-0.6, 0.6, model.nq))
    p.state(q, np.zeros(model.nq))
    p.update(1.0)
    efforts, statuses, _, other = p.run()
    expected = gravity(model, q)
    got = efforts[-1]
    for j in joints:
        k = model.joint_names.index(j)
        assert got[k] == pytest.approx(expected[k], rel=1e-9, abs=1e-9), j
    assert np.all(np.isnan(got[[model.joint_names.index(j) for j in ("joint4", "joint5", "joint6")]]))
    assert statuses[-1] == 0


def _puma_text(edit) -> str:
    urdf, _ = robot_files("puma560")
    return edit(Path(urdf).read_text())


def _without_inertial(text: str, link: str) -> str:
    start = text.index(f'<link name="{link}">')
    a = text.index("<inertial>", start)
    b = text.index("</inertial>", a) + len("</inertial>")
    return text[:a] + text[b:]


def test_a_physically_impossible_model_is_refused_unless_allowed():
    """A moving link without mass, or a commanded joint without an effort limit, is refused where
    the model text is made (`engine-model --strict`, naming it) and a text made without the checks
    at the controller's configuration; allow_nonphysical_model (or effort_limits) lets it through."""
    massless = _puma_text(lambda t: _without_inertial(t, "link2"))
    err = Probe("gravity", "puma560", {"robot_description": massless}).fails()
    assert "link 'link2'" in err and "has no mass" in err, err
    p = Probe("gravity", "puma560", {"robot_description": massless, "allow_nonphysical_model": True})
    p.state(np.zeros(6), np.zeros(6))
    p.update(1.0)
    efforts, statuses, _, _ = p.run()
    assert statuses == [0] and np.all(np.isfinite(efforts[0]))
    # a text made without the checks (no --strict) is refused by the controller itself, naming the
    # parameter and the command, unless allow_nonphysical_model
    unchecked = subprocess.run([sys.executable, "-m", "robot_dynamics.cli", "engine-model", "--robot", "puma560"],
                               capture_output=True, text=True, check=True).stdout
    err = Probe("gravity", "puma560", {"robot_model": unchecked}).fails()
    assert "robot_model was made without the model checks" in err and "--strict" in err, err
    p = Probe("gravity", "puma560", {"robot_model": unchecked, "allow_nonphysical_model": True})
    p.update(1.0)
    assert p.run()[1] == [0]
    no_effort = _puma_text(lambda t: t.replace('effort="97.6" ', ""))
    err = Probe("pd", "puma560", {"robot_description": no_effort, "kp": [10.0], "kd": [1.0]}).fails()
    assert "joint1" in err and "effort" in err, err
    p = Probe("pd", "puma560", {"robot_description": no_effort, "kp": [10.0], "kd": [1.0],
                                "effort_limits": [50.0] * 6})
    p.update(1.0)
    _, statuses, _, _ = p.run()
    assert statuses == [0]


CONTROLLERS = {"gravity": {}, "pd": {"kp": [100.0], "kd": [3.0]},
               "ct": {"kp": [100.0], "kd": [20.0], "friction_velocity": "measured"}}


@pytest.mark.parametrize("kind", sorted(CONTROLLERS))
def test_every_controller_holds_on_deactivation_and_on_a_fault(kind):
    """Each of the three: deactivation writes the gravity torque of that pose; a non-finite state
    is a fault whose output is the gravity torque of the last valid pose (hold)."""
    model = rd.load_robot("puma560")
    n = model.nq
    p = Probe(kind, "puma560", dict(CONTROLLERS[kind], friction_smoothing_velocity=0.0))
    q1 = inside(model, np.linspace(-0.4, 0.5, n))
    p.state(q1, np.zeros(n))
    p.update(1.0)
    bad = q1.copy()
    bad[3] = np.inf
    p.state(bad, np.zeros(n))
    p.update(1.001)
    q2 = inside(model, np.linspace(0.3, -0.2, n))
    p.state(q2, np.full(n, 0.2))
    p.send("deactivate")
    efforts, statuses, _, _ = p.run()
    held = np.clip(gravity(model, q1), -model.effort_limit, model.effort_limit)
    assert statuses[1] & 4 and statuses[1] & 16, statuses
    close(efforts[1], held, f"{kind}: the hold at a fault")
    assert statuses[2] & 16, statuses
    close(efforts[2], np.clip(gravity(model, q2), -model.effort_limit, model.effort_limit),
          f"{kind}: the hold at deactivation")


@pytest.mark.parametrize("kind", sorted(CONTROLLERS))
def test_every_controller_refuses_nan_inf_and_wrong_lengths(kind):
    p = Probe(kind, "puma560", dict(CONTROLLERS[kind]))
    p.param("hold_damping", [np.nan])
    p.param("max_tracking_error", [np.inf])
    p.param("hold_damping", [1.0, 2.0])
    p.param_double("friction_smoothing_velocity", np.nan)
    p.param("hold_damping", [2.0] * 6)  # one per joint: taken
    p.update(1.0)
    _, statuses, _, other = p.run()
    assert [o.split(":")[0] for o in other] == ["rejected"] * 4 + ["ok"], other
    assert "finite" in other[0] and "finite" in other[1] and "got 2" in other[2] and "finite" in other[3]
    assert statuses == [0]
