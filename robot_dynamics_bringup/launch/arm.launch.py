"""The arm brought up through ros2_control, as on a real arm.

    ros2 launch robot_dynamics_bringup arm.launch.py robot:=puma560 goal:="0.5,-0.4,0.3,0.2,-0.1,0.6"
    ros2 launch robot_dynamics_bringup arm.launch.py controller:=gravity_compensation
    ros2 launch robot_dynamics_bringup arm.launch.py control:=node hardware:=topic use_rviz:=false

controller_manager (``ros2_control_node``) loads the robot's URDF with a ``<ros2_control>`` block
generated for it (``robot-dynamics ros2-control`` prints the same) and two parameter files: one
generated for the robot (the controllers' types, joints and ``robot_model``, the robot as the
engine's model text, made here by robot_dynamics' one loader with each plugin's checks, as the
simulated hardware's in its block; controller manager's ``update_rate``) and ``controllers_file``, the gains (default: this package's
``config/controllers.yaml``, read last). Spawners start joint_state_broadcaster and the
controllers; our trajectory node plans the motion to ``goal``. The defaults of every argument are
in robot_dynamics.ros.launch_support. The control (``control:=``):

- ``in_loop`` (default): robot_dynamics_control's three controllers inside controller_manager's
  update, ``controller:=`` the one active at start (``computed_torque``, the default, with
  joint_trajectory_controller chained in front of it: FollowJointTrajectory goals go to
  /joint_trajectory_controller/follow_joint_trajectory, trajectories, the trajectory node's plans
  too, to /joint_trajectory_controller/joint_trajectory; ``pd_gravity``; ``gravity_compensation``),
  the others loaded inactive, so that one ``ros2 control switch_controllers`` changes the law;
  With ``monitor:=true`` robot_dynamics_control's collision monitor sits between the
  computed-torque controller and the hardware (its thresholds and reaction in this package's
  ``config/collision_monitor.yaml``, or ``monitor:=/path/to/copy.yaml``): it passes the efforts
  through, publishes /collision_monitor_controller/external_torque and, on a collision,
  /collision_monitor_controller/collision, and holds the arm until
  /collision_monitor_controller/reset;
- ``node``: our controller node (``controller:=`` its law) commands an
  ``effort_controllers/JointGroupEffortController`` named effort_controller, reading /joint_states
  from joint_state_broadcaster and the trajectory node's reference.

The hardware (``hardware:=``):

- ``sim`` (default): ``robot_dynamics_control/SimulatedSystem``, the arm's dynamics integrated in
  controller_manager's own read/write cycle (RK4 steps of 1 ms at most);
- ``topic``: our simulator node behind ``topic_based_ros2_control/TopicBasedSystem``, the way
  simulators are bridged to ros2_control: efforts go out on /robot_dynamics/joint_commands and the
  simulated state comes back on /robot_dynamics/joint_states (sensor_msgs/JointState);
- ``mock``: ``mock_components/GenericSystem`` (no dynamics: the interfaces echo the commands);
- ``urdf``: the URDF's own ``<ros2_control>`` block (a vendor's description, ``urdf:=``);
- ``package/Class``: a vendor's hardware plugin, with ``hardware_params:="ip=192.168.1.2,..."``
  (for ``sim``: ``substeps``, ``friction``, ``max_step``, ...).

Failing loudly: controller_manager must run as long as the launch does, with its hardware, and
every spawner must succeed. When controller_manager fails (a hardware plugin that cannot load: it
ends on Humble, runs on without hardware on Jazzy; a crash) or a spawner fails (a controller that
does not configure, no controller manager within 60 s), the launch stops every process and ends
with exit code 1 and one error naming the process, its exit code, the hardware plugin and
controller_manager's own error lines (at the earliest 10 s after the start: a Python process
stopped while it still imports prints a traceback instead of stopping cleanly).
controller_manager stopped with exit code 0 (a SIGINT of its own) ends the launch without an
error. A terminal's Ctrl-C stops every process with exit code 0.

Topic graph (control:=node hardware:=topic): trajectory/reference -> controller ->
/effort_controller/commands -> controller_manager -> /robot_dynamics/joint_commands -> simulator
-> /robot_dynamics/joint_states -> controller_manager -> joint_state_broadcaster -> /joint_states
-> (robot_state_publisher -> /tf -> rviz, controller, trajectory, dynamics). With control:=in_loop
hardware:=sim the loop has no topic: only joint_state_broadcaster's /joint_states leaves it.

controller_manager reads the description from its ``robot_description`` parameter (Humble) or
from its ``~/robot_description`` topic, remapped to robot_state_publisher's /robot_description
(Jazzy); both are given.

The trajectory node starts once every spawner has exited successfully (its controllers active):
it begins its motion to ``goal`` a fixed delay after its first joint state, and
joint_state_broadcaster publishes the joint states before the commanding controller is active (a
loaded machine takes seconds to start a spawner), so a motion begun earlier runs while the arm is
not commanded yet.
"""

from __future__ import annotations

import collections
import os
import time

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction, RegisterEventHandler, Shutdown, TimerAction
from launch.conditions import IfCondition
from launch.event_handlers import OnProcessExit, OnProcessIO
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from robot_dynamics.ros.launch_support import (
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


def _nodes(context, *args, **kwargs):
    share = get_package_share_directory("robot_dynamics")
    values = argument_values(LaunchConfiguration, context, PARAMETERS)
    if values["monitor"].strip().lower() in ("true", "1", "yes", "on"):
        values["monitor"] = os.path.join(get_package_share_directory(PACKAGE), *MONITOR_FILE)
    params = arm_parameters(share, **values)
    generated = write_parameter_file(params["controllers_yaml"], "ros2_controllers.yaml")
    # the gains, then the monitor's thresholds and reaction: read last, they win
    gains = [f for f in (params["controllers_file"], params["monitor_file"]) if f]
    ours = tuple(n for n in ("simulator", "controller", "dynamics") if params[n] is not None)
    # no name=: a __node remap would rename every node of the process, the controllers' too
    manager = Node(package="controller_manager", executable="ros2_control_node", output="screen",
                   parameters=text_parameters([{"robot_description": params["robot_description"]}, generated, *gains],
                                              ParameterValue),
                   remappings=params["controller_manager_remappings"])
    # one spawner per entry: a chain's controllers in one spawner, activated in its order
    spawners = [Node(package="controller_manager", executable="spawner", name=f"spawner_{s['controllers'][0]}",
                     output="screen", arguments=spawner_arguments(s))
                for s in params["spawners"]]
    trajectory = node_actions(Node, ParameterValue, params, ("trajectory",), params["remappings"])
    return [
        state_publisher_action(Node, ParameterValue, params),
        manager,
        *_fail_loudly(manager, [(n, s["controllers"]) for n, s in zip(spawners, params["spawners"])],
                      params["hardware_plugin"]),
        *spawners,
        *node_actions(Node, ParameterValue, params, ours, params["remappings"]),
        *_after_all(spawners, trajectory),
        rviz_action(Node, params, LaunchConfiguration("rviz_config").perform(context),
                    IfCondition(LaunchConfiguration("use_rviz"))),
    ]


def _fail_loudly(manager, spawners, hardware_plugin):
    """Event handlers that end the launch with a BringupError naming the cause when controller_manager
    ends or cannot load its hardware, or a spawner fails, while the launch is not shutting down
    (Ctrl-C ends them too). ``spawners``: (Node action, its controllers) pairs."""
    output = collections.deque(maxlen=400)  # controller_manager's last lines: its errors are the cause
    started = time.monotonic()
    failed = []

    def fail(process, returncode):
        if failed:
            return None
        failed.append(process)
        message = exit_message(process, returncode, list(output), hardware_plugin)

        def stop(context):
            if not context.is_shutdown:
                raise BringupError(message)

        wait = START_GRACE_S - (time.monotonic() - started)
        action = OpaqueFunction(function=stop)
        return [TimerAction(period=wait, actions=[action]) if wait > 0 else action]

    def heard(event):
        lines = event.text.decode(errors="replace").splitlines()
        output.extend(lines)
        if any(HARDWARE_NOT_LOADED in line for line in lines):  # Jazzy's: it runs on, useless
            return fail("controller_manager (ros2_control_node)", None)
        return None

    def manager_ended(event, context):
        if context.is_shutdown:
            return None
        if event.returncode == 0:  # asked to stop (a SIGINT of its own): not a failure, but the end
            return [Shutdown(reason="controller_manager (ros2_control_node) stopped")]
        return fail("controller_manager (ros2_control_node)", event.returncode)

    def spawner_ended(controllers):
        def ended(event, context):
            if event.returncode != 0 and not context.is_shutdown:
                return fail(f"the spawner of {', '.join(controllers)}", event.returncode)
            return None
        return ended

    return [RegisterEventHandler(OnProcessIO(target_action=manager, on_stdout=heard, on_stderr=heard)),
            RegisterEventHandler(OnProcessExit(target_action=manager, on_exit=manager_ended)),
            *(RegisterEventHandler(OnProcessExit(target_action=node, on_exit=spawner_ended(controllers)))
              for node, controllers in spawners)]


def _after_all(processes, actions):
    """``actions`` once every one of ``processes`` (launch_ros Node actions) has exited with code 0:
    one OnProcessExit handler each, the last one to see its process exit returns ``actions``
    (nothing when one failed or the launch is shutting down)."""
    if not processes:
        return actions
    running = {id(p) for p in processes}
    failed = []

    def exited(event, context):
        running.discard(id(event.action))
        if event.returncode != 0:
            failed.append(event.action)
        return None if running or failed or context.is_shutdown else actions

    return [RegisterEventHandler(OnProcessExit(target_action=p, on_exit=exited)) for p in processes]


def generate_launch_description() -> LaunchDescription:
    names = PARAMETERS + ("use_rviz", "rviz_config")
    declared = declare_arguments(DeclareLaunchArgument, get_package_share_directory("robot_dynamics"), names,
                                 bringup=get_package_share_directory(PACKAGE))
    return LaunchDescription([*declared, OpaqueFunction(function=_nodes)])
