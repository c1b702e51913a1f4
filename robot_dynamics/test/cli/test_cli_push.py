"""robot-dynamics push: a push at the tool, detected, isolated and estimated; its files; its bad options."""

from __future__ import annotations

import csv
import json

import numpy as np

from robot_dynamics.cli import main


def test_push_detects_isolates_and_estimates(capsys, tmp_path):
    code = main(["push", "--no-bag", "--out", str(tmp_path), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    assert data["robot"] == "iiwa14" and data["frame"] == "iiwa_link_ee"
    assert data["false_alarms"] == 0
    assert 0.0 < data["delay"] <= 0.01  # within 10 ms of the push's start
    # a force at the flange's origin, on joint 7's axis: joint 6 is the last one it turns
    assert data["joint"] == "iiwa_joint_6"
    np.testing.assert_allclose(data["estimated_wrench"][:3], [-30.0, 20.0, -20.0], atol=0.5)
    np.testing.assert_allclose(data["residual_at_end"], data["external_torque_at_end"], atol=0.1)
    assert (tmp_path / "push_iiwa14.png").stat().st_size > 10_000
    with open(tmp_path / "push_iiwa14.csv", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0][0] == "t" and rows[0][-1] == "collision" and len(rows[0]) == 2 + 3 * 7
    assert len(rows) == 1 + 1501


def test_push_on_the_puma_and_its_text(capsys, tmp_path):
    code = main(["push", "-r", "puma560", "--no-bag", "--no-plot", "--no-csv", "--force", "0,40,0", "--out",
                 str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "detected at t = 0.60" in out and "false alarms before the push: 0 ticks" in out
    assert not list(tmp_path.iterdir())


def test_a_push_not_detected_exits_1(capsys, tmp_path):
    code = main(["push", "-r", "planar2", "--force", "0.01,0,0", "--no-bag", "--no-plot", "--no-csv", "--out",
                 str(tmp_path)])
    out, _ = capsys.readouterr()
    assert code == 1 and "not detected" in out


def test_bad_push_options_are_named(capsys, tmp_path):
    assert main(["push", "--push-at", "2.0", "--out", str(tmp_path)]) == 2
    assert "--push-at + --push-time" in capsys.readouterr().err
    assert main(["push", "--force", "1,2", "--out", str(tmp_path)]) == 2
    assert "force" in capsys.readouterr().err
    assert main(["push", "--frame", "no_such_link", "--out", str(tmp_path)]) == 2
    assert "no_such_link" in capsys.readouterr().err
