"""robot_dynamics.ros.compat: which distribution is sourced, and its facts agree with CI's files.

Pure (no ROS needed); test_ros_nodes.py checks the facts against the real rclpy where ROS runs.
"""

from __future__ import annotations

import re

import pytest
from repo_files import repository_file

from robot_dynamics.ros.compat import DISTRIBUTIONS, current, localhost_only


def _prefix(tmp_path, version: str | None):
    if version is not None:
        share = tmp_path / "share" / "rclpy"
        share.mkdir(parents=True)
        (share / "package.xml").write_text(f"<package format='3'><name>rclpy</name><version>{version}</version></package>")
    return str(tmp_path)


@pytest.mark.parametrize(("version", "name"), [("3.3.15", "humble"), ("7.1.3", "jazzy"), ("9.0.0", None), (None, None)])
def test_a_source_build_is_told_by_its_rclpy_version(tmp_path, monkeypatch, version, name):
    monkeypatch.delenv("ROS_DISTRO", raising=False)
    monkeypatch.setenv("AMENT_PREFIX_PATH", _prefix(tmp_path, version))
    found = current()
    assert (found.name if found else None) == name


def test_ros_distro_wins_where_set(tmp_path, monkeypatch):
    monkeypatch.setenv("AMENT_PREFIX_PATH", _prefix(tmp_path, "3.3.15"))
    monkeypatch.setenv("ROS_DISTRO", "jazzy")
    assert current() is DISTRIBUTIONS["jazzy"]
    monkeypatch.setenv("ROS_DISTRO", "rolling")
    assert current() is None


def test_localhost_only_names_each_distribution_s_variable(monkeypatch):
    assert localhost_only(DISTRIBUTIONS["humble"]) == {"ROS_LOCALHOST_ONLY": "1"}
    assert localhost_only(DISTRIBUTIONS["jazzy"]) == {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    monkeypatch.delenv("ROS_DISTRO", raising=False)
    monkeypatch.setenv("AMENT_PREFIX_PATH", "")
    assert localhost_only() == {"ROS_LOCALHOST_ONLY": "1", "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}


def _bound(text: str, package: str, op: str) -> int | None:
    """The major version of ``package``'s ``op`` bound in a constraints file (``<`` or ``>=``)."""
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if re.match(rf"{package}\s*[<>=!~]", line):
            match = re.search(rf"{re.escape(op)}\s*(\d+)", line)
            if match and not (op == "<" and f"<={match.group(1)}" in line):
                return int(match.group(1))
    return None


@pytest.mark.parametrize(("file", "distro", "numpy_major"), [
    ("constraints-humble.txt", "humble", 1),
    ("constraints-jazzy-numpy1.txt", "jazzy", 1),  # beside the official debs
    ("constraints-jazzy.txt", "jazzy", 2),  # beside the Jazzy CI builds against numpy 2
])
def test_each_constraints_file_holds_its_distribution_s_bounds(file, distro, numpy_major):
    text = repository_file(".ci", file).read_text(encoding="utf-8")
    facts = DISTRIBUTIONS[distro]
    assert _bound(text, "pytest", "<") == facts.pytest_below
    if numpy_major == 1:
        assert _bound(text, "numpy", "<") == 2 and facts.numpy_of_debs == 1
        assert _bound(text, "pyarrow", "<") == 21 and _bound(text, "pin", "<") == 3
    else:
        assert _bound(text, "numpy", ">=") == 2
        assert _bound(text, "pyarrow", ">=") == 21 and _bound(text, "pin", ">=") == 3
