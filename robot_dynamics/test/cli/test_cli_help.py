"""What a new user sees first: --help lists the main job first, each option sits in its group, and
a mistyped name is answered with the nearest valid one."""

from __future__ import annotations

import pytest

import robot_dynamics as rd
from robot_dynamics.cli import COMMAND_ORDER, build_parser, main
from robot_dynamics.errors import UnknownNameError


def _listed(text: str) -> list[str]:
    """The subcommands in the order --help lists them."""
    lines = text.split("COMMAND\n", 1)[1].split("\noptions:", 1)[0].splitlines()
    return [line.split()[0] for line in lines if line.startswith("    ") and not line.startswith("     ")]


def test_help_lists_the_main_job_first_and_the_developer_tools_last():
    listed = _listed(build_parser().format_help())
    assert listed[:3] == ["simulate", "trajectory", "torque"]
    assert listed[-2:] == ["codegen", "bench"]
    assert listed == list(COMMAND_ORDER)  # every subcommand has its place: a new one must be placed


@pytest.mark.parametrize("command, option", [("torque", "--qdd"), ("accel", "--tau")])
def test_the_state_options_sit_together(command, option):
    sub = build_parser()._subparsers._group_actions[0].choices[command]  # noqa: SLF001
    text = sub.format_help()
    state = text.split("state (comma lists in joint order; default zeros):", 1)[1]
    assert option in state and "--q Q" in state and "--qd QD" in state
    assert option not in text.split("options:", 1)[1].split("state (", 1)[0]


def test_a_mistyped_robot_gets_the_nearest_name(capsys):
    assert main(["info", "--robot", "puma650"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "Valid robots:" in err and err.rstrip().endswith("did you mean 'puma560'?")


def test_did_you_mean_only_when_a_name_is_near():
    assert "did you mean 'elbow'" in str(UnknownNameError("joint", "elbw", ["shoulder", "elbow"]))
    assert "did you mean" not in str(UnknownNameError("joint", "gripper", ["shoulder", "elbow"]))
    with pytest.raises(UnknownNameError, match="did you mean 'joint2'"):
        rd.load_robot("puma560").joint_index("joint_2")


def test_the_docs_table_names_every_subcommand():
    """docs/library.md's table of subcommands lists each one --help lists (the README's old table
    omitted four)."""
    import re

    from repo_files import repository_path

    page = repository_path("docs", "library.md")
    if page is None or not page.is_file():
        pytest.skip("the package without its repository: no docs/")
    text = page.read_text(encoding="utf-8")
    table = text[text.index("| subcommand | what it does |"):]
    table = table[: table.index("\n\n")]
    named = set(re.findall(r"`([a-z0-9-]+)`", "\n".join(line.split("|")[1] for line in table.splitlines()[2:])))
    assert named == set(COMMAND_ORDER)
