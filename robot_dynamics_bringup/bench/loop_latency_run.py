"""The arm of arm.launch.py with its loop's timing logged, for bench/bench_control_loop.py.

    python robot_dynamics_bringup/bench/loop_latency_run.py --control node --rate 1000 \
        --timing-log /path/timing.csv --command-log /path/commands.csv [--nodes arm|loop] \
        [--robot puma560] [--node-rate HZ] [--cycles N]

One launch service in this process, stopped by SIGINT (Ctrl-C), brings up what robot_dynamics_bringup's
``arm.launch.py control:=<control> hardware:=sim update_rate:=<rate> use_rviz:=false`` does, from
the same parameters (:func:`robot_dynamics.ros.launch_support.arm_parameters`, the gains of
robot_dynamics_bringup's ``config/controllers.yaml`` where that package is installed), only the
controllers that run (none loaded inactive), plus:

- the simulated hardware's timing log: the hardware is robot_dynamics_control's
  TimedSimulatedSystem (SimulatedSystem with its cycles timed, in a bench build of the package:
  ``-DRD_BENCH_HARDWARE=ON``) in place of SimulatedSystem, its ``timing_log`` and
  ``timing_log_cycles`` hardware parameters set: per cycle the steady-clock times of read() and
  write(), the ROS time given to read() and the effort written, saved when controller_manager
  stops;
- with ``control node``, the controller node's command log (``command_log``,
  ``command_log_cycles``) and its rate set to ``--node-rate`` (default: the controller manager's
  rate), saved when the node stops.

``--nodes loop`` starts only the loop (controller_manager, its spawners, and our controller node
for ``control node``); ``arm`` (default) also robot_state_publisher and our trajectory and
dynamics nodes, as arm.launch.py does. The first line printed is JSON:
``{"controllers": [the controllers spawned, in order], "ros2_control": controller_manager's
version}``. Each process gets 60 s after SIGINT to
write its log before launch escalates to SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import sys

from robot_dynamics.errors import RobotDynamicsError
from robot_dynamics.ros.bench_runs import NODE_SETS, measured_arm_description, package_version, run_launch

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--control", required=True, choices=("node", "in_loop"))
    parser.add_argument("--rate", type=int, required=True, help="controller_manager's update rate [Hz]")
    parser.add_argument("--timing-log", required=True)
    parser.add_argument("--command-log", default="")
    parser.add_argument("--nodes", choices=NODE_SETS, default="arm")
    parser.add_argument("--robot", default="puma560")
    parser.add_argument("--node-rate", type=float, default=None, help="the controller node's rate [Hz]")
    parser.add_argument("--cycles", type=int, default=1 << 20, help="cycles each log keeps (the last ones)")
    args = parser.parse_args(argv)
    try:
        description, controllers = measured_arm_description(
            args.rate, args.control, args.timing_log, args.command_log, robot=args.robot, nodes=args.nodes,
            node_rate=args.node_rate, cycles=args.cycles)
    except RobotDynamicsError as exc:
        print(f"loop_latency_run: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({"controllers": controllers, "ros2_control": package_version("controller_manager")}), flush=True)
    return run_launch(description)


if __name__ == "__main__":
    sys.exit(main())
