"""``robot-dynamics stewart``: runs with no arguments, JSON matches the library, plots written,
bad input gives a one-line error."""

from __future__ import annotations

import json

import numpy as np

from robot_dynamics.cli import main
from robot_dynamics.closedchain import stewart as st


def test_stewart_default_run_writes_csv_and_figures(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = main(["stewart", "--samples", "20", "--check"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "leg1" in out and "general closed-chain layer: max relative difference" in out
    folder = tmp_path / "robot_dynamics_out"
    for name in ("stewart.csv", "stewart_fig4_actuators.png", "stewart_fig5_forces.png", "stewart_fig6_contributions.png"):
        assert (folder / name).stat().st_size > 1000
    table = np.loadtxt(folder / "stewart.csv", delimiter=",", skiprows=1)
    assert table.shape == (41, 1 + 6 + 6 * 5)
    # the CSV's forces are the library's at the same poses
    tau = st.StewartPlatform().inverse_dynamics(table[:, 1:7], *_rates(table[:, 0]))
    np.testing.assert_allclose(table[:, 13:19], tau, rtol=1e-7, atol=1e-7)


def _rates(t):
    from robot_dynamics.trajectory.splines import trigonometric_spline

    P1, P2, dur = st.test_motion_points(st.load_stewart_parameters())
    _, xd, xdd = trigonometric_spline(np.stack([P1, P2, P1]), dur).sample(t)
    return xd, xdd


def test_stewart_json(capsys, tmp_path):
    code = main(["stewart", "--json", "--no-plot", "--samples", "10", "--check", "--out", str(tmp_path)])
    out, _ = capsys.readouterr()
    assert code == 0
    data = json.loads(out)
    assert [leg["leg"] for leg in data["legs"]] == list(st.ACTUATOR_NAMES)
    assert data["general_layer_max_relative_difference"] < 1e-8
    assert data["P2"][2] == 2500.0
    lmin = [leg["length_min"] for leg in data["legs"]]
    np.testing.assert_allclose(lmin, lmin[0], rtol=1e-12)  # P1 is symmetric: equal legs


def test_stewart_bad_input_is_one_line(capsys, tmp_path):
    code = main(["stewart", "--p2", "0,0,6000,0,0,0", "--no-plot", "--out", str(tmp_path)])
    _, err = capsys.readouterr()
    assert code == 2 and "outside the stroke" in err and err.count("\n") == 1
    code = main(["stewart", "--p1", "1,2,3", "--out", str(tmp_path)])
    _, err = capsys.readouterr()
    assert code == 2 and "--p1: expected 6 values" in err
