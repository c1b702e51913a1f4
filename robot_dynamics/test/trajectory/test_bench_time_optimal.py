"""The benchmark against toppra (the repository's bench/bench_time_optimal.py) on one small case, so
that it keeps running: both timings, their 1 kHz resampling, the flat-acceleration bisection, the
cold start and the files it writes; and the bisection alone on a case whose answer is known."""

from __future__ import annotations

import csv
import json
import sys
from types import SimpleNamespace

import numpy as np
import pytest
from peer import require_pinocchio
from repo_files import repository_path

BENCH = repository_path("bench")
if BENCH is None:
    pytest.skip("the bench folder of the repository is not here (the package without its repository)",
                allow_module_level=True)
sys.path.insert(0, str(BENCH))
import bench_time_optimal as bench  # noqa: E402


def _flat_case(limit: float):
    """A one-joint stand-in whose torque is 2 qdd [N m] against ``limit``, and a timer that
    accelerates at the flat limit a for 1 s (duration 1/a, to tell the results apart)."""
    case = SimpleNamespace(torques=lambda q, qd, qdd: 2.0 * qdd, effort=np.array([limit]), velocity=np.array([1.0]))

    def timer(a: float):
        def sample(t):
            n = len(t)
            return np.zeros((n, 1)), np.zeros((n, 1)), np.full((n, 1), a)

        return 1.0 / a, sample

    return case, timer


@pytest.mark.parametrize("limit", [10.0, 0.05, 3e3])
def test_the_flat_acceleration_bisection_finds_the_largest_limit_within_the_torques(limit):
    case, timer = _flat_case(limit)
    a, duration = bench.flat_acceleration(case, timer, tolerance=1e-3, top=1e3)
    if limit / 2 > 1e3:  # the torques never reach their limits below the top: the top
        assert a == 1e3 and duration == pytest.approx(1e-3)
        return
    assert limit / 2 * (1 - 1e-3) <= a <= limit / 2  # 2 a <= limit, to 0.1 %
    assert duration == pytest.approx(1.0 / a)


def test_the_flat_acceleration_of_an_infeasible_path_is_nan():
    case, _ = _flat_case(1.0)
    a, duration = bench.flat_acceleration(case, lambda a: (1.0, lambda t: (np.zeros((len(t), 1)),) * 2
                                                           + (np.full((len(t), 1), 5.0),)))
    assert np.isnan(a) and np.isnan(duration)


def test_the_bench_runs_on_one_small_case_and_writes_its_tables(tmp_path, capsys):
    pytest.importorskip("toppra", reason="toppra (pip install toppra) is the benchmark's peer")
    require_pinocchio()
    results, table = tmp_path / "bench.json", tmp_path / "bench.csv"
    rc = bench.main(["--robots", "planar2", "--urdf", "--paths", "1", "--waypoints", "3", "--grid", "201",
                     "--repeat", "1", "--results", str(results), "--csv", str(table)])
    assert rc == 0
    data = json.loads(results.read_text(encoding="utf-8"))
    assert data["toppra"] and len(data["goals"]) == 3 and len(data["load_average"]) == 2
    titles = [t["title"] for t in data["tables"]]
    assert titles[0].startswith("Against toppra, 201 grid points") and titles[2].startswith("Against a flat")
    assert all(len(t["rows"]) in (1, 2) for t in data["tables"])
    (row,) = list(csv.DictReader(table.open(encoding="utf-8")))
    value = {k: float(v) for k, v in row.items() if k not in ("robot", "path")}
    assert row["robot"] == "planar2"
    # the same path and limits: the two optima agree to the grid's resolution
    assert value["duration_ours_s"] == pytest.approx(value["duration_toppra_s"], rel=0.05)
    # ours holds every limit between the grid points too
    assert value["torque_excess_ours"] <= 1e-6 and value["velocity_excess_ours"] <= 1e-6
    # the flat timing is feasible for the torques, so it is no faster than the torque-limited optimum
    assert 0 < value["flat_acceleration"] < 1e4
    assert value["flat_duration_s"] >= value["duration_ours_s"] * (1 - 1e-3)
    assert value["robot_flat_duration_s"] == value["flat_duration_s"]  # one path: its limit is the robot's
    cold = {r[0]: r for r in data["tables"][3]["rows"]}
    assert set(cold) == {"ours", "toppra"}
    for side in cold.values():
        assert float(side[4]) > float(side[3]) > 0  # the process start includes the call
    assert float(cold["ours"][5]) == pytest.approx(value["duration_ours_s"], abs=1e-4)  # the same path, 4 decimals
    assert "duration ours/toppra" in capsys.readouterr().out
