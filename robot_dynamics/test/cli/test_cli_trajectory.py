"""``robot-dynamics trajectory``: default run, JSON, CSV and PNG files, splines, task space, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.spatial import rotation_about_axis
from robot_dynamics.commands._common import default_displacement
from robot_dynamics import trajectory as tr
from robot_dynamics.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def read_csv(path):
    lines = open(path).read().strip().splitlines()
    return lines[0].split(","), np.array([[float(x) for x in row.split(",")] for row in lines[1:]])


def test_default_run_is_torque_feasible(capsys, tmp_path):
    """By default the kinematic minimum time is slowed until |tau| <= the effort limits."""
    code, out, err = run(capsys, "trajectory", "--json", "--out", str(tmp_path))
    assert code == 0, err
    m = rd.load_robot("puma560")
    kv, ka = tr.model_limits(m)
    kinematic = tr.plan("trapezoidal", np.zeros(6), default_displacement(6), kv, ka)
    scaled, check = tr.scale_to_torque_limits(m, kinematic, rate=200.0)
    assert check.feasible and scaled.duration > kinematic.duration
    assert json.loads(out)["duration"] == pytest.approx(scaled.duration, rel=1e-9)


def test_kinematic_run_prints_duration_and_writes_csv_and_png(capsys, tmp_path):
    code, out, err = run(capsys, "trajectory", "--no-torque-scaling", "--out", str(tmp_path))
    assert code == 0, err
    m = rd.load_robot("puma560")
    kv, ka = tr.model_limits(m)
    expected = tr.plan("trapezoidal", np.zeros(6), default_displacement(6), kv, ka)
    assert f"duration {expected.duration:.4f} s" in out and "joint6" in out and "|tau| / effort" in out
    header, table = read_csv(tmp_path / "trajectory.csv")
    assert header[:2] == ["t", "q_joint1"] and len(header) == 1 + 3 * 6
    t = table[:, 0]
    assert t[0] == 0.0 and t[-1] == pytest.approx(expected.duration, rel=1e-9)
    q, qd, qdd = expected.sample(t)
    np.testing.assert_allclose(table[:, 1:7], q, atol=1e-9)
    np.testing.assert_allclose(table[:, 7:13], qd, atol=1e-8)
    np.testing.assert_allclose(table[:, 13:], qdd, atol=1e-7)
    png = (tmp_path / "trajectory.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_json_double_s_with_limits(capsys, tmp_path):
    code, out, err = run(
        capsys, "trajectory", "-r", "planar2", "-p", "double_s", "--goal", "1,-0.5", "--velocity", "1",
        "--acceleration", "2,3", "--jerk", "10", "--json", "--no-plot", "--out", str(tmp_path),
    )
    assert code == 0, err
    data = json.loads(out)
    traj = tr.plan("double_s", [0, 0], [1, -0.5], 1.0, [2.0, 3.0], 10.0)
    assert data["duration"] == pytest.approx(traj.duration, rel=1e-12)
    assert data["png"] is None and data["joints"][0]["name"] == rd.load_robot("planar2").joint_names[0]
    assert data["joints"][0]["peak_velocity"] <= 1.0 + 1e-9


def test_spline_through_via_points_and_torque_scaling(capsys, tmp_path):
    code, out, err = run(
        capsys, "trajectory", "-r", "planar2", "-p", "trigonometric_spline", "--via", "0.5,0.5", "--goal", "1,0",
        "--torque-scaling", "--json", "--out", str(tmp_path),
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["torque_feasible"] and data["torque_ratio"] <= 1.0
    _, table = read_csv(tmp_path / "trajectory.csv")
    np.testing.assert_allclose(table[-1, 1:3], [1.0, 0.0], atol=1e-12)
    assert np.min(np.abs(table[:, 1:3] - [0.5, 0.5]).sum(axis=1)) < 0.05  # passes by the via point


def test_task_space_line(capsys, tmp_path):
    code, out, err = run(
        capsys, "trajectory", "--start", "0.2,-0.6,0.5,0.3,-0.4,0.2", "--cartesian", "0.05,0,0.02",
        "--rotation", "0,0,1,10", "--json", "--no-plot", "--out", str(tmp_path),
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["task_space"]["angle_rad"] == pytest.approx(np.radians(10))
    _, table = read_csv(tmp_path / "trajectory.csv")
    m = rd.load_robot("puma560")
    P = rd.frame_pose(m, table[:, 1:7])[:, :3, 3]
    rel = P - P[0]
    d = np.array([0.05, 0, 0.02]) / np.linalg.norm([0.05, 0, 0.02])
    assert np.max(np.linalg.norm(rel - np.outer(rel @ d, d), axis=1)) < 1e-6


def test_task_space_line_with_rpy_interpolation(capsys, tmp_path):
    start = np.array([0.2, -0.6, 0.5, 0.3, -0.4, 0.2])
    code, out, err = run(
        capsys, "trajectory", "--start", ",".join(map(str, start)), "--cartesian", "0.05,0,0.02",
        "--rotation", "0,0,1,10", "--orientation", "rpy", "--json", "--no-plot", "--out", str(tmp_path),
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["task_space"]["orientation"] == "rpy"
    m = rd.load_robot("puma560")
    _, table = read_csv(tmp_path / "trajectory.csv")
    T0, T1 = rd.frame_pose(m, start), rd.frame_pose(m, table[-1, 1:7])
    expected = rd.spatial.matrix_to_rpy(T0[:3, :3] @ rotation_about_axis([0, 0, 1], np.radians(10))) - rd.spatial.matrix_to_rpy(T0[:3, :3])
    np.testing.assert_allclose(data["task_space"]["angle_increments_rad"], expected, atol=1e-12)
    np.testing.assert_allclose(rd.spatial.matrix_to_rpy(T1[:3, :3]) - rd.spatial.matrix_to_rpy(T0[:3, :3]), expected, atol=1e-8)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--velocity", "0"], "velocity_limit: limits must be > 0"),
        (["--goal", "1,2"], "--goal: expected 6 values"),
        (["--goal", "nan,0,0,0,0,0"], "finite"),
        (["--duration", "0.01"], "shorter than the minimum"),
        (["--via", "0,0,0,0,0,0"], "--via: via points need a spline profile"),
        (["--rate", "0"], "--rate"),
        (["--goal", "0,0,4,0,0,0"], "outside its limits"),
        (["--cartesian", "5,0,0", "--start", "0.2,-0.6,0.5,0.3,-0.4,0.2"], "leaves its limits"),
    ],
)
def test_bad_input_gives_one_line_and_status_2(capsys, tmp_path, argv, message):
    code, out, err = run(capsys, "trajectory", "--no-plot", "--out", str(tmp_path), *argv)
    assert code == 2
    assert message in err and err.count("\n") == 1
