"""What a study's table says: a summary per axis value, the failed points, plots."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from .description import Study

__all__ = ["summary", "failures", "plot_study"]


def _save(fig: Any, path: Path) -> Path:
    import io

    from ..io._files import write_bytes_atomic

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    return write_bytes_atomic(path, buf.getvalue())

#: The metrics plotted against every axis.
PLOTTED = ("rms_error", "max_error", "peak_torque", "saturated_fraction")


def _columns(table: Any) -> dict[str, np.ndarray]:
    return {name: np.asarray(table.column(name).to_pylist()) for name in table.column_names}


def summary(study: Study, table: Any) -> list[dict[str, Any]]:
    """Per value of every grid axis (or per decile of a random one): points, ok, and the mean
    and max of the main metrics."""
    cols = _columns(table)
    out: list[dict[str, Any]] = []
    ok = cols.get("status", np.array([])) == "ok"
    for a in study.axes:
        x = cols[a.name]
        if a.random:
            edges = np.quantile(x, [0.0, 0.5, 1.0])
            groups = [(f"{edges[0]:.3g}..{edges[1]:.3g}", x <= edges[1]), (f"{edges[1]:.3g}..{edges[2]:.3g}", x > edges[1])]
        else:
            groups = [(f"{v:g}", x == v) for v in a.values]
        for label, sel in groups:
            good = sel & ok
            row: dict[str, Any] = {"axis": a.name, "value": label, "points": int(sel.sum()), "ok": int(good.sum())}
            for m in ("rms_error", "max_error", "peak_torque", "predicted_rms_error"):
                v = cols[m][good].astype(float)
                v = v[np.isfinite(v)]
                row[f"mean {m}"] = float(v.mean()) if v.size else float("nan")
            out.append(row)
    return out


def failures(table: Any, axes: list[str]) -> list[dict[str, Any]]:
    """The points that failed or diverged, with their parameters and the reason."""
    rows = table.to_pylist()
    return [{k: r[k] for k in ["point", *axes, "status", "message"]} for r in rows if r["status"] != "ok"]


def plot_study(study: Study, table: Any, folder: str | os.PathLike[str]) -> list[Path]:
    """One figure per axis (each plotted metric against it; Khalil [9.28]'s predicted RMS error
    beside the measured one when the controller's model differs from the plant), and a heat map
    of the RMS error for the first two grid axes. Written next to the dataset."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = _columns(table)
    ok = cols["status"] == "ok"
    files: list[Path] = []
    units = {"rms_error": "[rad]", "max_error": "[rad]", "peak_torque": "[N m]", "saturated_fraction": ""}
    for a in study.axes:
        fig, axs = plt.subplots(1, len(PLOTTED), figsize=(4.0 * len(PLOTTED), 3.4))
        x = cols[a.name].astype(float)
        for ax, m in zip(axs, PLOTTED):
            y = cols[m].astype(float)
            ax.scatter(x[ok], y[ok], s=12, alpha=0.6, label="measured (each point)")
            if not a.random:
                means = [np.nanmean(y[ok & (x == v)]) if np.any(ok & (x == v)) else np.nan for v in a.values]
                ax.plot(a.values, means, "o-", color="C0", label="mean")
            if m == "rms_error" and np.any(np.isfinite(cols["predicted_rms_error"].astype(float)[ok])):
                pred = cols["predicted_rms_error"].astype(float)
                ax.scatter(x[ok], pred[ok], s=12, marker="x", color="C3", label="Khalil [9.28] prediction")
            if np.any(~ok):
                ax.scatter(x[~ok], np.zeros(int((~ok).sum())), s=30, marker="v", color="k", label="failed / diverged")
            ax.set_xlabel(f"{a.name}" + (f" at {a.link}" if a.link else ""))
            ax.set_ylabel(f"{m} {units[m]}")
            ax.grid(alpha=0.3)
        axs[0].legend(fontsize=7)
        fig.suptitle(f"{study.name}: {len(x)} simulations, {study.controller['type']} on {study.urdf or study.robot}")
        fig.tight_layout()
        files.append(_save(fig, Path(folder) / f"{study.name}_{a.name}.png"))
        plt.close(fig)
    grids = [a for a in study.axes if not a.random]
    if len(grids) >= 2:
        ga, gb = grids[0], grids[1]
        y = cols["rms_error"].astype(float)
        Z = np.full((len(gb.values), len(ga.values)), np.nan)
        for i, vb in enumerate(gb.values):
            for j, va in enumerate(ga.values):
                sel = ok & (cols[ga.name] == va) & (cols[gb.name] == vb)
                if sel.any():
                    Z[i, j] = np.nanmean(y[sel])
        fig, ax = plt.subplots(figsize=(5.5, 4.2))
        im = ax.imshow(Z, origin="lower", aspect="auto", cmap="viridis")
        ax.set_xticks(range(len(ga.values)), [f"{v:g}" for v in ga.values])
        ax.set_yticks(range(len(gb.values)), [f"{v:g}" for v in gb.values])
        ax.set_xlabel(ga.name)
        ax.set_ylabel(gb.name)
        fig.colorbar(im, ax=ax, label="mean rms_error [rad]")
        ax.set_title(f"{study.name}: tracking error")
        fig.tight_layout()
        files.append(_save(fig, Path(folder) / f"{study.name}_{ga.name}_{gb.name}.png"))
        plt.close(fig)
    return files
