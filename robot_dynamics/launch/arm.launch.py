"""The arm brought up through ros2_control, as on a real arm.

    ros2 launch robot_dynamics arm.launch.py robot:=puma560 goal:="0.5,-0.4,0.3,0.2,-0.1,0.6"
    ros2 launch robot_dynamics arm.launch.py control:=node hardware:=topic use_rviz:=false

controller_manager (``ros2_control_node``) loads the robot's URDF with a ``<ros2_control>`` block
generated for it (``robot-dynamics ros2-control`` prints the same) and spawns
joint_state_broadcaster; our trajectory node plans the motion to ``goal``. The control
(``control:=``; the defaults of both arguments are in robot_dynamics.ros.launch_support):

- ``in_loop`` (default): robot_dynamics_control's computed-torque controller
  (``computed_torque_controller``) runs inside controller_manager's update, with
  joint_trajectory_controller chained in front of it: FollowJointTrajectory goals go to
  /joint_trajectory_controller/follow_joint_trajectory, trajectories (the trajectory node's plans)
  to /joint_trajectory_controller/joint_trajectory;
- ``node``: our controller node commands an ``effort_controllers/JointGroupEffortController``
  named effort_controller, reading /joint_states from joint_state_broadcaster and the trajectory
  node's reference.

The hardware (``hardware:=``):

- ``sim`` (default): ``robot_dynamics_control/SimulatedSystem``, the arm's dynamics integrated in
  controller_manager's own read/write cycle (RK4 steps of 1 ms at most);
- ``topic``: our simulator node behind ``topic_based_ros2_control/TopicBasedSystem``, the way
  simulators are bridged to ros2_control: efforts go out on /robot_dynamics/joint_commands and the
  simulated state comes back on /robot_dynamics/joint_states (sensor_msgs/JointState);
- ``mock``: ``mock_components/GenericSystem`` (no dynamics: the interfaces echo the commands);
- ``urdf``: the URDF's own ``<ros2_control>`` block (a vendor's description, ``urdf:=``);
- ``package/Class``: a vendor's hardware plugin, with ``hardware_params:="ip=192.168.1.2,..."``
  (for ``sim``: ``substeps``, ``friction``, ``timing_log=FILE``, ...).

Topic graph (control:=node hardware:=topic): trajectory/reference -> controller ->
/effort_controller/commands -> controller_manager -> /robot_dynamics/joint_commands -> simulator
-> /robot_dynamics/joint_states -> controller_manager -> joint_state_broadcaster -> /joint_states
-> (robot_state_publisher -> /tf -> rviz, controller, trajectory, dynamics). With control:=in_loop
hardware:=sim the loop has no topic: only joint_state_broadcaster's /joint_states leaves it.

controller_manager reads the description from its ``robot_description`` parameter (Humble) or
from its ``~/robot_description`` topic, remapped to robot_state_publisher's /robot_description
(Jazzy); both are given.

The trajectory node starts once every spawner has exited (its controllers active): it begins its
motion to ``goal`` a fixed delay after its first joint state, and joint_state_broadcaster
publishes the joint states before the commanding controller is active (a loaded machine takes
seconds to start a spawner), so a motion begun earlier runs while the arm is not commanded yet
(TopicBasedSystem sends no command and the simulated arm keeps its brakes;
joint_trajectory_controller refuses a trajectory before it is active). The arm then faces the
whole step to the goal at once and stops short of it where Coulomb friction holds it, up to
(M Kp)^-1 Fc away (PUMA 560: 0.024 rad on joint 3).
"""

from __future__ import annotations

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction, RegisterEventHandler
from launch.event_handlers import OnProcessExit
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from robot_dynamics.ros.launch_support import (
    argument_values,
    arm_parameters,
    declare_arguments,
    node_actions,
    rviz_action,
    state_publisher_action,
    text_parameters,
    write_parameter_file,
)

PACKAGE = "robot_dynamics"
PARAMETERS = ("robot", "urdf", "drivetrain", "control", "hardware", "hardware_params", "controller", "goal",
              "initial_positions", "update_rate")


def _nodes(context, *args, **kwargs):
    share = get_package_share_directory(PACKAGE)
    params = arm_parameters(share, **argument_values(LaunchConfiguration, context, PARAMETERS))
    controllers = write_parameter_file(params["controllers_yaml"], "ros2_controllers.yaml")
    ours = tuple(n for n in ("simulator", "controller", "dynamics") if params[n] is not None)
    spawners = [Node(package="controller_manager", executable="spawner", name=f"spawner_{chain[0]}", output="screen",
                     arguments=[*chain, "--controller-manager", "/controller_manager"])
                for chain in params["spawners"]]
    trajectory = node_actions(Node, ParameterValue, params, ("trajectory",), params["remappings"])
    return [
        state_publisher_action(Node, ParameterValue, params),
        # no name=: a __node remap would rename every node of the process, the controllers' too
        Node(package="controller_manager", executable="ros2_control_node", output="screen",
             parameters=text_parameters([{"robot_description": params["robot_description"]}, controllers],
                                        ParameterValue),
             remappings=params["controller_manager_remappings"]),
        # one spawner per entry; a chain's controllers in one spawner, activated in its order
        *spawners,
        *node_actions(Node, ParameterValue, params, ours, params["remappings"]),
        *_after_all(spawners, trajectory),
        rviz_action(Node, params, LaunchConfiguration("rviz_config").perform(context),
                    IfCondition(LaunchConfiguration("use_rviz"))),
    ]


def _after_all(processes, actions):
    """``actions`` once every one of ``processes`` (launch_ros Node actions) has exited: one
    OnProcessExit handler each, the last one to see its process exit returns ``actions``."""
    if not processes:
        return actions
    running = {id(p) for p in processes}

    def exited(event, context):
        running.discard(id(event.action))
        return None if running else actions

    return [RegisterEventHandler(OnProcessExit(target_action=p, on_exit=exited)) for p in processes]


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory(PACKAGE)
    names = PARAMETERS + ("use_rviz", "rviz_config")
    return LaunchDescription([*declare_arguments(DeclareLaunchArgument, share, names), OpaqueFunction(function=_nodes)])
