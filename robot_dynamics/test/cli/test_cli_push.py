"""robot-dynamics simulate --push: a push at the tool, detected, isolated and estimated by the momentum
observer; its files; its bad options."""

from __future__ import annotations

import csv
import json

import numpy as np

from robot_dynamics.cli import main


def test_a_push_at_the_iiwa14_tool_is_detected_isolated_and_estimated(capsys, tmp_path):
    code = main(["simulate", "-r", "iiwa14", "--push=-30,20,-20", "--no-bag", "--csv", "--out", str(tmp_path), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    push = json.loads(out)["push"]
    assert push["frame"] == "iiwa_link_ee" and push["false_alarms"] == 0
    assert 0.0 < push["delay"] <= 0.01  # within 10 ms of the push's start
    # a force at the flange's origin, on joint 7's axis: joint 6 is the last one it turns
    assert push["joint"] == "iiwa_joint_6"
    np.testing.assert_allclose(push["estimated_wrench"][:3], [-30.0, 20.0, -20.0], atol=1.0)
    np.testing.assert_allclose(push["residual_at_end"], push["external_torque_at_end"], atol=0.3)
    assert (tmp_path / "push_iiwa14.png").stat().st_size > 10_000
    with open(tmp_path / "push_iiwa14.csv", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0][0] == "t" and rows[0][-1] == "collision" and len(rows[0]) == 2 + 3 * 7
    assert len(rows) == 1 + 1501
    assert {float(r[-1]) for r in rows[1:]} == {0.0, 1.0}


def test_a_push_on_the_puma_with_its_friction_and_the_text(capsys, tmp_path):
    code = main(["simulate", "--push", "0,40,0", "--no-bag", "--no-plot", "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "push: 40 N and 0 N m at tool0" in out
    assert "detected at t = 0.60" in out and "false alarms before the push: 0 ticks" in out
    assert not list(tmp_path.iterdir())


def test_a_push_too_weak_is_not_detected(capsys, tmp_path):
    code = main(["simulate", "-r", "planar2", "--push", "0.01,0,0", "--no-bag", "--no-plot", "--out", str(tmp_path)])
    out, _ = capsys.readouterr()
    assert code == 0 and "not detected" in out


def test_bad_push_options_are_named(capsys, tmp_path):
    assert main(["simulate", "--push", "1,2,3", "--push-at", "2.0", "--out", str(tmp_path)]) == 2
    assert "--push-at + --push-time" in capsys.readouterr().err
    assert main(["simulate", "--push", "1,2", "--out", str(tmp_path)]) == 2
    assert "push" in capsys.readouterr().err
    assert main(["simulate", "--push", "1,2,3", "--push-frame", "no_such_link", "--out", str(tmp_path)]) == 2
    assert "no_such_link" in capsys.readouterr().err
    assert main(["simulate", "--push", "1,2,3", "--push-time", "0", "--out", str(tmp_path)]) == 2
    assert "--push-time" in capsys.readouterr().err
