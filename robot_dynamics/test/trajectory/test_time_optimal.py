"""trajectory.time_optimal (TOPP-RA): on the path, at rest at both ends, every limit held at a 1 kHz
resampling, the bang-bang optimum of a straight line, motor limits through the drive train, the
named error of an infeasible path, and the engine's reachability against an LP solver's."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.interpolate import CubicSpline
from scipy.optimize import linprog

import robot_dynamics as rd
from robot_dynamics.engine import engine
from robot_dynamics.errors import InputError, PathInfeasibleError
from robot_dynamics.trajectory import path_through, time_optimal

RATE = 1000.0
TOLERANCE = 1e-6  # the issue's: no violation above 1e-6 relative at a 1 kHz resampling


def random_waypoints(model, seed: int, count: int = 5, span: float = 2.5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    lo, hi = np.maximum(model.lower, -span), np.minimum(model.upper, span)
    return lo + (hi - lo) * rng.random((count, model.nq))


def resampled(traj, rate: float = RATE):
    t = np.arange(0.0, traj.duration, 1.0 / rate)
    t = np.append(t, traj.duration)
    return t, *traj.sample(t)


def assert_limits(traj, model, *, acceleration=None, motor=None) -> dict[str, float]:
    """Every limit at the 1 kHz resampling to TOLERANCE; returns the peak ratio of each kind."""
    t, q, qd, qdd = resampled(traj)
    tau = traj.torques(t)
    peaks = {}
    finite = np.isfinite(traj.torque_limit)
    peaks["torque"] = float(np.max(np.abs(tau[:, finite]) / traj.torque_limit[finite], initial=0.0))
    peaks["velocity"] = float(np.max(np.abs(qd) / traj.velocity_limit))
    if acceleration is not None:
        peaks["acceleration"] = float(np.max(np.abs(qdd) / acceleration))
    if motor is not None:
        peaks["motor"] = float(np.max(np.abs(traj.motor_torques(t)) / motor))
    for kind, peak in peaks.items():
        assert peak <= 1.0 + TOLERANCE, (kind, peak)
    return peaks


@pytest.mark.parametrize("robot, seed", [("puma560", 1), ("puma560", 2), ("iiwa14", 3), ("rx90", 4),
                                         ("three_dof_geared", 5)])
def test_random_paths_on_path_at_rest_within_limits(robot, seed):
    model = rd.load_robot(robot)
    waypoints = random_waypoints(model, seed)
    traj = time_optimal(model, waypoints)
    path = path_through(waypoints)
    t, q, qd, qdd = resampled(traj)
    s, sd, sdd = traj.path_parameter(t)
    # on the path: every sample is path(s(t)), s from 0 to 1 without going back
    np.testing.assert_allclose(q, path(s, 0), rtol=0, atol=1e-12)
    assert s[0] == 0.0 and abs(s[-1] - 1.0) <= 1e-9 and np.all(np.diff(s) >= 0.0)
    np.testing.assert_allclose(q[0], waypoints[0], atol=1e-12)
    np.testing.assert_allclose(q[-1], waypoints[-1], atol=1e-9)
    # at rest at both ends
    assert np.max(np.abs(qd[0])) == 0.0 and np.max(np.abs(qd[-1])) <= 1e-9
    peaks = assert_limits(traj, model)
    # time-optimal: some limit is reached (bang-bang), not a timing with slack everywhere
    assert max(peaks.values()) >= 0.999, peaks
    assert traj.duration > 0.0 and np.isfinite(traj.duration)


def test_waypoints_equal_the_callable_spline():
    model = rd.load_robot("puma560")
    waypoints = random_waypoints(model, 7)
    by_points = time_optimal(model, waypoints, friction=False)
    spline = path_through(waypoints)
    by_callable = time_optimal(model, CubicSpline(spline.x, waypoints, bc_type="not-a-knot"), friction=False)
    assert by_callable.duration == pytest.approx(by_points.duration, rel=1e-12)


@pytest.mark.parametrize("v, a, expected_shape", [(1.0, 4.0, "trapezoid"), (5.0, 2.0, "triangle")])
def test_straight_line_equals_the_bang_bang_optimum(v, a, expected_shape):
    """Velocity and acceleration limits only on a straight line: the path speed is limited by
    V = min_j v_j / |dq_j| and its acceleration by A = min_j a_j / |dq_j|, the optimum is the
    trapezoid T = 1/V + V/A (or, when V^2 >= A, the triangle T = 2 / sqrt(A))."""
    model = rd.load_robot("puma560")
    q0 = np.array([0.1, -0.5, 0.3, 0.0, 0.4, -0.2])
    q1 = q0 + np.array([1.2, -0.6, 0.9, 2.0, -1.0, 0.5])
    dq = q1 - q0
    velocity = np.full(6, v) * np.array([1.0, 1.2, 0.9, 2.0, 2.0, 2.0])
    acceleration = np.full(6, a) * np.array([1.0, 0.8, 1.1, 3.0, 3.0, 3.0])
    V = np.min(velocity / np.abs(dq))
    A = np.min(acceleration / np.abs(dq))
    shape = "triangle" if V * V >= A else "trapezoid"
    assert shape == expected_shape
    expected = 2.0 / np.sqrt(A) if shape == "triangle" else 1.0 / V + V / A
    traj = time_optimal(model, [q0, q1], velocity_limit=velocity, acceleration_limit=acceleration,
                        torque_limit=np.inf, friction=False)
    assert traj.duration == pytest.approx(expected, rel=1e-6)
    assert_limits(traj, model, acceleration=acceleration)


def test_motor_limits_bind_the_motors_not_the_joints():
    """three_dof_geared: coupled gears (structure matrix A); with motor limits below what the
    joints' limits allow, the motors' torques xi = A^-1 tau reach their limits and the joints' stay
    below theirs."""
    model = rd.load_robot("three_dof_geared")
    waypoints = random_waypoints(model, 11, span=1.8)
    motor = np.array([6.0, 8.0, 5.0])
    free = time_optimal(model, waypoints)
    limited = time_optimal(model, waypoints, motor_torque_limit=motor)
    peaks = assert_limits(limited, model, motor=motor)
    assert peaks["motor"] >= 0.999 and peaks["torque"] < 0.99, peaks
    assert limited.duration > free.duration * 1.01  # the motors are what slows it down
    t = np.linspace(0.0, limited.duration, 500)
    np.testing.assert_allclose(limited.motor_torques(t), rd.actuator_torques(model, *limited.sample(t)), rtol=1e-12,
                               atol=1e-9)


def test_infeasible_path_names_s_joint_and_torque():
    model = rd.load_robot("puma560")
    waypoints = np.array([[0.0, -1.2, 0.3, 0.0, 0.0, 0.0], [0.5, 0.0, 0.0, 0.0, 0.0, 0.0],
                          [1.0, -1.0, 0.5, 0.0, 0.0, 0.0]])
    static = rd.rnea(model, waypoints, np.zeros((3, 6)), np.zeros((3, 6)), friction=False)
    limit = model.effort_limit.copy()
    limit[1] = 0.5 * np.max(np.abs(static[:, 1]))  # the shoulder cannot hold the arm somewhere
    with pytest.raises(PathInfeasibleError) as err:
        time_optimal(model, waypoints, torque_limit=limit)
    e = err.value
    assert e.joint == model.joint_names[1] and 0.0 <= e.s <= 1.0
    assert abs(e.torque) > e.limit == pytest.approx(limit[1])
    assert f"s = {e.s:.6g}" in str(e) and repr(model.joint_names[1]) in str(e) and "N m" in str(e)
    # the static torque it names is that of the path at s (gravity and Coulomb friction of starting along it)
    q = path_through(waypoints)(np.array([e.s]), 0)
    gravity = rd.rnea(model, q, np.zeros_like(q), np.zeros_like(q), friction=False)[0, 1]
    assert abs(e.torque - gravity) <= model.coulomb[1] + 1e-9


def test_bad_input_is_named():
    model = rd.load_robot("puma560")
    w = random_waypoints(model, 1)
    with pytest.raises(InputError, match="grid_points"):
        time_optimal(model, w, grid_points=1)
    with pytest.raises(InputError, match="equal"):
        time_optimal(model, np.vstack([w[:2], w[1:2]]))
    with pytest.raises(InputError, match="NaN"):
        time_optimal(model, np.where(np.arange(6) == 2, np.nan, w))
    with pytest.raises(InputError, match=r"\(len\(s\), 6\)"):
        time_optimal(model, lambda s, order: np.zeros((len(s), 3)))
    with pytest.raises(InputError, match="torque_limit"):
        time_optimal(model, w, torque_limit=-1.0)


def test_phase_plane_curves_bound_the_profile():
    model = rd.load_robot("iiwa14")
    traj = time_optimal(model, random_waypoints(model, 21), grid_points=301)
    mvc, controllable, sd = traj.max_velocity, traj.controllable, traj.sd_grid
    # the grid: 301 points with the spline's three interior knots among them (moved onto or added)
    assert 301 <= traj.grid.size <= 304 and np.all(np.diff(traj.grid) > 0)
    knots = path_through(random_waypoints(model, 21)).x[1:-1]
    assert np.all(np.isin(knots, traj.grid))
    assert sd.shape == mvc.shape == controllable.shape == traj.grid.shape
    assert np.all(sd <= controllable * (1 + 1e-9) + 1e-12)
    assert np.all(controllable <= mvc * (1 + 1e-9) + 1e-12)
    assert sd[0] == 0.0 and sd[-1] == 0.0 and np.max(sd) > 0.0
    # the greedy profile rides the controllable sets' bound somewhere (where it decelerates)
    assert np.any(np.abs(sd[1:-1] - controllable[1:-1]) <= 1e-9 * controllable[1:-1])


def test_two_knots_nearest_one_grid_point_are_both_in_the_grid():
    """Knots at s = 0.5 and 0.52 on a grid of step 0.1: the point 0.5 takes the first, the second is
    added; each flagged, so that no interpolation of the check spans a knot."""
    model = rd.load_robot("planar2")
    waypoints = np.array([[0.0, 0.0], [0.5, 0.0], [0.52, 0.0], [1.0, 0.0]])  # chord lengths 0.5, 0.02, 0.48
    traj = time_optimal(model, waypoints, grid_points=11)
    assert traj.grid.size == 12 and np.all(np.diff(traj.grid) > 0)
    assert np.all(np.isin(path_through(waypoints).x, traj.grid))


def lp_reference(s, a, b, c, lo, hi, xmax):
    """TOPP-RA's passes with scipy's LP solver (HiGHS), first-order interpolation, as the paper writes them."""
    n, m = a.shape
    K = np.zeros((n, 2))
    for i in range(n - 2, -1, -1):
        d = s[i + 1] - s[i]
        A, ub = [], []
        for e in (0, 1):
            ae = a[i + e] + 2 * d * b[i + e] if e else a[i]
            for k in range(m):
                A += [[ae[k], b[i + e, k]], [-ae[k], -b[i + e, k]]]
                ub += [hi[i + e, k] - c[i + e, k], c[i + e, k] - lo[i + e, k]]
        A += [[2 * d, 1.0], [-2 * d, -1.0]]
        ub += [K[i + 1, 1], -K[i + 1, 0]]
        bounds = [(None, None), (0.0, xmax[i])]
        top = linprog([0.0, -1.0], A_ub=A, b_ub=ub, bounds=bounds, method="highs")
        bottom = linprog([0.0, 1.0], A_ub=A, b_ub=ub, bounds=bounds, method="highs")
        assert top.status == 0 and bottom.status == 0
        K[i] = bottom.x[1], top.x[1]
    return K


def test_reachability_equals_an_lp_solver():
    """The engine's Seidel LPs against HiGHS on the rows of a real path (PUMA 560, torque and
    acceleration rows): the controllable sets agree to 1e-7 relative."""
    model = rd.load_robot("puma560")
    grid = np.linspace(0.0, 1.0, 41)
    path = path_through(random_waypoints(model, 3))
    q, dq, ddq = path(grid, 0), path(grid, 1), path(grid, 2)
    zero, g0 = np.zeros_like(q), np.zeros(3)
    tau_a = rd.rnea(model, q, zero, dq, g0, friction=False)
    tau_b = rd.rnea(model, q, dq, ddq, g0, friction=False)
    tau_c = rd.rnea(model, q, zero, zero, friction=False)
    a = np.ascontiguousarray(np.hstack([tau_a, dq]))
    b = np.ascontiguousarray(np.hstack([tau_b, ddq]))
    c = np.ascontiguousarray(np.hstack([tau_c, zero]))
    limit = np.concatenate([model.effort_limit, np.full(6, 6.0)])
    hi = np.ascontiguousarray(np.tile(limit, (grid.size, 1)))
    lo = -hi
    xmax = np.min((model.velocity_limit / np.abs(dq)) ** 2, axis=1)
    K_lo, K_hi, x, u = np.empty(41), np.empty(41), np.empty(41), np.empty(40)
    failed = engine().reachability(grid, a, b, c, lo, hi, xmax, 0.0, 0.0, K_lo, K_hi, x, u)
    assert failed == -1
    K = lp_reference(grid, a, b, c, lo, hi, xmax)
    np.testing.assert_allclose(K_hi, K[:, 1], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(K_lo, K[:, 0], rtol=1e-7, atol=1e-9)
    # the forward pass: each x within the sets, every row held at both ends of its segment
    assert np.all(x <= K_hi * (1 + 1e-9) + 1e-12) and np.all(x >= K_lo - 1e-9)
    d = np.diff(grid)
    np.testing.assert_allclose(x[1:], x[:-1] + 2 * d * u, rtol=1e-12, atol=1e-12)
    start = a[:-1] * u[:, None] + b[:-1] * x[:-1, None] + c[:-1]
    end = a[1:] * u[:, None] + b[1:] * x[1:, None] + c[1:]
    for v in (start, end):
        assert np.all(np.abs(v) <= limit * (1 + 1e-9))


def test_task_space_line_timed_through_its_joint_path():
    """A task-space straight line (cartesian_motion) turned into joints by task_space_to_joint and
    timed: the end effector stays on the line between the samples and moves faster than the
    task-space limits' timing where the torques allow it."""
    from robot_dynamics import trajectory as tr

    model = rd.load_robot("iiwa14")
    q0 = np.array([0.2, 0.5, -0.1, -1.3, 0.1, 0.9, 0.0])
    T0 = rd.frame_pose(model, q0)
    T1 = T0.copy()
    T1[:3, 3] += [0.15, -0.1, 0.05]
    motion = tr.cartesian_motion(T0, T1, 0.2, 0.5, 0.5, 1.0)
    report = tr.task_space_to_joint(model, motion, q0, rate=100.0)
    traj = time_optimal(model, report.q)
    t, q, qd, qdd = resampled(traj)
    T = rd.frame_pose(model, q)
    D = T1[:3, 3] - T0[:3, 3]
    rel = T[:, :3, 3] - T0[:3, 3]
    along = rel @ D / (D @ D)
    off_line = np.linalg.norm(rel - np.outer(along, D), axis=1)
    assert np.max(off_line) < 1e-6 and along[0] == pytest.approx(0.0, abs=1e-12)
    assert along[-1] == pytest.approx(1.0, abs=1e-9) and np.all(np.diff(along) >= -1e-9)
    assert_limits(traj, model)
    assert traj.duration < motion.duration
