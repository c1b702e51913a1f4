"""Parameters are checked on load against a physical range: a description that would give
NaN or a number only later is refused at once, naming the field (and complex or absurd inputs
to the dynamics functions are refused, never truncated)."""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.errors import InputError, ModelError
from robot_dynamics.model import apply_sidecar

TWO = """<robot name="r"><link name="base"/>
<link name="a"><inertial><mass value="{mass}"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
<link name="b"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
<joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
  <limit lower="{lo}" upper="{hi}" effort="10" velocity="1"/><dynamics damping="{damp}"/></joint>
<joint name="j2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="{x} 0 0"/><axis xyz="0 1 0"/>
  <limit lower="-1" upper="1" effort="10" velocity="1"/><mimic joint="j1" multiplier="{mult}"/></joint></robot>"""
OK = dict(mass="1", lo="-1", hi="1", damp="0", x="0.5", mult="1")


@pytest.mark.parametrize("field, value, words", [
    ("mass", "1e308", "beyond 1e7 kg"),
    ("mass", "inf", "finite"),
    ("damp", "inf", "must be finite"),
    ("x", "1e308", "not a robot's dimension"),
    ("mult", "inf", "<mimic> multiplier"),
    ("mult", "1e308", "<mimic> multiplier"),
    ("lo", "inf", "leave no position"),
])
def test_urdf_values_out_of_any_physical_range_are_refused_on_load(field, value, words):
    fields = dict(OK, **{field: value})
    if field == "lo":
        fields["hi"] = "inf"
    with pytest.raises(ModelError, match=words):
        rd.load_urdf(TWO.format(**fields))
    model = rd.load_urdf(TWO.format(**OK))
    assert np.all(np.isfinite(rd.rnea(model, [0.1], [0.2], [0.3])))


@pytest.mark.parametrize("key", ["armature", "viscous", "coulomb", "rotor_inertia", "gear_ratio"])
@pytest.mark.parametrize("value, words", [(float("inf"), "finite"), (1e308, "beyond any physical value"),
                                          (int("9" * 400), "too large for a number")])
def test_joint_properties_out_of_range_are_refused(key, value, words):
    puma = rd.load_robot("puma560")
    with pytest.raises(ModelError, match=words):
        apply_sidecar(puma, {"joints": {"joint1": {key: value}}})
    unlimited = apply_sidecar(puma, {"joints": {"joint1": {"limits": {"effort": float("inf")}}}})
    assert unlimited.effort_limit[0] == np.inf  # no limit is a valid limit


def test_complex_states_are_refused_not_truncated():
    puma = rd.load_robot("puma560")
    for f in (rd.rnea, rd.aba):
        with pytest.raises(InputError, match="complex"):
            f(puma, np.zeros(6) + 1j, np.zeros(6), np.zeros(6))
    with pytest.raises(InputError, match="complex"):
        rd.crba(puma, np.zeros(6) + 0.5j)


# -- the drive-train YAML: the same bounds as the URDF's and the joint properties' ----------------

def _geared_doc() -> dict:
    import yaml

    from robot_dynamics.model.registry import robot_files

    return yaml.safe_load(robot_files("three_dof_geared")[1].read_text(encoding="utf-8"))


@pytest.mark.parametrize("key, value, words", [
    # a com of 1e200 loaded, and rnea later blamed its own inputs
    ("com", [1e200, 0.0, 0.0], r"secondary_links\.gear4\.com\[0\]: 1e\+200 m is beyond any physical value here "
                                r"\(\|x\| <= 10000 m\)"),
    ("com", [0.0, 0.0, -2e4], r"secondary_links\.gear4\.com\[2\]: -20000 m .*\(\|x\| <= 10000 m\)"),
    ("mass", 1e200, r"secondary_links\.gear4\.mass: 1e\+200 kg .*\(\|x\| <= 1e\+07 kg\)"),
    ("inertia", 1e200, r"secondary_links\.gear4\.inertia: 1e\+200 kg m\^2 .*\(\|x\| <= 1e\+12 kg m\^2\)"),
    ("transverse_inertia", 1e13, r"secondary_links\.gear4\.transverse_inertia: 1e\+13 kg m\^2 .*\(\|x\| <= 1e\+12"),
    ("coefficients", {"joint1": 1e200}, r"secondary_links\.gear4\.coefficients\.joint1: 1e\+200 is beyond any physical"),
])
def test_secondary_links_are_bounded_like_the_urdf(key, value, words):
    from robot_dynamics.model.registry import robot_files

    urdf = robot_files("three_dof_geared")[0]
    doc = _geared_doc()
    doc["secondary_links"]["gear4"][key] = value
    with pytest.raises(ModelError, match=words):
        rd.load_urdf(urdf, drivetrain=doc)
    # just inside the bounds: loads, and the dynamics are finite
    doc = _geared_doc()
    doc["secondary_links"]["gear4"]["com"] = [0.0, 0.0, 9e3]
    model = rd.load_urdf(urdf, drivetrain=doc)
    assert np.all(np.isfinite(rd.rnea(model, [0.1, 0.2, 0.3], [0.1, 0.2, 0.3], [0.1, 0.2, 0.3])))


def test_transmission_rotor_inertia_is_bounded_in_the_yaml_and_the_urdf():
    from drivetrain_cases import TRANSMISSION_URDF

    with pytest.raises(ModelError, match=r"transmissions\.m3\.inertia: 1e\+200 kg m\^2 is beyond any physical value here "
                                         r"\(\|x\| <= 1e\+12 kg m\^2\)"):
        rd.load_urdf(TRANSMISSION_URDF, drivetrain={"transmissions": {"m3": {"inertia": 1e200}}})
    model = rd.load_urdf(TRANSMISSION_URDF, drivetrain={"transmissions": {"m3": {"inertia": 2e-5}}})
    assert model.drivetrain.inertia[list(model.drivetrain.names).index("m3")] == 2e-5
    tag = "<rotor_inertia>1.5e-4</rotor_inertia>"
    with pytest.raises(ModelError, match=r"actuator 'm1' <rotor_inertia>: expected a rotor inertia from 0 to 1e\+12 kg m\^2, "
                                         r"got '1e200'"):
        rd.load_urdf(TRANSMISSION_URDF.replace(tag, "<rotor_inertia>1e200</rotor_inertia>"), drivetrain={"transmissions": None})
    # a rotor without inertia is a rotor the URDF says nothing of: 0 is valid (it was read as a zero reduction)
    model = rd.load_urdf(TRANSMISSION_URDF.replace(tag, "<rotor_inertia>0</rotor_inertia>"), drivetrain={"transmissions": None})
    assert model.drivetrain.inertia[list(model.drivetrain.names).index("m1")] == 0.0
