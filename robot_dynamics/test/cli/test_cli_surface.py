"""What a person meets on the command line: one name per thing, the near option of a typo,
help text as printed, tables without rounding residue."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from robot_dynamics.cli import build_parser, main, subcommand_parser
from robot_dynamics.commands._common import format_table


def test_a_controller_is_accepted_in_either_spelling_and_shown_in_one(capsys):
    parser = build_parser()
    for typed in ("pd_gravity", "pd-gravity"):
        assert parser.parse_args(["simulate", "--controller", typed]).controller == "pd-gravity"
    assert parser.parse_args(["simulate", "--controller", "task_computed_torque"]).controller == "task-computed-torque"
    help_text = subcommand_parser(parser, "simulate").format_help()
    assert "computed-torque" in help_text and "computed_torque" not in help_text
    with pytest.raises(SystemExit) as exc:
        parser.parse_args(["simulate", "--controller", "computed__torque"])
    assert exc.value.code == 2
    assert "invalid choice: 'computed__torque'" in capsys.readouterr().err


def test_every_choice_option_accepts_the_other_spelling():
    """Walk every subcommand: a choice spelt with '-' or '_' is found under the other spelling."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    checked = 0
    for name, sp in sub.choices.items():
        for action in sp._actions:
            if action.choices and action.option_strings and all(isinstance(c, str) for c in action.choices):
                for choice in action.choices:
                    if "-" in choice or "_" in choice:
                        other = choice.replace("-", "#").replace("_", "-").replace("#", "_")
                        ns = sp.parse_known_args([action.option_strings[-1], other])[0]
                        assert getattr(ns, action.dest) == choice, (name, action.dest, other)
                        checked += 1
    assert checked >= 5


def test_a_mistyped_option_names_the_near_one_with_the_subcommand_usage(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["torque", "--qq", "1,2"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: robot-dynamics torque")
    assert "robot-dynamics torque: error: unrecognized arguments: --qq 1,2; did you mean --q?" in err
    with pytest.raises(SystemExit):
        main(["simulate", "--controler", "pid", "--mas-eror=0.1"])
    err = capsys.readouterr().err
    assert err.startswith("usage: robot-dynamics simulate")
    assert "did you mean --controller for --controler, --mass-error for --mas-eror?" in err


def test_identify_help_prints_percent_sigma_once(capsys):
    with pytest.raises(SystemExit):
        main(["identify", "--help"])
    out = capsys.readouterr().out
    assert "%sigma" in out and "%%" not in out


def test_tables_print_rounding_residue_as_zero():
    text = format_table(["joint", "tau"], [["a", -1.66646e-15], ["b", 37.4837], ["c", 2.5e-7]])
    rows = text.splitlines()[2:]
    assert rows[0].split() == ["a", "0"]
    assert rows[1].split() == ["b", "37.4837"]
    assert rows[2].split() == ["c", "2.5e-07"]  # small but not residue: kept
    # a column of small values keeps them (residue is relative to the column, or to 1)
    text = format_table(["x"], [[3e-13], [1e-15]])
    assert [r.strip() for r in text.splitlines()[2:]] == ["0", "0"]
    text = format_table(["inertia"], [[2e-4], [1e-9]])
    assert [r.strip() for r in text.splitlines()[2:]] == ["0.0002", "1e-09"]


def test_torque_at_rest_prints_no_rounding_residue(capsys):
    assert main(["torque", "--q", "0,0,0,0,0,0"]) == 0
    out = capsys.readouterr().out
    assert "e-1" not in out  # no -1.7e-15 style entries
    assert "37.4837" in out  # the PUMA's published gravity load at joint 2


def test_task_space_simulation_prints_the_frame_error_not_nan(tmp_path, capsys):
    """A task reference has no joint path: the summary gives the frame's position error per axis
    (finite, consistent with the run's task RMS) and the joints' torques, no NaN column."""
    assert main(["simulate", "--controller", "task_computed_torque", "--move-time", "0.3", "--settle", "0.1",
                 "--rate", "500", "--no-plot", "--no-bag", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out.lower()
    lines = out.splitlines()
    summary = next(x for x in lines if x.startswith("task error of "))
    task_rms = float(summary.split("rms ")[1].split(" m")[0])
    rows = {x.split()[0]: [float(v) for v in x.split()[1:]] for x in lines if x.split() and x.split()[0] in ("x", "y", "z")}
    norm = next([float(v) for v in x[len("|x^d - x|"):].split()] for x in lines if x.startswith("|x^d - x|"))
    assert sorted(rows) == ["x", "y", "z"]
    assert all(np.isfinite(v).all() for v in rows.values()) and np.isfinite(norm).all()
    # mean of |e|^2 is the sum of the axes' means of e_i^2
    assert np.sqrt(sum(r[0] ** 2 for r in rows.values())) == pytest.approx(norm[0], rel=1e-4)
    assert norm[0] == pytest.approx(task_rms, rel=2e-3)  # the summary line prints 3 digits
    assert 0 < norm[0] < 0.01 and norm[1] >= max(r[1] for r in rows.values())
    joint_header = next(x for x in lines if x.startswith("joint "))
    assert joint_header.split() == ["joint", "peak", "torque", "energy", "[J]"]


ROBOT = {"-r", "--robot", "--urdf", "--drivetrain", "--package", "--xacro-arg"}
STATE = {"--q", "--qd", "--gravity", "--no-friction"}
#: The options each subcommand uses, beside -h/--help and --json (which every one takes).
OPTIONS = {
    "info": ROBOT | {"--list"},
    "torque": ROBOT | STATE | {"--qdd"},
    "accel": ROBOT | STATE | {"--tau"},
    "mass-matrix": ROBOT | {"--q"},
    "urdf": ROBOT | {"--out"},
    "bench": ROBOT | {"--batch", "--rounds", "--threads"},
    "codegen": ROBOT | {"--no-compile", "--no-cache", "--khalil", "--expressions", "--rules"},
    "drivetrain": ROBOT | {"--out", "--start", "--goal", "--duration", "--samples", "--no-plot", "--symbolic"},
    "excite": ROBOT | {"--out", "--frequency", "--harmonics", "--periods", "--start", "--margin", "--rate", "--maxiter", "--seed"},
    "identify": ROBOT | {"--out", "--validate", "--cutoff", "--essential", "--stribeck", "--no-consistent", "--seed"},
    "observer-thresholds": ROBOT | {"--out", "--gain", "--margin", "--relative", "--floor", "--coulomb-smoothing",
                            "--no-friction", "--torque", "--no-plot"},
    "stewart": {"--out", "--params", "--p1", "--p2", "--segment-duration", "--samples", "--check", "--op-counts", "--no-plot"},
    "sweep": {"--out", "--scheduler", "--workers", "--restart", "--no-plot"},
    "quadruped-yaw": {"--out", "--params", "--dt", "--check", "--no-plot", "--duration"},
    "quadruped-pitch": {"--out", "--params", "--dt", "--check", "--no-plot", "--duration", "--kp", "--kd"},
    "time-optimal": ROBOT | {"--out", "--velocity-limit", "--acceleration-limit", "--torque-limit", "--motor-torque-limit",
                             "--grid-points", "--rate", "--no-plot"},
}


def _help_options(text: str) -> set[str]:
    """The option strings of a --help page's option lines (``  -r ROBOT, --robot ROBOT  ...``)."""
    found = set()
    for line in text.splitlines():
        if line.startswith("  -"):
            for part in line.strip().split("  ")[0].split(", "):
                found.add(part.split()[0])
    return found


@pytest.mark.parametrize("command", sorted(OPTIONS))
def test_each_subcommand_help_lists_exactly_its_options(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    assert _help_options(capsys.readouterr().out) == OPTIONS[command] | {"-h", "--help", "--json"}


def test_simulate_and_trajectory_take_the_robot_and_output_options():
    parser = build_parser()
    for command in ("simulate", "trajectory"):
        help_text = subcommand_parser(parser, command).format_help()
        assert ROBOT | {"--json", "--out"} <= _help_options(help_text), command


@pytest.mark.parametrize("argv, message", [
    (["mass-matrix", "--qd", "1,2,3,4,5,6"], "unrecognized arguments: --qd 1,2,3,4,5,6; did you mean --q? (--qd is an option of accel, torque)"),
    (["mass-matrix", "--no-friction"], "unrecognized arguments: --no-friction (--no-friction is an option of accel, observer-thresholds, torque)"),
    (["torque", "--out", "x"], "unrecognized arguments: --out x (--out is an option of drivetrain, engine-model, excite, identify and 10 more)"),
    (["stewart", "--robot", "puma560"], "unrecognized arguments: --robot puma560 (--robot is an option of accel, bench, codegen, drivetrain and 12 more)"),
    (["quadruped-yaw", "--urdf=a.urdf"], "unrecognized arguments: --urdf=a.urdf (--urdf is an option of accel,"),
])
def test_an_option_of_another_subcommand_is_refused_and_named_as_theirs(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: robot-dynamics {argv[0]}")
    assert f"robot-dynamics {argv[0]}: error: {message}" in err
