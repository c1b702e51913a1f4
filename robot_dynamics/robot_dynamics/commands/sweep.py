"""``robot-dynamics sweep [STUDY.yaml]``: thousands of closed-loop simulations on Dask.

With no argument it runs the bundled study (computed torque on the PUMA 560 under payload and
model mass error, ``config/study_computed_torque_payload.yaml``) on a local cluster of two
worker processes. ``--scheduler tcp://host:8786`` sends the same study to a running Dask
cluster; ``--scheduler inprocess`` runs it in this process. Results stream to
``<out>/<name>/parts/*.parquet``; a stopped study resumes where it stopped, a finished one is
read back, never recomputed. Plots of every metric against every axis go beside the dataset.
"""

from __future__ import annotations

import argparse
from typing import Any

from ._common import CommonOptions, emit, format_table, output_dir, show_progress


def register(sub: Any, parents: CommonOptions) -> None:
    p = sub.add_parser(
        "sweep",
        parents=[parents.json, parents.out],
        help="parameter sweeps and Monte Carlo studies of closed-loop simulations on Dask",
        description="Run a study (YAML) of many simulations on a local Dask cluster, in process, or on a cluster by address.",
    )
    p.add_argument("study", nargs="?", help="study YAML (default: the bundled computed-torque payload study)")
    p.add_argument("--scheduler", default="local", help="'local' (a LocalCluster, default), 'inprocess', or a Dask scheduler address tcp://host:port")
    p.add_argument("--workers", type=int, default=2, help="worker processes of the local cluster (default 2)")
    p.add_argument("--restart", action="store_true", help="discard earlier results of this study and run it again")
    p.add_argument("--no-plot", action="store_true", help="do not write the plots")
    p.set_defaults(func=run)


def _default_study() -> str:
    from ..model.registry import share_directory

    return str(share_directory() / "config" / "study_computed_torque_payload.yaml")


def run(args: argparse.Namespace) -> int:
    from ..study import SCHEDULERS, failures, load_study, plot_study, run_study, summary
    from ..errors import InputError

    if args.scheduler not in SCHEDULERS and "://" not in args.scheduler:
        raise InputError(f"--scheduler: expected one of {list(SCHEDULERS)} or an address such as tcp://host:8786, got {args.scheduler!r}")
    if not 1 <= args.workers <= 1024:
        raise InputError(f"--workers: expected an integer from 1 to 1024, got {args.workers}")
    study = load_study(args.study or _default_study())
    out = output_dir(args)
    result = run_study(study, out, scheduler=args.scheduler, workers=args.workers, restart=args.restart, progress=show_progress(args))
    table = result.table
    rows = summary(study, table)
    failed = failures(table, [a.name for a in study.axes])
    plots = [] if args.no_plot or table.num_rows == 0 else [str(p) for p in plot_study(study, table, result.folder)]
    throughput = result.computed_points / result.wall_time if result.wall_time > 0 and result.computed_points else 0.0
    data = {
        "study": study.name,
        "points": study.n_points,
        "computed": result.computed_points,
        "reused": result.skipped_points,
        "scheduler": result.scheduler,
        "wall_time": result.wall_time,
        "points_per_second": throughput,
        "dataset": str(result.folder),
        "summary": rows,
        "failed": failed,
        "plots": plots,
    }

    def text() -> str:
        lines = [
            f"study {study.name}: {study.n_points} points ({result.computed_points} computed, {result.skipped_points} reused) "
            f"on {result.scheduler} in {result.wall_time:.1f} s"
            + (f", {throughput:.2f} points/s" if throughput else ""),
            f"{study.controller['type']} on {study.urdf or study.robot}; axes: "
            + ", ".join(f"{a.name} ({a.kind})" for a in study.axes),
        ]
        headers = ["axis", "value", "points", "ok", "mean rms error", "[9.28] predicted", "mean max error", "mean peak torque"]
        lines.append(format_table(headers, [[r["axis"], r["value"], r["points"], r["ok"], r["mean rms_error"], r["mean predicted_rms_error"], r["mean max_error"], r["mean peak_torque"]] for r in rows]))
        if failed:
            lines.append(f"{len(failed)} points failed or diverged:")
            for f in failed[:10]:
                lines.append("  " + ", ".join(f"{k}={v}" for k, v in f.items()))
        lines.append(f"dataset: {result.folder}")
        lines.extend(f"plot: {p}" for p in plots)
        return "\n".join(lines)

    emit(args, data, text)
    return 0
