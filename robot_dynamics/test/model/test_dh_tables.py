"""DH tables: Khalil's modified DH, the standard DH, his worked Example 7.1 and published numbers."""

from __future__ import annotations

import numpy as np
import pytest
from peer import relative_error

import robot_dynamics as rd
from robot_dynamics.model import share_directory
from robot_dynamics.model.dh import modified_dh_transform, standard_dh_transform
from robot_dynamics.spatial import rpy_to_matrix
from robot_dynamics.testing import random_inertia


def _rot_x(a):
    return rpy_to_matrix([a, 0, 0])


def _rot_z(a):
    return rpy_to_matrix([0, 0, a])


def test_dh_transforms_match_their_definitions():
    a, d, th, r = 0.3, 0.2, -0.7, 0.5
    T = modified_dh_transform(a, d, th, r)
    # Khalil [3.2]: the closed form of Rot(x, alpha) Trans(x, d) Rot(z, theta) Trans(z, r)
    ca, sa, ct, st = np.cos(a), np.sin(a), np.cos(th), np.sin(th)
    expected = np.array(
        [[ct, -st, 0, d], [ca * st, ca * ct, -sa, -r * sa], [sa * st, sa * ct, ca, r * ca], [0, 0, 0, 1]]
    )
    np.testing.assert_allclose(T, expected, atol=1e-15)
    T2 = standard_dh_transform(th, d, 0.4, a)
    expected2 = np.array(
        [[ct, -st * ca, st * sa, 0.4 * ct], [st, ct * ca, -ct * sa, 0.4 * st], [0, sa, ca, d], [0, 0, 0, 1]]
    )
    np.testing.assert_allclose(T2, expected2, atol=1e-15)


def _rx90_three_links(rng):
    """The first three links of the RX-90 (Khalil Example 3.1) with random standard inertial
    parameters (Khalil's XX..ZZ about O_j, MX, MY, MZ, M) and rotor inertias."""
    D3 = 0.45
    params = []
    links = []
    for j, (alpha, d) in enumerate([(0.0, 0.0), (np.pi / 2, 0.0), (0.0, D3)], start=1):
        m = rng.uniform(2, 10)
        c = rng.uniform(-0.1, 0.1, 3)
        Ic = random_inertia(rng) * m  # a random box, rotated: moments a body has
        Jo = Ic - m * np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]]) @ np.array(
            [[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]]
        )
        XX, XY, XZ, YY, YZ, ZZ = Jo[0, 0], Jo[0, 1], Jo[0, 2], Jo[1, 1], Jo[1, 2], Jo[2, 2]
        MX, MY, MZ = m * c
        params.append(dict(XX=XX, XY=XY, XZ=XZ, YY=YY, YZ=YZ, ZZ=ZZ, MX=MX, MY=MY, MZ=MZ, M=m))
        links.append(
            {"name": f"link{j}", "joint": f"joint{j}", "alpha": alpha, "d": d, "theta": 0.0, "r": 0.0,
             "mass": float(m), "ms": [float(MX), float(MY), float(MZ)], "limits": {"effort": 200.0},
             "inertia_origin": [float(XX), float(XY), float(XZ), float(YY), float(YZ), float(ZZ)]}
        )
    Ia = rng.uniform(0.5, 2.0, 3)
    model = rd.load_dh_yaml(
        {"name": "rx90_arm", "convention": "modified", "links": links},
        drivetrain={"joints": {f"joint{j + 1}": {"armature": float(Ia[j])} for j in range(3)}},
    )
    return model, params, Ia, D3


def test_khalil_example_7_1_inertia_matrix_and_gravity(rng):
    """Khalil Example 7.1: A and Q of the RX-90's first three links in closed form."""
    model, P, Ia, D3 = _rx90_three_links(rng)
    p1, p2, p3 = P
    G3 = -9.81
    for _ in range(10):
        q = rng.uniform(-np.pi, np.pi, 3)
        S2, C2 = np.sin(q[1]), np.cos(q[1])
        S3, C3 = np.sin(q[2]), np.cos(q[2])
        S23, C23 = np.sin(q[1] + q[2]), np.cos(q[1] + q[2])
        A11 = (Ia[0] + p1["ZZ"] + S2**2 * p2["XX"] + 2 * C2 * S2 * p2["XY"] + C2**2 * p2["YY"]
               + S23**2 * p3["XX"] + 2 * C23 * S23 * p3["XY"] + C23**2 * p3["YY"]
               + 2 * C2 * C23 * D3 * p3["MX"] - 2 * C2 * S23 * D3 * p3["MY"] + C2**2 * D3**2 * p3["M"])
        A12 = S2 * p2["XZ"] + C2 * p2["YZ"] + S23 * p3["XZ"] + C23 * p3["YZ"] - S2 * D3 * p3["MZ"]
        A13 = S23 * p3["XZ"] + C23 * p3["YZ"]
        A22 = Ia[1] + p2["ZZ"] + p3["ZZ"] + 2 * C3 * D3 * p3["MX"] - 2 * S3 * D3 * p3["MY"] + D3**2 * p3["M"]
        A23 = p3["ZZ"] + C3 * D3 * p3["MX"] - S3 * D3 * p3["MY"]
        A33 = Ia[2] + p3["ZZ"]
        A = np.array([[A11, A12, A13], [A12, A22, A23], [A13, A23, A33]])
        np.testing.assert_allclose(rd.crba(model, q), A, atol=1e-12)
        Q = np.array([
            0.0,
            -G3 * (C2 * p2["MX"] - S2 * p2["MY"] + C23 * p3["MX"] - S23 * p3["MY"] + D3 * C2 * p3["M"]),
            -G3 * (C23 * p3["MX"] - S23 * p3["MY"]),
        ])
        np.testing.assert_allclose(rd.gravity_torques(model, q), Q, atol=1e-12)


def test_puma560_gravity_load_matches_published_values():
    """Corke's puma560 gravload at qz = 0: [0, 37.4837, 0.2489, 0, 0, 0] N m."""
    model = rd.load_robot("puma560")
    np.testing.assert_allclose(
        rd.gravity_torques(model, np.zeros(6)), [0, 37.4837, 0.2489, 0, 0, 0], atol=5e-5
    )


@pytest.mark.parametrize("name", ["puma560", "rx90"])
def test_bundled_urdf_equals_its_dh_table(name, rng):
    """The bundled URDF was generated from config/<name>_dh.yaml: both load to the same dynamics."""
    share = share_directory()
    from_dh = rd.load_dh_yaml(share / "config" / f"{name}_dh.yaml", share / "config" / f"{name}_drivetrain.yaml")
    from_urdf = rd.load_robot(name)
    assert from_dh.joint_names == from_urdf.joint_names
    q = rng.uniform(-2, 2, (20, 6))
    qd, qdd = rng.normal(size=(2, 20, 6))
    assert relative_error(rd.rnea(from_dh, q, qd, qdd), rd.rnea(from_urdf, q, qd, qdd)) < 1e-12
    np.testing.assert_allclose(rd.frame_pose(from_dh, q), rd.frame_pose(from_urdf, q), atol=1e-12)


def test_rx90_tool_frame_reach():
    """At q = 0 the RX-90's wrist centre (origin of frame 4) is D3 = 0.45 m forward and
    RL4 = 0.45 m up from the shoulder (Khalil Example 3.1, the arm in its "L" posture)."""
    model = rd.load_robot("rx90")
    T = rd.frame_pose(model, np.zeros(6), "link4")
    # frame 4 origin: Trans(x, D3) in frame 2 then r4 = RL4 along z4 = -y3 direction rotated
    np.testing.assert_allclose(T[:3, 3], [0.45, 0.0, 0.45], atol=1e-12)


def test_standard_dh_rows_move_about_previous_z():
    """Standard DH: joint i turns about z_{i-1}; with one revolute row, the link frame is Rz(q)."""
    data = {"name": "one", "convention": "standard",
            "links": [{"name": "l1", "joint": "j1", "theta": 0.0, "d": 0.1, "a": 0.5, "alpha": 0.3,
                       "mass": 1.0, "com": [-0.25, 0.0, 0.0], "inertia": [0.01, 0, 0, 0.02, 0, 0.02],
                       "limits": {"effort": 10.0}}]}
    model = rd.load_dh_yaml(data)
    q = 0.8
    T = rd.frame_pose(model, [q], "flange")
    np.testing.assert_allclose(T, standard_dh_transform(q, 0.1, 0.5, 0.3), atol=1e-14)
    # COM at -0.25 along x1 from frame 1: the gravity torque is m g times its lever in the base
    com_base = (T @ np.array([-0.25, 0, 0, 1]))[:3]
    assert np.isclose(rd.potential_energy(model, [q]), 9.81 * com_base[2])


def test_bad_dh_tables_are_rejected():
    with pytest.raises(rd.ModelError, match="Valid conventions"):
        rd.load_dh_yaml({"convention": "craig", "links": [{}]})
    with pytest.raises(rd.ModelError, match="unknown keys"):
        rd.load_dh_yaml({"links": [{"alpah": 0.1}]})
    with pytest.raises(rd.ModelError, match="either 'com' \\+ 'inertia' or 'ms'"):
        rd.load_dh_yaml({"links": [{"mass": 1.0, "com": [0, 0, 0], "ms": [0, 0, 0]}]})
    with pytest.raises(rd.ModelError, match="non-empty list"):
        rd.load_dh_yaml({"links": []})


def test_khalil_example_7_4_angular_velocities_of_the_rx90(rng):
    """Example 7.4's customised jwj of the RX-90, written out, against the model's Jacobian.

    The printed second row of 4w3 reads -S4*WI12 - C4*W33; with alpha4 = -pi/2 it is
    -S4*WI13 - C4*W33 (WI12 belongs to frame 2). Every other line is as printed.
    """
    share = share_directory()
    model = rd.load_dh_yaml(share / "config" / "rx90_dh.yaml")
    q, qd = rng.uniform(-2, 2, (5, 6)), rng.normal(0, 2, (5, 6))
    for k in range(5):
        S, C = np.sin(q[k]), np.cos(q[k])
        QP1, QP2, QP3, QP4, QP5, QP6 = qd[k]
        S2, S3, S4, S5, S6 = S[1:]
        C2, C3, C4, C5, C6 = C[1:]
        WI12, WI22 = S2 * QP1, C2 * QP1
        WI13, WI23 = C3 * WI12 + S3 * WI22, -S3 * WI12 + C3 * WI22
        W33 = QP2 + QP3
        WI14, WI24 = C4 * WI13 - S4 * W33, -S4 * WI13 - C4 * W33  # printed: -S4*WI12
        W34 = WI23 + QP4
        WI15, WI25 = C5 * WI14 + S5 * W34, -S5 * WI14 + C5 * W34
        W35 = -WI24 + QP5
        WI16, WI26 = C6 * WI15 - S6 * W35, -S6 * WI15 - C6 * W35
        W36 = WI25 + QP6
        book = [[0, 0, QP1], [WI12, WI22, QP2], [WI13, WI23, W33], [WI14, WI24, W34], [WI15, WI25, W35], [WI16, WI26, W36]]
        for j in range(6):
            R = rd.frame_pose(model, q[k], f"link{j + 1}")[:3, :3]
            w = R.T @ (rd.jacobian(model, q[k], f"link{j + 1}")[3:] @ qd[k])  # jwj in frame j
            np.testing.assert_allclose(w, book[j], atol=1e-12)
        printed = -S4 * WI12 - C4 * W33
        assert abs(printed - WI24) > 1e-6  # the printed line is not the angular velocity
