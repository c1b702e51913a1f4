"""``robot-dynamics time-optimal``: waypoints from CSV and YAML, the written table against
``time_optimal`` called directly, limits at the joints and at the motors, the plot, and errors
that leave no file behind."""

from __future__ import annotations

import json

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics import trajectory as tr
from robot_dynamics.cli import main
from robot_dynamics.commands.time_optimal import default_waypoints

#: A PUMA 560 path (4 waypoints, rad) well inside the joint limits.
PUMA_PATH = np.array([
    [0.0, -0.3, 0.2, 0.0, 0.4, 0.0],
    [0.4, -0.6, 0.5, 0.5, 0.1, 0.6],
    [0.9, -0.4, 0.9, 0.8, -0.4, 1.2],
    [1.2, -0.1, 0.6, 0.4, -0.6, 1.5],
])
#: Relative slack of a limit at a 1 kHz resampling (the timing's own guarantee is 1e-6).
SLACK = 1e-6


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def read_csv(path):
    lines = path.read_text().strip().splitlines()
    return lines[0].split(","), np.array([[float(x) for x in row.split(",")] for row in lines[1:]])


def columns(header, table, prefix):
    return table[:, [i for i, h in enumerate(header) if h.startswith(prefix)]]


def write_csv(path, names, points):
    lines = ([",".join(names)] if names is not None else []) + [",".join(f"{v:.17g}" for v in row) for row in points]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_csv_with_a_header_in_any_order(capsys, tmp_path):
    """A header of joint names in another order than the model's: the table is that of
    time_optimal on the same waypoints, at rest at both ends, within every torque limit, and
    the plot is written."""
    m = rd.load_robot("puma560")
    order = [3, 0, 5, 1, 4, 2]
    src = write_csv(tmp_path / "path.csv", [m.joint_names[j] for j in order], PUMA_PATH[:, order])
    code, out, err = run(capsys, "time-optimal", str(src), "--rate", "500", "--json", "--out", str(tmp_path / "out"))
    assert code == 0, err
    data = json.loads(out)
    direct = tr.time_optimal(m, PUMA_PATH)
    assert data["duration"] == pytest.approx(direct.duration, rel=1e-9)
    np.testing.assert_allclose(data["waypoints"], PUMA_PATH, atol=1e-15)
    header, table = read_csv(tmp_path / "out" / "time_optimal.csv")
    assert header == ["t"] + [f"{k}_{j}" for k in ("q", "qd", "qdd", "tau") for j in m.joint_names]
    t = table[:, 0]
    assert t[0] == 0.0 and t[-1] == pytest.approx(direct.duration, rel=1e-12) and np.all(np.diff(t) > 0)
    q, qd, qdd = direct.sample(t)
    np.testing.assert_allclose(columns(header, table, "q_"), q, atol=1e-10)
    np.testing.assert_allclose(columns(header, table, "qd_"), qd, atol=1e-9)
    np.testing.assert_allclose(columns(header, table, "qdd_"), qdd, atol=1e-7 * max(1.0, np.abs(qdd).max()))
    tau = columns(header, table, "tau_")
    np.testing.assert_allclose(tau, direct.torques(t), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(table[[0, -1], 1:7], PUMA_PATH[[0, -1]], atol=1e-12)  # on the path's ends
    np.testing.assert_allclose(table[[0, -1], 7:13], 0.0, atol=1e-9)  # at rest
    assert np.all(np.abs(tau) <= m.effort_limit * (1 + SLACK))
    ratios = [j["torque_ratio"] for j in data["joints"]]
    assert max(ratios) <= 1 + SLACK
    np.testing.assert_allclose(ratios, np.max(np.abs(direct.torques(tr.sample_times(direct.duration, 1000.0))), axis=0)
                               / m.effort_limit, rtol=1e-9)
    assert data["motors"] is None and data["compute_time"] > 0 and data["grid_points"] == direct.grid.size >= 1001
    png = (tmp_path / "out" / "time_optimal.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000


def test_yaml_list_mapping_and_bare_csv_time_the_same_path(capsys, tmp_path):
    """The three ways of writing the same waypoints give the same duration, with the limits
    given on the command line equal to time_optimal's with the same limits."""
    m = rd.load_robot("planar2")
    points = np.array([[0.0, 0.3], [0.6, -0.4], [1.1, 0.5]])
    (tmp_path / "list.yaml").write_text("".join(f"- [{a:.17g}, {b:.17g}]\n" for a, b in points))
    (tmp_path / "map.yml").write_text("joint_names: [elbow, shoulder]\nwaypoints:\n"
                                      + "".join(f"  - [{b:.17g}, {a:.17g}]\n" for a, b in points))
    write_csv(tmp_path / "bare.csv", None, points)
    direct = tr.time_optimal(m, points, velocity_limit=1.5, acceleration_limit=[4.0, 6.0], torque_limit=[40.0, 25.0])
    durations = []
    for name in ("list.yaml", "map.yml", "bare.csv"):
        code, out, err = run(capsys, "time-optimal", "-r", "planar2", str(tmp_path / name), "--velocity-limit", "1.5",
                             "--acceleration-limit", "4,6", "--torque-limit", "40,25", "--json", "--no-plot",
                             "--out", str(tmp_path / name.split(".")[0]))
        assert code == 0, err
        data = json.loads(out)
        assert data["png"] is None and not (tmp_path / name.split(".")[0] / "time_optimal.png").exists()
        assert [j["velocity_limit"] for j in data["joints"]] == [1.5, 1.5]
        assert [j["acceleration_limit"] for j in data["joints"]] == [4.0, 6.0]
        assert all(j["peak_velocity"] <= 1.5 * (1 + SLACK) for j in data["joints"])
        assert all(j["peak_acceleration"] <= j["acceleration_limit"] * (1 + SLACK) for j in data["joints"])
        durations.append(data["duration"])
    assert durations == pytest.approx([direct.duration] * 3, rel=1e-9)


def test_motor_limits_of_the_geared_robot(capsys, tmp_path):
    """On three_dof_geared the motor torques (gear4..gear6) are written and kept within the given
    limits, one of them touching its limit; the summary prints the motors' table."""
    m = rd.load_robot("three_dof_geared")
    points = np.array([[0.0, 0.2, -0.3], [0.8, -0.5, 0.4], [1.4, 0.3, 1.0]])
    src = write_csv(tmp_path / "geared.csv", m.joint_names, points)
    code, out, err = run(capsys, "time-optimal", "-r", "three_dof_geared", str(src), "--motor-torque-limit", "8,10,6",
                         "--out", str(tmp_path))
    assert code == 0, err
    assert "motor" in out and "gear6" in out and "|tau| / limit" in out
    direct = tr.time_optimal(m, points, motor_torque_limit=[8.0, 10.0, 6.0])
    assert f"duration {direct.duration:.4f} s" in out
    header, table = read_csv(tmp_path / "time_optimal.csv")
    assert header[-3:] == ["tau_motor_gear4", "tau_motor_gear5", "tau_motor_gear6"]
    motor = columns(header, table, "tau_motor_")
    np.testing.assert_allclose(motor, direct.motor_torques(table[:, 0]), rtol=1e-9, atol=1e-9)
    peak = np.max(np.abs(direct.motor_torques(tr.sample_times(direct.duration, 1000.0))), axis=0) / [8.0, 10.0, 6.0]
    assert np.max(peak) <= 1 + SLACK and np.max(peak) > 0.99


def test_a_spreadsheet_csv_with_a_byte_order_mark_and_comments(capsys, tmp_path):
    src = tmp_path / "sheet.csv"
    src.write_bytes(b"\xef\xbb\xbf# exported\r\nelbow,shoulder\r\n\r\n0.3,0\r\n-0.4,0.6\r\n0.5,1.1\r\n")
    code, out, err = run(capsys, "time-optimal", "-r", "planar2", str(src), "--json", "--no-plot", "--out", str(tmp_path))
    assert code == 0, err
    np.testing.assert_array_equal(json.loads(out)["waypoints"], [[0.0, 0.3], [0.6, -0.4], [1.1, 0.5]])


def test_a_motor_limit_too_low_to_hold_the_path_names_the_motor_option(capsys, tmp_path):
    code, _, err = run(capsys, "time-optimal", "-r", "three_dof_geared", "--motor-torque-limit", "0.5", "--out", str(tmp_path))
    assert code == 2 and err.count("\n") == 1
    assert "the motor 'gear4' needs" in err and err.endswith("; raise --motor-torque-limit or move the path\n")
    assert list(tmp_path.iterdir()) == []


def test_no_file_times_the_default_path_of_the_default_robot(capsys, tmp_path):
    code, out, err = run(capsys, "time-optimal", "--no-plot", "--out", str(tmp_path))
    assert code == 0, err
    m = rd.load_robot("puma560")
    points = default_waypoints(m)
    assert points.shape == (3, 6) and np.all(points >= m.lower) and np.all(points <= m.upper)
    direct = tr.time_optimal(m, points)
    assert f"puma560: time-optimal timing of 3 waypoints (the default path), duration {direct.duration:.4f} s" in out
    assert "joint6" in out and (tmp_path / "time_optimal.csv").is_file()


@pytest.mark.parametrize(
    "content, argv, message",
    [
        (None, [], "cannot read"),
        ("0,0\n1,1\n", ["--suffix", ".txt"], "expected a .csv, .yaml or .yml file"),
        ("0,0,0,0,0,0\n1,1,1,1,1\n", [], "line 2: expected 6 values (joint1, joint2"),
        ("joint1,joint2,joint3,joint4,joint5,joint_6\n" + "0,0,0,0,0,0\n" * 2, [], "did you mean 'joint6'?"),
        ("joint1,joint2,joint3,joint4,joint5\n" + "0,0,0,0,0\n" * 2, [], "no column for joint6"),
        ("0,0,0,0,0,0\n0,0,x,0,0,0\n", [], "line 2: expected a number, got 'x'"),
        ("0,0,0,0,0,0\n0,0,nan,0,0,0\n", [], "expected a finite number"),
        ("0,0,0,0,0,0\n", [], "expected at least 2 waypoints, got 1"),
        ("0,0,0,0,0,0\n3.5,0,0,0,0,0\n", [], "waypoint 2: joint1 = 3.5 is outside its limits"),
        ("- [0, 0, 0, 0, 0, 0]\n- [1, 1, 1\n", ["--suffix", ".yaml"], "malformed YAML"),
        ("points: [[0, 0, 0, 0, 0, 0]]\n", ["--suffix", ".yaml"], "expected the keys joint_names (optional) and waypoints"),
        ("- [0, 0, 0, 0, 0, 0]\n- [0, 0, true, 0, 0, 0]\n", ["--suffix", ".yaml"], "waypoint 2: expected a number, got True"),
        ("0,0,0,0,0,0\n0.5,0.2,0.3,0,0,0\n", ["--torque-limit", "0"], "--torque-limit: limits must be > 0"),
        ("0,0,0,0,0,0\n0.5,0.2,0.3,0,0,0\n", ["--velocity-limit", "1,2"], "--velocity-limit: expected one value or 6"),
        ("0,0,0,0,0,0\n0.5,0.2,0.3,0,0,0\n", ["--grid-points", "1"], "--grid-points: expected an integer from 2"),
        ("0,0,0,0,0,0\n0.5,0.2,0.3,0,0,0\n", ["--rate", "0"], "--rate"),
        ("0,0,0,0,0,0\n0.5,0.2,0.3,0,0,0\n", ["--torque-limit", "5"], "raise --torque-limit"),
    ],
)
def test_bad_input_is_one_line_status_2_and_leaves_the_files_as_they_were(capsys, tmp_path, content, argv, message):
    out = tmp_path / "out"
    code, _, err = run(capsys, "time-optimal", "--no-plot", "--rate", "20", "--out", str(out))
    assert code == 0, err
    before = (out / "time_optimal.csv").read_bytes()
    argv = list(argv)
    suffix = ".csv"
    if "--suffix" in argv:
        suffix = argv.pop(argv.index("--suffix") + 1)
        argv.remove("--suffix")
    src = tmp_path / f"path{suffix}"
    if content is not None:
        src.write_text(content)
    code, stdout, err = run(capsys, "time-optimal", str(src), "--out", str(out), *argv)
    assert code == 2 and stdout == ""
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert (out / "time_optimal.csv").read_bytes() == before and not (out / "time_optimal.png").exists()
    assert sorted(p.name for p in out.iterdir()) == ["time_optimal.csv"]  # no temporary file left


def test_an_infeasible_path_names_the_joint_and_the_torque(capsys, tmp_path):
    """Joint 2 carries the PUMA's arm (37.5 N m of gravity at q = 0): under a 30 N m limit there
    the path cannot be held on its way (at s = 0.372 it needs 45.8 N m at rest), and the one line
    says where, what joint 2 needs and which option to raise."""
    m = rd.load_robot("puma560")
    limits = m.effort_limit.copy()
    limits[1] = 30.0
    with pytest.raises(rd.errors.PathInfeasibleError) as direct:
        tr.time_optimal(m, PUMA_PATH, torque_limit=limits)
    assert direct.value.joint == "joint2" and abs(direct.value.torque) > 30.0 and direct.value.limit == 30.0
    assert 0.0 < direct.value.s < 1.0
    code, _, err = run(capsys, "time-optimal", str(write_csv(tmp_path / "p.csv", None, PUMA_PATH)),
                       "--torque-limit", ",".join(f"{x:g}" for x in limits), "--out", str(tmp_path / "out"))
    assert code == 2
    assert err == f"robot-dynamics time-optimal: error: {direct.value}; raise --torque-limit or move the path\n"
    assert f"s = {direct.value.s:.6g}" in err and "joint 'joint2' needs" in err
    assert not (tmp_path / "out").exists()
