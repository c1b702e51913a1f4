"""Studies of many closed-loop simulations (parameter sweeps, Monte Carlo) on Dask.

    >>> from robot_dynamics.study import load_study, run_study
    >>> study = load_study("config/study_computed_torque_payload.yaml")
    >>> run = run_study(study, "out", scheduler="local", workers=2)   # or an address
    >>> run.table.to_pandas()                                        # one row per point

The same code runs in this process, on a local cluster or on a cluster that already exists;
results stream to a Parquet dataset that a stopped study resumes from.
"""

from .description import AXES, CONTROLLERS, DISTRIBUTIONS, Axis, Study, load_study
from .evaluate import METRICS, evaluate_point, points
from .execute import SCHEDULERS, StudyRun, read_results, run_study
from .report import failures, plot_study, summary

__all__ = [
    "AXES",
    "CONTROLLERS",
    "DISTRIBUTIONS",
    "METRICS",
    "SCHEDULERS",
    "Axis",
    "Study",
    "StudyRun",
    "evaluate_point",
    "failures",
    "load_study",
    "plot_study",
    "points",
    "read_results",
    "run_study",
    "summary",
]
