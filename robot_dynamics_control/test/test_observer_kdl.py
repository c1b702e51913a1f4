"""bench_observer_kdl builds and runs: the engine's momentum observer against KDL's
ChainExternalWrenchEstimator on a recorded push (bench/observer_kdl_motion.py of the repository).

A short recording per bundled robot (2 s at 1 kHz, a push at the tool from 0.8 s for 0.8 s), one
timed pass; the errors' ordering is checked, not the clock (docs/observers.md has the measured
table and why the orderings are what they are).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

BENCH = os.environ.get("RD_OBSERVER_KDL_BENCH", "")
MOTION = os.environ.get("RD_OBSERVER_KDL_MOTION", "")
pytestmark = pytest.mark.skipif(
    not BENCH, reason="RD_OBSERVER_KDL_BENCH is not set (colcon test of robot_dynamics_control sets it)"
)


def run_bench(robot: str, folder) -> tuple[dict, float]:
    """The bench's JSON rows by subject, and the recording's largest |external joint torque| [N m]."""
    assert os.path.isfile(MOTION), f"the recording script is missing: {MOTION!r} (RD_OBSERVER_KDL_MOTION)"
    csv = folder / f"{robot}.csv"
    subprocess.run([sys.executable, MOTION, "--robot", robot, "--out", str(csv), "--duration", "2.0",
                    "--push-at", "0.8", "--push-time", "0.8"], check=True, capture_output=True, text=True, timeout=240)
    header = csv.read_text().split("\n", 1)[0].split(",")
    ext = np.loadtxt(csv, delimiter=",", skiprows=1, usecols=[i for i, h in enumerate(header) if h.startswith("ext_")])
    done = subprocess.run([BENCH, "--csv", str(csv), "--robot", robot, "--repeats", "1"],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {r["subject"]: r for r in (json.loads(line) for line in done.stdout.splitlines() if line.startswith("{"))}
    return rows, float(np.max(np.abs(ext)))


@pytest.mark.parametrize("robot", ["iiwa14", "puma560"])
def test_the_engine_observer_against_kdl(robot, tmp_path):
    rows, peak = run_bench(robot, tmp_path)
    ours, kdl = rows["rd_momentum_observer_update"], rows["KDL JntToExtWrench"]
    before, pole = rows["KDL, torque of the tick before"], rows["rd_momentum_observer_update, KDL's pole"]
    assert peak > 5.0  # the push reached the joints
    assert ours["rows"] == 2001 and ours["passes"] == 1
    # each estimator against the ideal first-order lag of K_O: the engine's trapezoidal rule follows
    # it, KDL's forward Euler (its pole 1 - K_O dt, its mass matrix differenced) leaves far more
    assert ours["max_error_vs_lag"] < 1e-3 * peak, ours
    assert ours["rms_error_vs_lag"] < 0.05 * kdl["rms_error_vs_lag"], (ours, kdl)
    # against the truth the lag dominates both: at KDL's pole, KDL fed the torque that acted over
    # each period, the two errors agree to 0.5 %
    assert abs(pole["rms_error"] / before["rms_error"] - 1.0) < 0.005, (pole, before)
    assert abs(pole["max_error"] / before["max_error"] - 1.0) < 0.005, (pole, before)
    # at the same nominal K_O, KDL's faster pole and its torque of the coming tick put its error below
    # the engine's (measured 1.11x on the 3 s recordings): the documented miss, bounded here
    assert kdl["rms_error"] < ours["rms_error"] < 1.2 * kdl["rms_error"], (ours, kdl)
    assert 0.01 * peak < kdl["max_error"] < peak, kdl
    for row in (ours, kdl, rows["KDL dynamics only"]):
        assert row["p50_ns"] > 0 and row["p99_ns"] >= row["p50_ns"], row
