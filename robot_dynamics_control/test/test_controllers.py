"""The controllers of robot_dynamics_control against robot_dynamics' Python controllers.

controller_probe (test/controller_probe.cpp) runs one controller plugin class on plain doubles:
configured from a parameters file, activated, fed states and references, updated; it prints the
efforts it writes. The expected values come from the Python package on the same robots:
gravity compensation from rd.rnea at rest (+ joint friction at the measured velocity), PD + gravity
from robot_dynamics.control.PDGravity, computed torque from robot_dynamics.control.ComputedTorque
(and rd.aba undoing it), trajectory sampling from scipy's Hermite splines. The controllers' joint
order is the model's reversed, so every vector crosses the name matching.
"""

from __future__ import annotations

import os
import subprocess
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
        self.model = rd.load_robot(robot)
        urdf, drivetrain = robot_files(robot)
        self.n = self.model.nq
        self.joints = params.pop("joints", None) or list(reversed(self.model.joint_names))  # the controller's order
        self.perm = [self.model.joint_names.index(j) for j in self.joints if j in self.model.joint_names]  # controller i -> model index
        full = {"joints": self.joints, "robot_description": Path(urdf).read_text(),
                "drivetrain": str(drivetrain) if drivetrain else "", **params}
        self.kind, self.chained, self.lines = kind, chained, []
        self._params = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
        yaml.safe_dump({"/**": {"ros__parameters": full}}, self._params)
        self._params.close()

    def c(self, x) -> list[float]:
        """Model order -> controller order."""
        x = np.asarray(x, dtype=float)
        return [float(x[k]) for k in self.perm]

    def m(self, values) -> np.ndarray:
        """Controller order -> model order."""
        out = np.empty(self.n)
        out[self.perm] = np.asarray(values, dtype=float)
        return out

    def send(self, line: str) -> None:
        self.lines.append(line)

    def state(self, q, qd) -> None:
        self.send("state " + " ".join(repr(v) for v in self.c(q) + self.c(qd)))

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
        """Runs expecting a configuration failure; its stderr."""
        args = [PROBE, self.kind, self._params.name]
        try:
            r = subprocess.run(args, input="", capture_output=True, text=True, timeout=120)
        finally:
            os.unlink(self._params.name)
        assert r.returncode != 0
        return r.stderr


def random_states(model, count: int, seed: int):
    rng = np.random.default_rng(seed)
    n = model.nq
    for _ in range(count):
        yield rng.uniform(-2.0, 2.0, n), rng.uniform(-1.5, 1.5, n), rng.uniform(-2.0, 2.0, n), \
            rng.uniform(-1.5, 1.5, n), rng.uniform(-3.0, 3.0, n)


def close(actual, expected, what: str) -> None:
    actual, expected = np.asarray(actual), np.asarray(expected)
    err = np.max(np.abs(actual - expected) / np.maximum(1.0, np.abs(expected)))
    assert err <= TOL, f"{what}: relative error {err:.3g}\n C++    {actual}\n Python {expected}"


@pytest.mark.parametrize("robot", ROBOTS)
@pytest.mark.parametrize("friction", [False, True])
def test_gravity_compensation(robot, friction):
    n = rd.load_robot(robot).nq
    p = Probe("gravity", robot, {"friction_feedforward": friction, "effort_limits": [NO_LIMIT] * n})
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
    model = rd.load_robot(robot)
    rng = np.random.default_rng(7)
    kp, kd = rng.uniform(10.0, 200.0, model.nq), rng.uniform(1.0, 30.0, model.nq)
    p = Probe("pd", robot, {"kp": to_controller(model, kp), "kd": to_controller(model, kd),
                            "effort_limits": [NO_LIMIT] * model.nq})
    states = list(random_states(model, 10, seed=3))
    # before any reference: hold the position at activation (the probe's states start at zero)
    q, qd = states[0][0], states[0][1]
    p.state(q, qd)
    p.update()
    for q, qd, qr, qdr, _ in states:
        p.trajectory([0.5, 1.0], [qr + 1.0, qr], [qdr * 0, qdr])  # the last point is the goal
        p.state(q, qd)
        p.update()
    # positions alone: zero goal velocity
    q, qd, qr = states[1][0], states[1][1], states[2][2]
    p.trajectory([1.0], [qr])
    p.state(q, qd)
    p.update()
    # gains changed while running
    kp2 = kp * 0.5
    p.param("kp", p.c(kp2))
    p.update()
    efforts, statuses, _, other = p.run()
    assert other.count("ok") == len(states) + 2, other
    z = np.zeros(model.nq)
    pd = PDGravity(model, kp, kd, effort_limit=NO_LIMIT)
    expected = [pd.update(0.0, states[0][0], states[0][1], Reference(z, z, z)).tau]
    expected += [pd.update(0.0, q, qd, Reference(qr, qdr, z)).tau for q, qd, qr, qdr, _ in states]
    expected.append(pd.update(0.0, states[1][0], states[1][1], Reference(states[2][2], z, z)).tau)
    pd2 = PDGravity(model, kp2, kd, effort_limit=NO_LIMIT)
    expected.append(pd2.update(0.0, states[1][0], states[1][1], Reference(states[2][2], z, z)).tau)
    assert len(efforts) == len(expected)
    for k, (effort, tau) in enumerate(zip(efforts, expected)):
        close(effort, tau, f"{robot} PD + gravity, update {k}")
    assert statuses == [0] * len(expected)


@pytest.mark.parametrize("robot", ROBOTS)
@pytest.mark.parametrize("scheme", ["tracking", "position"])
@pytest.mark.parametrize("friction_velocity", ["measured", "desired"])
def test_computed_torque_chained(robot, scheme, friction_velocity):
    model = rd.load_robot(robot)
    rng = np.random.default_rng(11)
    kp, kd = rng.uniform(50.0, 400.0, model.nq), rng.uniform(5.0, 40.0, model.nq)
    params = {"kp": to_controller(model, kp), "kd": to_controller(model, kd), "scheme": scheme, "friction_velocity": friction_velocity,
              "effort_limits": [NO_LIMIT] * model.nq}
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
    p = Probe("ct", robot, {"omega": [12.0], "xi": [0.8]}, chained=True)
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
    q = rng.uniform(-1.0, 1.0, (3, n))
    qd = rng.uniform(-0.5, 0.5, (3, n)) if order != "linear" else None
    qdd = rng.uniform(-1.0, 1.0, (3, n)) if order == "quintic" else None
    if qd is not None:
        qd[-1] = 0.0
    kp, kd = 100.0, 20.0
    p = Probe("ct", robot, {"kp": [kp], "kd": [kd], "effort_limits": [NO_LIMIT] * n})
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
    p.update()
    bad = q.copy()
    bad[0] = np.nan
    p.state(bad, qd)
    p.update()
    efforts, statuses, _, _ = p.run()
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
    p3 = Probe("gravity", "puma560", {"joints": joints[:-1]})
    err = p3.fails()
    assert "missing ['joint1']" in err, err
    p4 = Probe("ct", "puma560", {"kp": [1.0, 2.0]})
    err = p4.fails()
    assert "kp and kd" in err, err
