"""Point-to-point profiles (Khalil 8.3): properties, the book's closed forms, synchronisation,
degenerate input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robot_dynamics import InputError, UnknownNameError
from robot_dynamics import trajectory as tr

C1 = ("cubic", "bang_bang", "trapezoidal")
C2 = ("quintic", "continuous_acceleration", "double_s")


@st.composite
def problems(draw, min_n=1, max_n=6):
    n = draw(st.integers(min_n, max_n))
    flt = lambda lo, hi: st.floats(lo, hi, allow_nan=False, allow_infinity=False)  # noqa: E731
    qs = np.array(draw(st.lists(flt(-3, 3), min_size=n, max_size=n)))
    qg = np.array(draw(st.lists(flt(-3, 3), min_size=n, max_size=n)))
    # some joints do not move; the others move by 1e-6 at least
    still = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    qg = np.where(np.abs(qg - qs) < 1e-6, qs + 1e-6, qg)
    qg = np.where(still & (np.arange(n) > 0), qs, qg)
    if np.all(np.abs(qg - qs) < 1e-3):
        qg[0] = qs[0] + 0.7
    kv = np.array(draw(st.lists(flt(0.1, 5.0), min_size=n, max_size=n)))
    ka = np.array(draw(st.lists(flt(0.2, 50.0), min_size=n, max_size=n)))
    kj = np.array(draw(st.lists(flt(1.0, 500.0), min_size=n, max_size=n)))
    return qs, qg, kv, ka, kj


def dense(traj, N=20001):
    t = np.linspace(0.0, traj.duration, N)
    return (t, *traj.sample(t))


def _assert_continuity_class(profile, traj, q, qd, qdd, h, D, still, *, kj, ka, tol):
    """The profile's continuity class by finite differences of the dense samples ``q, qd, qdd``
    ((N, n), h [s] apart; D the displacement, (n,)): C1 for every law but linear, and C2 with
    a bounded jerk for the laws of ``C2``."""
    # continuity class by finite differences: velocity is the derivative of position everywhere
    mid = slice(1, -1)
    fd_v = (q[2:] - q[:-2]) / (2 * h)
    if profile != "linear":
        # central difference error <= h |qdd jump| / 4 <= h ka / 2 across a step of acceleration
        np.testing.assert_allclose(fd_v, qd[mid], rtol=0, atol=h * np.max(ka) / 2 * 1.001 + 1e-15 * (1 + np.max(np.abs(q))) / h)
        # C1: velocity jumps are bounded by h * ka (no step)
        assert np.all(np.abs(np.diff(qd, axis=0)) <= h * ka * tol + 1e-12)
    if profile in C2:
        # C2: the acceleration has no step either, and is the derivative of the velocity
        tf = np.where(still, 1.0, traj.joint_durations)
        if profile == "double_s":
            bound = kj
        elif profile == "quintic":  # |jerk| <= 60 |D| / tf^3 (at s = 0 and 1)
            bound = 60 * np.abs(D) / tf**3
        else:  # continuous acceleration: |jerk| <= 6 lambda kv / tau^2 = 4 A / tau
            bound = 4 * traj.peak_acceleration / np.where(still, 1.0, traj.tau)
        assert np.all(np.abs(np.diff(qdd, axis=0)) <= h * bound * (1 + 1e-6) + 1e-12)
        # C2 and bounded jerk: second-order central differences, error <= h^2 jerk / 6
        np.testing.assert_allclose(fd_v, qd[mid], rtol=0, atol=h**2 * np.max(bound) / 6 * 1.001 + 1e-15 * (1 + np.max(np.abs(q))) / h)
        fd_a = (qd[2:] - qd[:-2]) / (2 * h)
        np.testing.assert_allclose(fd_a, qdd[mid], atol=h * np.max(bound) + 1e-9)
    if profile == "double_s":
        jerk = np.diff(qdd, axis=0) / h
        assert np.all(np.abs(jerk) <= kj * (1 + 1e-6) + 1e-9)


@pytest.mark.parametrize("profile", tr.PROFILES)
@pytest.mark.parametrize("synchronize", [True, False])
@settings(max_examples=12, deadline=None)
@given(problem=problems())
def test_profile_properties(profile, synchronize, problem):
    qs, qg, kv, ka, kj = problem
    traj = tr.plan(profile, qs, qg, kv, ka, kj, synchronize=synchronize)
    D = qg - qs
    T = traj.duration
    assert T > 0
    # boundary conditions, exact
    q0, qd0, qdd0 = traj.sample(0.0)
    q1, qd1, qdd1 = traj.sample(T)
    np.testing.assert_array_equal(q0, qs)
    np.testing.assert_array_equal(q1, qg)
    if profile != "linear":
        np.testing.assert_allclose(qd0, 0.0, atol=1e-12)
        np.testing.assert_allclose(qd1, 0.0, atol=1e-12)
    if profile in C2:
        np.testing.assert_allclose(qdd0, 0.0, atol=1e-9 * np.max(ka))
        np.testing.assert_allclose(qdd1, 0.0, atol=1e-9 * np.max(ka))
    # joints that do not move stay exactly in place
    t, q, qd, qdd = dense(traj)
    still = D == 0
    seen = traj.joint_durations > 20 * traj.duration / (t.size - 1)  # joints that last 20 samples
    assert np.all(q[:, still] == qs[still]) and np.all(qd[:, still] == 0)
    # limits respected to 1e-9 (closed-form peaks and dense samples)
    tol = 1 + 1e-9
    assert np.all(traj.peak_velocity <= kv * tol)
    assert np.all(np.max(np.abs(qd), axis=0) <= kv * tol)
    if profile != "linear":
        assert np.all(traj.peak_acceleration <= ka * tol)
        assert np.all(np.max(np.abs(qdd), axis=0) <= ka * tol)
        # the closed-form peaks are the sampled ones
        # (a sampled peak misses the true one by at most one sample step of the curve)
        for f, peak in ((qd, traj.peak_velocity), (qdd, traj.peak_acceleration)):
            step = np.max(np.abs(np.diff(f, axis=0)), axis=0)
            assert np.all((np.max(np.abs(f), axis=0) >= peak - step - 1e-12)[seen])
    # minimal duration: at least one limit reached by at least one joint (each joint when alone)
    ratios = [traj.peak_velocity / kv]
    if profile != "linear":
        ratios.append(traj.peak_acceleration / ka)
    if profile == "double_s":
        ratios.append(traj.peak_jerk / kj)
        assert np.all(traj.peak_jerk <= kj * tol)
    reached = np.max(np.vstack(ratios), axis=0)
    if synchronize:
        assert np.max(reached) >= 1 - 1e-9
    else:
        np.testing.assert_allclose(reached[~still], 1.0, rtol=1e-9)
    # integral of the velocity equals the displacement: trapezoid rule, whose error is at most
    # h^2/12 int|jerk| + h^2/8 per step of acceleration (4 steps at most, each <= 2 peak qdd)
    h = t[1] - t[0]
    integral = np.sum(0.5 * (qd[1:] + qd[:-1]), axis=0) * h
    if profile != "linear":
        jerk_integral = np.sum(np.abs(np.diff(qdd, axis=0)), axis=0)
        tol_int = h**2 * (jerk_integral / 12 + traj.peak_acceleration) + 1e-12
    else:
        tol_int = h * traj.peak_velocity + 1e-12  # a joint may stop between two samples
    assert np.all(np.abs(integral - D) <= tol_int)
    if profile != "linear":
        assert np.all((tol_int < 1e-3 * (1 + np.abs(D)))[seen])  # and that bound is tight enough to mean something
    _assert_continuity_class(profile, traj, q, qd, qdd, h, D, still, kj=kj, ka=ka, tol=tol)


@pytest.mark.parametrize("profile", C1)
def test_c1_profiles_have_acceleration_steps(profile):
    """The class claimed is sharp: cubic/bang-bang/trapezoid accelerations jump (not C2)."""
    traj = tr.plan(profile, [0.0], [1.0], 1.0, 2.0)
    _, _, qdd = traj.sample(np.array([-1e-9, 0.0, traj.duration * (1 - 1e-12), traj.duration]))
    # a step from rest at both ends
    assert qdd[0, 0] == 0 and abs(qdd[1, 0]) > 0.1 and abs(qdd[2, 0]) > 0.1 and qdd[3, 0] == 0


def test_linear_velocity_steps():
    traj = tr.plan("linear", [0.0, 0.0], [1.0, -2.0], [1.0, 1.0])
    assert traj.duration == pytest.approx(2.0)  # Table 8.1: |D|/kv
    _, qd, _ = traj.sample(np.array([-0.1, 0.0, 1.0]))
    np.testing.assert_allclose(qd[0], 0.0)
    np.testing.assert_allclose(qd[2], [0.5, -1.0])


# --- the book's closed forms ---------------------------------------------------------------

D_BOOK = np.array([0.8, -1.3, 0.2])
KV = np.array([1.0, 2.0, 0.3])
KA = np.array([3.0, 4.0, 1.0])


def test_cubic_and_quintic_peaks_8_8_to_8_13():
    tf = 2.0
    for profile, vpk, apk, t_v, t_a in (
        ("cubic", 1.5, 6.0, 1.0, 0.0),  # [8.8], [8.9]: at tf/2 and at t=0
        ("quintic", 15 / 8, 10 / np.sqrt(3), 1.0, (0.5 - np.sqrt(3) / 6) * tf),  # [8.12], [8.13]
        ("bang_bang", 2.0, 4.0, 1.0, 0.3),  # [8.16], [8.17]
    ):
        traj = tr.plan(profile, np.zeros(3), D_BOOK, duration=tf)
        _, qd, _ = traj.sample(t_v)
        _, _, qdd = traj.sample(t_a)
        np.testing.assert_allclose(np.abs(qd), vpk * np.abs(D_BOOK) / tf, rtol=1e-12)
        np.testing.assert_allclose(np.abs(qdd), apk * np.abs(D_BOOK) / tf**2, rtol=1e-12)
        _, _, qd_all, qdd_all = dense(traj, 200001)
        np.testing.assert_allclose(np.max(np.abs(qd_all), 0), vpk * np.abs(D_BOOK) / tf, rtol=1e-9)
        np.testing.assert_allclose(np.max(np.abs(qdd_all), 0), apk * np.abs(D_BOOK) / tf**2, rtol=1e-8)


def test_polynomial_positions_8_5_to_8_15():
    tf = 1.7
    qi = np.array([0.1, 0.2, -0.3])
    t = np.linspace(0, tf, 41)
    s = t / tf
    expected = {
        "linear": s,  # [8.4]
        "cubic": 3 * s**2 - 2 * s**3,  # [8.7]
        "quintic": 10 * s**3 - 15 * s**4 + 6 * s**5,  # [8.11]
        "bang_bang": np.where(s <= 0.5, 2 * s**2, -1 + 4 * s - 2 * s**2),  # [8.15]
    }
    for profile, r in expected.items():
        q = tr.plan(profile, qi, qi + D_BOOK, duration=tf).position(t)
        np.testing.assert_allclose(q, qi + r[:, None] * D_BOOK, atol=1e-14)
    # [8.6]: cubic coefficients a2 = 3 D / tf^2, a3 = -2 D / tf^3
    fit = np.polyfit(t, tr.plan("cubic", qi, qi + D_BOOK, duration=tf).position(t)[:, 0], 3)
    np.testing.assert_allclose(fit[::-1], [qi[0], 0, 3 * D_BOOK[0] / tf**2, -2 * D_BOOK[0] / tf**3], atol=1e-12)


def test_table_8_1_minimum_times():
    A = np.abs(D_BOOK)
    table = {
        "linear": A / KV,
        "cubic": np.maximum(3 * A / (2 * KV), np.sqrt(6 * A / KA)),
        "quintic": np.maximum(15 * A / (8 * KV), np.sqrt(10 * A / (np.sqrt(3) * KA))),
        "bang_bang": np.maximum(2 * A / KV, 2 * np.sqrt(A / KA)),
        # [8.22], with [8.35] when kv^2 > |D| ka
        "trapezoidal": np.where(KV**2 < A * KA, KV / KA + A / KV, 2 * np.sqrt(A / KA)),
    }
    for profile, expected in table.items():
        np.testing.assert_allclose(tr.minimum_time(profile, D_BOOK, KV, KA), expected, rtol=1e-14)
        # [8.14]: the synchronised polynomial law lasts the largest of them
        if profile != "trapezoidal":
            assert tr.plan(profile, np.zeros(3), D_BOOK, KV, KA).duration == pytest.approx(np.max(expected), rel=1e-14)


def test_trapezoid_single_joint_8_19_to_8_22():
    """One joint alone: Khalil [8.19] with tau = kv / ka [8.20] and tf = tau + |D| / kv [8.22]."""
    qi, D, kv, ka = 0.3, -2.0, 1.0, 2.5
    traj = tr.plan("trapezoidal", [qi], [qi + D], kv, ka)
    tau = kv / ka
    tf = tau + abs(D) / kv
    assert traj.duration == pytest.approx(tf, rel=1e-14)
    sgn = np.sign(D)
    t = np.linspace(0, tf, 101)
    expected = np.where(
        t <= tau,
        qi + 0.5 * t**2 * ka * sgn,
        np.where(t <= tf - tau, qi + (t - tau / 2) * kv * sgn, qi + D - 0.5 * (tf - t) ** 2 * ka * sgn),
    )
    np.testing.assert_allclose(traj.position(t)[:, 0], expected, atol=1e-13)
    # [8.21]: area of the velocity trapezoid = kv tf - kv^2 / ka = |D|
    assert kv * tf - kv**2 / ka == pytest.approx(abs(D))
    # [8.18]/[8.35]: short move, no cruise: the peak velocity is sqrt(|D| ka)
    short = tr.plan("trapezoidal", [0.0], [0.1], kv, ka)
    assert short.peak_velocity[0] == pytest.approx(np.sqrt(0.1 * ka), rel=1e-14)
    assert short.duration == pytest.approx(2 * np.sqrt(0.1 / ka), rel=1e-14)


def _khalil_sync(D, kv, ka, cont=False):
    """[8.32]-[8.35] (or [8.41]-[8.47]) with joint 1 as reference, written as in the book."""
    A = np.abs(D)
    # NOTE [8.35]/[8.47]: a joint that cannot reach kv gets its maximum achievable velocity
    kv = np.minimum(kv, np.sqrt((2 / 3 if cont else 1.0) * A * ka))
    lam1 = min(1.0, *(kv[j] * A[0] / (kv[0] * A[j]) for j in range(1, len(D))))
    ups1 = min(1.0, *(ka[j] * A[0] / (ka[0] * A[j]) for j in range(1, len(D))))
    tau = (1.5 if cont else 1.0) * lam1 * kv[0] / (ups1 * ka[0])  # [8.33] or [8.41]
    tf = tau + A[0] / (lam1 * kv[0])  # [8.25] or [8.45]
    return tau, tf, lam1, ups1


@pytest.mark.parametrize("cont", [False, True])
@settings(max_examples=25, deadline=None)
@given(problem=problems(min_n=2))
def test_synchronized_trapezoids_equal_the_books_minimum(cont, problem):
    qs, qg, kv, ka, _ = problem
    D = qg - qs
    if np.any(D == 0):
        D = np.where(D == 0, 0.37, D)
        qg = qs + D
    tau_b, tf_b, lam1, ups1 = _khalil_sync(D, kv, ka, cont)
    profile = "continuous_acceleration" if cont else "trapezoidal"
    traj = tr.plan(profile, qs, qg, kv, ka)
    sync = (tr.synchronized_continuous_acceleration if cont else tr.synchronized_trapezoid)(D, kv, ka)
    assert traj.duration == pytest.approx(tf_b, rel=1e-12)
    assert sync.duration == pytest.approx(tf_b, rel=1e-12) and sync.tau == pytest.approx(tau_b, rel=1e-12)
    assert np.max(traj.tau) == pytest.approx(tau_b, rel=1e-12)
    # lambda_j, upsilon_j <= 1 and the reference joint's match [8.32]
    assert np.all(sync.velocity_ratio <= 1 + 1e-12) and np.all(sync.acceleration_ratio <= 1 + 1e-12)
    np.testing.assert_allclose(traj.peak_velocity / kv, sync.velocity_ratio, rtol=1e-12)
    # every joint starts and ends together: velocity zero at 0 and tf only
    t = np.linspace(0, traj.duration, 2001)
    _, qd, _ = traj.sample(t)
    assert np.all(np.abs(qd[1:-1]) > 0)
    np.testing.assert_array_equal(traj.joint_durations, traj.duration)
    # Khalil [8.19] per joint with the synchronised lambda_j kv_j and upsilon_j ka_j
    if not cont:
        tau, tf = sync.tau, sync.duration
        t = np.linspace(0, tf, 301)
        q = traj.position(t)
        sg = np.sign(D)
        vj, aj = sync.velocity_ratio * kv * sg, sync.acceleration_ratio * ka * sg
        tt = t[:, None]
        expected = np.where(
            tt <= tau,
            qs + 0.5 * tt**2 * aj,
            np.where(tt <= tf - tau, qs + (tt - tau / 2) * vj, qg - 0.5 * (tf - tt) ** 2 * aj),
        )
        np.testing.assert_allclose(q, expected, atol=1e-9 * (1 + np.max(np.abs(qs))))
    # homothetic velocity profiles [8.23]
    np.testing.assert_allclose(qd * D[0], qd[:, :1] * D, atol=1e-12 * np.max(np.abs(D)) ** 2 * np.max(kv))
    # not faster than any joint alone, [8.25]: tf >= max tf_j
    assert traj.duration >= np.max(tr.minimum_time(profile, D, kv, ka)) * (1 - 1e-12)


def test_continuous_acceleration_phase_8_37_to_8_44():
    D, kv, ka = np.array([1.2]), np.array([1.0]), np.array([3.0])
    traj = tr.plan("continuous_acceleration", [0.0], D, kv, ka)
    tau = 1.5 * kv[0] / ka[0]  # [8.41] with lambda = upsilon = 1
    assert traj.tau[0] == pytest.approx(tau)
    assert traj.duration == pytest.approx(tau + D[0] / kv[0])  # [8.45]
    t = np.linspace(0, tau, 31)
    q, qd, qdd = traj.sample(t)
    lk = kv[0]
    # [8.37] (with the factor (t/2 - tau) of the printed book), [8.38], [8.39]
    np.testing.assert_allclose(q[:, 0], -(1 / tau**3) * lk * (t / 2 - tau) * t**3, atol=1e-14)
    np.testing.assert_allclose(qd[:, 0], -(1 / tau**3) * lk * (2 * t - 3 * tau) * t**2, atol=1e-13)
    np.testing.assert_allclose(qdd[:, 0], -(6 / tau**3) * lk * (t - tau) * t, atol=1e-12)
    # [8.40] peak acceleration 3 lambda kv / (2 tau) at tau / 2, [8.44] distance 3 kv^2 / (4 ka)
    assert traj.sample(tau / 2)[2][0] == pytest.approx(1.5 * lk / tau)
    assert traj.sample(tau)[0][0] == pytest.approx(0.75 * kv[0] ** 2 / ka[0])
    # deceleration [8.43] (numbered [13.43] in the source), with h the cruise time:
    # qd = [(2t - 5tau - 2h)(t - tau - h)^2 / tau^3 + 1] lambda kv, qdd = 6/tau^3 (t - 2tau - h)(t - tau - h) lambda kv
    h = traj.duration - 2 * tau
    t = np.linspace(tau + h, traj.duration, 31)
    _, qd, qdd = traj.sample(t)
    np.testing.assert_allclose(qd[:, 0], ((2 * t - 5 * tau - 2 * h) * (t - tau - h) ** 2 / tau**3 + 1) * lk, atol=1e-12)
    np.testing.assert_allclose(qdd[:-1, 0], (6 / tau**3 * (t - 2 * tau - h) * (t - tau - h) * lk)[:-1], atol=1e-12)
    # [8.46]/[8.47]: below 3 kv^2 / (2 ka) of travel the velocity is sqrt(2/3 |D| ka)
    short = tr.plan("continuous_acceleration", [0.0], [0.2], kv, ka)
    assert short.peak_velocity[0] == pytest.approx(np.sqrt(2 / 3 * 0.2 * ka[0]))
    assert short.peak_acceleration[0] == pytest.approx(ka[0])


def test_double_s_matches_an_independent_integration():
    """Integrate the piecewise-constant jerk numerically and compare with the closed form."""
    traj = tr.plan("double_s", [0.0], [2.0], 1.0, 2.0, 5.0)
    Tj, Ta, Tv = traj.timing.Tj[0], traj.timing.Ta[0], traj.timing.Tv[0]
    T = traj.duration
    N = 400000
    t = np.linspace(0, T, N + 1)
    h = T / N
    b = np.cumsum([0, Tj, Ta - 2 * Tj, Tj, Tv, Tj, Ta - 2 * Tj, Tj])
    jerk_levels = np.array([1, 0, -1, 0, -1, 0, 1]) * 5.0
    jm = jerk_levels[np.clip(np.searchsorted(b, t[:-1] + h / 2, side="right") - 1, 0, 6)]
    a = np.concatenate([[0], np.cumsum(jm) * h])
    v = np.concatenate([[0], np.cumsum(0.5 * (a[1:] + a[:-1])) * h])
    p = np.concatenate([[0], np.cumsum(0.5 * (v[1:] + v[:-1])) * h])
    q, qd, qdd = traj.sample(t[::1000])
    # the phase switches fall between grid points: errors of one step of jerk
    np.testing.assert_allclose(qdd[:, 0], a[::1000], atol=2 * 5.0 * h)
    np.testing.assert_allclose(qd[:, 0], v[::1000], atol=1e-5)
    np.testing.assert_allclose(q[:, 0], p[::1000], atol=1e-5)
    assert p[-1] == pytest.approx(2.0, abs=1e-5)


def test_given_duration_stretches_and_checks_the_minimum():
    qs, qg = np.zeros(2), np.array([1.0, -0.5])
    for profile in tr.PROFILES:
        fast = tr.plan(profile, qs, qg, KV[:2], KA[:2], 10.0)
        slow = tr.plan(profile, qs, qg, KV[:2], KA[:2], 10.0, duration=fast.duration * 1.5)
        assert slow.duration == pytest.approx(fast.duration * 1.5, rel=1e-12)
        np.testing.assert_allclose(slow.peak_velocity, fast.peak_velocity / 1.5, rtol=1e-12)
        np.testing.assert_array_equal(slow.position(slow.duration), qg)
        with pytest.raises(InputError, match="shorter than the minimum"):
            tr.plan(profile, qs, qg, KV[:2], KA[:2], 10.0, duration=fast.duration * 0.9)
        free = tr.plan(profile, qs, qg, duration=2.0)  # a duration and no limits
        assert free.duration == pytest.approx(2.0)
        np.testing.assert_array_equal(free.position(2.0), qg)


# --- degenerate input --------------------------------------------------------------------------

@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("profile", tr.PROFILES)
def test_zero_displacement_is_a_zero_length_trajectory(profile):
    q = np.array([0.3, -0.2])
    with np.errstate(all="raise"):
        traj = tr.plan(profile, q, q, 1.0, 1.0, 1.0)
        assert traj.duration == 0.0
        p, v, a = traj.sample(np.array([0.0, 0.5]))
        t, qt, _, _ = tr.sample_table(traj, 100.0)
    np.testing.assert_array_equal(p, [q, q])
    np.testing.assert_array_equal(v, 0.0)
    np.testing.assert_array_equal(a, 0.0)
    assert t.tolist() == [0.0] and np.array_equal(qt[0], q)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("profile", tr.PROFILES)
def test_bad_input_raises_clear_errors(profile):
    qs, qg = np.zeros(3), np.ones(3)
    for bad in (0.0, -1.0, np.nan, [1.0, 0.0, 1.0]):
        with pytest.raises(InputError, match="limit"):
            tr.plan(profile, qs, qg, bad, 1.0, 1.0)
        with pytest.raises(InputError, match="limit"):
            tr.plan(profile, qs, qg, 1.0, bad, 1.0)
    with pytest.raises(InputError, match="NaN"):
        tr.plan(profile, [0.0, np.nan, 0.0], qg, 1.0, 1.0, 1.0)
    with pytest.raises(InputError, match=r"expected shape \(\.\.\., 3\)"):
        tr.plan(profile, qs, [1.0, 1.0], 1.0, 1.0, 1.0)
    with pytest.raises(InputError, match="expected a scalar or shape"):
        tr.plan(profile, qs, qg, [1.0, 1.0], 1.0, 1.0)
    with pytest.raises(InputError, match="give a duration"):
        tr.plan(profile, qs, qg)
    for bad_t in (-1.0, np.nan, np.inf, 0.0):
        with pytest.raises(InputError, match="duration"):
            tr.plan(profile, qs, qg, duration=bad_t)


def test_unknown_profile_lists_the_valid_ones():
    with pytest.raises(UnknownNameError) as err:
        tr.plan("trapezoid", [0.0], [1.0], 1.0, 1.0)
    assert "Valid profiles: ['linear', 'cubic', 'quintic', 'bang_bang', 'trapezoidal'," in str(err.value)


def test_sampling_outside_and_table():
    traj = tr.plan("quintic", [0.0, 1.0], [1.0, 0.0], 1.0, 2.0)
    q, qd, qdd = traj.sample(np.array([[-1.0, 0.0], [traj.duration, 99.0]]))
    assert q.shape == (2, 2, 2)
    np.testing.assert_array_equal(q[0, 0], [0.0, 1.0])
    np.testing.assert_array_equal(q[1, 1], [1.0, 0.0])
    assert np.all(qd[0, 0] == 0) and np.all(qdd[1, 1] == 0)
    t, qt, qdt, qddt = tr.sample_table(traj, 50.0)
    assert t[0] == 0.0 and t[-1] == traj.duration
    np.testing.assert_allclose(np.diff(t)[:-1], 0.02)
    assert np.diff(t)[-1] <= 0.02 * 1.5 + 1e-12
    np.testing.assert_array_equal(qt[-1], [1.0, 0.0])
    assert qt.shape == qdt.shape == qddt.shape == (t.size, 2)
    with pytest.raises(InputError, match="rate"):
        tr.sample_table(traj, 0.0)
    with pytest.raises(InputError, match="NaN"):
        traj.sample(np.nan)


def test_time_scaling_and_tabulated_trajectory():
    traj = tr.plan("quintic", [0.0, 1.0], [1.0, 0.0], 1.0, 2.0)
    slow = traj.time_scaled(2.0)
    assert slow.duration == pytest.approx(2 * traj.duration)
    t = np.linspace(0, traj.duration, 11)
    a, b = traj.sample(t), slow.sample(2 * t)
    np.testing.assert_allclose(b[0], a[0])
    np.testing.assert_allclose(b[1], a[1] / 2)
    np.testing.assert_allclose(b[2], a[2] / 4)
    assert traj.with_duration(5.0).duration == pytest.approx(5.0)
    # the quintic Hermite table reproduces its rows and interpolates a quintic exactly
    tab = tr.TabulatedTrajectory(*tr.sample_table(traj, 20.0))
    tt = np.linspace(0, traj.duration, 997)
    for x, y in zip(tab.sample(tt), traj.sample(tt)):
        np.testing.assert_allclose(x, y, atol=1e-12)
    with pytest.raises(InputError, match="increase"):
        tr.TabulatedTrajectory([0.0, 0.0], np.zeros((2, 1)), np.zeros((2, 1)), np.zeros((2, 1)))


@pytest.mark.parametrize("profile, start, goal", [
    ("quintic", [5.8612160935970664e16, 0.27], [0.27, 0.27]),
    ("bang_bang", [1.77e-123, 1.77e-123], [1.77e-123, -2.56e238]),
    ("cubic", [0.0], [1.0]),
])
def test_a_duration_too_short_for_finite_rates_is_refused(profile, start, goal):
    """Found by bench/fuzz.py: a denormal duration gave infinite velocities, returned as a trajectory."""
    with pytest.raises(InputError, match="too short for this motion"):
        tr.plan(profile, start, goal, duration=5e-324)


@pytest.mark.parametrize("profile", tr.PROFILES)
@settings(max_examples=8, deadline=None)
@given(problem=problems(min_n=2))
def test_a_synchronised_law_evaluated_once_equals_each_joints_own(profile, problem):
    """Joints with one timing share r(t), evaluated once for all of them; the samples equal, bit for
    bit, those of the same trajectory evaluated joint by joint."""
    qs, qg, kv, ka, kj = problem
    traj = tr.plan(profile, qs, qg, kv, ka, kj, synchronize=True)
    t = np.linspace(-0.1, 1.1 * traj.duration + 0.1, 501)
    widths = []
    unit = traj._unit
    traj._unit = lambda tt, idx: (widths.append(tt.shape[1]), unit(tt, idx))[1]  # type: ignore[method-assign]
    shared = traj.sample(t)
    moving = int(np.count_nonzero(traj.joint_durations > 0))
    if moving:
        assert widths == [1]  # one column stood for every moving joint
    traj._law_parameters = lambda: (np.arange(traj.n, dtype=float),)  # type: ignore[method-assign]
    own = traj.sample(t)
    if moving > 1:
        assert widths[-1] == moving
    for a, b in zip(shared, own):
        np.testing.assert_array_equal(a, b)
