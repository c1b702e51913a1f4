"""A model's description (the URDF it carries) says what the model holds: a limit the model has as
none is none again when the description is loaded back, and rviz's parser still gets numbers."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.errors import ModelError

DH = """
name: arm
convention: modified
links:
  - {name: link1, joint: j1, type: revolute, alpha: 0.0, d: 0.0, theta: 0.0, r: 0.3, mass: 2.0,
     com: [0, 0, 0], inertia: [0.01, 0, 0, 0.01, 0, 0.01] %s}
  - {name: link2, joint: j2, type: revolute, alpha: 1.5707963267948966, d: 0.0, theta: 0.0, r: 0.0,
     mass: 1.5, com: [0.2, 0, 0], inertia: [0.01, 0, 0, 0.02, 0, 0.02],
     limits: {lower: -2.0, upper: 2.0, effort: 40.0, velocity: 3.0}}
"""


def _dh(tmp_path, extra=""):
    path = tmp_path / "arm.yaml"
    path.write_text(DH % extra, encoding="utf-8")
    return path


def test_an_unlimited_dh_joint_stays_unlimited_through_its_description(tmp_path):
    with pytest.warns(rd.ModelWarning, match="joint 'j1' has no effort limit"):  # and the model checks say so
        model = rd.load_dh_yaml(_dh(tmp_path))
    assert model.effort_limit[0] == np.inf and model.velocity_limit[0] == np.inf
    with pytest.warns(rd.ModelWarning, match="joint 'j1' has no effort limit"):
        again = rd.load_urdf(model.description)
    np.testing.assert_array_equal(again.effort_limit, model.effort_limit)
    np.testing.assert_array_equal(again.velocity_limit, model.velocity_limit)
    np.testing.assert_array_equal(again.lower, model.lower)
    np.testing.assert_array_equal(again.upper, model.upper)
    # what urdfdom (robot_state_publisher, rviz) reads: numbers in the required attributes
    limit = ET.fromstring(model.description).find("joint[@name='j1']/limit")
    assert float(limit.get("effort")) == 1e6 and float(limit.get("velocity")) == 1e6
    assert limit.get("unlimited") == "effort velocity"
    assert ET.fromstring(model.description).find("joint[@name='j2']/limit").get("unlimited") is None


def test_a_revolute_urdf_joint_without_position_limits_round_trips():
    urdf = rd.load_robot("planar2").description.replace('lower="', 'data-lower="').replace('upper="', 'data-upper="')
    model = rd.load_urdf(urdf)
    assert np.all(np.isinf(model.lower)) and np.all(np.isinf(model.upper))
    again = rd.load_urdf(model.description)
    np.testing.assert_array_equal(again.lower, model.lower)
    np.testing.assert_array_equal(again.upper, model.upper)


def test_a_continuous_dh_joint_with_position_limits_is_refused(tmp_path):
    path = tmp_path / "arm.yaml"
    path.write_text((DH % "").replace("joint: j2, type: revolute", "joint: j2, type: continuous"),
                    encoding="utf-8")
    with pytest.raises(ModelError, match="a continuous joint has no position limits"):
        rd.load_dh_yaml(path)


def test_an_unknown_unlimited_name_is_refused():
    urdf = rd.load_robot("planar2").description.replace("<limit ", '<limit unlimited="torque" ', 1)
    with pytest.raises(ModelError, match="valid names: \\['lower', 'upper', 'effort', 'velocity'\\]"):
        rd.load_urdf(urdf)
