"""The robot-dynamics command: core subcommands, tables, JSON, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", ["info", "torque", "accel", "mass-matrix"])
def test_every_core_subcommand_works_without_arguments(capsys, command):
    code, out, err = run(capsys, command)
    assert code == 0, err
    assert "puma560" in out and "joint1" in out


def test_torque_json_matches_the_library(capsys):
    code, out, _ = run(capsys, "torque", "--robot", "rx90", "--q", "0.1,-0.5,0.3,0,0.2,0", "--qd", "1,0,0,0,0,0", "--qdd", "0,1,0,0,0,0", "--json")
    assert code == 0
    data = json.loads(out)
    m = rd.load_robot("rx90")
    expected = rd.rnea(m, [0.1, -0.5, 0.3, 0, 0.2, 0], [1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0])
    np.testing.assert_allclose(data["tau"], expected, rtol=1e-12)
    assert data["joint_names"] == list(m.joint_names)


def test_accel_and_mass_matrix_json(capsys):
    code, out, _ = run(capsys, "accel", "-r", "planar2", "--q", "-0.3,1.2", "--tau", "5,-1", "--json")
    assert code == 0
    m = rd.load_robot("planar2")
    np.testing.assert_allclose(json.loads(out)["qdd"], rd.aba(m, [-0.3, 1.2], [0, 0], [5, -1]), rtol=1e-12)
    code, out, _ = run(capsys, "mass-matrix", "-r", "planar2", "--q", "-0.3,1.2", "--json")
    np.testing.assert_allclose(json.loads(out)["mass_matrix"], rd.crba(m, [-0.3, 1.2]), rtol=1e-12)


def test_info_lists_robots_and_describes_one(capsys):
    code, out, _ = run(capsys, "info", "--list", "--json")
    assert code == 0 and set(json.loads(out)["robots"]) >= {"planar2", "puma560", "rx90", "iiwa14"}
    code, out, _ = run(capsys, "info", "--robot", "iiwa14")
    assert code == 0 and "iiwa_joint_7" in out and "7 joints" in out


def test_urdf_and_dh_yaml_inputs(capsys, tmp_path):
    from robot_dynamics.model import share_directory

    dh = share_directory() / "config" / "rx90_dh.yaml"
    code, out, _ = run(capsys, "urdf", "--urdf", str(dh))
    assert code == 0 and out.startswith("<?xml") and 'name="rx90"' in out
    path = tmp_path / "rx90.urdf"
    path.write_text(out)
    code, out, _ = run(capsys, "torque", "--urdf", str(path), "--json")
    assert code == 0 and len(json.loads(out)["tau"]) == 6


@pytest.mark.parametrize(
    "argv, message",
    [
        (["torque", "--robot", "ur5"], "Unknown robot 'ur5'. Valid robots: ["),
        (["torque", "--q", "1,2,3"], "--q: expected 6 values (joint1, joint2"),
        (["torque", "--q", "nan,0,0,0,0,0"], "--q: values must be finite"),
        (["accel", "--tau", "a,b"], "--tau: expected 6 comma-separated numbers"),
        (["mass-matrix", "--urdf", "missing.urdf"], "not found"),
        (["info", "--robot", "planar2", "--drivetrain", "missing.yaml"], "not found"),
    ],
)
def test_bad_input_exits_nonzero_with_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err, err


def test_malformed_urdf_file(capsys, tmp_path):
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'></robot>")
    code, _, err = run(capsys, "info", "--urdf", str(bad))
    assert code == 2 and "Malformed URDF XML" in err and err.count("\n") == 1


def test_negative_values_after_an_option(capsys):
    code, out, _ = run(capsys, "torque", "-r", "planar2", "--q", "-0.5,-1", "--json")
    assert code == 0 and json.loads(out)["q"] == [-0.5, -1.0]


def test_console_script_runs_as_a_process(tmp_path):
    # run from a neutral folder: the installed package, as a user gets it
    proc = subprocess.run(
        [sys.executable, "-m", "robot_dynamics.cli", "torque", "--json"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["gravity_torque"][1] == pytest.approx(37.4837, abs=1e-4)
