"""The README runs as written: every Python block executes on its own, and every
``robot-dynamics`` line of its shell blocks exits 0, except the lines that name a user's own
files or a cluster (listed below, each with the reason). The ROS 2 commands are checked by
``test_launch_sim.py`` under a real ROS 2 (the service calls and their answers)."""

from __future__ import annotations

import re
import shlex

import numpy as np
import pytest
from repo_files import repository_file, repository_path

README = repository_path("README.md")  # None: the package without its repository
TEXT = README.read_text(encoding="utf-8") if README is not None and README.is_file() else ""
BLOCKS = re.findall(r"```(\w*)\n(.*?)```", TEXT, re.S)
PYTHON = [b for lang, b in BLOCKS if lang == "python"]
CLI = [line.split("#")[0].strip() for lang, b in BLOCKS if lang == "bash"
       for line in b.splitlines() if line.strip().startswith("robot-dynamics ")]

#: README lines that cannot run here, and why (everything else must).
NOT_HERE = {
    "study.yaml": "stands for the user's own study file",
    "rosbag2_excitation": "stands for a recording of the user's arm",
    "robot_dynamics_out/identified.urdf": "reads what `identify` on the user's recording wrote",
}


def test_the_readme_is_there_and_has_code():
    repository_file("README.md")
    assert len(PYTHON) >= 3 and len(CLI) >= 4


@pytest.mark.parametrize("code", PYTHON, ids=[f"python-block-{i}" for i in range(len(PYTHON))])
def test_every_python_block_runs_on_its_own(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "readme"}
    exec(compile(code, str(README), "exec"), namespace)  # noqa: S102 - the README's own code
    arrays = [v for v in namespace.values() if isinstance(v, np.ndarray) and v.dtype.kind == "f"]
    assert arrays and all(np.all(np.isfinite(a)) for a in arrays)


@pytest.mark.parametrize("line", CLI)
def test_every_command_line_of_the_readme_runs(line, tmp_path, monkeypatch, capsys):
    from robot_dynamics.cli import main

    reason = next((why for key, why in NOT_HERE.items() if key in line), None)
    if reason is not None:
        # not run here, but it must still parse: its options exist
        from robot_dynamics.cli import build_parser

        build_parser().parse_args(shlex.split(line)[1:])
        return
    monkeypatch.chdir(tmp_path)
    assert main(shlex.split(line)[1:]) == 0, capsys.readouterr().err


def test_the_main_job_prints_the_readme_numbers(tmp_path, monkeypatch, capsys):
    """`robot-dynamics simulate` prints the README's table digit for digit (the wall time aside)."""
    from robot_dynamics.cli import main

    repository_file("README.md")
    block = TEXT[TEXT.index("$ robot-dynamics simulate\n"):]
    block = block[: block.index("```")]
    rows = {line.split()[0]: [float(x) for x in line.split()[1:]] for line in block.splitlines()
            if re.match(r"joint\d\s", line)}
    assert len(rows) >= 2
    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "--no-plot", "--no-bag"]) == 0
    out = capsys.readouterr().out
    for line in out.splitlines():
        name = line.split()[0] if line.strip() else ""
        if name in rows:
            np.testing.assert_allclose([float(x) for x in line.split()[1:]], rows[name], rtol=1e-5, err_msg=name)
            rows.pop(name)
    assert not rows, f"README rows not printed: {list(rows)}"
