"""Figures of a simulation: reference vs actual, tracking error and torques per joint; the residual
of a collision observer against the true external torque (PNG)."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import numpy as np

from ._files import write_bytes_atomic

__all__ = ["plot_simulation", "plot_residual"]


def plot_simulation(result: Any, path: str | os.PathLike[str], *, title: str | None = None, dpi: int = 110,
                    notes: list[tuple[float, str]] | None = None) -> Path:
    """Write a PNG with three stacked panels sharing the time axis.

    1. joint positions (solid) and their reference (dashed), or for a task-space run the
       controlled frame's x, y, z and their reference;
    2. tracking error e = q^d - q per joint [rad or m] (task runs: position error norm [m]);
    3. joint torques applied [N m or N].

    Uses the Agg backend; the file is written atomically.

    Args:
        result: a :class:`robot_dynamics.simulation.SimulationResult`.
        path: PNG file.
        title: figure title (default: robot, controller, rate and the largest RMS error).
        notes: (t [s], text) marks on the torque panel, e.g. where Coulomb friction switches.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    t = result.t
    names = list(result.joint_names)
    colors = [f"C{i % 10}" for i in range(len(names))]
    fig = Figure(figsize=(10, 9))
    fig.subplots_adjust(left=0.09, right=0.86, top=0.95, bottom=0.06, hspace=0.12)  # one draw, no layout solver
    ax_q, ax_e, ax_t = fig.subplots(3, 1, sharex=True)
    m = result.metrics
    task = result.x is not None
    if task:
        for i, lab in enumerate("xyz"):
            ax_q.plot(t, result.x[:, i], color=colors[i], lw=1.4, label=f"{lab}")
            ax_q.plot(t, result.x_ref[:, i], color=colors[i], lw=1.0, ls="--")
        ax_q.set_ylabel(f"{result.frame} position [m]")
        err = np.linalg.norm(result.x_ref - result.x, axis=1)
        ax_e.plot(t, err, color="k", lw=1.2, label="|x^d - x|")
        ax_e.set_ylabel("position error [m]")
        worst = f"max task error {m.task_max_error:.3g} m"
    else:
        for i, n in enumerate(names):
            ax_q.plot(t, result.q[:, i], color=colors[i], lw=1.4, label=n)
            ax_q.plot(t, result.q_ref[:, i], color=colors[i], lw=1.0, ls="--")
            ax_e.plot(t, result.error[:, i], color=colors[i], lw=1.2, label=n)
        ax_q.set_ylabel("q (solid), q$^d$ (dashed) [rad]")
        ax_e.set_ylabel("error q$^d$ - q [rad]")
        worst = f"max RMS error {float(np.max(m.rms_error)):.3g} rad"
    for i, n in enumerate(names):
        ax_t.plot(t, result.tau[:, i], color=colors[i], lw=1.2, label=n)
    ax_t.set_ylabel("joint torque [N m]")
    for t_note, text in notes or ():
        ax_t.axvline(t_note, color="0.4", lw=0.8, ls=":")
        ax_t.annotate(text, (t_note, 1.0), xycoords=("data", "axes fraction"), xytext=(4, -4),
                      textcoords="offset points", va="top", fontsize=8, color="0.25")
    ax_t.set_xlabel("time [s]")
    ax_e.ticklabel_format(axis="y", style="sci", scilimits=(-3, 3))
    for ax in (ax_q, ax_e, ax_t):
        ax.grid(True, alpha=0.3)
    ax_q.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, title="joint" if not task else "axis")
    ax_t.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, title="joint")
    faults = int(m.fault_count)
    sat = float(m.saturated_fraction)
    extra = (f", saturated {sat:.0%}" if sat else "") + (f", {faults} fault ticks" if faults else "")
    fig.suptitle(title or f"{result.robot}: {result.controller} at {result.control_rate:g} Hz ({result.integrator}); {worst}{extra}", fontsize=11)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return write_bytes_atomic(path, buf.getvalue())


def plot_residual(t: Any, residual: Any, true: Any, threshold: Any, names: list[str], path: str | os.PathLike[str], *,
                  detected: float | None = None, window: tuple[float, float] | None = None, title: str = "",
                  dpi: int = 110) -> Path:
    """Write a PNG of a collision observer's run: one panel per joint sharing the time axis, the
    residual r (solid), the true external torque (dashed) and the threshold +-th (dotted), with
    the detection instant (a vertical line) and the push's window (shaded). Atomically written.

    Args:
        t: (K,) [s]. residual, true, threshold: (K, nq) [N m or N] (true None: no such line, e.g. a
            recording of collision-free motion). names: the nq joint names.
        detected: the first tick whose residual passed its threshold [s], or None.
        window: (start, end) of the push [s], or None.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    n = len(names)
    fig = Figure(figsize=(10, 1.5 + 1.35 * n))
    fig.subplots_adjust(left=0.1, right=0.97, top=1.0 - 0.5 / (1.5 + 1.35 * n), bottom=0.06, hspace=0.15)
    axes = np.atleast_1d(fig.subplots(n, 1, sharex=True))
    th = np.asarray(threshold)
    for j, ax in enumerate(axes):
        if true is not None:
            ax.plot(t, np.asarray(true)[:, j], color="0.3", lw=1.6, ls="--", label="true external torque")
        ax.plot(t, np.asarray(residual)[:, j], color=f"C{j % 10}", lw=1.2, label="residual r")
        ax.plot(t, th[:, j], color="C3", lw=0.8, ls=":", label="threshold")
        ax.plot(t, -th[:, j], color="C3", lw=0.8, ls=":")
        if window is not None:
            ax.axvspan(window[0], window[1], color="0.9", zorder=0)
        if detected is not None:
            ax.axvline(detected, color="C3", lw=1.0)
        ax.set_ylabel(f"{names[j]}\n[N m]", fontsize=8)
        ax.grid(True, alpha=0.3)
    if detected is not None:
        axes[0].annotate(f"detected at {detected:.3f} s", (detected, 1.0), xycoords=("data", "axes fraction"),
                         xytext=(4, -4), textcoords="offset points", va="top", fontsize=8, color="C3")
    axes[0].legend(loc="lower left", fontsize=7, ncol=3)
    axes[-1].set_xlabel("time [s]")
    fig.suptitle(title or "residual against the true external torque", fontsize=11)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return write_bytes_atomic(path, buf.getvalue())


def save_figure(fig: Any, path: str | os.PathLike[str], dpi: int = 120) -> Path:
    """Save a matplotlib figure as PNG atomically and close it."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return write_bytes_atomic(path, buf.getvalue())
