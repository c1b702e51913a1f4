"""Drive-train YAML and <transmission> tags: what loads, what is rejected and why."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml

import robot_dynamics as rd
from robot_dynamics.drivetrain import parse_transmissions
from robot_dynamics.model import robot_files
from drivetrain_cases import TRANSMISSION_URDF

URDF, SIDECAR = robot_files("three_dof_geared")
DOC = yaml.safe_load(SIDECAR.read_text())


def _doc(**changes):
    d = copy.deepcopy(DOC)
    for path, value in changes.items():
        *keys, last = path.split("__")
        node = d
        for k in keys:
            node = node[int(k)] if isinstance(node, list) else node[k]
        if value is None:
            del node[last]
        else:
            node[last] = value
    return d


BAD = {
    "unknown carrier": (_doc(secondary_links__gear4__carrier="link9"), r"secondary_links\.gear4\.carrier: unknown link 'link9'\. Valid links: \['link0'"),
    "unknown joint": (_doc(secondary_links__gear7__coefficients={"joint7": 1.0}), r"coefficients\.joint7: unknown joint\. Valid joints: \['joint1', 'joint2', 'joint3'\]"),
    "wrong number of coefficients": (_doc(secondary_links__gear7__coefficients=[0, 0, 1, 2]), r"gear7\.coefficients: expected 3 coefficients \(one per joint: \['joint1'"),
    "non-unit axis": (_doc(secondary_links__gear6__axis=[0, 0, 2]), r"secondary_links\.gear6\.axis: must be a unit vector, got norm 2"),
    "negative inertia": (_doc(secondary_links__gear5__inertia=-1e-3), r"secondary_links\.gear5\.inertia: must be >= 0"),
    "negative mass": (_doc(secondary_links__gear5__mass=-1.0), r"secondary_links\.gear5\.mass: must be >= 0"),
    "unknown key": (_doc(secondary_links__gear5__ratio=2.0), r"secondary_links\.gear5\.ratio: unknown key\. Valid keys: \['carrier'"),
    "missing key": (_doc(secondary_links__gear5__inertia=None), r"gear5: missing key 'inertia'"),
    "name clash": ({"secondary_links": {"link1": DOC["secondary_links"]["gear4"]}}, r"secondary_links\.link1: the name is already a URDF link or joint"),
    "joint name clash": ({"secondary_links": {"joint2": DOC["secondary_links"]["gear4"]}}, r"secondary_links\.joint2: the name is already a URDF link or joint"),
    "singular A": (_doc(inputs=["gear4", "joint1", "gear6"]), r"inputs: the structure matrix A is singular"),
    "non-square A": (_doc(inputs=["gear4", "gear5"]), r"inputs: the structure matrix A must be square: 3 joints need 3 input links, got 2"),
    "unknown input": (_doc(inputs=["gear4", "gear5", "motor9"]), r"inputs: unknown input link 'motor9'\. Valid choices \(secondary links or joints\): \['gear4'"),
    "too few gear pairs": (_doc(gear_pairs=DOC["gear_pairs"][:3]), r"gear_pairs: 3 gear pair\(s\) for 4 secondary link\(s\) without coefficients"),
    "gear pair arm": (_doc(gear_pairs__0__arm="link7"), r"gear_pairs\[0\]\.arm: unknown link 'link7'\. Valid links:"),
    "not on the arm": (_doc(secondary_links__gear5__coaxial_joint=None), r"gear_pairs\[1\]\.gear: 'gear5' is carried by 'link0', not pivoted on the arm 'link1'"),
    "zero ratio": (_doc(gear_pairs__2__ratio=0.0), r"gear_pairs\[2\]\.ratio: must be non-zero"),
    "unknown section": ({**DOC, "gearbox": {}}, r"Unknown section 'gearbox'.*Valid sections: \['joints', 'secondary_links'"),
    "elastic joint": ({"elastic": {"joint4": {"stiffness": 1.0, "motor_inertia": 1.0}}}, r"elastic\.joint4: unknown joint\. Valid joints"),
    "elastic missing": ({"elastic": {"joint1": {"stiffness": 1.0, "motor_inertia": 1.0}}}, r"elastic: every joint needs .* missing joints: \['joint2', 'joint3'\]"),
    "elastic stiffness": ({"elastic": {j: {"stiffness": -5.0, "motor_inertia": 1.0} for j in ("joint1", "joint2", "joint3")}}, r"elastic\.joint1\.stiffness: must be > 0"),
    "no transmissions": ({"transmissions": {}}, r"transmissions: the URDF has no <transmission> tags"),
}


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_bad_yaml_is_rejected_with_a_message_naming_the_field(case):
    doc, pattern = BAD[case]
    with pytest.raises(rd.ModelError, match=pattern):
        rd.load_urdf(URDF, drivetrain=doc)


def test_nothing_is_half_loaded(tmp_path):
    base = rd.load_urdf(URDF)
    before = base.mass.copy()
    with pytest.raises(rd.ModelError):
        rd.model.apply_sidecar(base, BAD["singular A"][0])
    assert base.drivetrain is None and np.array_equal(base.mass, before)  # the input model is untouched
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(BAD["non-unit axis"][0]))
    with pytest.raises(rd.ModelError, match="unit vector"):
        rd.load_urdf(URDF, drivetrain=path)
    good = rd.load_urdf(URDF, drivetrain=SIDECAR)
    assert good.drivetrain.n_secondary == 4
    # the gears' masses went into their carriers (virtual links 1* and 2*)
    b1, b2 = good.body_names.index("link1"), good.body_names.index("link2")
    assert good.mass[b1] == pytest.approx(base.mass[b1] + 0.9)
    assert good.mass[b2] == pytest.approx(base.mass[b2] + 0.35)


def test_teeth_and_explicit_coefficients_give_the_same_train():
    d = _doc()
    d["gear_pairs"][0] = {"gear": "gear4", "mates": "link1", "arm": "link0", "teeth": [15, 90], "sign": -1}
    a = rd.load_urdf(URDF, drivetrain=d).drivetrain
    explicit = _doc(gear_pairs=None)
    for name, b in zip(a.names, a.B):
        explicit["secondary_links"][name]["coefficients"] = b.tolist()
    b_ = rd.load_urdf(URDF, drivetrain=explicit).drivetrain
    np.testing.assert_allclose(a.B, b_.B)
    np.testing.assert_allclose(a.B[0], [-6.0, 0, 0])  # g14 = -N1/N4 = -90/15


def _ros2_control_differential(a, na, nj):
    """transmission_interface::DifferentialTransmission maps, written from its documentation."""
    jpos = np.array([(a[0] / na[0] + a[1] / na[1]) / (2 * nj[0]), (a[0] / na[0] - a[1] / na[1]) / (2 * nj[1])])
    return jpos


def test_transmission_tags_give_A_and_rotors_by_power_conservation():
    model = rd.load_urdf(TRANSMISSION_URDF, drivetrain={"transmissions": {"m3": {"inertia": 2e-5}}})
    dt = model.drivetrain
    assert dt.source == "transmission"
    assert dt.inputs == ("m1", "m3", "m4", "j2")  # j2 has no transmission: direct drive
    parsed = parse_transmissions(model)
    assert [t["type"] for t in parsed] == ["SimpleTransmission", "DifferentialTransmission"]
    # positions: actuator angles phi = A^T theta must give back the joint angles of ros2_control
    rng = np.random.default_rng(5)
    theta = rng.normal(size=4)
    phi = dt.A.T @ theta
    assert phi[0] == pytest.approx(80.0 * theta[0])  # SimpleTransmission: joint = actuator / n
    np.testing.assert_allclose(_ros2_control_differential(phi[1:3], [50, -40], [2.0, -1.5]), theta[2:], rtol=1e-13)
    # efforts: G = A xi equals ros2_control's effort map (power conservation)
    xi = rng.normal(size=4)
    G = dt.A @ xi
    assert G[0] == pytest.approx(80.0 * xi[0])
    np.testing.assert_allclose(G[2:], [2.0 * (50 * xi[1] - 40 * xi[2]), -1.5 * (50 * xi[1] + 40 * xi[2])], rtol=1e-13)
    assert G[1] == xi[3]
    # rotor inertia from the tag (m1) and from the YAML (m3); m1 sits on the base: an armature
    assert dt.inertia[dt.index("m1")] == 1.5e-4 and dt.inertia[dt.index("m3")] == 2e-5
    plain = rd.load_urdf(TRANSMISSION_URDF)
    q = rng.uniform(-1, 1, 4)
    M, M0 = rd.crba(model, q), rd.crba(plain, q)
    assert M[0, 0] - M0[0, 0] == pytest.approx(80.0**2 * 1.5e-4, rel=1e-12)  # Khalil [7.29]
    # the wrist rotors ride on link l2 and couple j3 and j4
    assert abs(M[2, 3] - M0[2, 3]) > 1e-4


def test_bad_transmissions_are_rejected():
    bad = TRANSMISSION_URDF.replace('<joint name="j1" role="joint1">', '<joint name="j9" role="joint1">')
    with pytest.raises(rd.ModelError, match=r"unknown joint 'j9'\. Valid joints: \['j1', 'j2', 'j3', 'j4'\]"):
        rd.load_urdf(bad, drivetrain={"transmissions": None})
    bad = TRANSMISSION_URDF.replace("SimpleTransmission", "FourBarLinkageTransmission")
    with pytest.raises(rd.ModelError, match=r"unsupported type 'FourBarLinkageTransmission'\. Supported: \['SimpleTransmission'"):
        rd.load_urdf(bad, drivetrain={"transmissions": None})
    with pytest.raises(rd.ModelError, match=r"transmissions\.m7: unknown actuator\. Valid actuators: \['m1', 'm3', 'm4'\]"):
        rd.load_urdf(TRANSMISSION_URDF, drivetrain={"transmissions": {"m7": {"inertia": 1.0}}})
    with pytest.raises(rd.ModelError, match="cannot be combined"):
        rd.load_urdf(TRANSMISSION_URDF, drivetrain={"transmissions": None, "inputs": ["j1", "j2", "j3", "j4"]})


def test_the_documented_yaml_example_loads_and_is_the_bundled_train():
    from repo_files import repository_file

    page = repository_file("docs", "drive_trains.md").read_text(encoding="utf-8")
    doc = page.split("\n## The drive-train YAML\n", 1)[1]
    block = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    documented = rd.load_urdf(URDF, drivetrain=yaml.safe_load(block))
    bundled = rd.load_robot("three_dof_geared")
    np.testing.assert_allclose(documented.drivetrain.B, bundled.drivetrain.B, rtol=1e-15)
    np.testing.assert_allclose(documented.drivetrain.A, bundled.drivetrain.A, rtol=1e-15)
    q = np.array([0.3, -0.2, 0.9])
    np.testing.assert_allclose(rd.rnea(documented, q, q, q), rd.rnea(bundled, q, q, q), rtol=1e-13)
