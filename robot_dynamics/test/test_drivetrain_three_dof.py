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


def test_mass_matrix_terms_of_appendix_A_with_the_squares_restored(geared):
    """M_v(2,2), M_v(2,3), M_v(3,3) of eq. (A1) against our own evaluation of the printed formulas.

    Appendix A prints phi3, phi4, phi5 without squares (and phi4 without I3yy): the correct
    forms, derived by hand for parallel joint axes z1 || z2, are used here.
    """
    virtual = virtual_chain_model(geared)
    a2 = 0.35
    m3, r3z, I3yy = 1.5, 0.09, 0.0065
    # virtual link 2* in its DH frame 2 (= body frame of link2 shifted by a2 along x)
    b2 = geared.body_names.index("link2")
    m2, c2 = geared.mass[b2], geared.com[b2] - np.array([a2, 0, 0])
    I2zz = geared.inertia_com[b2][2, 2]
    assert abs(c2[1]) < 1e-15  # Table 3: r_{2*} = [r_{2*x}, 0, r_{2*z}]
    phi13 = a2 + c2[0]  # (A3b)
    for th3 in np.linspace(-2.0, 2.0, 5):
        M = rd.crba(virtual, np.array([0.3, -0.7, th3]))
        s3 = np.sin(th3)
        phi3 = m2 * phi13**2 + I2zz + m3 * (a2**2 + 2 * a2 * r3z * s3 + r3z**2) + I3yy  # (A2c), squared
        phi4 = m3 * r3z * (a2 * s3 + r3z) + I3yy  # (A2d): the paper omits + I3yy
        phi5 = m3 * r3z**2 + I3yy  # (A2e): the paper prints m3 r3z
        np.testing.assert_allclose([M[1, 1], M[1, 2], M[2, 2]], [phi3, phi4, phi5], rtol=1e-12)
        assert M[0, 2] == pytest.approx(0.0, abs=1e-14)  # the zero of (A1)


def test_three_models_differ_along_a_fast_motion(geared):
    """No rotors < diagonal armature < full coupling: the coupling terms are what the paper adds."""
    q, qd, qdd = np.array([0.2, 0.9, -0.4]), np.array([2.5, -3.0, 4.0]), np.array([20.0, -25.0, 30.0])
    full = rd.rnea(geared, q, qd, qdd, friction=False)
    diag = rd.rnea(diagonal_armature_model(geared), q, qd, qdd, friction=False)
    Ms, Cs = closed_form_Gs(q, qd, qdd)
    # the diagonal model keeps exactly the diagonal of M_s
    np.testing.assert_allclose(full - diag, (Ms - np.diag(np.diag(Ms))) @ qdd + Cs, atol=1e-11)
    assert np.max(np.abs(full - diag)) > 0.1


def test_velocity_terms_of_appendix_A(geared):
    """The structure of C_v in eq. (A1) and phi10 (A2j); the printed row 3 is corrected.

    Row 2 carries phi10 (th3d^2 + 2 th2d th3d) as printed; row 3 carries -phi10 th2d^2, not the
    printed +phi10 th2d^2 / 2 (Christoffel symbols of the planar pair z1 || z2). The printed
    phi7 and phi9 (and phi8 and phi11) also break the Christoffel relation phi7 = -2 phi9,
    phi8 = -2 phi11, which holds here.
    """
    virtual = virtual_chain_model(geared)
    zero = np.zeros(3)
    a2, m3, r3z = 0.35, 1.5, 0.09

    def h(q, qd):
        return rd.rnea(virtual, q, np.asarray(qd, float), zero, gravity=zero, friction=False)

    E = np.eye(3)
    for q in (np.array([0.3, 0.7, 0.4]), np.array([-1.0, 0.2, 1.3])):
        c = {(j, j): h(q, E[j]) for j in range(3)}
        for j, k in ((0, 1), (0, 2), (1, 2)):
            c[(j, k)] = h(q, E[j] + E[k]) - c[(j, j)] - c[(k, k)]
        phi10 = m3 * r3z * a2 * np.cos(q[2])  # (A2j)
        assert c[(2, 2)][1] == pytest.approx(phi10, rel=1e-12)
        assert c[(1, 2)][1] == pytest.approx(2 * phi10, rel=1e-12)
        assert c[(1, 1)][2] == pytest.approx(-phi10, rel=1e-12)  # printed: +phi10 / 2
        # zeros of (A1): no th1d^2 in row 1, no th2d th3d or th3d^2 in row 1, no th2d^2 ... in rows 2, 3
        for (j, k), row in ((0, 0), 0), ((1, 2), 0), ((2, 2), 0), ((1, 1), 1), ((0, 1), 1), ((0, 2), 1), ((2, 2), 2), ((0, 1), 2), ((0, 2), 2), ((1, 2), 2):
            assert abs(c[(j, k)][row]) < 1e-14
        assert c[(0, 1)][0] == pytest.approx(-2 * c[(0, 0)][1], rel=1e-12)  # phi7 = -2 phi9
        assert c[(0, 2)][0] == pytest.approx(-2 * c[(0, 0)][2], rel=1e-12)  # phi8 = -2 phi11
