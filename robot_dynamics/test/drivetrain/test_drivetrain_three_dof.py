"""Chen & Wang's 3-dof geared robotic mechanism (seed 000 section 7) against the paper."""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.drivetrain import diagonal_armature_model, virtual_chain_model
from robot_dynamics.model import robot_files

I = {"gear4": 4.0e-4, "gear5": 3.0e-3, "gear6": 3.0e-3, "gear7": 1.5e-3}
g14, g25, g76, g37 = -6.0, -4.0, -3.0, -4.0


@pytest.fixture(scope="module")
def geared():
    return rd.load_robot("three_dof_geared")


def closed_form_Gs(q, qd, qdd):
    """M_s and C_s of eq. (44), written out from eqs. (31)-(43)."""
    I4, I5, I6, I7 = I["gear4"], I["gear5"], I["gear6"], I["gear7"]
    s2, c2 = np.sin(q[1]), np.cos(q[1])
    Ms = np.array(
        [
            [I4 * g14**2 + I5, I5 * g25, I7 * g37 * s2],
            [I5 * g25, I5 * g25**2 + I6, I6 * g76 * g37],
            [I7 * g37 * s2, I6 * g76 * g37, I6 * g76**2 * g37**2 + I7 * g37**2],
        ]
    )
    Cs = np.array(
        [
            I7 * g37 * c2 * qd[1] * qd[2],
            -I7 * g37 * c2 * qd[0] * qd[2],
            I7 * g37 * c2 * qd[0] * qd[1],
        ]
    )
    return Ms, Cs


def test_coefficients_and_structure_matrix_follow_eqs_27_to_30_and_45(geared):
    dt = geared.drivetrain
    B = {n: dt.B[dt.index(n)] for n in dt.names}
    np.testing.assert_array_equal(B["gear4"], [g14, 0, 0])  # eq. (27)
    np.testing.assert_array_equal(B["gear5"], [1, g25, 0])  # eq. (28)
    np.testing.assert_allclose(B["gear6"], [0, 1, g76 * g37], rtol=1e-15)  # eq. (29)
    np.testing.assert_array_equal(B["gear7"], [0, 0, g37])  # eq. (30)
    A = np.array([[g14, 1, 0], [0, g25, 1], [0, 0, g76 * g37]])  # eq. (45)
    np.testing.assert_allclose(dt.A, A, rtol=1e-15)
    assert dt.inputs == ("gear4", "gear5", "gear6")


def test_Ms_and_Cs_equal_eq_44_on_random_states(geared):
    rng = np.random.default_rng(44)
    virtual = virtual_chain_model(geared)
    for _ in range(20):
        q, qd, qdd = rng.uniform(-2, 2, 3), rng.normal(0, 3, 3), rng.normal(0, 10, 3)
        Ms_ref, Cs_ref = closed_form_Gs(q, qd, qdd)
        Ms = rd.crba(geared, q) - rd.crba(virtual, q)
        zero = np.zeros(3)
        Cs = rd.rnea(geared, q, qd, zero, gravity=zero, friction=False) - rd.rnea(
            virtual, q, qd, zero, gravity=zero, friction=False
        )
        np.testing.assert_allclose(Ms, Ms_ref, rtol=0, atol=1e-12)
        np.testing.assert_allclose(Cs, Cs_ref, rtol=0, atol=1e-12)
        # and the whole G_s of eq. (44) inside one rnea call
        Gs = rd.rnea(geared, q, qd, qdd, friction=False) - rd.rnea(virtual, q, qd, qdd, friction=False)
        np.testing.assert_allclose(Gs, Ms_ref @ qdd + Cs_ref, rtol=0, atol=1e-11)


def _lumped_urdf() -> str:
    """The URDF with every gear added to its carrier as a fixed child link (independent lumping)."""
    import yaml

    urdf, sidecar = robot_files("three_dof_geared")
    text = urdf.read_text()
    doc = yaml.safe_load(sidecar.read_text())
    extra = []
    for name, p in doc["secondary_links"].items():
        e = np.array(p["axis"], float)
        ee = np.outer(e, e)
        It = p["inertia"] * ee + p["transverse_inertia"] * (np.eye(3) - ee)
        c = p["com"]
        extra.append(
            f'<link name="{name}"><inertial><origin xyz="{c[0]} {c[1]} {c[2]}"/><mass value="{p["mass"]}"/>'
            f'<inertia ixx="{float(It[0, 0])!r}" ixy="{float(It[0, 1])!r}" ixz="{float(It[0, 2])!r}" iyy="{float(It[1, 1])!r}" '
            f'iyz="{float(It[1, 2])!r}" izz="{float(It[2, 2])!r}"/></inertial></link>'
            f'<joint name="{name}_fixed" type="fixed"><parent link="{p["carrier"]}"/><child link="{name}"/></joint>'
        )
    return text.replace("</robot>", "\n".join(extra) + "\n</robot>")


def test_virtual_chain_equals_core_rnea_on_lumped_urdf(geared):
    lumped = rd.load_urdf(_lumped_urdf())
    rng = np.random.default_rng(45)
    q, qd, qdd = rng.uniform(-2, 2, (8, 3)), rng.normal(0, 3, (8, 3)), rng.normal(0, 10, (8, 3))
    G = rd.rnea(geared, q, qd, qdd, friction=False)
    Gv = rd.rnea(lumped, q, qd, qdd, friction=False)
    Gs = np.array([closed_form_Gs(*s)[0] @ s[2] + closed_form_Gs(*s)[1] for s in zip(q, qd, qdd)])
    # eq. (23): G = G_v + G_s, G_v from the core's rnea on the lumped URDF
    np.testing.assert_allclose(G, Gv + Gs, rtol=0, atol=1e-12 * np.max(np.abs(G)))
    np.testing.assert_allclose(rd.crba(virtual_chain_model(geared), q), rd.crba(lumped, q), atol=1e-13)


def _table3(virtual):
    """Table 3's parameters of the virtual links 1*, 2*, 3 in the paper's DH frames 1, 2, 3.

    Each body carries its DH frame as the fixed frame "frame<i>"; mass, centre of mass and
    inertia about the centre of mass are moved into it (c_dh = R^T (c - p), I_dh = R^T I R).
    """
    out = {}
    for i, body in enumerate(("link1", "link2", "link3"), start=1):
        b = virtual.body_names.index(body)
        X = virtual.frame_placement[virtual.frame_names.index(f"frame{i}")]
        R, p = X[:3, :3], X[:3, 3]
        out[i] = (virtual.mass[b], R.T @ (virtual.com[b] - p), R.T @ virtual.inertia_com[b] @ R)
    (m1, r1, I1), (m2, r2, I2), (m3, r3, I3) = out[1], out[2], out[3]
    # the zeros of Table 3 hold on the bundled example
    np.testing.assert_allclose([r1[0], r2[1], r3[0], r3[1], I1[0, 1], I1[0, 2], I2[0, 1], I2[1, 2]], 0, atol=1e-15)
    np.testing.assert_allclose([I3[0, 1], I3[0, 2], I3[1, 2]], 0, atol=1e-15)
    return dict(
        m1=m1, r1z=r1[2], I1yy=I1[1, 1],
        m2=m2, r2x=r2[0], r2z=r2[2], I2xx=I2[0, 0], I2yy=I2[1, 1], I2zz=I2[2, 2], I2xz=I2[0, 2],
        m3=m3, r3z=r3[2], I3xx=I3[0, 0], I3yy=I3[1, 1], I3zz=I3[2, 2], a2=0.35,
    )


def appendix_A(p, q, printed=False):
    """phi1-phi11 of eqs. (A2a)-(A2k) with (A3a)-(A3g), as corrected (or as printed).

    The corrections, each derived from the Lagrangian of Table 1 / Table 3 (M_v(1,1) is
    m |com distance from z0|^2 + z0^T I z0 summed over the links; the velocity terms are the
    Christoffel symbols of M_v, phi7 = dM11/dth2, phi8 = dM11/dth3, phi9 = -phi7/2,
    phi11 = -phi8/2, phi6 = dphi2/dth2):
      phi1: link 2* turns about ^2z0 = [S2, C2, 0]: I2xx S2^2 + I2yy C2^2, not I2xx;
      phi2: the product of inertia I2xz, not I2xx;
      phi3: the distance of link 3's centre of mass from axis 2 squared,
            m3 (a2^2 + 2 a2 r3z S3 + r3z^2), not m3 phi14;
      phi4: + I3yy lost;  phi5: m3 r3z^2 + I3yy, printed m3 r3z + I3yy;
      phi6: (I2xz - m2 phi13 r2z) C2, the printed I2xz S2 C2 carries a spurious S2;
      phi7-phi11: link 3 turns about ^3z0 = [phi17, 0, phi18], so its inertia enters as
            I3xx phi17^2 + I3zz phi18^2 and its derivatives as -/+ (I3xx - I3zz) phi17 phi18:
            phi15 is I3xx - I3zz (printed I3xx - I3yy) and the printed phi14 phi15 phi17
            terms are phi15 phi17 phi18 with the signs below; phi7 prints phi2 for phi13^2;
            phi8 and phi11 lose the factor phi14 of their m3 term (phi11 prints phi17);
            phi9 prints - r3z phi17 for + r3z phi18.
    """
    s2, c2, s3, c3 = np.sin(q[1]), np.cos(q[1]), np.sin(q[2]), np.cos(q[2])
    a2, m2, m3, r2z, r3z = p["a2"], p["m2"], p["m3"], p["r2z"], p["r3z"]
    phi17 = s2 * c3 + c2 * s3  # (A3f)
    phi18 = s2 * s3 - c2 * c3  # (A3g)
    phi12 = p["m1"] * p["r1z"] ** 2 + p["I1yy"]  # (A3a)
    phi13 = a2 + p["r2x"]  # (A3b)
    phi14 = a2 * c2 + r3z * phi17  # (A3c)
    phi16 = p["I2xx"] - p["I2yy"]  # (A3e)
    if printed:
        phi15 = p["I3xx"] - p["I3yy"]  # (A3d) as printed
        return np.array([
            phi12 + m2 * (phi13**2 * c2**2 + r2z**2) + p["I2xx"] + m3 * phi14**2 + p["I3xx"] * phi17**2 + p["I3zz"] * phi18**2,
            (p["I2xx"] - m2 * phi13 * r2z) * s2,
            m2 * phi13**2 + p["I2zz"] + m3 * phi14 + p["I3yy"],
            m3 * r3z * (a2 * s3 + r3z),
            m3 * r3z + p["I3yy"],
            (-m2 * phi13 * r2z + p["I2xz"] * s2) * c2,
            2 * (-m2 * (p["I2xx"] - m2 * phi13 * r2z) * s2 + phi16) * s2 * c2 - 2 * m3 * phi14 * (a2 * s2 + r3z * phi18) - 2 * phi14 * phi15 * phi17,
            -2 * m3 * phi18 * r3z + 2 * phi14 * phi15 * phi17,
            (m2 * phi13**2 - phi16) * s2 * c2 + m3 * phi14 * (a2 * s2 - r3z * phi17) + phi14 * phi15 * phi17,
            m3 * r3z * a2 * c3,
            m3 * r3z * phi17 * phi18 + phi14 * phi15 * phi17,
        ])
    phi15 = p["I3xx"] - p["I3zz"]  # (A3d): printed I3xx - I3yy
    return np.array([
        phi12 + m2 * (phi13**2 * c2**2 + r2z**2) + p["I2xx"] * s2**2 + p["I2yy"] * c2**2  # (A2a): printed I2xx
        + m3 * phi14**2 + p["I3xx"] * phi17**2 + p["I3zz"] * phi18**2,
        (p["I2xz"] - m2 * phi13 * r2z) * s2,  # (A2b): printed I2xx
        m2 * phi13**2 + p["I2zz"] + m3 * (a2**2 + 2 * a2 * r3z * s3 + r3z**2) + p["I3yy"],  # (A2c): printed m3 phi14
        m3 * r3z * (a2 * s3 + r3z) + p["I3yy"],  # (A2d): printed without + I3yy
        m3 * r3z**2 + p["I3yy"],  # (A2e): printed m3 r3z
        (p["I2xz"] - m2 * phi13 * r2z) * c2,  # (A2f): printed I2xz S2 C2
        2 * (-m2 * phi13**2 + phi16) * s2 * c2 - 2 * m3 * phi14 * (a2 * s2 + r3z * phi18) - 2 * phi15 * phi17 * phi18,  # (A2g)
        -2 * m3 * r3z * phi14 * phi18 - 2 * phi15 * phi17 * phi18,  # (A2h)
        (m2 * phi13**2 - phi16) * s2 * c2 + m3 * phi14 * (a2 * s2 + r3z * phi18) + phi15 * phi17 * phi18,  # (A2i)
        m3 * r3z * a2 * c3,  # (A2j), as printed
        m3 * r3z * phi14 * phi18 + phi15 * phi17 * phi18,  # (A2k)
    ])


def _velocity_coefficients(model, q):
    """c[(j, k)]: the coefficient vector of qd_j qd_k in C_v (j < k) and of qd_j^2 (j == k)."""
    zero, E = np.zeros(3), np.eye(3)
    qds = [E[0], E[1], E[2], E[0] + E[1], E[0] + E[2], E[1] + E[2]]
    h = rd.rnea(model, np.tile(q, (6, 1)), np.array(qds), np.zeros((6, 3)), gravity=zero, friction=False)
    c = {(j, j): h[j] for j in range(3)}
    for n, (j, k) in enumerate(((0, 1), (0, 2), (1, 2))):
        c[(j, k)] = h[3 + n] - h[j] - h[k]
    return c


def test_every_term_of_appendix_A_as_corrected_equals_the_model(geared):
    """Eq. (A1), phi1-phi11 one by one, as corrected, against crba and rnea of the virtual chain.

    Each printed term that is wrong is also shown to differ from the model on the bundled
    example, so every entry of the list of typos in docs/sources.md is a checked fact.
    """
    virtual = virtual_chain_model(geared)
    p = _table3(virtual)
    rng = np.random.default_rng(2026)
    states = np.vstack([[0.3, -0.7, 0.4], rng.uniform(-2.0, 2.0, (6, 3))])
    Ms = rd.crba(virtual, states)
    wrong = np.zeros(11, bool)
    for q, M in zip(states, Ms):
        phi = appendix_A(p, q)
        c = _velocity_coefficients(virtual, q)
        ours = np.array([
            M[0, 0], M[0, 1], M[1, 1], M[1, 2], M[2, 2],  # phi1..phi5: the mass matrix of (A1)
            c[(1, 1)][0], c[(0, 1)][0], c[(0, 2)][0],  # row 1: phi6 th2d^2 + phi7 th1d th2d + phi8 th1d th3d
            c[(0, 0)][1], c[(2, 2)][1], c[(0, 0)][2],  # phi9 th1d^2 (row 2), phi10 th3d^2 (row 2), phi11 th1d^2 (row 3)
        ])
        scale = np.max(np.abs(M))
        np.testing.assert_allclose(ours, phi, rtol=0, atol=1e-13 * scale)
        # the rest of (A1): the zero M(1,3), 2 phi10 th2d th3d in row 2 and, corrected, -phi10 th2d^2
        # in row 3 (printed +phi10 th2d^2 / 2)
        assert abs(M[0, 2]) < 1e-14 * scale
        assert c[(1, 2)][1] == pytest.approx(2 * phi[9], abs=1e-13 * scale)
        assert c[(1, 1)][2] == pytest.approx(-phi[9], abs=1e-13 * scale)
        for (j, k), row in (((0, 0), 0), ((1, 2), 0), ((2, 2), 0), ((1, 1), 1), ((0, 1), 1), ((0, 2), 1),
                            ((2, 2), 2), ((0, 1), 2), ((0, 2), 2), ((1, 2), 2)):
            assert abs(c[(j, k)][row]) < 1e-13 * scale
        wrong |= np.abs(appendix_A(p, q, printed=True) - phi) > 1e-6 * scale
    # printed phi1-phi9 and phi11 are wrong on this example; phi10 is right as printed
    np.testing.assert_array_equal(wrong, [True] * 9 + [False, True])
    # the printed phi2 has even the wrong sign here: I2xx - m2 phi13 r2z > 0 > I2xz - m2 phi13 r2z
    assert (p["I2xx"] - p["m2"] * (p["a2"] + p["r2x"]) * p["r2z"]) * (p["I2xz"] - p["m2"] * (p["a2"] + p["r2x"]) * p["r2z"]) < 0


def test_three_models_differ_along_a_fast_motion(geared):
    """No rotors < diagonal armature < full coupling: the coupling terms are what the paper adds."""
    q, qd, qdd = np.array([0.2, 0.9, -0.4]), np.array([2.5, -3.0, 4.0]), np.array([20.0, -25.0, 30.0])
    full = rd.rnea(geared, q, qd, qdd, friction=False)
    diag = rd.rnea(diagonal_armature_model(geared), q, qd, qdd, friction=False)
    Ms, Cs = closed_form_Gs(q, qd, qdd)
    # the diagonal model keeps exactly the diagonal of M_s
    np.testing.assert_allclose(full - diag, (Ms - np.diag(np.diag(Ms))) @ qdd + Cs, atol=1e-11)
    assert np.max(np.abs(full - diag)) > 0.1
