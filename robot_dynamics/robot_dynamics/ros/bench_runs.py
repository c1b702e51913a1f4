"""What the ROS benchmarks run (robot_dynamics_bringup/bench/): the arm of arm.launch.py with its
loop's timing logged (loop_latency_run.py, for bench/bench_control_loop.py), a fresh dynamics
node's time to its first answer (first_reply.py, for bench/bench_core.py) and the service clients
(service_load.py, for bench/bench_services.py). They import ROS, so
they live here; the scripts keep their command lines.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

from ..errors import InputError
from .launch_support import (
    arm_parameters,
    node_actions,
    spawner_arguments,
    state_publisher_action,
    text_parameters,
    write_parameter_file,
)

__all__ = ["NODE_SETS", "measured_arm_description", "run_launch", "timed_hardware", "package_version",
           "first_reply_seconds", "inverse_dynamics_client"]

#: What is started beside the loop: ``loop`` nothing, ``arm`` what arm.launch.py starts (no rviz).
NODE_SETS = ("arm", "loop")
#: Seconds a process has after SIGINT to write its log and stop.
STOP_TIMEOUT_S = 60
#: The product's simulated hardware, and the same with its cycles timed (the bench's plugin).
SIMULATED = "robot_dynamics_control/SimulatedSystem"
TIMED = "robot_dynamics_control/TimedSimulatedSystem"


def measured_arm_description(
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


def package_version(package: str) -> str:
    """The <version> of an installed package's package.xml ("" when unknown)."""
    import re

    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

    try:
        with open(f"{get_package_share_directory(package)}/package.xml") as f:
            m = re.search(r"<version>\s*([^<\s]+)\s*</version>", f.read())
    except (OSError, PackageNotFoundError):
        return ""
    return m.group(1) if m else ""


def run_launch(description: Any) -> int:
    """Runs a launch description in this process until SIGINT; launch's exit code."""
    from launch import LaunchService

    service = LaunchService()
    service.include_launch_description(description)
    return int(service.run())


def first_reply_seconds() -> float:
    """Seconds from the start of a fresh dynamics node (``robot:=puma560``, a new process) to its
    first ``/dynamics/gravity_compensation`` while a PUMA 560 joint state is published; nan after
    60 s (bench/bench_core.py's cold table, through robot_dynamics_bringup/bench/first_reply.py)."""
    import rclpy
    from rclpy.node import Node
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from .node_common import sigint_ignored

    rclpy.init()
    node = None
    proc = None
    got: list[float] = []
    try:
        node = Node("first_reply_probe")
        node.create_subscription(Float64MultiArray, "/dynamics/gravity_compensation",
                                 lambda msg: got.append(time.perf_counter()), 10)
        pub = node.create_publisher(JointState, "/joint_states", 10)
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "robot_dynamics.ros.dynamics_node", "--ros-args", "-r",
                                 "__node:=dynamics", "-p", "robot:=puma560"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        msg = JointState()
        msg.name = [f"joint{i}" for i in range(1, 7)]
        msg.position = [0.0] * 6
        while not got and time.perf_counter() - start < 60:
            pub.publish(msg)
            rclpy.spin_once(node, timeout_sec=0.01)
    finally:
        with sigint_ignored():  # a second Ctrl-C does not interrupt the cleanup
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            if node is not None:
                node.destroy_node()
            rclpy.try_shutdown()
    return got[0] - start if got else float("nan")


@contextlib.contextmanager
def inverse_dynamics_client(role: str, depth: int, service: str) -> Iterator[tuple[Any, Any, Any]]:
    """A node ``bench_<role>_<pid>`` in a context of its own, its executor and an InverseDynamics
    client of ``service`` with rclpy's services QoS of history ``depth`` (0 keeps all): (executor,
    client, service type); shut down on exit (robot_dynamics_bringup/bench/service_load.py)."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from robot_dynamics_interfaces.srv import InverseDynamics

    from .node_common import service_qos

    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node(f"bench_{role}_{os.getpid()}", context=context)
    try:
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        yield executor, node.create_client(InverseDynamics, service, qos_profile=service_qos(depth)), InverseDynamics
    finally:
        node.destroy_node()
        rclpy.try_shutdown(context=context)
