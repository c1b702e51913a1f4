"""robot_dynamics_bringup's arm.launch.py: the arm brought up through ros2_control (the launch
file's docstring says what it starts and in which order). The launch file holds only
``generate_launch_description``; the launch classes are imported here when the description is
made, so that this module imports without ROS.
"""

from __future__ import annotations

import collections
import os
import time
from types import SimpleNamespace
from typing import Any

from .launch_support import (
    HARDWARE_NOT_LOADED,
    argument_values,
    arm_parameters,
    declare_arguments,
    exit_message,
    node_actions,
    rviz_action,
    spawner_arguments,
    state_publisher_action,
    text_parameters,
    write_parameter_file,
)

PACKAGE = "robot_dynamics_bringup"
PARAMETERS = ("robot", "urdf", "drivetrain", "control", "hardware", "hardware_params", "controller", "goal",
              "initial_positions", "update_rate", "controllers_file", "monitor")
#: monitor:=true: the collision monitor's parameters of this package
MONITOR_FILE = ("config", "collision_monitor.yaml")
#: Seconds after the processes start before a failure stops them: a Python process (a spawner, our
#: nodes) that gets SIGINT while it is still importing prints a traceback, not a clean stop.
START_GRACE_S = 10.0


class BringupError(RuntimeError):
    """The arm could not be brought up: launch logs it, stops every process and exits with code 1."""


def _nodes(context: Any, *args: Any, **kwargs: Any) -> list[Any]:
    r = _ros()
    share = r.get_package_share_directory("robot_dynamics")
    values = argument_values(r.LaunchConfiguration, context, PARAMETERS)
    if values["monitor"].strip().lower() in ("true", "1", "yes", "on"):
        values["monitor"] = os.path.join(r.get_package_share_directory(PACKAGE), *MONITOR_FILE)
    params = arm_parameters(share, **values)
    generated = write_parameter_file(params["controllers_yaml"], "ros2_controllers.yaml")
    # the gains, then the monitor's thresholds and reaction: read last, they win
    gains = [f for f in (params["controllers_file"], params["monitor_file"]) if f]
    ours = tuple(n for n in ("simulator", "controller", "dynamics") if params[n] is not None)
    # no name=: a __node remap would rename every node of the process, the controllers' too
    manager = r.Node(package="controller_manager", executable="ros2_control_node", output="screen",
                     parameters=text_parameters([{"robot_description": params["robot_description"]}, generated,
                                                 *gains], r.ParameterValue),
                     remappings=params["controller_manager_remappings"])
    # one spawner per entry: a chain's controllers in one spawner, activated in its order
    spawners = [r.Node(package="controller_manager", executable="spawner", name=f"spawner_{s['controllers'][0]}",
                       output="screen", arguments=spawner_arguments(s))
                for s in params["spawners"]]
    trajectory = node_actions(r.Node, r.ParameterValue, params, ("trajectory",), params["remappings"])
    return [
        state_publisher_action(r.Node, r.ParameterValue, params),
        manager,
        *_fail_loudly(manager, [(n, s["controllers"]) for n, s in zip(spawners, params["spawners"])],
                      params["hardware_plugin"]),
        *spawners,
        *node_actions(r.Node, r.ParameterValue, params, ours, params["remappings"]),
        *_after_all(spawners, trajectory),
        rviz_action(r.Node, params, r.LaunchConfiguration("rviz_config").perform(context),
                    r.IfCondition(r.LaunchConfiguration("use_rviz"))),
    ]


def _fail_loudly(manager: Any, spawners: list[tuple[Any, list[str]]], hardware_plugin: str) -> list[Any]:
    """Event handlers that end the launch with a BringupError naming the cause when controller_manager
    ends or cannot load its hardware, or a spawner fails, while the launch is not shutting down
    (Ctrl-C ends them too). ``spawners``: (Node action, its controllers) pairs."""
    r = _ros()
    output: collections.deque[str] = collections.deque(maxlen=400)  # controller_manager's last lines: its errors are the cause
    started = time.monotonic()
    failed: list[str] = []

    def fail(process: str, returncode: int | None) -> list[Any] | None:
        if failed:
            return None
        failed.append(process)
        message = exit_message(process, returncode, list(output), hardware_plugin)

        def stop(context: Any) -> None:
            if not context.is_shutdown:
                raise BringupError(message)

        wait = START_GRACE_S - (time.monotonic() - started)
        action = r.OpaqueFunction(function=stop)
        return [r.TimerAction(period=wait, actions=[action]) if wait > 0 else action]

    def heard(event: Any) -> list[Any] | None:
        lines = event.text.decode(errors="replace").splitlines()
        output.extend(lines)
        if any(HARDWARE_NOT_LOADED in line for line in lines):  # Jazzy's: it runs on, useless
            return fail("controller_manager (ros2_control_node)", None)
        return None

    def manager_ended(event: Any, context: Any) -> list[Any] | None:
        if context.is_shutdown:
            return None
        if event.returncode == 0:  # asked to stop (a SIGINT of its own): not a failure, but the end
            return [r.Shutdown(reason="controller_manager (ros2_control_node) stopped")]
        return fail("controller_manager (ros2_control_node)", event.returncode)

    def spawner_ended(controllers: list[str]) -> Any:
        def ended(event: Any, context: Any) -> list[Any] | None:
            if event.returncode != 0 and not context.is_shutdown:
                return fail(f"the spawner of {', '.join(controllers)}", event.returncode)
            return None
        return ended

    return [r.RegisterEventHandler(r.OnProcessIO(target_action=manager, on_stdout=heard, on_stderr=heard)),
            r.RegisterEventHandler(r.OnProcessExit(target_action=manager, on_exit=manager_ended)),
            *(r.RegisterEventHandler(r.OnProcessExit(target_action=node, on_exit=spawner_ended(controllers)))
              for node, controllers in spawners)]


def _after_all(processes: list[Any], actions: list[Any]) -> list[Any]:
    """``actions`` once every one of ``processes`` (launch_ros Node actions) has exited with code 0:
    one OnProcessExit handler each, the last one to see its process exit returns ``actions``
    (nothing when one failed or the launch is shutting down)."""
    if not processes:
        return actions
    r = _ros()
    running = {id(p) for p in processes}
    failed: list[Any] = []

    def exited(event: Any, context: Any) -> list[Any] | None:
        running.discard(id(event.action))
        if event.returncode != 0:
            failed.append(event.action)
        return None if running or failed or context.is_shutdown else actions

    return [r.RegisterEventHandler(r.OnProcessExit(target_action=p, on_exit=exited)) for p in processes]




def _ros() -> SimpleNamespace:
    """The launch and launch_ros classes this module uses (imported when a description is made)."""
    from ament_index_python.packages import get_package_share_directory
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument, OpaqueFunction, RegisterEventHandler, Shutdown, TimerAction
    from launch.conditions import IfCondition
    from launch.event_handlers import OnProcessExit, OnProcessIO
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node
    from launch_ros.parameter_descriptions import ParameterValue

    return SimpleNamespace(
        get_package_share_directory=get_package_share_directory, LaunchDescription=LaunchDescription,
        DeclareLaunchArgument=DeclareLaunchArgument, OpaqueFunction=OpaqueFunction,
        RegisterEventHandler=RegisterEventHandler, Shutdown=Shutdown, TimerAction=TimerAction, IfCondition=IfCondition,
        OnProcessExit=OnProcessExit, OnProcessIO=OnProcessIO, LaunchConfiguration=LaunchConfiguration, Node=Node,
        ParameterValue=ParameterValue)


def launch_description() -> Any:
    """arm.launch.py's LaunchDescription: its arguments, then the nodes made from them."""
    r = _ros()
    names = PARAMETERS + ("use_rviz", "rviz_config")
    declared = declare_arguments(r.DeclareLaunchArgument, r.get_package_share_directory("robot_dynamics"), names,
                                 bringup=r.get_package_share_directory(PACKAGE))
    return r.LaunchDescription([*declared, r.OpaqueFunction(function=_nodes)])
