"""``robot-dynamics observer-thresholds``: the thresholds from a CSV and from a rosbag2 of
collision-free motion, the YAML it writes, and its errors named on one line."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import yaml

import robot_dynamics as rd
from robot_dynamics.cli import main
from robot_dynamics.control import ComputedTorque
from robot_dynamics.identification import read_csv, write_csv
from robot_dynamics.io import write_rosbag
from robot_dynamics.observers import tune_thresholds
from robot_dynamics.simulation import simulate
from robot_dynamics.trajectory import plan

MODEL = rd.load_robot("iiwa14")


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    """The iiwa14 along a move under computed torque on a model 10 % off, noisy positions and
    velocities: the same run as a CSV and as a rosbag2 folder."""
    est = MODEL.replace(mass=MODEL.mass * 1.1, inertia_com=MODEL.inertia_com * 1.1)
    start = np.full(MODEL.nq, 0.2)
    move = plan("quintic", start, start + np.resize([0.5, -0.4, 0.3, 0.8, -0.6, 1.0], MODEL.nq), duration=0.8)
    res = simulate(MODEL, ComputedTorque(est), move, duration=1.0, q0=start, progress=False)
    rng = np.random.default_rng(3)
    noisy = dataclasses.replace(res, q=res.q + rng.normal(0, 1e-5, res.q.shape),
                                qd=res.qd + rng.normal(0, 1e-3, res.qd.shape))
    folder = tmp_path_factory.mktemp("recordings")
    csv = write_csv(folder / "free.csv", MODEL.joint_names, noisy.t, noisy.q, tau=noisy.tau, qd=noisy.qd)
    bag = write_rosbag(noisy, MODEL, folder / "free_bag", start_time=1.7e9, tf_every=1000)
    return {"csv": csv, "bag": bag, "folder": folder}


def _run(argv, capsys):
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_csv_and_bag_give_the_library_thresholds_and_their_yaml(recordings, tmp_path, capsys) -> None:
    expected = tune_thresholds(MODEL, read_csv(recordings["csv"], MODEL), gain=80.0, margin=2.0)
    written = {}
    for kind in ("csv", "bag"):
        out = tmp_path / kind
        code, text, err = _run(["observer-thresholds", str(recordings[kind]), "-r", "iiwa14", "--gain", "80",
                                "--margin", "2", "--out", str(out)], capsys)
        assert code == 0, err
        lines = text.splitlines()
        assert lines[0].startswith(f"observer thresholds of iiwa14 from {recordings[kind]}: 1001 samples over 1 s")
        assert lines[1].split() == ["joint", "peak", "|r|", "at", "[s]", "relative", "threshold", "margin", "kept"]
        rows = {line.split()[0]: [float(v) for v in line.split()[1:]] for line in lines[3:3 + MODEL.nq]}
        assert list(rows) == list(MODEL.joint_names)
        # a bag's stamps (1.7e9 s read as float64 seconds) carry 2.4e-7 s of rounding: 2e-4 of a tick
        rtol = 1e-5 if kind == "csv" else 3e-3
        np.testing.assert_allclose([rows[j][0] for j in MODEL.joint_names], expected.peak, rtol=rtol)
        np.testing.assert_allclose([rows[j][3] for j in MODEL.joint_names], expected.threshold, rtol=rtol)
        assert all(rows[j][4] == pytest.approx(2.0) for j in MODEL.joint_names)
        assert "false alarms over the recording with these thresholds: 0 samples" in text
        doc = yaml.safe_load((out / "observer_thresholds.yaml").read_text())
        assert list(doc) == ["joints", "gain", "thresholds", "relative"]
        assert doc["joints"] == list(MODEL.joint_names) and doc["gain"] == [80.0] * MODEL.nq
        assert doc["relative"] == [0.05] * MODEL.nq
        written[kind] = np.array(doc["thresholds"])
        assert (out / "observer_thresholds.png").stat().st_size > 10_000
    np.testing.assert_allclose(written["csv"], expected.threshold, rtol=1e-12)
    np.testing.assert_allclose(written["bag"], expected.threshold, rtol=3e-3)


def test_json_fit_and_floor(recordings, tmp_path, capsys) -> None:
    code, text, err = _run(["observer-thresholds", str(recordings["csv"]), "-r", "iiwa14", "--relative", "fit",
                            "--floor", "0.2", "--no-plot", "--json", "--out", str(tmp_path)], capsys)
    assert code == 0, err
    data = json.loads(text)
    assert data["false_alarms"] == 0 and data["velocity"] == "recorded"
    assert min(data["thresholds"]) >= 0.2 and min(data["margin_kept"]) >= 1.5 - 1e-9
    assert all(r >= 0 for r in data["relative"])
    assert not (tmp_path / "observer_thresholds.png").exists()
    assert data["files"] == [str(tmp_path / "observer_thresholds.yaml")]


def _without(csv_path, out_path, drop) -> str:
    lines = csv_path.read_text().splitlines()
    header = lines[0].split(",")
    keep = [i for i, h in enumerate(header) if not drop(h)]
    out_path.write_text("\n".join(",".join(line.split(",")[i] for i in keep) for line in lines) + "\n")
    return str(out_path)


def _no_effort(csv_path, out_path) -> str:
    lines = csv_path.read_text().splitlines()
    header = lines[0].split(",")
    body = [",".join("" if header[i].startswith("tau_") else v for i, v in enumerate(line.split(",")))
            for line in lines[1:]]
    out_path.write_text("\n".join([lines[0], *body]) + "\n")
    return str(out_path)


@pytest.mark.parametrize("case, message", [
    ("missing", "recording not found: "),
    ("no joint", "free.csv: missing columns ['q_iiwa_joint_7']"),
    ("no effort", "free.csv: no effort in the joint states (all empty or NaN); the measured joint efforts are needed"),
    ("other robot", "free_bag: joints ['joint1', 'joint2'"),
    ("margin", "margin: expected a safety factor >= 1, got 0.5"),
    ("relative", "--relative: expected 7 comma-separated numbers"),
    ("gain", "gain: gains must be > 0"),
])
def test_errors_are_named_on_one_line_with_status_2(recordings, tmp_path, capsys, case, message) -> None:
    csv, bag = recordings["csv"], recordings["bag"]
    argv = {
        "missing": lambda: [str(tmp_path / "nothing.csv"), "-r", "iiwa14"],
        "no joint": lambda: [_without(csv, tmp_path / "free.csv", lambda h: h.endswith("joint_7")), "-r", "iiwa14"],
        "no effort": lambda: [_no_effort(csv, tmp_path / "free.csv"), "-r", "iiwa14"],
        "other robot": lambda: [str(bag), "-r", "puma560"],
        "margin": lambda: [str(csv), "-r", "iiwa14", "--margin", "0.5"],
        "relative": lambda: [str(csv), "-r", "iiwa14", "--relative", "0.1,x"],
        "gain": lambda: [str(csv), "-r", "iiwa14", "--gain", "0"],
    }[case]()
    code, text, err = _run(["observer-thresholds", *argv, "--no-plot", "--out", str(tmp_path / "out")], capsys)
    assert code == 2
    assert err.startswith("robot-dynamics observer-thresholds: error: ") and message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "out" / "observer_thresholds.yaml").exists()
