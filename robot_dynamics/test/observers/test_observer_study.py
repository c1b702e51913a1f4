"""The study of the observer's detection delay and false alarms (the repository's
bench/observer_study.py) in its --quick mode, so that it keeps running and its numbers keep
holding: the iiwa14 with a model 10 % off and noisy measurements, a step of 10 % of each joint's
effort limit detected within 5 ms, no alarm over 20 s of collision-free excitation at the default
thresholds; and the sweep's bookkeeping on a run whose answer is known."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from repo_files import repository_path

BENCH = repository_path("bench")
if BENCH is None:
    pytest.skip("the bench folder of the repository is not here (the package without its repository)",
                allow_module_level=True)
sys.path.insert(0, str(BENCH))
import observer_study as study  # noqa: E402


def test_the_sweep_counts_delays_alarms_and_isolation_of_a_known_run():
    """Two joints, effort limits 10 and 100: a step run whose residual of joint 1 rises by 1 N m per
    tick from t = 1.0 s, with one tick of 0.9 N m on joint 0 before it; a motion with two separate
    alarms of joint 0 (three ticks) and s = 10 on joint 1."""
    case = study.Case("two", plant=type("P", (), {"effort_limit": np.array([10.0, 100.0]), "nq": 2})(), model=None,
                      factors=np.ones(2), options=None, smoothing=0.0)
    t = np.arange(2001) * 1e-3
    R = np.zeros((t.size, 2))
    R[t >= 1.0 - 1e-9, 1] = np.arange(1, 1002)
    R[300, 0] = 0.9
    step = study.Pass(t, R, np.zeros_like(R), start=1.0, joint=1)
    M = np.zeros((100, 2))
    M[[10, 11, 50], 0] = 0.6
    motion = study.Pass(t[:100], M, np.tile([0.0, 10.0], (100, 1)))
    s = study.evaluate(case, [step], [motion], fixed=0.05, relative=0.0)  # thresholds 0.5 and 5 N m
    assert s.delays == [pytest.approx(0.005)] and s.isolated == 1  # r_1 = 6 > 5 at the step's fifth tick after it
    assert s.step_alarms == 1 and s.alarms == 2 and s.alarm_ticks == 3
    s = study.evaluate(case, [step], [motion], fixed=0.1, relative=0.5)  # 1 N m and 10 + 0.5 s: no alarm before
    assert s.step_alarms == 0 and s.alarms == 0 and s.delays == [pytest.approx(0.010)]
    s = study.evaluate(case, [step], [motion], fixed=20.0, relative=0.0)  # never passed
    assert s.delays == [np.inf] and s.isolated == 0


def test_the_quick_study_detects_every_step_within_5_ms_with_no_false_alarm(tmp_path, capsys):
    results, png = tmp_path / "study.json", tmp_path / "study.png"
    assert study.main(["--quick", "--results", str(results), "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "iiwa14, K_O = 100 /s, default setting: largest delay 3 ms" in out
    data = json.loads(results.read_text(encoding="utf-8"))
    sweep, joints = data["tables"]
    rows = {(float(r[0]), float(r[1])): r for r in sweep["rows"]}
    assert len(rows) == 6
    # the default thresholds (fixed 2 % of the effort limit, relative 0.05): every joint within 5 ms, no alarm
    default = rows[(0.02, 0.05)]
    assert 1 <= int(default[2]) <= 5 and default[4] == "7/7" and default[5:8] == ["0", "0", "0"]
    assert default[8] == "both"
    assert len(joints["rows"]) == 7 and all(1 <= int(r[2]) <= 5 for r in joints["rows"])
    # a lower fixed part with no relative part detects sooner and alarms along the collision-free motion
    low = rows[(0.01, 0.0)]
    assert int(low[2]) <= int(default[2]) and int(low[6]) > 0
    # a higher fixed part detects later
    assert int(rows[(0.04, 0.05)][2]) > int(default[2])
    assert data["goals"][0].endswith("(goal 0): met") and "(goal <= 5 ms): met" in data["goals"][0]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
