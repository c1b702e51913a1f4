"""``robot-dynamics drivetrain``: the three-model comparison runs with no arguments, its numbers
are the library's, the plot is written, bad input gives one line."""

from __future__ import annotations

import json

import numpy as np

import robot_dynamics as rd
from robot_dynamics.cli import main
from robot_dynamics.drivetrain import diagonal_armature_model


def test_default_run_writes_table_csv_and_plot(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = main(["drivetrain", "--samples", "41"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "three_dof_geared" in out and "input (motor) torques" in out and "gear6" in out
    folder = tmp_path / "robot_dynamics_out"
    assert (folder / "drivetrain_comparison.png").stat().st_size > 10000
    table = np.loadtxt(folder / "drivetrain_comparison.csv", delimiter=",", skiprows=1)
    header = (folder / "drivetrain_comparison.csv").read_text().splitlines()[0].split(",")
    assert table.shape == (41, len(header))
    model = rd.load_robot("three_dof_geared")
    q = table[:, 1:4]
    # recompute the torques of the full and armature models at the CSV's states
    k = header.index("G_full_joint1")
    row = 20
    t = table[:, 0]
    from robot_dynamics.trajectory import plan

    traj = plan("quintic", q[0], q[-1], duration=t[-1])
    qs, qds, qdds = traj.sample(t)
    np.testing.assert_allclose(qs, q, atol=1e-8)
    np.testing.assert_allclose(table[:, k : k + 3], rd.rnea(model, qs, qds, qdds), rtol=1e-7, atol=1e-7)
    ka = header.index("G_armature_joint1")
    np.testing.assert_allclose(table[:, ka : ka + 3], rd.rnea(diagonal_armature_model(model), qs, qds, qdds), rtol=1e-7, atol=1e-7)
    kx = header.index("xi_full_gear4")
    np.testing.assert_allclose(table[:, kx : kx + 3] @ model.drivetrain.A.T, table[:, k : k + 3], rtol=1e-6, atol=1e-6)
    assert np.abs(table[row, k + 2] - table[row, ka + 2]) > 1e-3  # the coupling shows


def test_json_output(capsys, tmp_path):
    code = main(["drivetrain", "--json", "--no-plot", "--samples", "21", "--duration", "0.8", "--out", str(tmp_path)])
    out, _ = capsys.readouterr()
    assert code == 0
    data = json.loads(out)
    assert data["robot"] == "three_dof_geared" and [j["name"] for j in data["joints"]] == ["joint1", "joint2", "joint3"]
    assert [a["name"] for a in data["actuators"]] == ["gear4", "gear5", "gear6"]
    np.testing.assert_allclose(data["structure_matrix"], [[-6, 1, 0], [0, -4, 1], [0, 0, 12]])
    for j in data["joints"]:
        assert j["max_diff_armature"] > 0.01 and j["max_diff_no_rotors"] > 0.01


def test_bad_input_is_one_line(capsys, tmp_path):
    code = main(["drivetrain", "--robot", "planar2", "--out", str(tmp_path)])
    _, err = capsys.readouterr()
    assert code == 2 and "has no gear train" in err and "three_dof_geared" in err and err.count("\n") == 1
    code = main(["drivetrain", "--start", "1,2", "--out", str(tmp_path)])
    _, err = capsys.readouterr()
    assert code == 2 and "--start: expected 3 values" in err and err.count("\n") == 1
    code = main(["drivetrain", "--duration", "-1", "--out", str(tmp_path)])
    _, err = capsys.readouterr()
    assert code == 2 and "--duration must be > 0" in err
