"""Studies on Dask: the same table in process and on a 2-worker LocalCluster, resuming after a
kill, one clear line for a bad study."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from robot_dynamics.errors import InputError
from robot_dynamics.study import evaluate_point, load_study, points, read_results, run_study

STUDY = {
    "name": "small",
    "robot": "planar2",
    "controller": {"type": "computed_torque", "omega": 15.0},
    "motion": {"profile": "quintic", "duration": 0.6, "settle": 0.1},
    "simulation": {"control_rate": 200.0},
    "axes": {
        "payload": {"link": "tool0", "grid": [0.0, 0.3]},
        "mass_error": {"uniform": [-0.3, 0.3]},
        "position_noise": {"grid": [0.0, 1e-4]},
    },
    "samples": 3,
    "seed": 4,
}


def _rows(table):
    rows = table.to_pylist()
    for r in rows:
        for k, v in r.items():
            if isinstance(v, float) and math.isnan(v):
                r[k] = "nan"
    return rows


def test_points_are_the_grid_product_times_the_samples_and_do_not_depend_on_execution():
    study = load_study(STUDY)
    pts = points(study)
    assert len(pts) == study.n_points == 2 * 2 * 3
    assert [p["point"] for p in pts] == list(range(12))
    # the same draws of the random axis for every grid point (common random numbers), in range
    draws = [p["mass_error"] for p in pts if p["payload"] == 0.0 and p["position_noise"] == 0.0]
    assert len(set(draws)) == 3 and all(-0.3 <= d <= 0.3 for d in draws)
    assert draws == [p["mass_error"] for p in pts if p["payload"] == 0.3 and p["position_noise"] == 1e-4]
    assert points(load_study(STUDY)) == pts


def test_in_process_and_a_two_worker_local_cluster_give_identical_tables(tmp_path):
    study = load_study(STUDY)
    a = run_study(study, tmp_path / "a", scheduler="inprocess", progress=False)
    b = run_study(study, tmp_path / "b", scheduler="local", workers=2, progress=False)
    assert b.scheduler == "LocalCluster, 2 workers"
    assert a.table.num_rows == b.table.num_rows == 12
    assert _rows(a.table) == _rows(b.table)
    rows = a.table.to_pylist()
    assert all(r["status"] == "ok" for r in rows)
    # the payload takes more torque for the same move (pairs that differ only by the payload)
    for r in rows:
        if r["payload"] == 0.0:
            twin = next(t for t in rows if t["payload"] == 0.3 and t["sample"] == r["sample"] and t["position_noise"] == r["position_noise"])
            assert twin["peak_torque"] > r["peak_torque"] + 0.1
    # the model error's effect on tracking is what Khalil [9.28] predicts
    clean = [r for r in rows if r["position_noise"] == 0.0 and r["saturated_fraction"] == 0.0]
    assert len(clean) >= 3
    pred = np.array([r["predicted_rms_error"] for r in clean])
    meas = np.array([r["rms_error"] for r in clean])
    assert np.all(np.abs(pred - meas) < 0.25 * meas + 1e-5)
    # a finished study is read back, never recomputed
    again = run_study(study, tmp_path / "a", scheduler="inprocess", progress=False)
    assert again.computed_points == 0 and again.skipped_points == 12 and _rows(again.table) == _rows(a.table)


def test_a_row_equals_one_simulation_of_its_point(tmp_path):
    study = load_study(STUDY)
    p = points(study)[7]
    run = run_study(study, tmp_path, scheduler="inprocess", progress=False)
    assert _rows(run.table)[7] == _rows(type(run.table).from_pylist([evaluate_point(study, p)]))[0]


def test_a_stopped_study_resumes_without_missing_or_duplicated_rows(tmp_path):
    study = load_study(STUDY)
    part = run_study(study, tmp_path, scheduler="inprocess", progress=False, stop_after_chunks=2)
    assert 0 < part.table.num_rows < 12
    half = tmp_path / study.name / "parts" / ".part-000005.parquet.x1y2z3"  # as a kill mid-write leaves it
    half.write_bytes(b"PAR1 half")
    rest = run_study(study, tmp_path, scheduler="inprocess", progress=False)
    assert rest.skipped_points == part.table.num_rows and rest.computed_points == 12 - part.table.num_rows
    ids = [r["point"] for r in rest.table.to_pylist()]
    assert ids == list(range(12))
    assert not half.exists()
    full = run_study(study, tmp_path / "full", scheduler="inprocess", progress=False)
    assert _rows(rest.table) == _rows(full.table)


def test_a_killed_worker_and_a_killed_client_lose_nothing(tmp_path):
    from dask.distributed import Client, LocalCluster

    study = load_study(STUDY)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
        pids = list(client.run(os.getpid).values())
        killed = []

        def kill_one(k: int) -> None:
            if not killed:
                os.kill(pids[0], signal.SIGKILL)  # the nanny restarts it; Dask reruns its tasks
                killed.append(k)

        run = run_study(study, tmp_path / "w", scheduler=cluster.scheduler_address, workers=2, progress=False, on_chunk=kill_one)
    assert killed and [r["point"] for r in run.table.to_pylist()] == list(range(12))
    # the client itself killed mid-study: the parts on disk are kept, the rest is computed once
    import yaml

    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(dict(STUDY, samples=12)), encoding="utf-8")
    out = tmp_path / "c"
    proc = subprocess.Popen(
        [sys.executable, "-m", "robot_dynamics.cli", "sweep", str(path), "--scheduler", "inprocess", "--out", str(out), "--no-plot"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    parts = out / "small" / "parts"
    deadline = time.time() + 120
    while time.time() < deadline and len(list(parts.glob("part-*.parquet"))) < 1:
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    done = len(list(parts.glob("part-*.parquet")))
    assert done >= 1
    resumed = run_study(load_study(path), out, scheduler="inprocess", progress=False)
    assert resumed.skipped_points > 0
    assert [r["point"] for r in resumed.table.to_pylist()] == list(range(48))
    assert not list(parts.glob(".part-*"))  # no half-written part left visible as a part


@pytest.mark.parametrize(
    "change, message",
    [
        ({"axes": {"payloads": [1.0]}}, r"axes.payloads: unknown axis. Valid axes: \['payload'"),
        ({"axes": {"mass_error": {"uniform": [0.3, -0.3]}}}, "axes.mass_error.uniform: expected low < high"),
        ({"axes": {"mass_error": {"gauss": [0, 1]}}}, r"axes.mass_error.gauss: unknown key. Valid keys: \['grid', 'uniform'"),
        ({"axes": {"payload": {"link": "tool9", "grid": [1.0]}}, "samples": 1}, r"axes.payload.link: unknown link 'tool9'. Valid links: \['base_link'"),
        ({"controller": {"type": "lqr"}}, r"controller.type: expected one of \['computed_torque', 'pd_gravity', 'pid'\]"),
        ({"motion": {"duration": -1}}, "motion.duration: expected a number > 0"),
        ({"robot": "puma999"}, "robot: .*puma999"),
        ({"samples": 0}, "samples: expected an integer >= 1"),
        ({"simulaton": {}}, r"study.simulaton: unknown key. Valid keys: \['name'"),
    ],
)
def test_a_bad_study_gets_one_line_naming_the_field_and_the_valid_choices(change, message):
    with pytest.raises(InputError, match=message) as info:
        load_study(dict(STUDY, **change))
    assert "\n" not in str(info.value)


def test_cli_bad_study_and_changed_study(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\naxes: {omega: {grid: [0]}}\n", encoding="utf-8")
    res = subprocess.run([sys.executable, "-m", "robot_dynamics.cli", "sweep", str(bad)], capture_output=True, text=True)
    assert res.returncode == 2
    assert res.stderr.strip().count("\n") == 0 and "axes.omega: values must be > 0" in res.stderr
    study = load_study(STUDY)
    run_study(study, tmp_path, scheduler="inprocess", progress=False, stop_after_chunks=1)
    changed = load_study(dict(STUDY, seed=5))
    with pytest.raises(InputError, match="different study.*--restart"):
        run_study(changed, tmp_path, scheduler="inprocess", progress=False)
    assert run_study(changed, tmp_path, scheduler="inprocess", progress=False, restart=True).table.num_rows == 12
    assert read_results(tmp_path / "small").num_rows == 12


def test_sweep_reports_the_summary_plots_and_failed_points_it_computed(tmp_path, capsys):
    """What `robot-dynamics sweep` prints is the dataset's: per grid value the point count and the
    means of its rows, the plots on disk, and the failed points with their reason."""
    import json

    import pyarrow as pa

    from robot_dynamics.cli import main
    from robot_dynamics.study import failures

    study_file = tmp_path / "tiny.yaml"
    study_file.write_text(
        "name: tiny\nrobot: planar2\ncontroller: {type: computed_torque, omega: 15.0}\n"
        "motion: {profile: quintic, duration: 0.5, settle: 0.1}\nsimulation: {control_rate: 100.0}\n"
        "axes:\n  omega: {grid: [10.0, 40.0]}\n  payload: {link: tool0, grid: [0.0, 0.5]}\nsamples: 1\n", encoding="utf-8")
    args = ["sweep", str(study_file), "--scheduler", "inprocess", "--out", str(tmp_path / "out")]
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["points"], data["computed"], data["reused"], data["failed"]) == (4, 4, 0, [])
    table = read_results(data["dataset"]).to_pydict()
    for row in data["summary"]:
        sel = [i for i, v in enumerate(table[row["axis"]]) if f"{v:g}" == row["value"]]
        assert row["points"] == row["ok"] == len(sel) == 2
        assert row["mean rms_error"] == pytest.approx(np.mean([table["rms_error"][i] for i in sel]), rel=1e-12)
        assert row["mean peak_torque"] == pytest.approx(np.mean([table["peak_torque"][i] for i in sel]), rel=1e-12)
    assert [r["axis"] for r in data["summary"]] == ["omega", "omega", "payload", "payload"]
    assert len(data["plots"]) == 3  # one per axis and the heat map of the two grid axes
    for p in data["plots"]:
        with open(p, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    # the text form, read back from the finished dataset
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "study tiny: 4 points (0 computed, 4 reused) on inprocess" in text
    assert "mean rms error" in text and "[9.28] predicted" in text and text.count("plot: ") == 3
    # a failed point is listed with its parameters and reason
    rows = pa.table({"point": [0, 1], "omega": [10.0, 40.0], "status": ["ok", "failed"],
                     "message": ["", "SingularityError: joint 'j2' moves no inertia"]})
    assert failures(rows, ["omega"]) == [
        {"point": 1, "omega": 40.0, "status": "failed", "message": "SingularityError: joint 'j2' moves no inertia"}]
