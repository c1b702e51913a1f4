"""Controllers, one tick at a time: the control laws against independent computations."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.control import (
    ComputedTorque,
    Controller,
    JointPID,
    PDGravity,
    Reference,
    Status,
    TaskComputedTorque,
    TaskPID,
    TaskReference,
    actuator_to_joint,
    damped_pseudo_inverse,
    gains_from_bandwidth,
    joint_to_actuator,
    max_inertia_diagonal,
)

BUNDLED = rd.list_robots()


def random_state(model, rng):
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    return rng.uniform(lo, hi), rng.normal(0, 1.0, model.nq), rng.normal(0, 2.0, model.nq)


@pytest.fixture(scope="module")
def puma():
    return rd.load_robot("puma560")


@pytest.fixture(scope="module")
def planar2():
    return rd.load_robot("planar2")


# -- construction rejects bad gains --------------------------------------------------------


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda m: JointPID(m, kp=-1.0, kd=1.0), "kp: gains must be >= 0"),
        (lambda m: JointPID(m, kp=[1.0, 2.0], kd=1.0), r"kp: expected a scalar or 6 values"),
        (lambda m: JointPID(m, kp=1.0, kd=np.nan), "kd: gains must be finite"),
        (lambda m: JointPID(m, kp=np.eye(6), kd=1.0), "kp: expected a scalar or 6 values"),
        (lambda m: PDGravity(m, kp=0.0, kd=1.0), r"kp: gains must be > 0"),
        (lambda m: PDGravity(m, kp=10.0, kd=1.0, gravity="goal"), "gravity: expected one of"),
        (lambda m: ComputedTorque(m, omega=-3.0), "omega: gains must be > 0"),
        (lambda m: ComputedTorque(m, omega=10.0, xi=[1, 1, 1]), "xi: expected a scalar or 6 values"),
        (lambda m: ComputedTorque(m, kp=1.0), "give both"),
        (lambda m: ComputedTorque(m, omega=5.0, kp=1.0, kd=1.0), "either omega"),
        (lambda m: ComputedTorque(m, scheme="regulation"), r"scheme: expected one of \['tracking', 'position'\]"),
        (lambda m: ComputedTorque(m, effort_limit=[1.0, -2.0, 1, 1, 1, 1]), "effort_limit"),
        (lambda m: ComputedTorque(m, fault_action="panic"), "fault_action"),
        (lambda m: TaskComputedTorque(m, rows=(0, 7)), "rows"),
        (lambda m: TaskPID(m, kp=[1, 2], kd=1.0), r"expected a scalar or 6 values"),
    ],
)
def test_bad_construction_raises_input_error(puma, make, match):
    with pytest.raises(rd.InputError, match=match):
        make(puma)


def test_unknown_frame_lists_valid_frames(puma):
    with pytest.raises(rd.UnknownNameError, match="Valid frames"):
        TaskComputedTorque(puma, frame="tool0_typo")


def test_gain_message_names_the_joint(planar2):
    with pytest.raises(rd.InputError, match=r"\['elbow'\]"):
        JointPID(planar2, kp=[10.0, -1.0], kd=1.0)


# -- the tick never raises -------------------------------------------------------------------


@pytest.mark.parametrize("cls", ["ct", "pid", "pd", "task"])
def test_nan_measurement_gives_safe_status_and_logs(puma, caplog, cls):
    ctrl = {
        "ct": lambda: ComputedTorque(puma, omega=20.0),
        "pid": lambda: JointPID(puma, 100.0, 10.0, 5.0),
        "pd": lambda: PDGravity(puma, 100.0, 10.0),
        "task": lambda: TaskComputedTorque(puma, omega=20.0),
    }[cls]()
    q = np.array([0.1, -0.4, 0.3, 0.2, 0.5, -0.1])
    if cls == "task":
        ref = TaskReference(rd.frame_pose(puma, q), np.zeros(6), np.zeros(6))
    else:
        ref = Reference(q, np.zeros(6), np.zeros(6))
    ok = ctrl.update(0.0, q, np.zeros(6), ref)
    assert ok.status == Status.OK
    bad = q.copy()
    bad[2] = np.nan
    with caplog.at_level(logging.WARNING, logger="robot_dynamics.control"):
        out = ctrl.update(0.001, bad, np.zeros(6), ref)
    assert out.status & Status.FAULT
    assert "joint3" in out.message and "non-finite" in out.message
    assert any("non-finite measurement" in r.getMessage() for r in caplog.records)
    # hold: the gravity torque of the last valid position
    np.testing.assert_allclose(out.tau, rd.gravity_torques(puma, q), rtol=1e-12, atol=1e-12)
    # recovers on the next valid sample
    again = ctrl.update(0.002, q, np.zeros(6), ref)
    assert again.status == Status.OK and again.message == ""


def test_zero_fault_action_and_bad_reference(puma):
    ctrl = ComputedTorque(puma, omega=20.0, fault_action="zero")
    q = np.zeros(6)
    out = ctrl.update(0.0, q, q, Reference(q, q, np.full(6, np.inf)))
    assert out.status == Status.FAULT and "bad reference" in out.message
    np.testing.assert_array_equal(out.tau, np.zeros(6))
    out = ctrl.update(0.0, np.zeros(5), q, Reference(q, q, q))
    assert out.status == Status.FAULT and "shape" in out.message
    out = ctrl.update(0.0, q, q, TaskReference(np.eye(4), np.zeros(6), np.zeros(6)))
    assert out.status == Status.FAULT


def test_controllers_satisfy_the_protocol(puma):
    for c in (ComputedTorque(puma), JointPID(puma, 1.0, 1.0), PDGravity(puma, 1.0, 1.0), TaskPID(puma, 1.0, 1.0), TaskComputedTorque(puma)):
        assert isinstance(c, Controller)


# -- the laws ----------------------------------------------------------------------------------


def test_bandwidth_gains_khalil_9_26():
    kp, kd = gains_from_bandwidth([10.0, 20.0], [1.0, 0.5], 2)
    np.testing.assert_allclose(kp, [100.0, 400.0])
    np.testing.assert_allclose(kd, [20.0, 20.0])
    # the error polynomial s^2 + Kd s + Kp has its roots at -xi w +- w sqrt(xi^2 - 1)
    roots = np.roots([1.0, kd[1], kp[1]])
    np.testing.assert_allclose(sorted(roots.real), [-10.0, -10.0])
    np.testing.assert_allclose(sorted(np.abs(roots.imag)), [20 * np.sqrt(0.75)] * 2)


def test_pid_triple_pole_khalil_9_10(puma):
    omega = 15.0
    pid = JointPID.from_bandwidth(puma, omega)
    a = max_inertia_diagonal(puma)
    A = rd.crba(puma, np.zeros(6))
    assert np.all(a >= np.diagonal(A) - 1e-12)  # a_j is a maximum
    for j in range(6):
        # Delta(s) = a s^3 + (Kd + Fv) s^2 + Kp s + KI = a (s + w)^3   [9.8]-[9.9]
        coeffs = [a[j], pid.kd[j] + puma.viscous[j], pid.kp[j], pid.ki[j]]
        np.testing.assert_allclose(np.poly1d(coeffs).c / a[j], np.poly1d([-omega] * 3, r=True).c, rtol=1e-12)


@pytest.mark.parametrize("name", BUNDLED)
def test_computed_torque_linearises_khalil_9_23(name):
    """With the exact model, the plant's acceleration under [9.22] equals w of [9.24]."""
    m = rd.load_robot(name)
    rng = np.random.default_rng(3)
    q, qd, _ = random_state(m, rng)
    ref = Reference(*random_state(m, rng))
    ctrl = ComputedTorque(m, omega=12.0, xi=0.8, effort_limit=np.inf)
    out = ctrl.update(0.0, q, qd, ref)
    assert out.status == Status.OK
    w = ref.qdd + ctrl.kd * (ref.qd - qd) + ctrl.kp * (ref.q - q)
    qdd = rd.aba(m, q, qd, actuator_to_joint(m, q, out.effort))
    np.testing.assert_allclose(qdd, w, rtol=1e-8, atol=1e-8)
    # position scheme [9.29] and the predictive law [9.31] at q = q^d
    pos = ComputedTorque(m, omega=12.0, scheme="position", effort_limit=np.inf)
    out = pos.update(0.0, q, qd, ref)
    np.testing.assert_allclose(rd.aba(m, q, qd, out.tau), pos.kp * (ref.q - q) - pos.kd * qd, rtol=1e-8, atol=1e-8)
    pred = ComputedTorque(m, omega=12.0, predictive=True, effort_limit=np.inf)
    out = pred.update(0.0, ref.q, ref.qd, ref)
    np.testing.assert_allclose(rd.aba(m, ref.q, ref.qd, out.tau), ref.qdd, rtol=1e-8, atol=1e-8)


def test_friction_feedforward_on_desired_velocity(puma):
    q, qd, qdd = random_state(puma, np.random.default_rng(5))
    ref = Reference(q, -qd, qdd)  # measured velocity of the opposite sign
    a = ComputedTorque(puma, omega=10.0, effort_limit=np.inf)
    b = ComputedTorque(puma, omega=10.0, friction_velocity="desired", effort_limit=np.inf)
    diff = b.update(0.0, q, qd, ref).tau - a.update(0.0, q, qd, ref).tau
    # only the friction term changes: Fv (qd^d - qd) + Fc (sign qd^d - sign qd)
    np.testing.assert_allclose(diff, puma.viscous * (-2 * qd) + puma.coulomb * (np.sign(-qd) - np.sign(qd)), atol=1e-9)


@pytest.mark.parametrize("name", ["puma560", "iiwa14"])
def test_resolved_acceleration_khalil_9_34(name):
    """Exact model, regular pose: the frame's acceleration J qdd + Jdot qd equals w [9.35]."""
    m = rd.load_robot(name)
    q = np.array([0.2, -0.5, 0.4, 0.3, 0.6, -0.2, 0.1])[: m.nq]
    qd = np.linspace(-0.5, 0.5, m.nq)
    T = rd.frame_pose(m, q)
    Td = T.copy()
    Td[:3, 3] += [0.01, -0.02, 0.015]
    ref = TaskReference(Td, np.array([0.1, 0.0, -0.1, 0.0, 0.2, 0.0]), np.array([0.5, -0.3, 0.2, 0.1, 0.0, -0.2]))
    ctrl = TaskComputedTorque(m, omega=15.0, effort_limit=np.inf, null_space_kd=0.0)
    out = ctrl.update(0.0, q, qd, ref)
    assert out.status == Status.OK
    qdd = rd.aba(m, q, qd, out.tau)
    acc = rd.jacobian(m, q) @ qdd + rd.jacobian_dot_qdot(m, q, qd)
    J = rd.jacobian(m, q)
    ex = np.concatenate([Td[:3, 3] - T[:3, 3], np.zeros(3)])
    w = ref.accel + ctrl.kd * (ref.twist - J @ qd) + ctrl.kp * ex
    np.testing.assert_allclose(acc, w, rtol=1e-7, atol=1e-7)


def test_task_pid_is_jacobian_transpose(puma):
    q = np.array([0.3, -0.6, 0.5, 0.1, 0.4, 0.2])
    T = rd.frame_pose(puma, q)
    Td = T.copy()
    Td[:3, 3] += [0.02, 0.0, -0.01]
    ctrl = TaskPID(puma, kp=[100, 200, 300, 10, 10, 10], kd=5.0, effort_limit=np.inf)
    out = ctrl.update(0.0, q, np.zeros(6), TaskReference(Td, np.zeros(6), np.zeros(6)))
    force = np.array([100 * 0.02, 0.0, 300 * -0.01, 0, 0, 0])
    np.testing.assert_allclose(out.tau, rd.jacobian(puma, q).T @ force, atol=1e-10)


def test_damped_pseudo_inverse(planar2):
    J = rd.jacobian(planar2, np.array([0.3, 1.0]))[[0, 2], :]
    Jp, smin, damped = damped_pseudo_inverse(J)
    np.testing.assert_allclose(Jp, np.linalg.pinv(J), atol=1e-12)
    assert not damped and smin > 0.02
    Js = rd.jacobian(planar2, np.array([0.3, 0.0]))[[0, 2], :]  # stretched arm: singular
    Jp, smin, damped = damped_pseudo_inverse(Js, threshold=0.02, damping=0.05)
    assert damped and smin < 1e-12 and np.all(np.isfinite(Jp))
    assert np.linalg.norm(Jp, 2) <= 1.0 / (2 * 0.05) + 1e-9  # s / (s^2 + l^2) <= 1 / (2 l)
    ctrl = TaskComputedTorque(planar2, rows=(0, 2), omega=10.0)
    out = ctrl.update(0.0, np.array([0.3, 0.0]), np.zeros(2), TaskReference(rd.frame_pose(planar2, np.array([0.3, 0.2])), np.zeros(6), np.zeros(6)))
    assert out.status & Status.SINGULAR and np.all(np.isfinite(out.tau))


def test_pd_gravity_laws(puma):
    goal = np.array([0.2, -0.3, 0.4, 0.0, 0.1, 0.0])
    q = goal + 0.05
    qd = np.full(6, 0.1)
    ref = Reference(goal, np.zeros(6), np.zeros(6))
    cur = PDGravity(puma, 300.0, 20.0, effort_limit=np.inf)
    np.testing.assert_allclose(cur.update(0, q, qd, ref).tau, 300 * (goal - q) - 20 * qd + rd.gravity_torques(puma, q), atol=1e-10)
    des = PDGravity(puma, 300.0, 20.0, gravity="desired", effort_limit=np.inf)
    np.testing.assert_allclose(des.update(0, q, qd, ref).tau, 300 * (goal - q) - 20 * qd + rd.gravity_torques(puma, goal), atol=1e-10)


@pytest.mark.parametrize("name", ["puma560", "iiwa14"])
def test_gravity_stiffness_bound_equals_the_central_difference_estimate(name):
    """The bound from the analytical dQ/dq (rnea_derivatives) is the one central differences of
    the gravity torques gave before, on the same sampled configurations."""
    from robot_dynamics.control import gravity_stiffness_bound
    from robot_dynamics.control.pid import sample_configurations

    model = rd.load_robot(name)
    q = sample_configurations(model, 64, 0)
    h = 1e-6
    dq = h * np.eye(model.nq)
    columns = (rd.gravity_torques(model, q[:, None, :] + dq) - rd.gravity_torques(model, q[:, None, :] - dq)) / (2 * h)
    estimate = float(np.max(np.linalg.norm(np.swapaxes(columns, -1, -2), ord=2, axis=(-2, -1))))
    bound = gravity_stiffness_bound(model)
    assert bound == pytest.approx(estimate, rel=1e-7)
    assert bound > 1.0  # a real gravity load, not a vanishing one


def test_saturation_and_anti_windup(planar2):
    pid = JointPID(planar2, kp=1000.0, kd=0.0, ki=500.0, effort_limit=[5.0, 2.0])
    ref = Reference(np.array([1.0, 1.0]), np.zeros(2), np.zeros(2))
    for k in range(50):
        out = pid.update(k * 0.01, np.zeros(2), np.zeros(2), ref)
        assert out.status & Status.SATURATED
        np.testing.assert_allclose(out.tau, [5.0, 2.0])
    np.testing.assert_array_equal(pid.integral, [0.0, 0.0])  # frozen while saturated
    free = JointPID(planar2, kp=1.0, kd=0.0, ki=2.0)
    for k in range(11):
        free.update(k * 0.01, np.zeros(2), np.zeros(2), ref)
    np.testing.assert_allclose(free.integral, [0.1, 0.1])  # 10 steps of 0.01 s x e = 1


def test_drive_train_maps_and_actuator_limits():
    m = rd.load_robot("three_dof_geared")
    A = np.asarray(m.drivetrain.A)
    tau = np.array([3.0, -2.0, 1.5])
    xi = joint_to_actuator(m, np.zeros(3), tau)
    np.testing.assert_allclose(A @ xi, tau, atol=1e-12)
    np.testing.assert_allclose(actuator_to_joint(m, np.zeros(3), xi), tau, atol=1e-12)
    ctrl = ComputedTorque(m, omega=20.0, actuator_limit=1.0)
    q = np.array([0.1, 0.2, -0.1])
    out = ctrl.update(0.0, q, np.zeros(3), Reference(q + 0.3, np.zeros(3), np.zeros(3)))
    assert out.status & Status.SATURATED and np.all(np.abs(out.effort) <= 1.0 + 1e-12)
    np.testing.assert_allclose(out.tau, A @ out.effort, atol=1e-12)
    free = ComputedTorque(m, omega=20.0)
    out = free.update(0.0, q, np.zeros(3), Reference(q + 0.01, np.zeros(3), np.zeros(3)))
    # the geared plant driven by the actuator torques accelerates as designed
    w = free.kp * 0.01
    np.testing.assert_allclose(rd.aba(m, q, np.zeros(3), A @ out.effort), w, rtol=1e-8, atol=1e-8)


def test_one_controller_builder_for_the_command_line_and_the_node(puma):
    """The CLI's ``--controller`` and the node's ``controller`` parameter go through one builder."""
    import argparse

    from robot_dynamics.commands.simulate import _controller
    from robot_dynamics.control import CONTROLLERS, build_controller
    from robot_dynamics.errors import UnknownNameError
    from robot_dynamics.ros import params

    assert params.CONTROLLERS is CONTROLLERS
    for name in CONTROLLERS:
        node = build_controller(puma, name, kp=[], kd=[], ki=[], omega=15.0)
        cli = _controller(argparse.Namespace(controller=name.replace("_", "-"), omega=15.0, xi=1.0), puma)
        assert type(cli) is type(node)
        if name in ("pid", "pd_gravity", "computed_torque"):
            for gain in ("kp", "kd"):
                np.testing.assert_array_equal(getattr(cli, gain), getattr(node, gain))
    # the bandwidth design of PD + gravity: Kp = a w^2 with a_j = max A_jj (raised for friction)
    pdg = build_controller(puma, "pd-gravity", omega=10.0)
    a = np.maximum(max_inertia_diagonal(puma), puma.viscous / 20.0)
    np.testing.assert_allclose(pdg.kp, a * 100.0)
    # one given gain keeps the design's other one
    half = build_controller(puma, "pd_gravity", kp=np.full(puma.nq, 50.0), omega=10.0)
    np.testing.assert_array_equal(half.kp, 50.0)
    np.testing.assert_allclose(half.kd, pdg.kd)
    with pytest.raises(UnknownNameError, match="computed_torque"):
        build_controller(puma, "h_infinity")


@pytest.mark.parametrize("name", ["pid", "pd_gravity", "computed_torque", "lqr"])
def test_a_huge_finite_measurement_gets_finite_efforts_without_numpy_warnings(name):
    """q = 1e200 is finite: the controller answers (finite torques) and nothing leaks to stderr."""
    import warnings

    from robot_dynamics.control import build_controller

    model = rd.load_robot("puma560")
    ctrl = build_controller(model, name)
    q0 = np.array([0.0, 0.5, -0.5, 0.0, 0.3, 0.0])
    ctrl.update(0.0, q0, np.zeros(6), q0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = ctrl.update(0.001, np.array([1e200, 0, 0, 0, 0, 0.0]), np.zeros(6), q0)
    assert [str(w.message) for w in caught] == []  # e.g. numpy's "overflow encountered in matmul"
    assert np.all(np.isfinite(out.tau)) and np.all(np.isfinite(out.effort))


def test_all_finite_is_exact_where_the_cheap_sum_overflows():
    from robot_dynamics.control.base import all_finite

    assert all_finite(np.array([1e308, 1e308, -1e308]))
    assert all_finite(np.zeros(6))
    assert not all_finite(np.array([0.0, np.nan, 1.0]))
    assert not all_finite(np.array([np.inf, -np.inf]))


def test_pd_gravity_takes_a_bandwidth_like_computed_torque():
    """PDGravity(model) and PDGravity(model, omega=...) as ComputedTorque takes them: the gains
    of from_bandwidth; kp/kd still work; mixing them is refused."""
    puma = rd.load_robot("puma560")
    by_default = PDGravity(puma)
    by_omega = PDGravity(puma, omega=15.0, xi=0.8)
    ref = PDGravity.from_bandwidth(puma, 15.0, 0.8)
    np.testing.assert_array_equal(by_omega.kp, ref.kp)
    np.testing.assert_array_equal(by_omega.kd, ref.kd)
    np.testing.assert_array_equal(by_default.kp, PDGravity.from_bandwidth(puma, 20.0).kp)
    np.testing.assert_array_equal(PDGravity(puma, 100.0, 10.0).kp, np.full(6, 100.0))
    with pytest.raises(rd.InputError, match="give either omega/xi or kp/kd"):
        PDGravity(puma, 100.0, 10.0, omega=10.0)
    with pytest.raises(rd.InputError, match="kp and kd: give both"):
        PDGravity(puma, kp=100.0)
