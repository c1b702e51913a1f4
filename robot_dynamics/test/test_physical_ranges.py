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
