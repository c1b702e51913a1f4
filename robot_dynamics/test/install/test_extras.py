"""The default install is light: the main job needs no extra, and a feature that needs one says
which (``pip install "robot_dynamics[studies]"``) instead of failing deep in an import."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import robot_dynamics as rd
from robot_dynamics._extras import EXTRAS, require

HEAVY = tuple(m for modules in EXTRAS.values() for m in modules)


def _block(monkeypatch, *modules: str) -> None:
    """Make ``modules`` unimportable, as if not installed (None in sys.modules)."""
    for name in list(sys.modules):
        if name.split(".")[0] in modules:
            monkeypatch.delitem(sys.modules, name)
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def test_require_names_the_extra_and_the_missing_modules(monkeypatch):
    require("studies", "studies")  # installed in the test environment: no error
    _block(monkeypatch, "pyarrow")
    with pytest.raises(rd.MissingDependencyError) as exc:
        require("studies", "studies")
    message = str(exc.value)
    assert "'studies' extra" in message and "missing pyarrow" in message
    assert 'pip install "./robot_dynamics[studies]"' in message
    assert isinstance(exc.value, ImportError) and isinstance(exc.value, rd.RobotDynamicsError)


def test_studies_without_dask_say_which_extra(monkeypatch, tmp_path):
    from robot_dynamics import study as sd

    study = sd.load_study({"name": "s", "robot": "planar2", "axes": {"omega": {"grid": [10.0]}}})
    _block(monkeypatch, "dask", "distributed")
    with pytest.raises(rd.MissingDependencyError, match=r"robot_dynamics\[studies\]"):
        sd.run_study(study, tmp_path, scheduler="inprocess", progress=False)
    assert not any(tmp_path.iterdir())  # refused before anything is written


def test_symbolic_features_without_sympy_say_which_extra(monkeypatch):
    from robot_dynamics.drivetrain.symbolic import symbolic_coupling
    from robot_dynamics.dynamics.base_parameters import grouping_rules

    model = rd.load_robot("three_dof_geared")
    _block(monkeypatch, "sympy")
    for call in (lambda: symbolic_coupling(model), lambda: grouping_rules(rd.load_robot("rx90"))):
        with pytest.raises(rd.MissingDependencyError, match=r"robot_dynamics\[symbolic\]"):
            call()


def test_the_cli_says_it_in_one_line(monkeypatch, capsys):
    from robot_dynamics.cli import main

    _block(monkeypatch, "sympy")
    assert main(["drivetrain", "--symbolic"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert err.startswith("robot-dynamics drivetrain: error:") and 'pip install "./robot_dynamics[symbolic]"' in err


def test_the_main_job_runs_without_any_extra(tmp_path):
    """``robot-dynamics simulate`` with dask, distributed, pyarrow and sympy unimportable, in a
    fresh process: the README's main job on the default install."""
    code = textwrap.dedent(f"""
        import sys
        for name in {HEAVY!r}:
            sys.modules[name] = None
        from robot_dynamics.cli import main
        status = main(["simulate", "--out", {str(tmp_path)!r}, "--move-time", "0.3", "--settle", "0.1"])
        loaded = sorted(m for m in {HEAVY!r} if sys.modules.get(m) is not None)
        print("STATUS", status, "LOADED", loaded)
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                         env={**__import__("os").environ, "MPLBACKEND": "Agg"})
    assert "STATUS 0 LOADED []" in run.stdout, run.stdout + run.stderr
    assert (tmp_path / "simulate_puma560.png").stat().st_size > 0
    assert (tmp_path / "simulate_puma560" / "metadata.yaml").is_file()
