"""The cost of one update() of each ros2_control controller of robot_dynamics_control, against the
goal p99 <= 20 us on the PUMA 560, with its peers side by side in the same process.

    python bench/bench_controllers.py [--exe PATH] [--calls 100000] [--warmup 1000] [--robot all]
                                      [--rounds 10] [--cpu K] [--results bench/results/bench_controllers.json]

Runs robot_dynamics_control's ``bench_update`` (built and installed by ``colcon build``; found as
lib/robot_dynamics_control/bench_update under an entry of AMENT_PREFIX_PATH, i.e. after sourcing the
workspace's install/setup.bash, or given with --exe). For puma560 and three_dof_geared (the URDF
and drive-train YAML of the installed robot_dynamics), it times each call with
clock_gettime(CLOCK_MONOTONIC), in interleaved rounds so that every subject sees the same load:

* our controllers, configured and activated without a controller manager, the measured state moving
  every call: GravityCompensationController (friction feed-forward on), PdGravityController (a goal
  set), ComputedTorqueController (a quintic trajectory spanning the run; and chained, its reference
  interfaces written every call);
* the peers: the engine alone (rd_rnea with friction for the same state, and each controller's law
  alone: rd_gravity_compensation, rd_pd_gravity, rd_computed_torque), ros2_controllers'
  effort_controllers/JointGroupEffortController on the same joints (a new command every 10 calls),
  and the empty timed part (the timer's own cost, inside every figure);
* on the iiwa14, the Cartesian impedance law alone (rd_compliant_control, its last frame
  iiwa_link_ee) and the same law written as CRISP (utiasDSL/crisp_controllers) writes it on
  Pinocchio: computeAllTerms, computeMinverse and SVD pseudo-inverses every call ("CRISP-style
  Cartesian impedance (Pinocchio)"). That peer is built only when the package is configured with
  Pinocchio's prefix, e.g. the ``pin`` wheel's::

      colcon build --packages-up-to robot_dynamics_control --cmake-args \
        -DRD_BENCH_PINOCCHIO_PREFIX=$(python -c "import os, sysconfig; print(os.path.join(sysconfig.get_paths()['purelib'], 'cmeel.prefix'))")

  (the ``cmeel.prefix`` folder beside the installed packages; without the option it is left out, with a
  message at configuration and a note here). bench_update then checks that it gives
  rd_compliant_control's torques when given the engine's damping, and prints that check.

Prints p50, p99, p99.9, max and mean [us] per subject, the ratios ours / rd_rnea, ours /
JointGroupEffortController and ours / CRISP-style (of p50 and of p99; the last also for
rd_compliant_control), the calls over 20 us (a preemption shows there: the
process runs at normal priority on a shared machine), the goal column and the load average before
and after. The JSON (``--results``; '' : nowhere) keeps one run per ROS distribution: a run on Humble
replaces the previous Humble run and leaves a Jazzy run in the file.

Needs no ROS import: the executable does the ROS part.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from _results import write_results

HERE = Path(__file__).resolve().parent
GOAL_P99_US = 20.0
EXE_RELATIVE = Path("lib") / "robot_dynamics_control" / "bench_update"
ROBOTS = ("puma560", "three_dof_geared", "iiwa14", "all")
CRISP = "CRISP-style Cartesian impedance (Pinocchio)"


def find_executable(given: str | None) -> Path:
    """bench_update: ``given``, else the first AMENT_PREFIX_PATH entry holding lib/robot_dynamics_control/bench_update."""
    if given:
        path = Path(given)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise SystemExit(f"bench_controllers: --exe {given} is not an executable file")
        return path
    prefixes = [p for p in os.getenv("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    for prefix in prefixes:
        path = Path(prefix) / EXE_RELATIVE
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise SystemExit(
        f"bench_controllers: no {EXE_RELATIVE} under AMENT_PREFIX_PATH ({len(prefixes)} entries"
        f"{': ' + ', '.join(prefixes) if prefixes else ''}); build robot_dynamics_control with colcon and source "
        "its install/setup.bash, or give --exe")


def parse_rows(stdout: str) -> list[dict]:
    """The JSON lines of bench_update's output, one a subject x robot."""
    rows = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    if not rows:
        raise SystemExit("bench_controllers: bench_update printed no results")
    return rows


def _f(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def format_table(rows: list[dict], goal_us: float = GOAL_P99_US) -> str:
    """The rows as a table [us], ratios for our controllers and the goal column."""
    goal_head = f"goal p99 <= {goal_us:g} us"
    lines = [f"{'robot':17} {'subject':44} {'p50':>7} {'p99':>7} {'p99.9':>7} {'max':>8} {'mean':>7} {'>20us':>6} "
             f"{'p50/rnea':>8} {'p99/rnea':>8} {'p50/JGEC':>8} {'p99/JGEC':>8} {'p50/CRISP':>9} {'p99/CRISP':>9}  "
             f"{goal_head}"]
    for r in rows:
        ours = r["kind"] == "controller"
        goal = ("met" if r["p99_us"] <= goal_us else "missed") if ours else ""
        # ours / the CRISP-style law: our controllers and the engine's law alone, where that peer ran
        crisp = (f"{_f(r.get('ratio_crisp_p50'), 3):>9} {_f(r.get('ratio_crisp_p99'), 3):>9}"
                 if r.get("ratio_crisp_p50") is not None else f"{'':>9} {'':>9}")
        ratios = (f"{_f(r['ratio_rnea_p50'], 2):>8} {_f(r['ratio_rnea_p99'], 2):>8} "
                  f"{_f(r['ratio_jgec_p50'], 2):>8} {_f(r['ratio_jgec_p99'], 2):>8}" if ours else f"{'':>35}")
        lines.append((
            f"{r['robot']:17} {r['subject']:44} {_f(r['p50_us']):>7} {_f(r['p99_us']):>7} {_f(r['p999_us']):>7} "
            f"{_f(r['max_us'], 2):>8} {_f(r['mean_us']):>7} {r['over_20us']:>6} {ratios} {crisp}  {goal}").rstrip())
    return "\n".join(lines)


def distro_of(ros2_control: str) -> str:
    """ROS_DISTRO, else the distribution of a ros2_control version (2.x: humble, 4.x: jazzy)."""
    major = ros2_control.split(".")[0]
    return os.getenv("ROS_DISTRO") or {"2": "humble", "4": "jazzy"}.get(major, f"ros2_control {ros2_control}")


def merged_runs(path: str, run: dict) -> list[dict]:
    """The runs of the results file at ``path`` for other ROS distributions, and ``run``."""
    try:
        previous = json.loads(Path(path).read_text()).get("runs", [])
    except (OSError, ValueError, AttributeError):
        previous = []
    return [r for r in previous if isinstance(r, dict) and r.get("ros_distro") != run["ros_distro"]] + [run]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exe", default=None, help=f"bench_update (default: {EXE_RELATIVE} under AMENT_PREFIX_PATH)")
    parser.add_argument("--calls", type=int, default=100_000, help="timed calls per subject (>= 100)")
    parser.add_argument("--warmup", type=int, default=1_000, help="untimed calls first (>= 0)")
    parser.add_argument("--robot", choices=ROBOTS, default="all")
    parser.add_argument("--rounds", type=int, default=10, help="interleaved rounds of calls / rounds calls each")
    parser.add_argument("--cpu", type=int, default=None,
                        help="pin bench_update's timing thread to this core (the controllers' publisher threads stay free)")
    parser.add_argument("--results", default=str(HERE / "results" / "bench_controllers.json"), metavar="JSON",
                        help="where the numbers go ('' : nowhere)")
    args = parser.parse_args(argv)
    if args.calls < 100 or args.warmup < 0 or not 1 <= args.rounds <= args.calls or (args.cpu is not None and args.cpu < 0):
        parser.error("--calls >= 100, --warmup >= 0, --rounds in [1, calls], --cpu >= 0")
    exe = find_executable(args.exe)
    cmd = [str(exe), "--calls", str(args.calls), "--warmup", str(args.warmup), "--robot", args.robot,
           "--rounds", str(args.rounds)] + (["--cpu", str(args.cpu)] if args.cpu is not None else [])
    load_before = os.getloadavg()
    print(f"{os.cpu_count()} cores; load average {' '.join(f'{x:.2f}' for x in load_before)}; "
          f"running {exe.name} ({args.calls} calls per subject)", flush=True)
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    load_after = os.getloadavg()
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        print(f"bench_controllers: {exe} exited with {proc.returncode}:\n{tail}", file=sys.stderr)
        return 1
    rows = parse_rows(proc.stdout)
    distro = distro_of(rows[0]["ros2_control"])
    print(f"update() per call [us], {args.calls} calls after {args.warmup} warm-up, {args.rounds} interleaved rounds, "
          f"ROS {distro}, ros2_control {rows[0]['ros2_control']}; {wall:.1f} s; "
          f"load average after {' '.join(f'{x:.2f}' for x in load_after)}")
    print(format_table(rows))
    for line in proc.stdout.splitlines():  # bench_update's own checks (the CRISP-style law's torques)
        if line.startswith("check: "):
            print(line)
    if any(r["robot"] == "iiwa14" for r in rows) and not any(r["subject"] == CRISP for r in rows):
        print(f"note: no {CRISP} row: bench_update was built without RD_BENCH_PINOCCHIO_PREFIX (see --help)")
    ours = [r for r in rows if r["kind"] == "controller" and r["robot"] == "puma560"]
    if ours:
        worst = max(ours, key=lambda r: r["p99_us"])
        verdict = "met" if worst["p99_us"] <= GOAL_P99_US else "missed"
        print(f"PUMA 560: the worst p99 is {worst['p99_us']:.3f} us ({worst['subject']}): goal p99 <= "
              f"{GOAL_P99_US:g} us {verdict}")
    if args.results:
        run = {"ros_distro": distro, "ros2_control": rows[0]["ros2_control"],
               "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "calls": args.calls,
               "warmup": args.warmup, "rounds": args.rounds, "cpu": args.cpu, "wall_s": round(wall, 2),
               "load_average_before": [round(x, 2) for x in load_before],
               "load_average_after": [round(x, 2) for x in load_after], "rows": rows}
        write_results(args.results, "bench_controllers.py", argv, goal_p99_us=GOAL_P99_US,
                      runs=merged_runs(args.results, run))
    return 0


if __name__ == "__main__":
    sys.exit(main())
