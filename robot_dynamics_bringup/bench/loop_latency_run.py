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
from typing import Any

from robot_dynamics.errors import RobotDynamicsError
from robot_dynamics.ros.launch_support import (
    arm_parameters,
    node_actions,
    spawner_arguments,
    state_publisher_action,
    text_parameters,
    write_parameter_file,
)

__all__ = ["NODE_SETS", "launch_description", "main"]

#: What is started beside the loop: ``loop`` nothing, ``arm`` what arm.launch.py starts (no rviz).
NODE_SETS = ("arm", "loop")
#: Seconds a process has after SIGINT to write its log and stop.
STOP_TIMEOUT_S = 60
#: The product's simulated hardware, and the same with its cycles timed (the bench's plugin).
SIMULATED = "robot_dynamics_control/SimulatedSystem"
TIMED = "robot_dynamics_control/TimedSimulatedSystem"


def launch_description(
    rate: int,
    control: str,
    timing_log: str,
    command_log: str = "",
    *,
    robot: str = "puma560",
    nodes: str = "arm",
    node_rate: float | None = None,
    cycles: int = 1 << 20,
) -> tuple[Any, list[str]]:
    """(launch description, controllers spawned in order) of one measured run.

    Raises:
        RobotDynamicsError subclasses: an unknown control, node set or robot, a bad rate.
    """
    from ament_index_python.packages import get_package_share_directory
    from launch import LaunchDescription
    from launch.actions import SetLaunchConfiguration
    from launch_ros.actions import Node
    from launch_ros.parameter_descriptions import ParameterValue

    from robot_dynamics.errors import InputError

    if nodes not in NODE_SETS:
        raise InputError(f"nodes: expected one of {list(NODE_SETS)}, got {nodes!r}")
    for what, path in (("timing log", timing_log), ("command log", command_log)):
        if "," in path:
            raise InputError(f"{what}: a path without commas, got {path!r}")
    share = get_package_share_directory("robot_dynamics")
    params = arm_parameters(share, robot=robot, control=control, hardware="sim", update_rate=str(rate),
                            hardware_params=f"timing_log={timing_log},timing_log_cycles={cycles}",
                            controllers_file=_bringup_gains())
    params["robot_description"] = timed_hardware(params["robot_description"])
    controllers_file = write_parameter_file(params["controllers_yaml"], "ros2_controllers.yaml")
    spawners = [s for s in params["spawners"] if s["active"]]
    actions: list[Any] = [SetLaunchConfiguration("sigterm_timeout", str(STOP_TIMEOUT_S))]
    if nodes == "arm":
        actions.append(state_publisher_action(Node, ParameterValue, params))
    actions.append(Node(
        package="controller_manager", executable="ros2_control_node", output="screen",
        parameters=text_parameters([{"robot_description": params["robot_description"]}, controllers_file,
                                    *([params["controllers_file"]] if params["controllers_file"] else [])],
                                   ParameterValue),
        remappings=params["controller_manager_remappings"]))
    actions += [Node(package="controller_manager", executable="spawner", name=f"spawner_{s['controllers'][0]}",
                     output="screen", arguments=spawner_arguments(s))
                for s in spawners]
    ours: tuple[str, ...] = ()
    if control == "node":
        if not command_log:
            raise InputError("control node: a command log path is needed")
        params["controller"] = [*params["controller"], {
            "rate": float(node_rate if node_rate is not None else rate),
            "command_log": command_log, "command_log_cycles": int(cycles)}]
        ours += ("controller",)
    if nodes == "arm":
        ours += ("trajectory", "dynamics")
    actions += node_actions(Node, ParameterValue, params, ours, params["remappings"])
    return LaunchDescription(actions), [c for s in spawners for c in s["controllers"]]


def timed_hardware(description: str) -> str:
    """The URDF text with its SimulatedSystem plugin replaced by the timed one (InputError
    unless the text names SimulatedSystem exactly once)."""
    from robot_dynamics.errors import InputError

    tag = f"<plugin>{SIMULATED}</plugin>"
    if description.count(tag) != 1:
        raise InputError(f"the URDF's <ros2_control> block does not name {SIMULATED} once")
    return description.replace(tag, f"<plugin>{TIMED}</plugin>")


def _bringup_gains() -> str:
    """robot_dynamics_bringup's config/controllers.yaml, "" where that package is not installed."""
    import os

    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

    try:
        path = os.path.join(get_package_share_directory("robot_dynamics_bringup"), "config", "controllers.yaml")
    except PackageNotFoundError:
        return ""
    return path if os.path.isfile(path) else ""


def _version(package: str) -> str:
    """The <version> of an installed package's package.xml ("" when unknown)."""
    import re

    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

    try:
        with open(f"{get_package_share_directory(package)}/package.xml") as f:
            m = re.search(r"<version>\s*([^<\s]+)\s*</version>", f.read())
    except (OSError, PackageNotFoundError):
        return ""
    return m.group(1) if m else ""


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
        description, controllers = launch_description(
            args.rate, args.control, args.timing_log, args.command_log, robot=args.robot, nodes=args.nodes,
            node_rate=args.node_rate, cycles=args.cycles)
    except RobotDynamicsError as exc:
        print(f"loop_latency_run: {exc}", file=sys.stderr)
        return 2
    from launch import LaunchService

    print(json.dumps({"controllers": controllers, "ros2_control": _version("controller_manager")}), flush=True)
    service = LaunchService()
    service.include_launch_description(description)
    return service.run()


if __name__ == "__main__":
    sys.exit(main())
