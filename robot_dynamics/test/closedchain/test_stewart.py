"""Stewart platform (Lopes 2009): the generalized-momentum model against the general
closed-chain layer built from the core (RNEA/CRBA on a U-P-S spanning tree with six spherical
loop closures), identities along the paper's test motion, and failure reports."""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics.closedchain as cc
from robot_dynamics.closedchain import stewart as st
from robot_dynamics.errors import InputError, ModelError, SingularityError

PARAMS = st.load_stewart_parameters()
HOME = np.array([0.0, 0.0, 2.2, 0.0, 0.0, 0.0])


def _random_states(rng, n):
    x = HOME + rng.uniform(-1, 1, (n, 6)) * np.array([0.2, 0.2, 0.3, 0.3, 0.25, 0.25])
    return x, rng.normal(size=(n, 6)), rng.normal(size=(n, 6)) * 3.0


def _variant(rng):
    """Random parameters inside the paper's leg model (no axial leg inertia, I_yy = I_zz)."""
    ic, is_ = rng.uniform(0.01, 0.3, 2)
    return PARAMS.replace(
        m_P=rng.uniform(0.5, 5), I_P=tuple(rng.uniform(0.05, 0.5, 3)), m_C=rng.uniform(0.1, 2),
        m_S=rng.uniform(0.1, 2), b_C=rng.uniform(0.1, 0.9), b_S=rng.uniform(0.1, 0.9),
        I_C=(0.0, ic, ic), I_S=(0.0, is_, is_), phi_P=np.radians(rng.uniform(0, 20)),
    )


def test_table2_parameters_loaded():
    p = PARAMS
    assert (p.r_B, p.r_P, p.m_P, p.m_C, p.m_S, p.b_C, p.b_S) == (1.5, 0.75, 1.43, 0.39, 0.39, 0.5, 0.5)
    assert np.degrees(p.phi_B) == pytest.approx(15.0) and p.phi_P == 0.0
    assert p.I_P == (0.2, 0.2, 0.4) and p.I_C == (0.0, 0.1, 0.1) and p.I_S == (0.0, 0.1, 0.1)
    # semi-regular hexagons: B1-B6 separated by 2 phi_B, all on their circles
    np.testing.assert_allclose(np.linalg.norm(p.b, axis=1), 1.5)
    np.testing.assert_allclose(np.linalg.norm(p.p, axis=1), 0.75)
    cosang = p.b[0] @ p.b[5] / 1.5**2
    assert np.degrees(np.arccos(cosang)) == pytest.approx(30.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_paper_model_matches_general_layer(seed):
    rng = np.random.default_rng(seed)
    params = PARAMS if seed == 0 else _variant(rng)
    paper = st.StewartPlatform(params)
    mech = st.stewart_closed_chain(params)
    x, xd, xdd = _random_states(rng, 3)
    # the general layer closes the loops by Newton from its reference configuration
    q, qd, qdd = cc.complete_state(mech, x, xd, xdd)
    tau_general = cc.actuator_forces(mech, q, qd, qdd).tau
    tau_paper = paper.inverse_dynamics(x, xd, xdd)
    np.testing.assert_allclose(tau_paper, tau_general, rtol=1e-8, atol=1e-8 * np.abs(tau_general).max())
    # forward dynamics: the same accelerations
    tau = rng.normal(size=(3, 6)) * 10.0
    acc_general = cc.constrained_accelerations(mech, q, qd, tau).qdd[:, list(mech.independent)]
    acc_paper = paper.forward_dynamics(x, xd, tau)
    np.testing.assert_allclose(acc_paper, acc_general, rtol=1e-8, atol=1e-8 * np.abs(acc_general).max())
    # the symmetric mass matrix in x
    np.testing.assert_allclose(paper.mass_matrix(x), cc.reduced_mass_matrix(mech, q), rtol=1e-9, atol=1e-12)
    # leg lengths: the actuated tree coordinates
    np.testing.assert_allclose(paper.leg_lengths(x), q[:, list(mech.actuated)], rtol=1e-12)


def test_both_answer_through_the_mechanism_interface():
    rng = np.random.default_rng(5)
    paper, general = st.StewartPlatform(PARAMS), st.stewart_closed_chain(PARAMS)
    x, xd, xdd = _random_states(rng, 2)
    for m in (paper, general):
        assert isinstance(m, cc.Mechanism)
        assert m.actuator_names == st.ACTUATOR_NAMES and m.coordinate_names == st.COORDINATE_NAMES
    np.testing.assert_allclose(paper.inverse_dynamics(x, xd, xdd), general.inverse_dynamics(x, xd, xdd), rtol=1e-8)
    tau = paper.inverse_dynamics(x, xd, xdd)
    np.testing.assert_allclose(general.forward_dynamics(x, xd, tau), xdd, rtol=1e-8, atol=1e-9)
    # batch shapes (2, 3, 6)
    xb = np.broadcast_to(x[0], (2, 3, 6))
    assert paper.inverse_dynamics(xb, np.zeros(6), np.zeros(6)).shape == (2, 3, 6)
    assert paper.mass_matrix(xb).shape == (2, 3, 6, 6)


def test_inertia_symmetric_positive_definite_along_test_motion():
    t, x, xd, xdd = st.test_motion(PARAMS, 50)
    d = st.stewart_dynamics(PARAMS, x, xd, xdd)
    np.testing.assert_allclose(d.I, np.swapaxes(d.I, -1, -2), atol=1e-14)
    assert np.linalg.eigvalsh(d.I).min() > 0.1
    # the paper's I_E = I_B T is not symmetric (as the paper warns below eq. 28)
    assert np.abs(d.I_E - np.swapaxes(d.I_E, -1, -2)).max() > 1e-2
    # the split of Fig. 6 adds up to the total force
    np.testing.assert_allclose(d.tau_platform + d.tau_cylinders + d.tau_pistons, d.tau, atol=1e-12)


def test_power_balance_along_test_motion():
    from robot_dynamics.trajectory.splines import trigonometric_spline

    P1, P2, dur = st.test_motion_points(PARAMS)
    spline = trigonometric_spline(np.stack([P1, P2, P1]), dur)
    t = np.linspace(0.02, 2 * dur - 0.02, 60)
    h = 1e-5
    x, xd, xdd = spline.sample(t)
    d = st.stewart_dynamics(PARAMS, x, xd, xdd)
    power = np.einsum("nk,nk->n", d.tau, d.length_rates)  # tau . l_dot
    E = [sum(st.stewart_energy(PARAMS, *spline.sample(t + s)[:2])) for s in (h, -h)]
    dEdt = (E[0] - E[1]) / (2 * h)
    np.testing.assert_allclose(power, dEdt, rtol=1e-6, atol=1e-6 * np.abs(power).max())


def test_inverse_then_forward_reproduces_the_test_motion():
    from robot_dynamics.trajectory.splines import trigonometric_spline

    P1, P2, dur = st.test_motion_points(PARAMS)
    spline = trigonometric_spline(np.stack([P1, P2, P1]), dur)
    paper = st.StewartPlatform(PARAMS)
    dt = 4e-3
    steps = int(round(2 * dur / dt))
    stage_t = np.concatenate([np.arange(steps) * dt, np.arange(steps) * dt + dt / 2, [steps * dt]])
    xs, xds, xdds = spline.sample(stage_t)
    tau_all = paper.inverse_dynamics(xs, xds, xdds)
    tau_at = {round(tk, 9): tau_all[k] for k, tk in enumerate(stage_t)}
    x, xd = spline.sample(0.0)[0].copy(), spline.sample(0.0)[1].copy()

    def f(tk, xk, xdk):
        return xdk, paper.forward_dynamics(xk, xdk, tau_at[round(tk, 9)])

    for k in range(steps):
        tk = k * dt
        k1 = f(tk, x, xd)
        k2 = f(tk + dt / 2, x + dt / 2 * k1[0], xd + dt / 2 * k1[1])
        k3 = f(tk + dt / 2, x + dt / 2 * k2[0], xd + dt / 2 * k2[1])
        k4 = f(tk + dt, x + dt * k3[0], xd + dt * k3[1])
        x = x + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        xd = xd + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
    x_end, xd_end, _ = spline.sample(steps * dt)
    assert np.abs(x - x_end)[:3].max() < 1e-6  # [m]
    assert np.abs(x - x_end)[3:].max() < 1e-6  # [rad]
    assert np.abs(xd - xd_end).max() < 1e-5


def test_unreachable_and_singular_poses_are_reported():
    paper = st.StewartPlatform(PARAMS)
    far = np.array([0.0, 0.0, 5.0, 0.0, 0.0, 0.0])
    with pytest.raises(SingularityError, match=r"leg \d length .* outside the stroke"):
        paper.inverse_dynamics(far, np.zeros(6), np.zeros(6))
    # the general layer: the loops close, but leg 1 is beyond its stroke (tree joint limit)
    with pytest.raises(SingularityError, match=r"joint 'leg\d' at .* outside its limits"):
        st.stewart_closed_chain(PARAMS).inverse_dynamics(far, np.zeros(6), np.zeros(6))
    d = paper.dynamics(np.stack([HOME, far]), np.zeros(6), np.zeros(6), check=False)
    assert d.ok.tolist() == [True, False] and np.isnan(d.tau[1]).all() and np.isfinite(d.tau[0]).all()
    assert "unreachable" in d.message
    # all six legs meeting at one platform point: the legs cannot hold the orientation
    point = PARAMS.replace(r_P=1e-13)
    with pytest.raises(SingularityError, match="J_C is singular"):
        st.StewartPlatform(point).inverse_dynamics(HOME, np.zeros(6), np.zeros(6))
    # the general layer reports the same as an actuation singularity
    mech = st.stewart_closed_chain(point)
    q, qd, qdd = cc.complete_state(mech, HOME)
    with pytest.raises(SingularityError, match="actuation singularity"):
        cc.actuator_forces(mech, q, qd, qdd)


def test_gravity_wrench_is_the_potential_gradient():
    # eq. (83) prints T^-1; the wrench must satisfy G . u = G_E . x_dot (power), i.e. T^-T
    rng = np.random.default_rng(7)
    x, xd, _ = _random_states(rng, 4)
    d = st.stewart_dynamics(PARAMS, x, xd, np.zeros_like(x))
    k = st.stewart_kinematics(PARAMS, x)
    u = np.einsum("nij,nj->ni", k.T, xd)
    np.testing.assert_allclose(np.einsum("ni,ni->n", d.G, u), np.einsum("ni,ni->n", d.G_E, xd), rtol=1e-12)
    h = 1e-6
    grad = np.stack([(st.stewart_energy(PARAMS, x + h * e, xd)[1] - st.stewart_energy(PARAMS, x - h * e, xd)[1]) / (2 * h)
                     for e in np.eye(6)], -1)
    np.testing.assert_allclose(d.G_E, grad, rtol=1e-7, atol=1e-7)


def test_bad_inputs_and_parameter_files(tmp_path):
    paper = st.StewartPlatform(PARAMS)
    with pytest.raises(InputError, match="platform_x"):
        paper.inverse_dynamics(np.zeros(5), np.zeros(6), np.zeros(6))
    bad = tmp_path / "bad.yaml"
    bad.write_text("geometry: {r_B: 1.5}\nplatform: {}\ncylinder: {}\npiston: {}\n")
    with pytest.raises(ModelError, match="r_P"):
        st.load_stewart_parameters(bad)
    with pytest.raises(ModelError, match="cannot read"):
        st.load_stewart_parameters(tmp_path / "missing.yaml")


def test_general_layer_simulation_under_the_paper_forces_follows_the_test_motion():
    from robot_dynamics.trajectory.splines import trigonometric_spline

    P1, P2, dur = st.test_motion_points(PARAMS)
    spline = trigonometric_spline(np.stack([P1, P2, P1]), dur)
    paper, mech = st.StewartPlatform(PARAMS), st.stewart_closed_chain(PARAMS)
    x0, xd0, _ = spline.sample(0.0)
    q0, qd0, _ = cc.complete_state(mech, x0, xd0)
    t = np.linspace(0.0, 0.25, 51)
    res = cc.simulate(mech, q0, qd0, t, lambda tk, q, qd: paper.inverse_dynamics(*spline.sample(tk)),
                      baumgarte=0.0, project=False)
    assert res.ok, res.message
    pose_error = np.abs(res.q[:, list(mech.independent)] - spline.sample(t)[0]).max()
    assert pose_error < 1e-8
    assert res.constraint_error.max() < 1e-8
