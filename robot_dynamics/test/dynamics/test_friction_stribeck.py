"""Khalil [7.26] friction (static friction Fst with Stribeck decay B) from the joint-properties
YAML, in rnea/aba, `robot-dynamics info` and the simulator's smooth option."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.cli import main
from robot_dynamics.control import JointPID
from robot_dynamics.errors import ModelError
from robot_dynamics.model import robot_files
from robot_dynamics.simulation import simulate

FRICTION = {
    "joints": {
        "shoulder": {"viscous": 0.8, "coulomb": 1.2, "static_friction": 1.8, "stribeck": 25.0},
        "elbow": {"viscous": 0.3, "coulomb": 0.5},
    }
}


def khalil_7_26(Fv, Fc, Fst, B, qd):
    """[7.26] written out per joint: Fc sign(qd) + Fv qd + (Fst - Fc) sign(qd) exp(-|qd| B)."""
    return [
        fc * math.copysign(1.0, v) * (v != 0) + fv * v + (fst - fc) * math.copysign(1.0, v) * (v != 0) * math.exp(-abs(v) * b)
        for fv, fc, fst, b, v in zip(Fv, Fc, Fst, B, qd)
    ]


@pytest.fixture(scope="module")
def planar():
    urdf, _ = robot_files("planar2")
    return rd.load_urdf(urdf, drivetrain=FRICTION)


def test_yaml_keys_load_and_default_to_the_7_27_model(planar):
    np.testing.assert_array_equal(planar.static_friction, [1.8, 0.5])  # elbow: Fst = Fc, no excess
    np.testing.assert_array_equal(planar.stribeck, [25.0, 0.0])
    np.testing.assert_array_equal(planar.coulomb, [1.2, 0.5])
    urdf, _ = robot_files("planar2")
    plain = rd.load_urdf(urdf, drivetrain={"joints": {"elbow": {"coulomb": 0.5}}})
    assert plain.static_friction is None and plain.stribeck is None


@pytest.mark.parametrize(
    "props, message",
    [
        ({"static_friction": 1.8}, "give 'static_friction' (Fst) and 'stribeck' (B) together"),
        ({"coulomb": 1.2, "static_friction": 1.0, "stribeck": 5.0}, "static_friction: must be >= coulomb (1.2), got 1.0"),
        ({"static_friction": 1.0, "stribeck": -5.0}, "stribeck: must be >= 0.0"),
        ({"static_friction": "high", "stribeck": 5.0}, "static_friction: expected a number"),
        ({"stiction": 1.0}, "Valid keys: ['viscous', 'coulomb', 'static_friction', 'stribeck'"),
    ],
)
def test_bad_friction_keys_are_named(props, message):
    urdf, _ = robot_files("planar2")
    with pytest.raises(ModelError, match=None) as err:
        rd.load_urdf(urdf, drivetrain={"joints": {"shoulder": props}})
    assert message in str(err.value)


def test_rnea_and_aba_use_7_26(planar):
    rng = np.random.default_rng(726)
    q, qdd = rng.uniform(-2, 2, (40, 2)), rng.normal(0, 3, (40, 2))
    qd = np.concatenate([rng.normal(0, 0.05, (20, 2)), rng.normal(0, 2, (20, 2))])  # near the Stribeck zone and beyond
    qd[0] = [0.0, 0.0]
    tau = rd.rnea(planar, q, qd, qdd)
    ref = np.array([khalil_7_26(planar.viscous, planar.coulomb, planar.static_friction, planar.stribeck, v) for v in qd])
    np.testing.assert_allclose(tau - rd.rnea(planar, q, qd, qdd, friction=False), ref, rtol=0, atol=1e-12)
    # the static excess is exercised: up to 0.6 N m at low speed, gone at 2 rad/s
    excess = ref[:, 0] - (planar.viscous[0] * qd[:, 0] + planar.coulomb[0] * np.sign(qd[:, 0]))
    fast = np.abs(qd[:, 0]) > 0.5
    assert np.abs(excess[1:20]).max() > 0.5 and fast.sum() > 5 and np.abs(excess[fast]).max() < 0.6 * np.exp(-12.5)
    np.testing.assert_allclose(rd.aba(planar, q, qd, tau), qdd, rtol=1e-9, atol=1e-9)  # aba undoes rnea


def test_info_shows_fst_and_b(planar, capsys, tmp_path):
    urdf, _ = robot_files("planar2")
    side = tmp_path / "friction.yaml"
    side.write_text(json.dumps(FRICTION))  # JSON is YAML
    assert main(["info", "--urdf", str(urdf), "--drivetrain", str(side), "--json"]) == 0
    joints = json.loads(capsys.readouterr().out)["joints"]
    assert [(j["static_friction"], j["stribeck"]) for j in joints] == [(1.8, 25.0), (0.5, 0.0)]
    assert main(["info", "--urdf", str(urdf), "--drivetrain", str(side)]) == 0
    text = capsys.readouterr().out
    head = next(line for line in text.splitlines() if line.lstrip().startswith("joint"))
    assert "Fst" in head and " B " in head + " "


ROTOR = """<robot name="rotor"><link name="base"/>
<link name="arm"><inertial><origin xyz="0.1 0 0"/><mass value="2.0"/>
<inertia ixx="0.002" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.004"/></inertial></link>
<joint name="spin" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
<limit effort="10" velocity="20"/></joint></robot>"""


def test_simulator_smooths_every_sign_of_7_26():
    """coulomb_smoothing: the plant's accelerations are -tau_f(qd) / J with sign -> tanh(qd / v_s)
    in both the Coulomb and the static term of [7.26], J = Izz + m r^2 (vertical axis, no gravity
    torque, zero control torque)."""
    fr = {"joints": {"spin": {"viscous": 0.05, "coulomb": 0.2, "static_friction": 0.5, "stribeck": 4.0}}}
    plant = rd.load_urdf(ROTOR, drivetrain=fr)
    J = 0.004 + 2.0 * 0.1**2
    vs = 0.05
    r = simulate(plant, JointPID(plant, kp=0.0, kd=0.0), np.zeros(1), duration=0.3, q0=[0.0], qd0=[1.5],
                 control_rate=1000.0, coulomb_smoothing=vs, progress=False)
    v = r.qd[:, 0]
    s = np.tanh(v / vs)
    expected = -(0.05 * v + 0.2 * s + (0.5 - 0.2) * s * np.exp(-np.abs(v) * 4.0)) / J
    np.testing.assert_allclose(r.qdd[:, 0], expected, rtol=1e-9, atol=1e-9)
    assert v[0] == pytest.approx(1.5) and 0.0 < v[-1] < 1.0  # it slows down, smoothly through the static zone
    # without the static term's smoothing (the [7.28] law alone) the rotor would stop later
    coulomb_only = -(0.05 * v + 0.2 * s) / J
    assert np.all(np.abs(expected) > np.abs(coulomb_only))
