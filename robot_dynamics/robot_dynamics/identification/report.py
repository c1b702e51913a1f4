"""Tables and plots of an identification: parameters with %sigma, friction, residuals, and the
measured against the predicted efforts."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .estimation import Estimate
from .excitation import ExcitationDesign

__all__ = ["effort_rms", "parameter_rows", "plot_efforts", "plot_excitation"]

Array = NDArray[np.float64]


def parameter_rows(estimate: Estimate, *, nominal: Array | None = None, true: Array | None = None,
                   consistent: Array | None = None) -> list[dict[str, Any]]:
    """One row per estimated parameter: name, grouping (as ``base_parameters`` prints it), the
    estimate, %sigma, kept, and the nominal / true / consistent values when given (base values
    and offsets, in the estimate's order)."""
    expressions = estimate.base.expressions()
    rows = []
    for i, name in enumerate(estimate.names):
        row: dict[str, Any] = {
            "name": name,
            "grouping": expressions[i] if i < estimate.n_base else f"{name} = effort offset",
            "value": float(estimate.values[i]),
            "rel_sigma": float(estimate.rel_sigma[i]),
            "kept": bool(estimate.kept[i]),
        }
        for key, vec in (("nominal", nominal), ("true", true), ("consistent", consistent)):
            if vec is not None and i < len(vec):
                row[key] = float(vec[i])
        rows.append(row)
    return rows


def effort_rms(residual: Array, valid: Array | None = None) -> Array:
    """The rms of the residual efforts (N, nq) per joint over the valid samples (N, nq) [N m or N]:
    the one figure the report's table and the plot's legend both show."""
    if valid is None:
        return np.sqrt(np.mean(residual**2, axis=0))
    return np.sqrt((np.where(valid, residual, 0.0) ** 2).sum(axis=0) / np.maximum(valid.sum(axis=0), 1))


def plot_efforts(t: Array, measured: Array, predicted: dict[str, Array], joint_names: tuple[str, ...] | list[str],
                 path: str | os.PathLike[str], *, title: str, valid: Array | None = None) -> Path:
    """Measured efforts against each prediction, one panel per joint (PNG, atomic); the legend's
    rms is :func:`effort_rms` over the ``valid`` samples, as in the report's table."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..io import save_figure

    n = measured.shape[1]
    cols = 2 if n > 3 else 1
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(6.0 * cols, 2.0 * rows + 0.6), sharex=True, squeeze=False)
    for j in range(n):
        ax = axes[j // cols][j % cols]
        ax.plot(t, measured[:, j], color="0.2", lw=1.6, label="measured (filtered)")
        for (label, y), style in zip(predicted.items(), ("--", "-.", ":", (0, (1, 3)))):
            rms = float(effort_rms(measured - y, valid)[j])
            ax.plot(t, y[:, j], linestyle=style, lw=1.2, label=f"{label} (rms {rms:.3g})")
        ax.set_ylabel(f"{joint_names[j]} [N m]")
        ax.legend(fontsize=7, loc="upper right")
        ax.grid(alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("t [s]")
    for k in range(n, rows * cols):
        axes[k // cols][k % cols].set_visible(False)
    fig.suptitle(title)
    return save_figure(fig, path)


def plot_excitation(design: ExcitationDesign, joint_names: tuple[str, ...] | list[str],
                    path: str | os.PathLike[str]) -> Path:
    """Positions and velocities of an excitation over one period, with its condition number."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..io import save_figure

    traj = design.trajectory
    t = np.linspace(0.0, traj.duration, 600)
    q, qd, _ = traj.sample(t)
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(8, 5.5), sharex=True)
    for j, name in enumerate(joint_names):
        a1.plot(t, q[:, j], label=name)
        a2.plot(t, qd[:, j])
    a1.set_ylabel("q [rad]")
    a2.set_ylabel("qd [rad/s]")
    a2.set_xlabel("t [s]")
    a1.legend(fontsize=7, ncol=3)
    for ax in (a1, a2):
        ax.grid(alpha=0.3)
    fig.suptitle(f"excitation: {traj.harmonics} harmonics of {traj.frequency:g} Hz, condition number "
                 f"{design.initial_condition:.0f} (random start) -> {design.condition:.0f}")
    return save_figure(fig, path)
