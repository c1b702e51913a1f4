"""The joint-space LQR (control.lqr): its gain against independent computations, closed-loop
stability on the bundled robots, tracking in simulation, caching of the gain, bad options."""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pytest
import scipy.linalg

import robot_dynamics as rd
from robot_dynamics.control import LQR, MIN_XI, ComputedTorque, Reference, Status, build_controller, lqr_gain
from robot_dynamics.simulation import simulate
from robot_dynamics.trajectory import plan

# A pendulum: a point-like mass m at l from a hinge about y, gravity -z. Its centre of mass is at
# R_y(q) (l, 0, 0) = (l cos q, 0, -l sin q), so V = -m g l sin q and I qdd = tau + m g l cos q,
# I = Iyy + m l^2 about the hinge.
M_PEND, L_PEND, IYY, G0 = 2.0, 0.5, 0.02, 9.81
PENDULUM = f"""<robot name="pendulum">
  <link name="base"/>
  <link name="arm">
    <inertial><origin xyz="{L_PEND} 0 0"/><mass value="{M_PEND}"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="{IYY}" iyz="0" izz="{IYY}"/></inertial>
  </link>
  <joint name="hinge" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/></joint>
</robot>"""
I_PEND = IYY + M_PEND * L_PEND**2


@pytest.fixture(scope="module")
def pendulum():
    # the linearisation is checked unsaturated: no effort limit, declared so
    return rd.load_urdf(PENDULUM, drivetrain={"accepted_model_issues": {"hinge": {"no_effort_limit": "unsaturated on purpose"}}})


def _pendulum_ab(q):
    """The hand-derived continuous linearisation of the pendulum about angle q (no friction)."""
    alpha = -M_PEND * G0 * L_PEND * math.sin(q) / I_PEND  # d qdd / d q
    return np.array([[0.0, 1.0], [alpha, 0.0]]), np.array([[0.0], [1.0 / I_PEND]])


def _second_order_gain(alpha, beta, gamma, q1, q2, r):
    """Closed-form continuous LQR of x'' = alpha x + beta x' + gamma u, cost q1 x^2 + q2 x'^2 + r u^2.

    From the entries of the Riccati equation with P = [[p1, p2], [p2, p3]]: (1,1) gives
    gamma k1 = alpha + sqrt(alpha^2 + gamma^2 q1 / r), (2,2) gives
    gamma k2 = beta + sqrt(beta^2 + gamma^2 q2 / r + 2 gamma k1).
    """
    k1 = (alpha + math.sqrt(alpha**2 + gamma**2 * q1 / r)) / gamma
    k2 = (beta + math.sqrt(beta**2 + gamma**2 * q2 / r + 2.0 * gamma * k1)) / gamma
    return np.array([k1, k2])


def _discrete_gain_by_iteration(A, B, Q, R, steps=200_000, tol=1e-12):
    """The discrete LQR gain by iterating the Riccati difference equation to its fixed point."""
    P = Q.copy()
    for _ in range(steps):
        K = np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)
        P_next = Q + A.T @ P @ (A - B @ K)
        if np.max(np.abs(P_next - P)) <= tol * np.max(np.abs(P_next)):
            return np.linalg.solve(R + B.T @ P_next @ B, B.T @ P_next @ A)
        P = P_next
    raise AssertionError("the Riccati iteration did not converge")


def test_hand_model_of_the_pendulum_is_the_loaded_one(pendulum):
    # the hand derivation above agrees with the core before it serves as the reference
    for q in (-1.2, 0.0, 0.7):
        assert rd.gravity_torques(pendulum, [q])[0] == pytest.approx(-M_PEND * G0 * L_PEND * math.cos(q), rel=1e-12)
        assert rd.crba(pendulum, [q])[0, 0] == pytest.approx(I_PEND, rel=1e-12)


@pytest.mark.parametrize("alpha, beta", [(0.0, 0.0), (12.0, -0.5), (-30.0, 0.2)])
def test_lqr_gain_matches_the_closed_form_of_a_second_order_system(alpha, beta):
    A = np.array([[0.0, 1.0], [alpha, beta]])
    B = np.array([[0.0], [0.8]])
    q1, q2, r = 50.0, 3.0, 0.2
    K = lqr_gain(A, B, np.diag([q1, q2]), [[r]])
    np.testing.assert_allclose(K[0], _second_order_gain(alpha, beta, 0.8, q1, q2, r), rtol=1e-9)


@pytest.mark.parametrize("q_ref", [0.0, 0.9, -math.pi / 2])  # at -pi/2 the mass is straight up: unstable
def test_pendulum_gain_against_the_closed_form(pendulum, q_ref):
    ctrl = LQR(pendulum, omega=6.0, xi=1.0, friction=False)
    K = ctrl.gain_at([q_ref], [0.0], [0.0])
    # the default weights: Q = diag(w^4, (4 xi^2 - 2) w^2), R = M^-2 = I^-2
    A, B = _pendulum_ab(q_ref)
    expected = _second_order_gain(A[1, 0], 0.0, B[1, 0], 6.0**4, 2.0 * 6.0**2, 1.0 / I_PEND**2)
    np.testing.assert_allclose(K[0], expected, rtol=1e-8)
    if q_ref == 0.0:  # no gravity slope: the bandwidth design's K = I (w^2, 2 xi w)
        np.testing.assert_allclose(K[0], [I_PEND * 36.0, I_PEND * 12.0], rtol=1e-9)


def test_pendulum_discrete_gain_against_the_riccati_iteration(pendulum):
    rate, q_ref = 100.0, -1.0
    Q, R = np.diag([400.0, 10.0]), np.array([[0.5]])
    ctrl = LQR(pendulum, Q=Q, R=R, rate=rate, friction=False)
    K = ctrl.gain_at([q_ref], [0.0], [0.0])
    A, B = _pendulum_ab(q_ref)
    E = scipy.linalg.expm(np.block([[A, B], [np.zeros((1, 3))]]) / rate)  # zero-order hold
    np.testing.assert_allclose(K, _discrete_gain_by_iteration(E[:2, :2], E[:2, 2:], Q, R), rtol=1e-7)
    # and the discrete gain tends to the continuous one as the rate grows
    fast = LQR(pendulum, Q=Q, R=R, rate=1e5, friction=False).gain_at([q_ref], [0.0], [0.0])
    slow = LQR(pendulum, Q=Q, R=R, friction=False).gain_at([q_ref], [0.0], [0.0])
    np.testing.assert_allclose(fast, slow, rtol=1e-3)


@pytest.mark.parametrize("name", ["planar2", "puma560", "iiwa14"])
def test_default_design_is_computed_torque_without_gravity(name):
    """No gravity, friction or velocity: A = [[0, 1], [0, 0]], B = [[0], [M^-1]] and R = M^-2 give
    K = M [w^2, 2 xi w], computed torque's gains (Khalil [9.26]) through the inertia."""
    model = rd.load_robot(name).replace(gravity=np.zeros(3))
    rng = np.random.default_rng(1)
    q = rng.uniform(-1.0, 1.0, model.nq)
    M = rd.crba(model, q)
    K = LQR(model, omega=15.0, xi=1.2, friction=False).gain_at(q, np.zeros(model.nq), np.zeros(model.nq))
    np.testing.assert_allclose(K, np.hstack([M * 225.0, M * 36.0]), rtol=1e-8, atol=1e-8 * np.abs(M).max())


def _reference(model, rng):
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    return rng.uniform(lo, hi), rng.uniform(-1.0, 1.0, model.nq), rng.uniform(-2.0, 2.0, model.nq)


@pytest.mark.parametrize("name", rd.list_robots())
@pytest.mark.parametrize("rate", [None, 500.0])
def test_closed_loop_is_stable_on_the_bundled_robots(name, rate):
    """Eigenvalues of A - B K: left half plane (continuous), inside the unit circle (discrete),
    with (A, B) computed here from the reference (rnea feed-forward, then linearize)."""
    model = rd.load_robot(name)
    rng = np.random.default_rng(7)
    for _ in range(3):
        q, qd, qdd = _reference(model, rng)
        ctrl = LQR(model, rate=rate)
        K = ctrl.gain_at(q, qd, qdd)
        A, B = rd.linearize(model, q, qd, rd.rnea(model, q, qd, qdd), None if rate is None else 1.0 / rate)
        eig = np.linalg.eigvals(A - B @ K)
        if rate is None:
            assert eig.real.max() < 0.0, eig
        else:
            assert np.abs(eig).max() < 1.0, eig


def _readme_move(model):
    """The README's main job: every joint +0.5 rad (inside the limits) along a 1 s quintic from zero."""
    lo = np.where(np.isfinite(model.lower), model.lower, -np.inf)
    hi = np.where(np.isfinite(model.upper), model.upper, np.inf)
    start = np.clip(np.zeros(model.nq), lo, hi)
    goal = np.where(start + 0.5 <= hi, start + 0.5, start - 0.5)
    return start, goal


@pytest.mark.parametrize("name", ["puma560", "three_dof_geared"])
def test_tracking_reaches_the_readme_goal_within_the_effort_limits(name):
    model = rd.load_robot(name)
    start, goal = _readme_move(model)
    reference = plan("quintic", start, goal, duration=1.0)
    ctrl = LQR(model, rate=1000.0)
    result = simulate(model, ctrl, reference, duration=1.5, q0=start, control_rate=1000.0)
    m = result.metrics
    assert result.controller == "lqr"
    assert m.fault_count == 0 and m.saturated_fraction == 0.0 and not m.diverged
    assert np.all(m.peak_torque < model.effort_limit)
    assert np.abs(result.q[-1] - goal).max() < 5e-4  # the PUMA's remainder is Coulomb friction at rest
    assert m.max_error.max() < 1e-3
    # one gain per 0.05 s of a moving reference (30 over 1.5 s would mean refreshing at rest)
    assert 20 <= ctrl.refreshes <= 22
    # as accurate as computed torque with the same bandwidth (its feedback is M [w^2, 2 w] here too)
    ct = simulate(model, ComputedTorque(model, omega=20.0, friction_velocity="desired"), reference, duration=1.5,
                  q0=start, control_rate=1000.0)
    assert m.max_error.max() < 1.5 * ct.metrics.max_error.max()


def test_regulation_from_an_initial_error_keeps_one_gain():
    model = rd.load_robot("planar2")
    goal = np.array([0.6, -0.4])
    ctrl = LQR(model, omega=10.0, rate=500.0)
    result = simulate(model, ctrl, goal, duration=2.0, q0=goal - 0.2, control_rate=500.0)
    assert np.abs(result.q[-1] - goal).max() < 1e-4
    assert result.metrics.fault_count == 0 and ctrl.refreshes == 1  # a fixed goal keeps its gain


def test_gain_is_cached_and_refreshed_as_the_reference_moves():
    model = rd.load_robot("puma560")
    q = np.array([0.1, -0.5, 0.4, 0.0, 0.3, 0.0])
    ctrl = LQR(model, rate=1000.0, relinearize_period=0.0095)  # every 10 ticks of a moving reference
    z = np.zeros(6)
    for k in range(30):  # a fixed reference: one gain
        ctrl.update(k * 1e-3, q, z, Reference(q, z, z))
    assert ctrl.refreshes == 1
    K0 = ctrl.K.copy()
    np.testing.assert_allclose(K0, ctrl.gain_at(q, z, z), rtol=1e-12)
    moving = [Reference(q + 0.01 * k, np.full(6, 0.5), z) for k in range(60)]
    for k, ref in enumerate(moving):
        ctrl.update(0.03 + k * 1e-3, q, z, ref)
    assert ctrl.refreshes == 1 + 6  # at 0.03, 0.04, ..., 0.08 s
    last = moving[50]  # the reference of the last refresh, t = 0.08 s
    np.testing.assert_allclose(ctrl.K, ctrl.gain_at(last.q, last.qd, last.qdd), rtol=1e-12)
    # the law itself: u = rnea(reference) - K (x - x^d)
    x_err = np.concatenate([q - moving[-1].q, z - moving[-1].qd])
    out = ctrl.update(0.0891, q, z, moving[-1])  # 0.0091 s after the last refresh: none
    expected = rd.rnea(model, moving[-1].q, moving[-1].qd, moving[-1].qdd) - ctrl.K @ x_err
    np.testing.assert_allclose(out.tau, np.clip(expected, -model.effort_limit, model.effort_limit), rtol=1e-12)
    ctrl.reset()
    assert ctrl.K is None
    never = LQR(model, relinearize_period=math.inf)
    for ref in moving:
        never.update(0.0, q, z, ref)
    assert never.refreshes == 1


def test_faults_and_saturation_follow_the_base_rules():
    model = rd.load_robot("puma560")
    ctrl = LQR(model, rate=1000.0, effort_limit=5.0)
    q = np.array([0.1, -0.5, 0.4, 0.0, 0.3, 0.0])
    z = np.zeros(6)
    out = ctrl.update(0.0, q + 0.3, z, q)
    assert out.status & Status.SATURATED and np.all(np.abs(out.tau) <= 5.0)
    bad = ctrl.update(0.001, np.full(6, np.nan), z, q)
    assert bad.status & Status.FAULT and np.all(np.isfinite(bad.effort))
    bad_ref = ctrl.update(0.002, q, z, Reference(q, z, np.full(6, np.inf)))
    assert bad_ref.status & Status.FAULT and "reference" in bad_ref.message


@pytest.mark.parametrize(
    "options, match",
    [
        ({"xi": 0.5}, "xi >= 1/sqrt(2)"),
        ({"omega": 0.0}, "omega: gains must be > 0"),
        ({"Q": np.ones(5)}, "Q: expected 12 diagonal values or an (12, 12) matrix"),
        ({"Q": -np.ones(12)}, "positive semi-definite"),
        ({"Q": np.triu(np.ones((12, 12)))}, "symmetric"),
        ({"R": np.zeros(6)}, "R: the weight matrix must be positive definite"),
        ({"R": [1.0, 1.0, 1.0, 1.0, 1.0, float("nan")]}, "R: weights must be finite"),
        ({"R": "heavy"}, "R: expected"),
        ({"rate": 0.0}, "rate: expected"),
        ({"rate": float("nan")}, "rate: expected"),
        ({"relinearize_period": -1.0}, "relinearize_period: expected a period >= 0"),
        ({"friction": "yes"}, "friction: expected True or False"),
    ],
)
def test_bad_options_are_refused_with_the_package_error(options, match):
    with pytest.raises(rd.InputError, match=match.replace("(", r"\(").replace(")", r"\)")):
        LQR(rd.load_robot("puma560"), **options)


def test_gain_at_checks_the_reference():
    ctrl = LQR(rd.load_robot("planar2"))
    with pytest.raises(rd.InputError, match=r"reference q: expected shape \(2,\)"):
        ctrl.gain_at([0.0], [0.0, 0.0], [0.0, 0.0])
    with pytest.raises(rd.InputError, match="reference qd: contains NaN"):
        ctrl.gain_at([0.0, 0.0], [0.0, float("nan")], [0.0, 0.0])


def test_by_name_with_weights_and_no_gains():
    model = rd.load_robot("planar2")
    ctrl = build_controller(model, "lqr", omega=12.0, xi=1.0, rate=250.0, R=[2.0, 1.0])
    assert isinstance(ctrl, LQR) and ctrl.rate == 250.0
    np.testing.assert_allclose(np.diag(ctrl.Q), [12.0**4, 12.0**4, 2 * 144.0, 2 * 144.0])
    np.testing.assert_allclose(ctrl.R, np.diag([2.0, 1.0]))
    assert MIN_XI == pytest.approx(0.7071067811865476)
    with pytest.raises(rd.InputError, match=r"not the gains \['kp'\]"):
        build_controller(model, "lqr", kp=[1.0, 2.0])
    # empty gains (the node's default parameters) are no gains
    assert isinstance(build_controller(model, "lqr", kp=[], kd=[], ki=[]), LQR)


def test_lqr_gain_refuses_what_has_no_solution():
    with pytest.raises(rd.InputError, match="expected A"):
        lqr_gain(np.eye(2), np.ones((3, 1)), np.eye(2), np.eye(1))
    # an unstable mode that the input cannot reach: no stabilising solution
    with pytest.raises(rd.InputError, match="no stabilising solution"):
        lqr_gain(np.diag([1.0, -1.0]), np.array([[0.0], [1.0]]), np.eye(2), np.eye(1))


# -- the command line ------------------------------------------------------------------------------
def test_cli_simulate_with_lqr(tmp_path, capsys):
    from robot_dynamics.cli import main

    assert main(["simulate", "--controller", "lqr", "--json", "--no-plot", "--no-bag", "--out", str(tmp_path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["controller"] == "lqr" and data["robot"] == "puma560"
    m = data["metrics"]
    assert m["fault_count"] == 0 and m["saturated_fraction"] == 0.0
    assert max(abs(e) for e in m["final_error"]) < 5e-4
    assert all(p < lim for p, lim in zip(m["peak_torque"], rd.load_robot("puma560").effort_limit))


def test_cli_lqr_weights_are_options():
    from robot_dynamics.commands.simulate import _controller

    model = rd.load_robot("planar2")
    args = argparse.Namespace(controller="lqr", omega=10.0, xi=1.0, rate=200.0, relinearize_period=0.1,
                              lqr_q="100,100,1,1", lqr_r="0.01,0.02")
    ctrl = _controller(args, model)
    assert isinstance(ctrl, LQR) and ctrl.rate == 200.0 and ctrl.relinearize_period == 0.1
    np.testing.assert_allclose(ctrl.Q, np.diag([100.0, 100.0, 1.0, 1.0]))
    np.testing.assert_allclose(ctrl.R, np.diag([0.01, 0.02]))


@pytest.mark.parametrize("argv, words", [
    (["--lqr-q", "1,2,3"], "--lqr-q: expected 12 values"),
    (["--lqr-r", "1,1,1,1,1,0"], "R: the weight matrix must be positive definite"),
    (["--xi", "0.5"], "xi >= 1/sqrt(2)"),
    (["--relinearize-period", "-1"], "--relinearize-period: expected a period >= 0"),
])
def test_cli_refuses_bad_lqr_options_in_one_line(argv, words, capsys, tmp_path, monkeypatch):
    from robot_dynamics.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "--controller", "lqr", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err
    assert not any(tmp_path.iterdir())
