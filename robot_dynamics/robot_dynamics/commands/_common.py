"""Helpers shared by the subcommands: loading the robot, parsing vectors, printing, files."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, ModelError
from ..io._files import write_bytes_atomic
from ..model import DEFAULT_ROBOT, RobotModel, load_dh_yaml, load_robot, load_urdf

__all__ = [
    "CommonOptions",
    "default_displacement",
    "load_model",
    "parse_vector",
    "state_vector",
    "emit",
    "format_table",
    "output_dir",
    "show_progress",
    "write_atomic",
]


class CommonOptions(list):  # noqa: FURB189 - a list, so that parents=options passes every set
    """The option sets subcommands share, as argparse parent parsers; a subcommand takes only
    those it uses: ``parents=[options.robot, options.json]``. As a list it holds all three.

    Attributes:
        robot: --robot/-r, --urdf, --drivetrain, --package, --xacro-arg (group "robot").
        json: --json (group "output").
        out: --out, the folder of the files a subcommand writes (group "output").
    """

    def __init__(self) -> None:
        self.robot = argparse.ArgumentParser(add_help=False)
        group = self.robot.add_argument_group("robot")
        src = group.add_mutually_exclusive_group()
        src.add_argument("--robot", "-r", help="bundled robot name (see `robot-dynamics info --list`)")
        src.add_argument("--urdf", help="URDF or xacro file (or a DH YAML table)")
        group.add_argument("--drivetrain", help="drive-train / joint-properties YAML beside the URDF")
        group.add_argument("--package", action="append", default=[], metavar="NAME=DIR",
                           help="where $(find NAME) and package://NAME/ point in xacro files (repeatable; "
                           "also ROBOT_DYNAMICS_PACKAGE_PATH)")
        group.add_argument("--xacro-arg", action="append", default=[], metavar="NAME:=VALUE",
                           help="a xacro argument (repeatable)")
        self.json = argparse.ArgumentParser(add_help=False)
        self.json.add_argument_group("output").add_argument("--json", action="store_true", help="print JSON instead of a table")
        self.out = argparse.ArgumentParser(add_help=False)
        self.out.add_argument_group("output").add_argument("--out", default=None, help="folder for plots, CSV and recordings")
        super().__init__([self.robot, self.json, self.out])


def _pairs(items: Sequence[str] | None, sep: str, option: str, form: str) -> dict[str, str]:
    """``["a=1", "b=2"]`` as a dict; InputError naming the option for a malformed item."""
    out: dict[str, str] = {}
    for item in items or []:
        name, found, value = item.partition(sep)
        if not found or not name.strip():
            raise InputError(f"{option}: expected {form}, got {item!r}")
        out[name.strip()] = value
    return out


#: The model checks' warnings a command prints before it counts the rest.
WARNING_LINES = 5


def load_model(args: argparse.Namespace, *, report_issues: bool = True) -> RobotModel:
    """The robot chosen by --robot / --urdf (+ --drivetrain); the default robot otherwise.

    The loaders' :class:`~robot_dynamics.errors.ModelWarning` become one line each on stderr,
    ``robot-dynamics COMMAND: warning: ...``, the first :data:`WARNING_LINES` of them and a line
    that counts the rest (none with ``report_issues=False``, for a command that reports the
    model's issues itself).
    """
    import warnings

    from ..errors import ModelWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ModelWarning)
        model = _load_model(args)
    prog = " ".join(filter(None, ("robot-dynamics", getattr(args, "command", None))))
    issues = []
    for w in caught:
        if issubclass(w.category, ModelWarning):
            issues.append(str(w.message))
        else:  # another warning: shown as it would have been
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    if report_issues:
        for message in issues[:WARNING_LINES]:
            print(f"{prog}: warning: {message}", file=sys.stderr)
        if len(issues) > WARNING_LINES:
            print(f"{prog}: warning: and {len(issues) - WARNING_LINES} more issues of the model checks "
                  "(`robot-dynamics info` with the same robot lists them all)", file=sys.stderr)
    return model


def _load_model(args: argparse.Namespace) -> RobotModel:
    urdf = getattr(args, "urdf", None)
    drivetrain = getattr(args, "drivetrain", None)
    if urdf:
        path = Path(urdf)
        if path.suffix in (".yaml", ".yml"):
            return load_dh_yaml(path, drivetrain=drivetrain)
        return load_urdf(path, drivetrain=drivetrain, xacro_args=_pairs(getattr(args, "xacro_arg", None), ":=", "--xacro-arg", "NAME:=VALUE"),
                         packages=_pairs(getattr(args, "package", None), "=", "--package", "NAME=DIR"))
    model = load_robot(getattr(args, "robot", None) or DEFAULT_ROBOT)
    if drivetrain:
        from ..model import apply_sidecar

        model = apply_sidecar(model, drivetrain)
    return model


def default_displacement(n: int) -> np.ndarray:
    """The default move of ``trajectory`` and ``simulate``: a different displacement per joint, so
    that the curves of a plot stay apart and synchronisation shows [rad; a fifth for prismatic]."""
    pattern = np.array([0.5, -0.4, 0.3, 0.8, -0.6, 1.0])
    return np.resize(pattern, n)


def task_start_pose(model: RobotModel) -> np.ndarray:
    """A bent default start for task-space moves: q = 0 often stretches an arm or aligns its
    wrist axes (singular), so alternate +0.4 / -0.6 rad (plus 0.05 j), clipped to the limits."""
    bent = np.array([(0.4 if j % 2 == 0 else -0.6) + 0.05 * j for j in range(model.nq)])
    return np.clip(bent, np.where(np.isfinite(model.lower), model.lower, -np.inf),
                   np.where(np.isfinite(model.upper), model.upper, np.inf))


#: Most time steps a command simulates or samples (a bound before anything is allocated).
MAX_STEPS = 20_000_000


def check_steps(duration: float, step: float, what: str, limit: int = MAX_STEPS, lift: str = "",
                most: int = MAX_STEPS) -> int:
    """``duration / step`` steps, refused above ``limit`` (at most ``most``, :data:`MAX_STEPS` by
    default) with the options named; ``lift`` names the option that raises ``limit`` when there is one."""
    n = duration / step
    if not np.isfinite(n) or n > min(limit, most):
        hint = f" (or raise {lift}, at most {most:,})" if lift and limit < most else ""
        raise InputError(f"{what}: {n:.3g} steps, more than {min(limit, most):,}; "
                         f"shorten the time or lower the rate{hint}")
    return int(np.ceil(n))


def parse_vector(text: str, n: int, what: str, names: Sequence[str] | None = None) -> np.ndarray:
    """Parse a comma list of ``n`` finite numbers (``"0.1,0,-0.3"``); InputError otherwise."""
    parts = [p for p in text.replace(" ", ",").split(",") if p != ""]
    try:
        values = np.array([float(p) for p in parts])
    except ValueError:
        raise InputError(f"--{what}: expected {n} comma-separated numbers, got {text!r}") from None
    if values.size != n:
        hint = f" ({', '.join(names)})" if names is not None else ""
        raise InputError(f"--{what}: expected {n} values{hint}, got {values.size}")
    if not np.all(np.isfinite(values)):
        raise InputError(f"--{what}: values must be finite numbers, got {text!r}")
    return values


def state_vector(args: argparse.Namespace, attr: str, model: RobotModel, default: np.ndarray | None = None) -> np.ndarray:
    """The joint vector given as --<attr>, or ``default`` (zeros) when absent."""
    text = getattr(args, attr, None)
    if text is None:
        return np.zeros(model.nq) if default is None else default
    return parse_vector(text, model.nq, attr, model.joint_names)


def _cell(v: Any) -> str:
    if isinstance(v, float):
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return f"{v: .6g}"
    return str(v)


#: A float whose magnitude is below this fraction of its column's largest (or of 1) prints as 0:
#: what is left of an exact zero after rounding (a torque of -1.7e-15 N m) is not a number a
#: person should read.
ROUNDOFF = 1e-12


def _roundoff_to_zero(rows: Sequence[Sequence[Any]]) -> list[list[Any]]:
    ncol = max((len(r) for r in rows), default=0)
    scale = [1.0] * ncol
    for row in rows:
        for i, v in enumerate(row):
            if isinstance(v, (float, np.floating)) and math.isfinite(v):
                scale[i] = max(scale[i], abs(float(v)))
    return [[0 if isinstance(v, (float, np.floating)) and abs(float(v)) < ROUNDOFF * scale[i] else v
             for i, v in enumerate(row)] for row in rows]


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain aligned text table; rounding residue of an exact zero prints as 0."""
    cells = [[_cell(v) for v in row] for row in _roundoff_to_zero(rows)]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    sep = "  ".join("-" * w for w in widths)
    body = ["  ".join(c.rjust(w) if c[:1] in " -0123456789i" else c.ljust(w) for c, w in zip(r, widths)) for r in cells]
    return "\n".join([line, sep, *body])


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, (np.floating, float)):
        f = float(obj)
        return f if math.isfinite(f) else (None if math.isnan(f) else ("inf" if f > 0 else "-inf"))
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj


def emit(args: argparse.Namespace, data: dict[str, Any], text: str | Callable[[], str]) -> None:
    """Print ``data`` as JSON with --json, else the human-readable ``text``."""
    if getattr(args, "json", False):
        print(json.dumps(_jsonable(data), indent=2))
    else:
        print(text() if callable(text) else text)


def show_progress(args: argparse.Namespace) -> bool:
    """A command shows a progress bar on a terminal, and none with --json or into a pipe or log."""
    from .._progress import stderr_is_a_terminal

    return not getattr(args, "json", False) and stderr_is_a_terminal()


def output_dir(args: argparse.Namespace, default: str = "robot_dynamics_out") -> Path:
    """The --out folder (created), default ``./robot_dynamics_out``."""
    path = Path(getattr(args, "out", None) or default)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelError(f"--out: cannot create folder {str(path)!r}: {exc.strerror}") from None
    return path


def write_atomic(path: str | os.PathLike[str], data: bytes | str) -> Path:
    """Write a file atomically: a temporary file in the same folder, then os.replace."""
    return write_bytes_atomic(path, data)


def write_csv(path: str | os.PathLike[str], header: Sequence[str], columns: Sequence[np.ndarray]) -> str:
    """A CSV table of the columns (each (K,) or (K, m), stacked side by side) under ``header``,
    values as ``%.9g``, written atomically; the path written."""
    table = np.column_stack(columns)
    lines = [",".join(header)] + [",".join(f"{v:.9g}" for v in row) for row in table]
    return str(write_atomic(path, "\n".join(lines) + "\n"))
