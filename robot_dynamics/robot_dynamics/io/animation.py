"""A 3-D view of a robot without ROS: an animation of a motion, written as a GIF or HTML file.

The robot is drawn as its skeleton (a segment from each link frame to its parent's, the base
at the origin), from the poses of :func:`robot_dynamics.frame_poses`; geometry (meshes) is
never loaded. Matplotlib renders it, so any motion array works: a simulation's ``res.q``, a
trajectory's samples, a recording.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError
from ..model.robot_model import RobotModel

__all__ = ["ANIMATION_FORMATS", "animate_robot", "skeleton_segments"]

#: File suffixes :func:`animate_robot` writes: an animated GIF or an HTML page with its player.
ANIMATION_FORMATS = (".gif", ".html")


def skeleton_segments(model: RobotModel, q: ArrayLike) -> np.ndarray:
    """The robot's skeleton at ``q``: one segment per link frame, from its parent frame's
    origin to its own, in the base frame [m].

    Args:
        model: the robot.
        q: joint positions, shape (..., nq) [rad or m].

    Returns:
        Segment end points, shape (..., nf - 1, 2, 3): ``[..., k, 0]`` the parent's origin,
        ``[..., k, 1]`` frame ``k + 1``'s (frames in ``model.frame_names`` order, base first).
    """
    from ..kinematics import frame_poses

    T = frame_poses(model, q)
    origins = T[..., :3, 3]
    parents = _frame_parents(model)
    return np.stack([origins[..., parents[1:], :], origins[..., 1:, :]], axis=-2)


def _frame_parents(model: RobotModel) -> np.ndarray:
    """Index of each frame's parent frame: the frame of the body that carries it, or of the
    parent body for a body's own frame; the base (0) for frames on the base."""
    body_frame = {b: model.frame_names.index(name) for b, name in enumerate(model.body_names)}
    parents = np.zeros(len(model.frame_names), dtype=int)
    for k, _name in enumerate(model.frame_names):
        body = int(model.frame_body[k])
        if body < 0:
            parents[k] = 0
        elif body_frame[body] == k:
            up = int(model.parent[body])
            parents[k] = 0 if up < 0 else body_frame[up]
        else:
            parents[k] = body_frame[body]
    return parents


def animate_robot(
    model: RobotModel,
    t: ArrayLike,
    q: ArrayLike,
    path: str | os.PathLike[str] | None = None,
    *,
    fps: float = 20.0,
    trace: str | None = None,
    title: str | None = None,
    dpi: int = 80,
) -> Any:
    """Animate a motion of the robot in 3-D and optionally write it to a file.

    Args:
        model: the robot.
        t: sample times, shape (K,) [s], increasing.
        q: joint positions at those times, shape (K, nq) [rad or m].
        path: where to write the animation: ``.gif`` (Pillow, installed with matplotlib) or
            ``.html`` (a page with the player, no other file); None writes nothing.
        fps: frames per second of the file; the motion is resampled to real time at this rate.
        trace: a frame whose path is drawn (default: the end effector); "" for none.
        title: the figure title (default: the robot's name).
        dpi: resolution of the GIF frames.

    Returns:
        The ``matplotlib.animation.FuncAnimation`` (its figure is ``.._fig``), for notebooks
        and documentation pages that embed it.

    Raises:
        InputError: shapes that do not match, non-increasing times, an unknown frame, an
            unsupported file suffix.
    """
    import matplotlib

    t, q = _checked_motion(model, t, q, path, fps)
    trace_frame = model.end_effector if trace is None else trace
    trace_index = model.frame_index(trace_frame) if trace_frame else None

    times = np.arange(t[0], t[-1] + 0.5 / fps, 1.0 / fps)
    qs = np.column_stack([np.interp(times, t, q[:, j]) for j in range(model.nq)])
    segments = skeleton_segments(model, qs)  # (F, nf - 1, 2, 3)

    from matplotlib.animation import FuncAnimation

    fig, ax = _skeleton_figure(segments, title if title is not None else model.name)
    lines = [ax.plot([], [], [], "-o", lw=3, ms=3, color="tab:blue")[0] for _ in range(segments.shape[1])]
    path_line = ax.plot([], [], [], ":", lw=1, color="tab:orange")[0]
    label = ax.text2D(0.02, 0.95, "", transform=ax.transAxes)
    tips = segments[:, trace_index - 1, 1] if trace_index else None

    def draw(k: int) -> list[Any]:
        for line, seg in zip(lines, segments[k]):
            line.set_data_3d(seg[:, 0], seg[:, 1], seg[:, 2])
        if tips is not None:
            path_line.set_data_3d(tips[: k + 1, 0], tips[: k + 1, 1], tips[: k + 1, 2])
        label.set_text(f"t = {times[k]:.2f} s")
        return [*lines, path_line, label]

    anim = FuncAnimation(fig, draw, frames=len(times), interval=1000.0 / fps, blit=False)
    if path is not None:
        _write(anim, Path(path), fps, dpi, matplotlib)
    return anim


def _checked_motion(model: RobotModel, t: ArrayLike, q: ArrayLike, path: str | os.PathLike[str] | None,
                    fps: float) -> tuple[np.ndarray, np.ndarray]:
    """``t`` (K,) [s] and ``q`` (K, nq) [rad or m] as float arrays; InputError for an unsupported
    file suffix, shapes that do not match, non-finite or non-increasing values, an fps out of range."""
    if path is not None and Path(path).suffix not in ANIMATION_FORMATS:
        raise InputError(f"animation file {str(path)!r}: expected a suffix among {list(ANIMATION_FORMATS)}")
    t = np.asarray(t, dtype=float)
    q = np.asarray(q, dtype=float)
    if t.ndim != 1 or q.shape != (t.size, model.nq) or t.size < 2:
        raise InputError(f"animate_robot: expected t (K,) and q (K, {model.nq}) with K >= 2, got {t.shape} and {q.shape}")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(q)) and np.all(np.diff(t) > 0)):
        raise InputError("animate_robot: t must be finite and increasing and q finite")
    if not (np.isfinite(fps) and 0 < fps <= 100):
        raise InputError(f"animate_robot: fps must be in (0, 100], got {fps!r}")
    return t, q


def _skeleton_figure(segments: np.ndarray, title: str) -> tuple[Any, Any]:
    """A figure and its 3-D axes whose equal scales hold every segment end point of
    ``segments`` (F, nf - 1, 2, 3) [m], with a margin."""
    import matplotlib.pyplot as plt

    points = segments.reshape(-1, 3)
    centre = 0.5 * (points.min(axis=0) + points.max(axis=0))
    half = max(0.5 * float(np.ptp(points, axis=0).max()), 0.05) * 1.1
    fig = plt.figure(figsize=(5, 5))
    ax = fig.add_subplot(projection="3d")
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_zlim(centre[2] - half, centre[2] + half)
    ax.set_box_aspect((1.0, 1.0, 1.0))  # equal scales: the cube of the limits above
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_zlabel("z [m]")
    ax.set_title(title)
    return fig, ax


def _write(anim: Any, path: Path, fps: float, dpi: int, matplotlib: Any) -> None:
    """Write through a temporary file beside ``path`` and rename: never a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp{os.getpid()}{path.suffix}")
    try:
        if path.suffix == ".gif":
            from matplotlib.animation import PillowWriter

            anim.save(tmp, writer=PillowWriter(fps=fps), dpi=dpi)
        else:
            tmp.write_text(anim.to_jshtml(fps=fps, default_mode="loop"), encoding="utf-8")
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
