"""Files and tables a user gets wrong: one line naming what is wrong and what is valid."""

from __future__ import annotations

import pytest

import robot_dynamics as rd
from robot_dynamics.errors import InputError, ModelError
from robot_dynamics.model.dh import load_dh_yaml

ROW = {"alpha": 0.0, "d": 0.3, "theta": 0.0, "r": 0.0, "mass": 1.0, "com": [0.1, 0, 0], "inertia": [0.01, 0, 0, 0.01, 0, 0.01]}


@pytest.mark.parametrize("row, words", [
    ({"name": "tool<0>"}, "not a valid name"),
    ({"name": 'a"/><robot name="b'}, "not a valid name"),
    ({"name": ""}, "not a valid name"),
    ({"joint": "j 1"}, "not a valid name"),
    ({"limits": {"lower": 1, "upper": -1}}, "above upper"),
    ({"limits": {"lowr": 1}}, "unknown keys \\['lowr'\\]"),
    ({"lowr": 1}, "unknown keys \\['lowr'\\]"),
    ({"damping": -1}, ">= 0"),
])
def test_dh_tables_are_checked_on_load(row, words):
    with pytest.raises(ModelError, match=words) as info:
        load_dh_yaml({"name": "x", "convention": "modified", "links": [{**ROW, **row}]})
    assert "\n" not in str(info.value)


def test_unreadable_and_absurd_description_paths_are_one_line(tmp_path):
    bad = tmp_path / "bad.urdf"
    bad.write_bytes(b"\xff\xfe<robot>")
    with pytest.raises(ModelError, match="not UTF-8"):
        rd.load_urdf(bad)
    with pytest.raises(ModelError, match="not found") as info:
        rd.load_urdf("x" * 5000)
    assert len(str(info.value)) < 400


def test_malformed_yaml_is_one_line_with_line_and_column(tmp_path):
    p = tmp_path / "drive.yaml"
    p.write_text("joints:\n  joint1: {viscous: 1\n  bad")
    with pytest.raises(ModelError, match=r"'drive.yaml', line 3, column \d+: expected") as info:
        rd.model.apply_sidecar(rd.load_robot("puma560"), p)
    assert "\n" not in str(info.value)


def test_an_output_name_taken_by_a_folder_is_refused(tmp_path):
    from robot_dynamics.io._files import write_bytes_atomic

    (tmp_path / "plot.png").mkdir()
    with pytest.raises(InputError, match="a folder of that name exists"):
        write_bytes_atomic(tmp_path / "plot.png", b"x")
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="not a folder"):
        write_bytes_atomic(tmp_path / "file" / "plot.png", b"x")


def test_splines_with_extreme_limits_are_refused_not_singular():
    from robot_dynamics.trajectory import spline_through

    with pytest.raises(InputError, match="too extreme"):
        spline_through("cubic_spline", [[0, 0], [1, 1], [2, 0]], 1e-300, 1e300)


def test_a_recording_never_replaces_what_is_not_a_recording_and_stale_writes_are_cleaned(tmp_path):
    import os
    import time

    from robot_dynamics.control import ComputedTorque
    from robot_dynamics.io import write_rosbag
    from robot_dynamics.simulation import simulate

    m = rd.load_robot("planar2")
    res = simulate(m, ComputedTorque(m, omega=20.0), [0.2, 0.1], duration=0.05, progress=False)
    (tmp_path / "as_file").write_text("mine")
    with pytest.raises(InputError, match="a file of that name exists"):
        write_rosbag(res, m, tmp_path / "as_file")
    assert (tmp_path / "as_file").read_text() == "mine"
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with pytest.raises(InputError, match="not a rosbag2 recording"):
        write_rosbag(res, m, tmp_path / "mine")
    stale = tmp_path / ".run.abcd1234"
    stale.mkdir()
    old = time.time() - 3600
    os.utime(stale, (old, old))
    write_rosbag(res, m, tmp_path / "run")
    write_rosbag(res, m, tmp_path / "run")  # an earlier recording is replaced
    assert (tmp_path / "run" / "metadata.yaml").is_file() and not stale.exists()


def test_nan_in_a_transmission_is_refused():
    text = rd.load_robot("puma560").description.replace("</robot>", (
        '<transmission name="t1"><type>transmission_interface/SimpleTransmission</type>'
        '<joint name="joint1"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>'
        '<actuator name="m1"><mechanicalReduction>nan</mechanicalReduction></actuator></transmission></robot>'))
    with pytest.raises(ModelError, match="(?i)nan|finite|reduction"):
        rd.load_urdf(text, drivetrain={"transmissions": {"m1": {"inertia": 2e-5}}})
