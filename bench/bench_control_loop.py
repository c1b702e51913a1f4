"""The control loop's delay, from a hardware read to the effort written for it, through our
controller node (``node``) and inside ros2_control's update (``in_loop``), idle and under load.

    python bench/bench_control_loop.py [--control node in_loop] [--rate 500 1000] [--load 0 2]
        [--duration 600] [--warmup 3] [--nodes arm|loop] [--robot puma560] [--node-rate HZ]
        [--keep-logs DIR] [--results bench/results/bench_control_loop.json]

Needs a sourced ROS 2 workspace with robot_dynamics, robot_dynamics_control in a bench build
(``colcon build --cmake-args -DRD_BENCH_HARDWARE=ON``: its timed hardware) and ros2_control
(Humble or Jazzy). Each measurement (every control x rate x load):

1. brings the arm up as ``arm.launch.py control:=<control> hardware:=sim update_rate:=<rate>``
   does (``robot_dynamics_bringup/bench/loop_latency_run.py``: robot_dynamics_control's TimedSimulatedSystem, its
   SimulatedSystem with each cycle timed, integrates the arm inside controller_manager's cycle; ``--nodes loop`` leaves out
   robot_state_publisher and our trajectory and dynamics nodes), with the hardware's timing log
   and, for ``node``, the controller node's command log on (its rate: ``--node-rate``, default
   the controller manager's);
2. once every controller is active, starts ``--load`` busy processes (a Python loop each: with 2
   on a 2-core machine both cores are busy), waits ``--warmup`` + ``--duration`` seconds, stops
   them and stops the launch with SIGINT (each process writes its log as it stops);
3. traces each written command to the read it was computed from
   (:func:`loop_latency.analyze`, bench/loop_latency.py): per cycle the age (cycles between that read
   and the write) and the delay write(k) - read(j), measured over ``--duration`` seconds from
   ``--warmup`` seconds after the first commanded cycle.

It prints one line per measurement: the delay's p50/p99/max [us]; the share of stale cycles
(a command older than the path's freshest: the previous cycle's read through topics, the same
cycle's in the loop; a repeated command; a cycle without a traced command); repeats; untraced
cycles; overruns (a cycle whose write ended after the next cycle was due); the read-to-read
period's p99/max; the worst cycle. The JSON (``--results``) holds every number of
:func:`analyze` per measurement (ages, the node path's hops, lateness, the cycle's work), the
load average, and whether controller_manager got SCHED_FIFO. Ctrl-C or an error stops every
process this bench started.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from robot_dynamics.errors import RobotDynamicsError
from _processes import Processes
from _results import write_results
from loop_latency import PATHS, analyze, format_table, read_command_log, read_timing_log

#: The measured run's launch (a ROS launch description: it lives in the ROS package that it brings up).
RUNNER = Path(__file__).resolve().parents[1] / "robot_dynamics_bringup" / "bench" / "loop_latency_run.py"

HERE = Path(__file__).resolve().parent
START_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 120.0


class StartFailed(RuntimeError):
    """The loop did not come up (a spawner failed): worth another try."""


def _wait_active(log_path: Path, launch: subprocess.Popen, timeout: float) -> tuple[list[str], bool | None, str]:
    """(controllers, whether controller_manager got SCHED_FIFO, ros2_control's version) once the
    launch log says each controller is active."""
    end = time.monotonic() + timeout
    controllers: list[str] | None = None
    version = ""
    while True:
        text = re.sub(r"\x1b\[[0-9;]*m", "", log_path.read_text(errors="replace"))  # the spawners' colours
        if controllers is None:
            m = re.search(r'^\{"controllers": .*\}$', text, re.M)
            if m:
                first = json.loads(m.group(0))
                controllers, version = first["controllers"], first.get("ros2_control", "")
        if controllers is not None and all(re.search(rf"activated {re.escape(c)}\b", text) for c in controllers):
            fifo = True if "Successful set up FIFO RT" in text else False if "Could not enable FIFO" in text else None
            return controllers, fifo, version
        died = re.search(r"\[ERROR\] \[(spawner[-\w]*)\]: process has died", text)
        if died:
            reason = re.findall(r"^\[spawner[-\w]*\] \[(?:ERROR|WARN)\].*$", text, re.M)
            raise StartFailed(f"{died.group(1)} failed: {' / '.join(reason[-2:]) or 'no reason logged'}")
        if launch.poll() is not None:
            raise RuntimeError(f"the launch ended (exit code {launch.returncode}) before its controllers were "
                               f"active: {text[-3000:].strip()}")
        if time.monotonic() > end:
            raise RuntimeError(f"the controllers were not active within {timeout:.0f} s: {text[-3000:].strip()}")
        time.sleep(0.2)


def one_run(args: argparse.Namespace, control: str, rate: int, load: int, folder: Path) -> dict:
    """One measurement: bring the loop up, load it, stop it, analyse its logs."""
    tag = f"{control}_{rate}hz_load{load}"
    timing_path = folder / f"{tag}_timing.csv"
    command_path = folder / f"{tag}_commands.csv"
    launch_log = folder / f"{tag}_launch.log"
    cycles = int(rate * (args.warmup + args.duration + 120.0))  # the run and its start-up, kept whole
    cmd = [sys.executable, str(RUNNER), "--control", control, "--rate", str(rate),
           "--timing-log", str(timing_path), "--nodes", args.nodes, "--robot", args.robot, "--cycles", str(cycles)]
    if control == "node":
        cmd += ["--command-log", str(command_path)]
        if args.node_rate is not None:
            cmd += ["--node-rate", str(args.node_rate)]
    procs = Processes()
    try:
        with open(launch_log, "w") as out:
            launch = procs.start(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        controllers, fifo, version = _wait_active(launch_log, launch, START_TIMEOUT_S)
        busy = [procs.start([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
                for _ in range(load)]
        print(f"{tag}: {', '.join(controllers)} active; {load} busy process(es); measuring "
              f"{args.warmup:g} + {args.duration:g} s", flush=True)
        time.sleep(args.warmup + args.duration + 1.0)
        load_average = list(os.getloadavg())
        for b in busy:
            procs.stop(b, 5.0, signal.SIGKILL)
        code = procs.stop(launch, STOP_TIMEOUT_S)
    finally:
        procs.stop_all()
    if not timing_path.exists():
        raise RuntimeError(f"{tag}: no timing log was written (launch exit code {code}); see {launch_log}")
    timing = read_timing_log(str(timing_path))
    commands = None
    if control == "node":
        if not command_path.exists():
            raise RuntimeError(f"{tag}: the controller node wrote no command log; see {launch_log}")
        commands = read_command_log(str(command_path))
    res = analyze(timing, float(rate), control, commands, warmup=args.warmup, duration=args.duration)
    res.update({"load": load, "controllers": controllers, "ros2_control": version, "sched_fifo": fifo, "load_average": load_average,
                "node_rate_hz": (args.node_rate or float(rate)) if control == "node" else None,
                "logged_cycles": int(timing.cycle.size), "logged_commands": None if commands is None
                else int(commands.stamp_ns.size)})
    if res["seconds"] < 0.9 * args.duration:
        print(f"{tag}: only {res['seconds']:.1f} s of {args.duration:g} measured (the loop started late or "
              f"stopped early)", file=sys.stderr)
    if not args.keep_logs:
        for p in (timing_path, command_path, launch_log):
            p.unlink(missing_ok=True)
    return res


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--control", nargs="+", choices=PATHS, default=list(PATHS))
    parser.add_argument("--rate", nargs="+", type=int, default=[500, 1000], help="controller_manager rates [Hz]")
    parser.add_argument("--load", nargs="+", type=int, default=[0, 2],
                        help="busy processes beside the loop, one measurement per count (default: 0 and 2)")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds measured per run (600: 10 minutes)")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds after the first command not measured")
    parser.add_argument("--nodes", choices=("arm", "loop"), default="arm",
                        help="arm: what arm.launch.py starts (rviz aside); loop: the loop's processes only")
    parser.add_argument("--robot", default="puma560")
    parser.add_argument("--node-rate", type=float, default=None,
                        help="the controller node's rate [Hz] (default: the controller manager's)")
    parser.add_argument("--tries", type=int, default=3,
                        help="starts of one measurement when a spawner fails (a start-up race of the launch)")
    parser.add_argument("--keep-logs", default=None, metavar="DIR", help="keep every run's logs in DIR")
    parser.add_argument("--results", default=str(HERE / "results" / "bench_control_loop.json"), metavar="JSON",
                        help="where the numbers go ('' : nowhere)")
    args = parser.parse_args(argv)
    if args.duration <= 0 or args.warmup < 0 or any(r < 1 or r > 10000 for r in args.rate) or \
            any(n < 0 for n in args.load) or args.tries < 1 or (args.node_rate is not None and args.node_rate <= 0):
        parser.error("--duration > 0, --warmup >= 0, --rate in [1, 10000] Hz, --load >= 0, --node-rate > 0")
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # `kill` stops every process too, as Ctrl-C does
    print(f"{os.cpu_count()} cores, {os.getenv('ROS_DISTRO', '?')}, {os.getenv('RMW_IMPLEMENTATION', 'default RMW')}, "
          f"{args.robot}, nodes {args.nodes}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
          flush=True)
    runs = []
    try:
        with tempfile.TemporaryDirectory(prefix="bench_control_loop_") as tmp:
            folder = Path(args.keep_logs) if args.keep_logs else Path(tmp)
            folder.mkdir(parents=True, exist_ok=True)
            for control, rate, load in itertools.product(args.control, args.rate, args.load):
                for attempt in range(1, args.tries + 1):
                    try:
                        res = one_run(args, control, rate, load, folder)
                        break
                    except StartFailed as exc:
                        if attempt == args.tries:
                            raise
                        print(f"{control} {rate} Hz load {load}: {exc}; starting again", file=sys.stderr, flush=True)
                print(format_table([res]).splitlines()[1], flush=True)
                runs.append(res)
    except KeyboardInterrupt:
        print("interrupted: every process stopped", file=sys.stderr)
        return 130
    except (RuntimeError, RobotDynamicsError) as exc:
        print(f"bench_control_loop: {exc} (every process stopped)", file=sys.stderr)
        return 1
    print()
    print(format_table(runs))
    if args.results:
        write_results(args.results, "bench_control_loop.py", argv, ros_distro=os.getenv("ROS_DISTRO", ""),
                      rmw=os.getenv("RMW_IMPLEMENTATION", ""), duration_s=args.duration, warmup_s=args.warmup,
                      nodes=args.nodes, robot=args.robot, runs=runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
