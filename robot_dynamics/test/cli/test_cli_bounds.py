"""Absurd sizes and options are refused before any work starts, in one line with exit 2."""

from __future__ import annotations

import json

import pytest

from robot_dynamics.cli import main


@pytest.mark.parametrize("argv, words", [
    (["simulate", "--move-time", "1e9"], "more than 20,000; shorten the time or lower the rate (or raise --max-ticks"),
    (["simulate", "--rate", "1e12"], "more than 20,000;"),
    (["simulate", "--rate", "1e6", "--move-time", "0.05", "--settle", "0"], "5e+04 steps, more than 20,000;"),  # ran 30 s under load
    # one limit on ticks, the simulation's own (MAX_TICKS), named in the help and in the errors
    (["simulate", "--move-time", "1e5", "--max-ticks", "1000000000"], "--max-ticks: expected an integer from 1 to 5,000,000"),
    (["simulate", "--move-time", "1e4", "--max-ticks", "5000000"], "1e+07 steps, more than 5,000,000; shorten the time"),
    (["simulate", "--move-time", "30"], "more than 20,000; shorten the time or lower the rate (or raise --max-ticks, at most 5,000,000)"),
    (["simulate", "--max-ticks", "0"], "--max-ticks: expected an integer from 1 to 5,000,000"),
    (["simulate", "--tf-every", "0"], "--tf-every"),
    (["simulate", "--coulomb-smoothing", "-1"], "--coulomb-smoothing: expected a velocity >= 0 [rad/s] (0: the exact sign), got -1.0"),
    (["simulate", "--coulomb-smoothing", "nan"], "--coulomb-smoothing: expected a velocity >= 0"),
    (["simulate", "--integrator", "RK45", "--max-evaluations", "0"], "--max-evaluations: expected an integer >= 1, got 0"),
    (["trajectory", "--duration", "1", "--rate", "1e6"], "more than the table's 200,000; lower --rate"),  # took 29 s
    (["quadruped-yaw", "--duration", "1e6"], "more than 20,000,000"),
    (["quadruped-yaw", "--dt", "1e-300"], "more than 20,000,000"),
    (["quadruped-pitch", "--kp", "1e300"], "too stiff"),
    (["bench", "--batch", "1000000000"], "at most 5,000,000"),
    (["drivetrain", "--samples", "1000000000"], "at most 100,000"),
    (["stewart", "--samples", "100000000"], "at most 100,000"),
])
def test_sizes_are_bounded_before_work(argv, words, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where the default --out folder would be made
    assert main(argv) == 2  # refused up front: nothing runs, nothing is written (below)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err
    assert not any(tmp_path.iterdir())  # nothing written


def test_urdf_json_is_json(capsys):
    assert main(["urdf", "--robot", "planar2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["robot"] == "planar2" and data["urdf"].lstrip().startswith("<")


def test_max_ticks_lifts_the_default_bound(capsys, tmp_path, monkeypatch):
    """A run over the default 20,000 ticks is refused, and runs when --max-ticks asks for it."""
    monkeypatch.chdir(tmp_path)
    argv = ["simulate", "--robot", "planar2", "--rate", "30000", "--move-time", "0.7", "--settle", "0",
            "--no-bag", "--no-plot"]
    assert main(argv) == 2
    assert "2.1e+04 steps, more than 20,000" in capsys.readouterr().err
    assert main([*argv, "--max-ticks", "21001"]) == 0
    assert "21001 ticks" in capsys.readouterr().out


def test_the_tick_limit_is_one_number_in_the_cli_and_the_simulation():
    """The command accepts what the simulation accepts: --max-ticks reaches Logging.max_ticks,
    and both refuse past MAX_TICKS, naming the option."""
    from robot_dynamics.cli import build_parser
    from robot_dynamics.errors import InputError
    from robot_dynamics.simulation import MAX_TICKS, Logging

    sub = build_parser()._subparsers._group_actions[0].choices["simulate"]  # noqa: SLF001
    assert f"at most {MAX_TICKS:,}" in " ".join(sub.format_help().split())
    assert Logging(max_ticks=MAX_TICKS).max_ticks == MAX_TICKS
    with pytest.raises(InputError, match=f"from 1 to {MAX_TICKS:,}"):
        Logging(max_ticks=MAX_TICKS + 1)
