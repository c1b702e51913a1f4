"""The control loop's delay, from a hardware read to the effort written for it (no ROS here).

Two logs, both on the machine's steady clock (CLOCK_MONOTONIC: C++'s ``std::chrono::steady_clock``
and Python's ``time.monotonic_ns`` read the same clock, so times of two processes compare):

- the hardware's timing log (robot_dynamics_control/SimulatedSystem, ``timing_log`` hardware
  parameter), one row per controller_manager cycle: ``cycle, read_steady_ns, write_steady_ns,
  ros_time_ns, effort_<joint>...``: when read() exposed the new state, when write() took the
  command, the ROS time given to read() and the effort command written (NaN: no command);
- the controller node's command log (``command_log`` parameter, :class:`CommandRecorder`), one
  row per command it published: ``stamp_ns, receive_steady_ns, publish_steady_ns,
  effort_<joint>...``: the header stamp of the /joint_states message the command was computed
  from, when that message reached the node, when the command was published, the efforts.

How a written command is traced to the read it was computed from (:func:`analyze`):

1. the effort written at cycle k is found in the command log by exact equality of the vector
   (a double passes unchanged through DDS and JointGroupEffortController); among equal rows the
   latest one published before the write;
2. its /joint_states stamp is joint_state_broadcaster's update time, a ``now()`` taken after the
   read of the same cycle and before the next one's: the stamp falls in [ros_time(j),
   ros_time(j+1)) of exactly one read cycle j;
3. age = k - j cycles, delay = write_steady(k) - read_steady(j).

For a controller inside controller_manager's update (``in_loop``) the command written at cycle k
is computed from the read of cycle k: age 0, delay = write_steady(k) - read_steady(k).

A command computed from the freshest state the path can give is not stale: through topics that is
the previous cycle's read (age 1: joint_state_broadcaster publishes in cycle j's update, after the
effort controller of cycle j has already run), in the loop the same cycle's (age 0). Stale: an
older read, a command repeated because no new one came (it ages a cycle each time), or a cycle
with no command found.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from robot_dynamics.errors import InputError
from robot_dynamics.ros.command_log import COMMAND_HEADER, CommandRecorder

__all__ = [
    "PATHS",
    "TimingLog",
    "CommandLog",
    "CommandRecorder",
    "read_timing_log",
    "read_command_log",
    "analyze",
    "format_table",
]

#: The two paths measured: our controller node through topics, or a controller in the loop.
PATHS = ("node", "in_loop")
#: The age of the freshest command each path can write [cycles].
BEST_AGE = {"node": 1, "in_loop": 0}

_TIMING_HEADER = ("cycle", "read_steady_ns", "write_steady_ns", "ros_time_ns")
_COMMAND_HEADER = COMMAND_HEADER


@dataclass(frozen=True)
class TimingLog:
    """The hardware's per-cycle timing log, oldest cycle first; n cycles, nj joints.

    Attributes:
        cycle: controller_manager cycle number since the hardware's start, shape (n,).
        read_ns: steady clock when read() exposed the cycle's state [ns], shape (n,).
        write_ns: steady clock when write() took the command [ns]; -1: no write, shape (n,).
        ros_ns: ROS time given to read() [ns], shape (n,).
        effort: effort command written, NaN where none [N m or N], shape (n, nj).
        joints: the joint of each effort column.
    """

    cycle: NDArray[np.int64]
    read_ns: NDArray[np.int64]
    write_ns: NDArray[np.int64]
    ros_ns: NDArray[np.int64]
    effort: NDArray[np.float64]
    joints: tuple[str, ...]


@dataclass(frozen=True)
class CommandLog:
    """The controller node's commands, in publication order; m commands, nj joints.

    Attributes:
        stamp_ns: header stamp of the /joint_states message the command was computed from [ns], (m,).
        receive_ns: steady clock when that message reached the node [ns], (m,).
        publish_ns: steady clock just before the command was published [ns], (m,).
        effort: the command [N m or N], shape (m, nj), in the effort controller's joint order.
        joints: the joint of each effort column.
    """

    stamp_ns: NDArray[np.int64]
    receive_ns: NDArray[np.int64]
    publish_ns: NDArray[np.int64]
    effort: NDArray[np.float64]
    joints: tuple[str, ...]


# -- reading the logs --------------------------------------------------------------------


def _read_csv(path: str, fixed: tuple[str, ...], what: str) -> tuple[NDArray[np.int64], NDArray[np.float64], tuple[str, ...]]:
    """(integer columns ``fixed`` (n, len(fixed)), effort columns (n, nj), joint names) of a log."""
    try:
        with open(path) as f:
            header = f.readline().strip().split(",")
            body = f.read()
    except OSError as exc:
        raise InputError(f"{what} {path!r}: {exc.strerror or exc}") from None
    nf = len(fixed)
    if tuple(header[:nf]) != fixed or not all(h.startswith("effort_") for h in header[nf:]) or len(header) == nf:
        raise InputError(f"{what} {path!r}: expected the columns {list(fixed)} then effort_<joint>..., "
                         f"got {header}")
    joints = tuple(h[len("effort_"):] for h in header[nf:])
    if not body.strip():
        return np.zeros((0, nf), np.int64), np.zeros((0, len(joints))), joints
    try:
        # the times as integers (a ROS time in ns is beyond a double's 2^53), the efforts as doubles
        ints = np.loadtxt(io.StringIO(body), delimiter=",", usecols=range(nf), dtype=np.int64, ndmin=2)
        effort = np.loadtxt(io.StringIO(body), delimiter=",", usecols=range(nf, len(header)), dtype=np.float64,
                            ndmin=2)
    except ValueError as exc:
        raise InputError(f"{what} {path!r}: {exc}") from None
    return ints, effort, joints


def read_timing_log(path: str) -> TimingLog:
    """The hardware's timing log (SimulatedSystem's ``timing_log`` CSV).

    Raises:
        InputError: unreadable file or unexpected columns.
    """
    ints, effort, joints = _read_csv(path, _TIMING_HEADER, "timing log")
    return TimingLog(ints[:, 0], ints[:, 1], ints[:, 2], ints[:, 3], effort, joints)


def read_command_log(path: str) -> CommandLog:
    """The controller node's command log (:meth:`CommandRecorder.write_csv`).

    Raises:
        InputError: unreadable file or unexpected columns.
    """
    ints, effort, joints = _read_csv(path, _COMMAND_HEADER, "command log")
    return CommandLog(ints[:, 0], ints[:, 1], ints[:, 2], effort, joints)


# -- the analysis ------------------------------------------------------------------------


def _stats_us(x: NDArray[Any]) -> dict[str, float]:
    """p50/p99/p99.9/max of nanosecond values, in microseconds (NaN when empty)."""
    if x.size == 0:
        return {"p50": float("nan"), "p99": float("nan"), "p999": float("nan"), "max": float("nan")}
    a = np.asarray(x, dtype=np.float64) * 1e-3
    p50, p99, p999 = np.percentile(a, [50, 99, 99.9])
    return {"p50": float(p50), "p99": float(p99), "p999": float(p999), "max": float(a.max())}


def _window(log: TimingLog, warmup: float, duration: float | None) -> tuple[NDArray[np.intp], float, int]:
    """Indices of the measured cycles, the first command's steady time [s] and the cycles
    before it: from ``warmup`` s after the first cycle that wrote a command, ``duration`` s long
    (None: to the end)."""
    commanded = np.flatnonzero((log.write_ns >= 0) & ~np.all(np.isnan(log.effort), axis=1))
    if commanded.size == 0:
        raise InputError("the timing log holds no cycle that wrote a command")
    first = int(commanded[0])
    t0 = int(log.read_ns[first]) + int(round(warmup * 1e9))
    inside = log.read_ns >= t0
    if duration is not None:
        inside &= log.read_ns < t0 + int(round(duration * 1e9))
    # the last logged cycle may have been cut by the shutdown before its write: leave it out
    idx = np.flatnonzero(inside)
    if idx.size and log.write_ns[idx[-1]] < 0:
        idx = idx[:-1]
    return idx, log.read_ns[first] * 1e-9, first


def analyze(
    timing: TimingLog,
    rate: float,
    path: str,
    commands: CommandLog | None = None,
    *,
    warmup: float = 2.0,
    duration: float | None = None,
) -> dict[str, Any]:
    """Delay and age of the command written at each cycle, and the cycle's own timing.

    Args:
        timing: the hardware's log.
        rate: controller_manager's update rate [Hz] (the period it sleeps to, 1e9 // rate ns).
        path: ``"node"`` (commands traced through ``commands``) or ``"in_loop"`` (age 0).
        commands: the controller node's log (``path="node"`` only).
        warmup: seconds after the first commanded cycle that are not measured.
        duration: seconds measured (None: to the end of the log).

    Returns:
        a dict: ``cycles`` measured, ``seconds`` they span; ``delay_us`` (p50/p99/p999/max of
        write(k) - read(j) over the cycles whose command was traced); ``ages`` (count per age
        in cycles, as {"0": n, "1": n, ...}), ``best_age`` of the path, ``stale`` (cycles with
        an age above it or no command traced) and ``stale_share``; ``repeats`` (cycles that
        wrote the previous cycle's command again, bit for bit), ``untraced`` (no command, or a
        command not in the node's log, or a stamp outside the log), ``ambiguous`` (cycles whose
        efforts the node also published from another state earlier: traced to the latest, the
        age may then be underestimated); ``period_us`` (read to next
        read), ``lateness_us`` (a cycle's ROS time at read minus its slot on the cycle's
        schedule, the earliest cycle's lateness taken as 0), ``overruns`` (cycles whose write
        ended after the next cycle's slot), ``work_us`` (read to write of one cycle); for
        ``node`` the hops ``state_to_node_us`` (read(j) -> the node has the state),
        ``node_us`` (state in -> command out), ``command_to_write_us`` (command out ->
        written); ``worst`` (the cycle of the largest delay: its number, seconds into the
        measurement, delay, age, period, lateness).

    Raises:
        InputError: an unknown path, a node path without its command log, joints that differ,
            or logs with nothing to measure.
    """
    _check_inputs(timing, rate, path, commands)
    idx, _, _ = _window(timing, warmup, duration)
    if idx.size < 2:
        raise InputError("fewer than 2 cycles to measure: a longer run or a shorter warmup")
    period_ns = 1_000_000_000 // int(round(rate)) if float(rate).is_integer() else 1e9 / rate
    # -- which read each written command comes from
    if path == "in_loop":
        trace = _trace_in_loop(timing, idx)
    else:
        assert commands is not None
        trace = _trace_commands(timing, idx, commands, period_ns)
    return _summary(timing, rate, path, idx, period_ns, trace, commands)


class _Trace(NamedTuple):
    """Where the commands written at the n measured cycles come from.

    Attributes:
        source: index into the timing log of the read j each command was computed from; -1
            untraced, shape (n,).
        entry: row of the command log; -1 untraced (or no log), shape (n,).
        ambiguous: cycles whose efforts the node also published from another state earlier.
    """

    source: NDArray[np.int64]
    entry: NDArray[np.int64]
    ambiguous: int


def _trace_in_loop(timing: TimingLog, idx: NDArray[np.intp]) -> _Trace:
    """A controller in the loop: each command written comes from its own cycle's read (age 0)."""
    n = idx.size
    source = np.full(n, -1, dtype=np.int64)
    entry = np.full(n, -1, dtype=np.int64)
    commanded = ~np.all(np.isnan(timing.effort[idx]), axis=1)
    source[commanded] = idx[commanded]
    return _Trace(source, entry, 0)


def _summary(timing: TimingLog, rate: float, path: str, idx: NDArray[np.intp], period_ns: float, trace: _Trace,
             commands: CommandLog | None) -> dict[str, Any]:
    """:func:`analyze`'s result from the measured cycles ``idx`` (n,) and their ``trace``."""
    n = idx.size
    read = timing.read_ns
    write = timing.write_ns
    effort = timing.effort
    source, entry = trace.source, trace.entry
    traced = source >= 0
    age = np.where(traced, idx - source, -1)
    delay = (write[idx] - read[np.maximum(source, 0)])[traced]
    best = BEST_AGE[path]
    ages, counts = np.unique(age[traced], return_counts=True)
    stale = int(np.count_nonzero(age[traced] > best) + np.count_nonzero(~traced))
    prev = np.maximum(idx - 1, 0)
    repeats = int(np.count_nonzero(np.all(effort[idx].view(np.int64) == effort[prev].view(np.int64), axis=1)
                                   & traced & (idx > 0)))
    period, lateness, overrun, work = _cycle_timing(timing, idx, period_ns)

    out: dict[str, Any] = {
        "path": path,
        "rate_hz": float(rate),
        "cycles": int(n),
        "seconds": float((read[idx[-1]] - read[idx[0]]) * 1e-9),
        "delay_us": _stats_us(delay),
        "ages": {str(int(a)): int(c) for a, c in zip(ages, counts)},
        "best_age": best,
        "stale": stale,
        "stale_share": stale / n,
        "repeats": repeats,
        "untraced": int(np.count_nonzero(~traced)),
        "ambiguous": trace.ambiguous,
        "period_us": {**_stats_us(period), "min": float(period.min() * 1e-3) if period.size else float("nan")},
        "lateness_us": _stats_us(lateness),
        "overruns": int(np.count_nonzero(overrun)),
        "work_us": _stats_us(work),
    }
    if path == "node":
        assert commands is not None
        e = entry[traced]
        j = source[traced]
        out["state_to_node_us"] = _stats_us(commands.receive_ns[e] - read[j])
        out["node_us"] = _stats_us(commands.publish_ns[e] - commands.receive_ns[e])
        out["command_to_write_us"] = _stats_us(write[idx[traced]] - commands.publish_ns[e])
    if delay.size:
        out["worst"] = _worst_cycle(timing, idx, source, age, lateness)
    return out


def _check_inputs(timing: TimingLog, rate: float, path: str, commands: CommandLog | None) -> None:
    """InputError for an unknown path, a rate that is not positive, a node path without its
    command log, or a command log whose joints are not the hardware's."""
    if path not in PATHS:
        raise InputError(f"path: expected one of {list(PATHS)}, got {path!r}")
    if not rate > 0:
        raise InputError(f"rate: expected a rate > 0 [Hz], got {rate!r}")
    if path == "node" and commands is None:
        raise InputError("path 'node' needs the controller node's command log")
    if commands is not None and commands.joints != timing.joints:
        raise InputError(f"the command log's joints {list(commands.joints)} are not the hardware's "
                         f"{list(timing.joints)} in the same order")


def _trace_commands(timing: TimingLog, idx: NDArray[np.intp], commands: CommandLog,
                    period_ns: float) -> _Trace:
    """The node path: the command written at each measured cycle ``idx`` (n,) traced through
    the command log to its read (module docstring, steps 1-2); ``period_ns``: the cycle's
    period [ns]."""
    n = idx.size
    write = timing.write_ns
    effort = timing.effort
    source = np.full(n, -1, dtype=np.int64)  # index into timing of the read j; -1 untraced
    entry = np.full(n, -1, dtype=np.int64)   # row of the command log
    ambiguous = 0
    # the read cycle of every stamp: ros_time(j) <= stamp < ros_time(j+1)
    ros = timing.ros_ns
    if np.any(np.diff(ros) <= 0):
        raise InputError("the timing log's ROS times do not increase (a clock jump?)")
    j_of = np.searchsorted(ros, commands.stamp_ns, side="right") - 1
    j_of[(commands.stamp_ns < 0) | (j_of < 0)] = -1
    # a stamp past the last logged read belongs to no logged cycle
    last = j_of == ros.size - 1
    j_of[last & (commands.stamp_ns > ros[-1] + 2 * period_ns)] = -1
    rows: dict[bytes, list[int]] = {}
    table = np.ascontiguousarray(commands.effort)
    for r in range(table.shape[0]):
        rows.setdefault(table[r].tobytes(), []).append(r)
    pub = commands.publish_ns
    for m, k in enumerate(idx):
        cands = rows.get(effort[k].tobytes())
        if not cands:
            continue
        # the latest row published before the write (rows are in publication order); none
        # before it: not this command (it cannot come from a later publication)
        pos = int(np.searchsorted(pub[cands], write[k], side="left")) - 1
        if pos < 0:
            continue
        r = cands[pos]
        entry[m] = r
        source[m] = j_of[r]
        if pos > 0 and np.any(j_of[cands[:pos]] != j_of[r]):
            ambiguous += 1  # the same efforts from another state too (an arm at rest)
    return _Trace(source, entry, ambiguous)


def _cycle_timing(timing: TimingLog, idx: NDArray[np.intp],
                  period_ns: float) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_], NDArray[np.float64]]:
    """The measured cycles' own timing [ns]: (read-to-next-read periods of consecutive cycles,
    lateness against the schedule (n,), overrun flags (n,), read-to-write work (n,))."""
    read = timing.read_ns
    write = timing.write_ns
    # -- the cycle's own timing: period, lateness against the schedule, overruns
    period = np.diff(read[idx]).astype(np.float64)
    consecutive = np.diff(timing.cycle[idx]) == 1
    period = period[consecutive]
    # times relative to the first measured cycle (exact integers; a ROS time is beyond 2^53 ns)
    i = (timing.cycle[idx] - timing.cycle[idx[0]]).astype(np.float64)
    ros_rel = (timing.ros_ns[idx] - timing.ros_ns[idx[0]]).astype(np.float64)
    read_rel = (read[idx] - read[idx[0]]).astype(np.float64)
    # controller_manager sleeps to first + i periods on the system clock, the ROS clock here:
    # a cycle's lateness is its ROS time at read() past its slot, the earliest cycle's taken as 0
    slot_offset = ros_rel - i * period_ns
    lateness = slot_offset - slot_offset.min()
    # the write on the ROS clock: the steady -> system offset from the cycle whose read() was
    # shortest (its ROS time is taken before read(), its steady time after: the estimate puts
    # the write early by that shortest read(), a few microseconds)
    write_ros = (write[idx] - read[idx[0]]).astype(np.float64) + np.max(ros_rel - read_rel)
    overrun = write_ros > slot_offset.min() + (i + 1) * period_ns
    work = (write[idx] - read[idx]).astype(np.float64)
    return period, lateness, overrun, work


def _worst_cycle(timing: TimingLog, idx: NDArray[np.intp], source: NDArray[np.int64], age: NDArray[np.int64],
                 lateness: NDArray[np.float64]) -> dict[str, Any]:
    """The measured cycle of the largest delay: its number, seconds into the measurement,
    delay, age, period and lateness (lateness (n,) [ns], as :func:`_cycle_timing` gives it)."""
    read = timing.read_ns
    write = timing.write_ns
    traced = source >= 0
    w = int(np.argmax(np.where(traced, write[idx] - read[np.maximum(source, 0)], -1)))
    k = int(idx[w])
    return {
        "cycle": int(timing.cycle[k]),
        "at_s": float((read[k] - read[idx[0]]) * 1e-9),
        "delay_us": float((write[k] - read[source[w]]) * 1e-3),
        "age": int(age[w]),
        "period_us": float((read[k] - read[k - 1]) * 1e-3) if k > 0 else float("nan"),
        "lateness_us": float(lateness[w] * 1e-3),
    }


def format_table(results: Sequence[dict[str, Any]]) -> str:
    """One line per measurement: the delay, the stale share, repeats, overruns, the worst cycle."""
    head = (f"{'path':>8} {'Hz':>5} {'load':>5} {'cycles':>8} {'p50 us':>8} {'p99 us':>8} {'max us':>9} "
            f"{'stale %':>8} {'repeats':>8} {'untraced':>8} {'overruns':>8} {'period p99/max us':>18}  worst cycle")
    lines = [head]
    for r in results:
        d, p = r["delay_us"], r["period_us"]
        w = r.get("worst")
        worst = (f"#{w['cycle']} at {w['at_s']:.1f} s: {w['delay_us']:.0f} us, age {w['age']}, "
                 f"period {w['period_us']:.0f} us" if w else "-")
        lines.append(
            f"{r['path']:>8} {r['rate_hz']:5.0f} {r.get('load', 0):5d} {r['cycles']:8d} {d['p50']:8.0f} "
            f"{d['p99']:8.0f} {d['max']:9.0f} {100 * r['stale_share']:8.2f} {r['repeats']:8d} {r['untraced']:8d} "
            f"{r['overruns']:8d} {p['p99']:8.0f}/{p['max']:<9.0f}  {worst}")
    return "\n".join(lines)
