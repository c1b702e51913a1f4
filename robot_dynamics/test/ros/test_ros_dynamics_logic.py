"""The dynamics node's callbacks (logic.DynamicsServices), without rclpy.

Requests and responses are objects with the real field layout of robot_dynamics_interfaces;
answers are checked against the core called directly with model-ordered arrays and against
identities (aba undoes rnea, J^T f for a wrench, M from unit accelerations).
"""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.ros.logic import DynamicsServices, load_model_from_parameters
from robot_dynamics.ros.messages import message_class, service_class
from robot_dynamics.testing import random_tree_urdf

ID = service_class("InverseDynamics")
FD = service_class("ForwardDynamics")
MM = service_class("MassMatrix")
TE = service_class("TrajectoryEffort")
LIN = service_class("Linearize")
JointState = message_class("sensor_msgs/JointState")
JointTrajectory = message_class("trajectory_msgs/JointTrajectory")
Point = message_class("trajectory_msgs/JointTrajectoryPoint")


@pytest.fixture(scope="module")
def tree():
    return rd.load_urdf(random_tree_urdf(np.random.default_rng(3), 7))


def _state(model, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (3, model.nq))


def test_inverse_dynamics_matches_core_with_shuffled_names(puma):
    svc = DynamicsServices(puma)
    q, qd, qdd = _state(puma, 0)
    perm = np.random.default_rng(1).permutation(puma.nq)
    req = ID.Request(joint_names=[puma.joint_names[i] for i in perm], positions=list(q[perm]),
                     velocities=list(qd[perm]), accelerations=list(qdd[perm]))
    res = svc.inverse_dynamics(req, ID.Response())
    assert res.success, res.message
    assert res.joint_names == list(puma.joint_names)
    np.testing.assert_allclose(res.efforts, rd.rnea(puma, q, qd, qdd), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res.actuator_efforts, res.efforts)  # no gear structure: identical


def test_inverse_dynamics_wrench_adds_jacobian_transpose(tree):
    # Khalil [7.30]: a wrench f_en exerted by the link on the environment adds J^T f_en.
    svc = DynamicsServices(tree)
    q, qd, qdd = _state(tree, 2)
    link = tree.frame_names[-1]
    req = ID.Request(positions=list(q), velocities=list(qd), accelerations=list(qdd), wrench_link=link)
    f = np.array([3.0, -1.0, 2.0, 0.5, 0.25, -0.75])
    req.wrench.force.x, req.wrench.force.y, req.wrench.force.z = f[:3]
    req.wrench.torque.x, req.wrench.torque.y, req.wrench.torque.z = f[3:]
    with_wrench = svc.inverse_dynamics(req, ID.Response())
    req.wrench_link = ""
    without = svc.inverse_dynamics(req, ID.Response())
    assert with_wrench.success and without.success
    J = rd.jacobian(tree, q, link)
    np.testing.assert_allclose(np.subtract(with_wrench.efforts, without.efforts), J.T @ f, atol=1e-10)


def test_forward_dynamics_undoes_inverse_dynamics(tree):
    svc = DynamicsServices(tree)
    q, qd, qdd = _state(tree, 4)
    tau = svc.inverse_dynamics(ID.Request(positions=list(q), velocities=list(qd), accelerations=list(qdd)),
                               ID.Response()).efforts
    names = list(tree.joint_names)[::-1]
    res = svc.forward_dynamics(FD.Request(joint_names=names, positions=list(q[::-1]), velocities=list(qd[::-1]),
                                          efforts=list(np.asarray(tau)[::-1])), FD.Response())
    assert res.success, res.message
    np.testing.assert_allclose(res.accelerations, qdd, atol=1e-9)


def test_mass_matrix_row_major_equals_unit_acceleration_columns(tree):
    svc = DynamicsServices(tree, friction=False)
    q = _state(tree, 5)[0]
    res = svc.mass_matrix(MM.Request(positions=list(q)), MM.Response())
    assert res.success and res.size == tree.nq
    M = np.asarray(res.mass_matrix).reshape(tree.nq, tree.nq)
    # Column j of M = rnea(q, 0, e_j) - rnea(q, 0, 0) (Walker-Orin method 1), an independent path.
    bias = rd.rnea(tree, q, np.zeros(tree.nq), np.zeros(tree.nq))
    for j in range(tree.nq):
        e = np.zeros(tree.nq)
        e[j] = 1.0
        np.testing.assert_allclose(M[:, j], rd.rnea(tree, q, np.zeros(tree.nq), e) - bias, atol=1e-10)


@pytest.mark.parametrize("dt", [0.0, 0.002])
def test_linearize_is_the_core_linearisation_with_shuffled_names(puma, dt):
    svc = DynamicsServices(puma)
    q, qd, _ = _state(puma, 11)
    tau = rd.gravity_torques(puma, q) + 1.5
    perm = np.random.default_rng(2).permutation(puma.nq)
    req = LIN.Request(joint_names=[puma.joint_names[i] for i in perm], positions=list(q[perm]),
                      velocities=list(qd[perm]), efforts=list(tau[perm]), dt=dt)
    res = svc.linearize(req, LIN.Response())
    assert res.success, res.message
    assert res.joint_names == list(puma.joint_names)
    assert (res.a_rows, res.a_cols, res.b_rows, res.b_cols) == (12, 12, 12, 6)
    A = np.asarray(res.a).reshape(res.a_rows, res.a_cols)
    B = np.asarray(res.b).reshape(res.b_rows, res.b_cols)
    A_core, B_core = rd.linearize(puma, q, qd, tau, dt or None)
    np.testing.assert_allclose(A, A_core, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(B, B_core, rtol=1e-12, atol=1e-12)
    assert res.message.startswith("discrete" if dt else "continuous")


def test_linearize_rows_are_the_slopes_of_forward_dynamics(tree):
    """Independent of rd.linearize: central differences of the ForwardDynamics service for A's
    lower rows, M^-1 from the MassMatrix service for B's."""
    svc = DynamicsServices(tree)
    q, qd, _ = _state(tree, 12)
    tau = np.random.default_rng(13).uniform(-2, 2, tree.nq)
    res = svc.linearize(LIN.Request(positions=list(q), velocities=list(qd), efforts=list(tau)), LIN.Response())
    assert res.success, res.message
    n = tree.nq
    A = np.asarray(res.a).reshape(2 * n, 2 * n)
    B = np.asarray(res.b).reshape(2 * n, n)

    def qdd(qq, vv):
        r = svc.forward_dynamics(FD.Request(positions=list(qq), velocities=list(vv), efforts=list(tau)), FD.Response())
        assert r.success, r.message
        return np.asarray(r.accelerations)

    h = 1e-6
    for k in range(n):
        e = np.zeros(n)
        e[k] = h
        np.testing.assert_allclose(A[n:, k], (qdd(q + e, qd) - qdd(q - e, qd)) / (2 * h), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(A[n:, n + k], (qdd(q, qd + e) - qdd(q, qd - e)) / (2 * h), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(A[:n], np.hstack([np.zeros((n, n)), np.eye(n)]))
    M = np.asarray(svc.mass_matrix(MM.Request(positions=list(q)), MM.Response()).mass_matrix).reshape(n, n)
    np.testing.assert_allclose(B[n:] @ M, np.eye(n), atol=1e-9)
    np.testing.assert_array_equal(B[:n], 0.0)


@pytest.mark.parametrize(
    "fields, match",
    [
        ({"positions": [0.0] * 5, "efforts": [0.0] * 6}, "positions: expected 6 values"),
        ({"positions": [0.0] * 6}, "efforts: expected 6 values"),
        ({"positions": [0.0] * 6, "efforts": [0.0] * 6, "velocities": [1.0]}, "velocities: expected 6"),
        ({"positions": [0.0, float("nan"), 0, 0, 0, 0], "efforts": [0.0] * 6}, "NaN"),
        ({"positions": [0.0] * 6, "efforts": [0.0, 0, 0, float("inf"), 0, 0]}, "efforts"),
        ({"joint_names": [f"joint{i}" for i in range(1, 7)] + ["wrist"], "positions": [0.0] * 7,
          "efforts": [0.0] * 7}, "Unknown joint 'wrist'"),
        ({"joint_names": ["joint1", "joint1", "joint3", "joint4", "joint5", "joint6"], "positions": [0.0] * 6,
          "efforts": [0.0] * 6}, "joint1"),
        ({"joint_names": ["joint1", "joint2"], "positions": [0.0, 0.0], "efforts": [0.0, 0.0]}, "missing joints"),
        ({"positions": [0.0] * 6, "efforts": [0.0] * 6, "dt": -0.01}, "dt: expected a sampling period > 0"),
        ({"positions": [0.0] * 6, "efforts": [0.0] * 6, "dt": float("nan")}, "dt: expected a sampling period > 0"),
        ({"positions": [0.0] * 6, "efforts": [0.0] * 6, "dt": 1e6}, "dt"),
        ({"positions": [0.0] * 6, "velocities": [1e300] * 6, "efforts": [0.0] * 6}, ""),
    ],
)
def test_linearize_bad_requests_get_success_false(puma, fields, match):
    res = DynamicsServices(puma).linearize(LIN.Request(**fields), LIN.Response())
    assert res.success is False and res.message, res.message
    assert match in res.message, res.message
    assert not res.message.startswith("internal error"), res.message


@pytest.mark.parametrize(
    "request_fields, match",
    [
        ({"positions": [0.0] * 5}, "expected 6 values"),
        ({"positions": [0.0, float("nan"), 0, 0, 0, 0]}, "NaN"),
        ({"joint_names": ["joint1", "joint2"], "positions": [0.0, 0.0]}, "missing joints"),
        ({"joint_names": [f"joint{i}" for i in range(1, 7)] + ["wrist"], "positions": [0.0] * 7},
         "Unknown joint 'wrist'"),
        ({"positions": [0.0] * 6, "velocities": [1.0]}, "velocities: expected 6"),
        ({"positions": [0.0] * 6, "wrench_link": "hand"}, "Unknown frame 'hand'. Valid frames"),
        ({"positions": "abc"}, "positions"),
    ],
)
def test_bad_requests_get_success_false(puma, request_fields, match):
    svc = DynamicsServices(puma)
    for srv, method in ((ID, svc.inverse_dynamics), (FD, svc.forward_dynamics), (MM, svc.mass_matrix)):
        fields = {k: v for k, v in request_fields.items() if k in srv.Request.__slots__}
        if srv is FD:
            fields.setdefault("efforts", [0.0] * 6)
        res = method(srv.Request(**fields), srv.Response())
        if set(request_fields) <= set(srv.Request.__slots__):
            assert res.success is False
            assert match in res.message, res.message


def test_callbacks_never_raise_on_garbage(puma):
    svc = DynamicsServices(puma)
    req = ID.Request()
    req.positions = None  # not even a sequence
    res = svc.inverse_dynamics(req, ID.Response())
    assert res.success is False and res.message
    res = svc.trajectory_effort(TE.Request(trajectory=None), TE.Response(), Point)
    assert res.success is False and "internal error" in res.message


def _quintic_trajectory(model, names, T=1.0, n=101):
    # q(t) = q0 + (q1 - q0) s(t), s = 10 tau^3 - 15 tau^4 + 6 tau^5 (Khalil [13.13]).
    rng = np.random.default_rng(7)
    q0, q1 = rng.uniform(-1, 1, (2, model.nq))
    t = np.linspace(0, T, n)
    tau = t / T
    s = 10 * tau**3 - 15 * tau**4 + 6 * tau**5
    sd = (30 * tau**2 - 60 * tau**3 + 30 * tau**4) / T
    sdd = (60 * tau - 180 * tau**2 + 120 * tau**3) / T**2
    Q = q0 + np.outer(s, q1 - q0)
    Qd, Qdd = np.outer(sd, q1 - q0), np.outer(sdd, q1 - q0)
    idx = [model.joint_names.index(j) for j in names]
    msg = JointTrajectory(joint_names=list(names))
    msg.points = []
    for k in range(n):
        p = Point(positions=list(Q[k, idx]))
        p.time_from_start.sec, p.time_from_start.nanosec = int(t[k]), int(round((t[k] % 1) * 1e9))
        msg.points.append(p)
    return msg, t, Q, Qd, Qdd


def test_trajectory_effort_fills_efforts_and_checks_limits(puma):
    svc = DynamicsServices(puma)
    names = list(puma.joint_names)[::-1]
    msg, t, Q, Qd, Qdd = _quintic_trajectory(puma, names)
    res = svc.trajectory_effort(TE.Request(trajectory=msg), TE.Response(), Point)
    assert res.success, res.message
    assert "estimated by finite differences" in res.message
    assert res.trajectory.joint_names == names and len(res.trajectory.points) == len(t)
    effort = np.array([p.effort for p in res.trajectory.points])[:, ::-1]  # back to model order
    exact = rd.rnea(puma, Q, Qd, Qdd)
    # Finite-difference derivatives of a 101-sample quintic: efforts within 1 % of the peak.
    err = np.abs(effort - exact)[5:-5].max()
    assert err < 0.01 * np.abs(exact).max()
    np.testing.assert_allclose(res.peak_efforts, np.abs(effort).max(axis=0)[::-1], rtol=1e-12)
    np.testing.assert_allclose(res.effort_limits, puma.effort_limit[::-1])
    assert res.feasible == bool(np.all(np.abs(effort).max(axis=0) <= puma.effort_limit))
    # Tighten the limits below the peaks: infeasible, and the violating joints are named.
    tight = puma.replace(effort_limit=np.abs(exact).max(axis=0) * 0.5)
    res2 = DynamicsServices(tight).trajectory_effort(TE.Request(trajectory=msg), TE.Response(), Point)
    assert res2.success and not res2.feasible
    assert sorted(res2.violating_joints) == sorted(puma.joint_names)


def test_trajectory_effort_uses_given_derivatives_exactly(tree):
    svc = DynamicsServices(tree)
    msg, t, Q, Qd, Qdd = _quintic_trajectory(tree, tree.joint_names, n=11)
    for k, p in enumerate(msg.points):
        p.velocities, p.accelerations = list(Qd[k]), list(Qdd[k])
    res = svc.trajectory_effort(TE.Request(trajectory=msg), TE.Response(), Point)
    assert res.success and "estimated" not in res.message
    np.testing.assert_allclose([p.effort for p in res.trajectory.points], rd.rnea(tree, Q, Qd, Qdd), atol=1e-10)


def test_gravity_compensation_status(puma):
    svc = DynamicsServices(puma)
    q = _state(puma, 9)[0]
    ok, g, status = svc.gravity_compensation(JointState(name=["finger"] + list(puma.joint_names),
                                                        position=[0.3] + list(q)))
    assert ok and status == "ok"
    np.testing.assert_allclose(g, rd.gravity_torques(puma, q), rtol=1e-12, atol=1e-10)
    ok, g, status = svc.gravity_compensation(JointState(name=["joint1"], position=[0.0]))
    assert not ok and "missing joints" in status and np.all(g == 0)


def test_model_from_parameters(tmp_path):
    text = random_tree_urdf(np.random.default_rng(0), 4)
    a = load_model_from_parameters({"robot_description": text})
    path = tmp_path / "r.urdf"
    path.write_text(text)
    b = load_model_from_parameters({"urdf_path": str(path), "gravity": [0.0, 0.0, -1.62]})
    assert a.joint_names == b.joint_names
    np.testing.assert_allclose(b.gravity, [0, 0, -1.62])
    c = load_model_from_parameters({"robot": "planar2"})
    assert c.nq == 2
    with pytest.raises(rd.ModelError, match="No robot given"):
        load_model_from_parameters({})
    with pytest.raises(rd.UnknownNameError, match="Valid robots"):
        load_model_from_parameters({"robot": "r2d2"})


# -- fuzz: no callback raises, whatever the request ---------------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_NAMES = st.lists(st.sampled_from(["joint1", "joint2", "joint3", "joint4", "joint5", "joint6", "x", ""]),
                  max_size=8)
_FLOATS = st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.just(0.0)), max_size=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=_NAMES, q=_FLOATS, qd=_FLOATS, qdd=_FLOATS, link=st.sampled_from(["", "link6", "nowhere"]),
       flag=st.booleans())
def test_no_callback_raises_on_any_request(puma, names, q, qd, qdd, link, flag):
    svc = DynamicsServices(puma)
    results = [
        svc.inverse_dynamics(ID.Request(joint_names=names, positions=q, velocities=qd, accelerations=qdd,
                                        wrench_link=link), ID.Response()),
        svc.forward_dynamics(FD.Request(joint_names=names, positions=q, velocities=qd, efforts=qdd,
                                        actuator_efforts=flag), FD.Response()),
        svc.mass_matrix(MM.Request(joint_names=names, positions=q), MM.Response()),
        svc.linearize(LIN.Request(joint_names=names, positions=q, velocities=qd, efforts=qdd,
                                  dt=0.001 if flag else 0.0), LIN.Response()),
    ]
    for res in results:
        assert isinstance(res.success, bool) and res.message
        if res.success:
            assert len(names) in (0, 6) and len(q) == 6 and np.all(np.isfinite(q))
    ok, g, status = svc.gravity_compensation(JointState(name=names, position=q, velocity=qd))
    assert ok == (status == "ok") and g.shape == (6,)


def test_geared_robot_actuator_efforts_round_trip():
    # A gear train couples the motors: actuator efforts differ from joint efforts, and
    # ForwardDynamics fed with them (actuator_efforts: true) gives back the accelerations.
    model = rd.load_robot("three_dof_geared")
    assert model.drivetrain is not None
    svc = DynamicsServices(model)
    q, qd, qdd = [0.1, 0.2, 0.3], [0.3, -0.2, 0.1], [1.0, -1.0, 0.5]
    res = svc.inverse_dynamics(ID.Request(positions=q, velocities=qd, accelerations=qdd), ID.Response())
    assert res.success, res.message
    assert not np.allclose(res.actuator_efforts, res.efforts)
    back = svc.forward_dynamics(FD.Request(positions=q, velocities=qd, efforts=list(res.actuator_efforts),
                                           actuator_efforts=True), FD.Response())
    assert back.success, back.message
    np.testing.assert_allclose(back.accelerations, qdd, atol=1e-9)
    joint = svc.forward_dynamics(FD.Request(positions=q, velocities=qd, efforts=list(res.efforts)), FD.Response())
    np.testing.assert_allclose(joint.accelerations, qdd, atol=1e-9)
