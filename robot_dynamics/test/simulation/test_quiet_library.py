"""A library call is quiet unless asked: no progress bar on stderr from simulate(),
Simulation.run() or run_study() by default; the command shows one on a terminal only."""

from __future__ import annotations

import argparse
import io
import sys

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics import _progress
from robot_dynamics.commands._common import show_progress
from robot_dynamics.control import ComputedTorque
from robot_dynamics.simulation import Logging, Simulation, SimulationOptions, simulate
from robot_dynamics.trajectory import plan

LONG = 30.0  # [s] of 1 kHz RK4 ticks: far over the 1 s after which a bar is shown when asked


def _case():
    m = rd.load_robot("planar2")
    return m, ComputedTorque(m, omega=20.0), plan("quintic", np.zeros(2), np.array([0.3, -0.2]), duration=0.05)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _bar_shown(monkeypatch, progress, terminal: bool) -> str:
    m, ctrl, move = _case()
    err = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    sim = Simulation(m, ctrl, move, LONG, SimulationOptions(logging=Logging(progress=progress)))
    bar = sim._progress_bar(int(LONG * 1000))
    if bar is not None:
        bar.close()
    return err.getvalue() if bar is not None else ""


def test_a_library_run_prints_nothing(capfd):
    m, ctrl, move = _case()
    simulate(m, ctrl, move, duration=10.0)  # long enough that the automatic choice would show a bar
    sim = Simulation(m, ctrl, move, 10.0)
    sim.reset(np.zeros(2))
    sim.run()
    out, err = capfd.readouterr()
    assert out == "" and err == ""


@pytest.mark.parametrize("progress, terminal, shown", [
    (False, True, False),   # the default: quiet, even on a terminal
    (None, False, False),   # automatic: no bar into a pipe or a log
    (None, True, True),     # automatic: a long run seen on a terminal (the command's choice)
    (True, False, True),    # asked for: always
])
def test_the_bar_appears_only_when_asked(monkeypatch, progress, terminal, shown):
    assert bool(_bar_shown(monkeypatch, progress, terminal)) is shown


def test_the_library_defaults_are_quiet():
    import inspect

    from robot_dynamics.study import run_study

    assert Logging().progress is False
    assert inspect.signature(simulate).parameters["progress"].default is False
    assert inspect.signature(run_study).parameters["progress"].default is False


@pytest.mark.parametrize("json_flag, terminal, shown", [(False, True, True), (False, False, False), (True, True, False)])
def test_commands_show_progress_on_a_terminal_only(monkeypatch, json_flag, terminal, shown):
    monkeypatch.setattr(sys, "stderr", _Terminal() if terminal else io.StringIO())
    assert show_progress(argparse.Namespace(json=json_flag)) is shown
    assert _progress.stderr_is_a_terminal() is terminal
