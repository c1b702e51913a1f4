"""The control loop's delay analysis (the repository's bench/loop_latency.py) on synthetic logs
whose ages and delays are known exactly, and the controller node's command log it reads."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from repo_files import repository_path

from robot_dynamics.errors import InputError
from robot_dynamics.ros.command_log import CommandRecorder

BENCH = repository_path("bench")
if BENCH is None:
    pytest.skip("the bench folder of the repository is not here (the package without its repository)",
                allow_module_level=True)
sys.path.insert(0, str(BENCH))
from loop_latency import (  # noqa: E402
    CommandLog,
    TimingLog,
    analyze,
    format_table,
    read_command_log,
    read_timing_log,
)

JOINTS = ("j1", "j2", "j3")
T = 1_000_000  # 1 kHz [ns]
STEADY0 = 5_000_000_000_000        # steady clock at the first slot [ns]
SYS0 = 1_700_000_000_123_456_789   # ROS (system) clock at the first slot [ns]: beyond 2^53
READ = 7_000                       # read() takes 7 us
STAMP_AFTER_READ = 11_000          # joint_state_broadcaster's now() 11 us after read's


def _cycles(n, rng, late=None, work=None):
    """Per cycle: ROS time at read, steady read and write times; lateness and work in ns."""
    late = rng.integers(0, 30_000, n) if late is None else late
    work = rng.integers(20_000, 60_000, n) if work is None else work
    slot = np.arange(n, dtype=np.int64) * T
    ros = SYS0 + slot + late
    read = STEADY0 + slot + late + READ
    write = read + work
    return ros, read, write, late, work


def _node_run(n=400, seed=1, first=5):
    """A node-path run: cycle k writes the command computed from read s[k] (s known), commands
    start at cycle ``first``; returns (timing, commands, s, rows used)."""
    rng = np.random.default_rng(seed)
    ros, read, write, _, _ = _cycles(n, rng)
    # sources: mostly the previous cycle, sometimes older, sometimes a repeat
    s = np.full(n, -1, dtype=np.int64)
    for k in range(first, n):
        r = rng.random()
        if r < 0.7 or k == first:
            s[k] = k - 1
        elif r < 0.85:
            s[k] = max(s[k - 1], k - 1 - int(rng.integers(1, 4)))  # an older state
        else:
            s[k] = s[k - 1]  # no new command: the previous one again
    # one command per read cycle (the node publishes every cycle), published 0.4 periods after
    # the read: before the next cycle's write, after this cycle's
    effort_of = rng.normal(0, 10, (n, len(JOINTS)))
    stamp = ros + STAMP_AFTER_READ
    receive = read + 150_000
    publish = read + 400_000
    cmd = CommandLog(stamp[: n - 1].copy(), receive[: n - 1].copy(), publish[: n - 1].copy(),
                     effort_of[: n - 1].copy(), JOINTS)
    written = np.full((n, len(JOINTS)), np.nan)
    written[s >= 0] = effort_of[s[s >= 0]]
    timing = TimingLog(np.arange(n, dtype=np.int64) + 100, read, write, ros, written, JOINTS)
    return timing, cmd, s


def test_node_path_recovers_every_age_delay_and_repeat():
    timing, cmd, s = _node_run()
    out = analyze(timing, 1000.0, "node", cmd, warmup=0.0)
    k = np.arange(timing.read_ns.size)[5:]
    src = s[5:]
    age = k - src
    delay_us = (timing.write_ns[k] - timing.read_ns[src]) * 1e-3
    assert out["cycles"] == k.size
    assert out["ages"] == {str(a): int(c) for a, c in zip(*np.unique(age, return_counts=True))}
    assert min(int(a) for a in out["ages"]) == 1
    assert out["untraced"] == 0 and out["ambiguous"] == 0
    assert out["stale"] == int(np.count_nonzero(age > 1))
    assert out["stale_share"] == pytest.approx(np.count_nonzero(age > 1) / k.size, abs=0)
    assert out["repeats"] == int(np.count_nonzero(src[1:] == src[:-1]))
    assert out["repeats"] > 10 and out["stale"] > out["repeats"]
    assert out["delay_us"]["max"] == pytest.approx(delay_us.max(), abs=1e-9)
    assert out["delay_us"]["p50"] == pytest.approx(np.percentile(delay_us, 50), abs=1e-9)
    assert out["delay_us"]["p99"] == pytest.approx(np.percentile(delay_us, 99), abs=1e-9)
    w = int(np.argmax(delay_us))
    assert out["worst"]["cycle"] == 100 + int(k[w]) and out["worst"]["age"] == int(age[w])
    assert out["worst"]["delay_us"] == pytest.approx(delay_us[w], abs=1e-9)
    # the hops: read -> the node has it (150 us), in the node (250 us), out -> written
    assert out["state_to_node_us"]["max"] == pytest.approx(150.0) == out["state_to_node_us"]["p50"]
    assert out["node_us"]["p50"] == pytest.approx(250.0)
    hop = (timing.write_ns[k] - (timing.read_ns[src] + 400_000)) * 1e-3
    assert out["command_to_write_us"]["max"] == pytest.approx(hop.max(), abs=1e-9)


def test_equal_commands_from_two_states_take_the_latest_published_before_the_write():
    timing, cmd, s = _node_run(n=60, seed=3)
    eff = cmd.effort.copy()
    # the state of cycle 30 gives the same efforts as that of cycle 20 (an arm at rest); cycle 31
    # wrote 30's command, so it must be traced to 30, and cycle 21 (if it wrote 20's) to 20
    eff[30] = eff[20]
    cmd = CommandLog(cmd.stamp_ns, cmd.receive_ns, cmd.publish_ns, eff, JOINTS)
    written = timing.effort.copy()
    written[31] = eff[30]
    written[21] = eff[20]
    timing = TimingLog(timing.cycle, timing.read_ns, timing.write_ns, timing.ros_ns, written, JOINTS)
    s = s.copy()
    s[31], s[21] = 30, 20
    out = analyze(timing, 1000.0, "node", cmd, warmup=0.0)
    k = np.arange(5, 60)
    age = k - s[5:]
    assert out["ages"] == {str(a): int(c) for a, c in zip(*np.unique(age, return_counts=True))}
    assert out["ambiguous"] == 1  # cycle 31: 30's efforts were also 20's


def test_untraced_cycles_are_stale():
    timing, cmd, s = _node_run(n=200, seed=4)
    written = timing.effort.copy()
    written[50] = [1.0, 2.0, 3.0]  # a command the node never published
    written[51, 0] = np.nextafter(written[51, 0], np.inf)  # one bit off: not the same command
    timing = TimingLog(timing.cycle, timing.read_ns, timing.write_ns, timing.ros_ns, written, JOINTS)
    out = analyze(timing, 1000.0, "node", cmd, warmup=0.0)
    age = np.arange(5, 200) - s[5:]
    age[[45, 46]] = 0  # (placeholders for the two untraced cycles, indices 50 and 51 - 5)
    assert out["untraced"] == 2
    assert out["stale"] == int(np.count_nonzero(age > 1)) + 2
    assert sum(out["ages"].values()) == out["cycles"] - 2


def test_a_stamp_maps_to_the_read_before_it_even_with_a_late_cycle():
    timing, cmd, s = _node_run(n=100, seed=5)
    # the broadcaster's stamp is any time after the read of its cycle and before the next read
    stamp = cmd.stamp_ns.copy()
    stamp[10] = timing.ros_ns[10]            # equal to the read's ROS time: cycle 10
    stamp[11] = timing.ros_ns[12] - 1        # just before cycle 12's read: cycle 11
    cmd = CommandLog(stamp, cmd.receive_ns, cmd.publish_ns, cmd.effort, JOINTS)
    out = analyze(timing, 1000.0, "node", cmd, warmup=0.0)
    age = np.arange(5, 100) - s[5:]
    assert out["ages"] == {str(a): int(c) for a, c in zip(*np.unique(age, return_counts=True))}


def test_in_loop_age_zero_delay_is_the_cycles_work_and_overruns_are_found():
    rng = np.random.default_rng(7)
    n = 300
    late = rng.integers(0, 20_000, n)
    work = rng.integers(10_000, 40_000, n)
    late[100] = 900_000   # woke 0.9 period late and worked 0.2 periods: past the next slot
    work[100] = 200_000
    late[200] = 500_000   # late but done in time
    ros, read, write, _, _ = _cycles(n, rng, late, work)
    effort = rng.normal(0, 5, (n, 3))
    effort[:3] = np.nan  # no controller yet
    timing = TimingLog(np.arange(n, dtype=np.int64), read, write, ros, effort, JOINTS)
    out = analyze(timing, 1000.0, "in_loop", warmup=0.0)
    assert out["cycles"] == n - 3 and out["ages"] == {"0": n - 3} and out["stale"] == 0
    assert out["delay_us"]["max"] == pytest.approx(work[3:].max() * 1e-3)
    assert out["delay_us"]["p50"] == pytest.approx(np.percentile(work[3:] * 1e-3, 50))
    assert out["overruns"] == 1
    lat = (late[3:] - late[3:].min()) * 1e-3
    assert out["lateness_us"]["max"] == pytest.approx(lat.max())
    period = np.diff(read[3:]) * 1e-3
    assert out["period_us"]["max"] == pytest.approx(period.max())
    assert out["period_us"]["min"] == pytest.approx(period.min())
    assert out["worst"]["cycle"] == 100 and out["worst"]["age"] == 0
    assert "node_us" not in out
    assert "in_loop" in format_table([out])


def test_the_window_starts_after_the_first_command_and_warmup():
    rng = np.random.default_rng(8)
    n = 500
    ros, read, write, _, _ = _cycles(n, rng)
    effort = rng.normal(0, 5, (n, 3))
    effort[:40] = np.nan
    write = write.copy()
    write[-1] = -1  # the last cycle read but did not write before the shutdown
    timing = TimingLog(np.arange(n, dtype=np.int64), read, write, ros, effort, JOINTS)
    out = analyze(timing, 1000.0, "in_loop", warmup=0.1, duration=0.2)
    first = read[40] + 100_000_000
    expected = np.flatnonzero((read >= first) & (read < first + 200_000_000))
    assert out["cycles"] == expected.size
    out = analyze(timing, 1000.0, "in_loop", warmup=0.1)
    assert out["cycles"] == np.count_nonzero(read >= first) - 1


def test_recorder_keeps_the_last_commands_and_its_file_reads_back_bit_for_bit(tmp_path):
    rng = np.random.default_rng(9)
    rec = CommandRecorder(5, JOINTS)
    sent = []
    for i in range(8):
        rec.on_state(SYS0 + i * T, STEADY0 + i * T)
        e = list(rng.normal(0, 1, 3) * 10.0 ** rng.integers(-300, 300, 3))
        e[i % 3] = -0.0 if i == 2 else e[i % 3]
        assert rec.on_command(STEADY0 + i * T + 5, e)
        sent.append((SYS0 + i * T, STEADY0 + i * T, STEADY0 + i * T + 5, e))
    assert not rec.on_command(0, [1.0])  # wrong length: not kept
    path = tmp_path / "commands.csv"
    assert rec.write_csv(str(path)) == 5
    log = read_command_log(str(path))
    assert log.joints == JOINTS
    assert log.stamp_ns.tolist() == [x[0] for x in sent[3:]]
    assert log.receive_ns.tolist() == [x[1] for x in sent[3:]]
    assert log.publish_ns.tolist() == [x[2] for x in sent[3:]]
    assert log.effort.tobytes() == np.array([x[3] for x in sent[3:]]).tobytes()
    assert [p.name for p in tmp_path.iterdir()] == ["commands.csv"]  # no temporary file left


def test_timing_log_in_the_hardware_format_reads_back_exactly(tmp_path):
    # the format SimulatedSystem writes: %lld times, %.17g efforts, -1 for a cycle without write
    rows = [(7, STEADY0, STEADY0 + 30_000, SYS0, [np.nan, np.nan, np.nan]),
            (8, STEADY0 + T, -1, SYS0 + T, [0.1, -2.5e-300, 1e300]),
            (9, STEADY0 + 2 * T, STEADY0 + 2 * T + 25_000, SYS0 + 2 * T + 1, [1 / 3, -0.0, 123456.789])]
    text = "cycle,read_steady_ns,write_steady_ns,ros_time_ns,effort_j1,effort_j2,effort_j3\n"
    text += "".join(f"{c},{r},{w},{t}," + ",".join("%.17g" % v for v in e) + "\n" for c, r, w, t, e in rows)
    path = tmp_path / "timing.csv"
    path.write_text(text)
    log = read_timing_log(str(path))
    assert log.joints == JOINTS
    assert log.cycle.tolist() == [7, 8, 9]
    assert log.ros_ns.tolist() == [SYS0, SYS0 + T, SYS0 + 2 * T + 1]  # int64, not rounded to a double
    assert log.write_ns.tolist() == [STEADY0 + 30_000, -1, STEADY0 + 2 * T + 25_000]
    assert np.isnan(log.effort[0]).all()
    assert log.effort[1:].tobytes() == np.array([r[4] for r in rows[1:]]).tobytes()


def test_bad_input_is_refused_with_the_valid_choices(tmp_path):
    timing, cmd, _ = _node_run(n=50)
    with pytest.raises(InputError, match=r"\['node', 'in_loop'\]"):
        analyze(timing, 1000.0, "topic", cmd)
    with pytest.raises(InputError, match="command log"):
        analyze(timing, 1000.0, "node")
    other = CommandLog(cmd.stamp_ns, cmd.receive_ns, cmd.publish_ns, cmd.effort, ("a", "b", "c"))
    with pytest.raises(InputError, match="joints"):
        analyze(timing, 1000.0, "node", other)
    with pytest.raises(InputError, match="fewer than 2 cycles"):
        analyze(timing, 1000.0, "node", cmd, warmup=10.0)
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="expected the columns"):
        read_timing_log(str(bad))
    with pytest.raises(InputError, match="timing log"):
        read_timing_log(str(tmp_path / "missing.csv"))
    with pytest.raises(InputError, match="capacity"):
        CommandRecorder(0, JOINTS)


def test_controller_node_logs_each_command_with_the_stamp_of_its_joint_state(tmp_path):
    rclpy = pytest.importorskip("rclpy")
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState

    from robot_dynamics.ros.controller_node import ControllerNode

    path = tmp_path / "commands.csv"
    rclpy.init()
    try:
        node = ControllerNode(parameter_overrides=[Parameter("robot", value="planar2"),
                                                   Parameter("command_log", value=str(path))])
        sent = []
        node.command_pub = type("Pub", (), {"publish": lambda self, msg: sent.append(list(msg.data))})()
        for i, q in enumerate(([0.1, -0.2], [0.15, -0.25])):
            msg = JointState()
            msg.header.stamp.sec, msg.header.stamp.nanosec = 1_700_000_000 + i, 123_456_789
            msg.name, msg.position, msg.velocity = ["elbow", "shoulder"], q[::-1], [0.0, 0.0]
            node._on_joint_state(msg)
            node._tick()
            node._tick()  # no new state: the same stamp again
        node.destroy_node()
    finally:
        rclpy.try_shutdown()
    log = read_command_log(str(path))
    assert log.joints == ("shoulder", "elbow")
    assert log.stamp_ns.tolist() == [1_700_000_000_123_456_789] * 2 + [1_700_000_001_123_456_789] * 2
    assert log.effort.tolist() == sent and len(sent) == 4
    assert np.all(log.receive_ns <= log.publish_ns) and np.all(np.diff(log.publish_ns) > 0)
