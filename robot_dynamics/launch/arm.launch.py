"""The arm brought up through ros2_control, as on a real arm.

    ros2 launch robot_dynamics arm.launch.py robot:=puma560 hardware:=topic \
        goal:="0.5,-0.4,0.3,0.2,-0.1,0.6" use_rviz:=true

controller_manager (``ros2_control_node``) loads the robot's URDF with a ``<ros2_control>`` block
generated for it (``robot-dynamics ros2-control`` prints the same), spawns joint_state_broadcaster
and an ``effort_controllers/JointGroupEffortController`` named effort_controller; our controller
node commands it and reads /joint_states from joint_state_broadcaster; our trajectory node
streams the reference. The hardware:

- ``topic`` (default): our simulator node behind ``topic_based_ros2_control/TopicBasedSystem``,
  the way simulators are bridged to ros2_control: efforts go out on /robot_dynamics/joint_commands
  and the simulated state comes back on /robot_dynamics/joint_states (sensor_msgs/JointState);
- ``mock``: ``mock_components/GenericSystem`` (no dynamics: the interfaces echo the commands);
- ``urdf``: the URDF's own ``<ros2_control>`` block (a vendor's description, ``urdf:=``);
- ``package/Class``: a vendor's hardware plugin, with ``hardware_params:="ip=192.168.1.2,..."``.

Topic graph (hardware:=topic): trajectory/reference -> controller -> /effort_controller/commands
-> controller_manager -> /robot_dynamics/joint_commands -> simulator -> /robot_dynamics/joint_states
-> controller_manager -> joint_state_broadcaster -> /joint_states -> (robot_state_publisher ->
/tf -> rviz, controller, trajectory, dynamics).
"""

from __future__ import annotations

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
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
PARAMETERS = ("robot", "urdf", "drivetrain", "hardware", "hardware_params", "controller", "goal",
              "initial_positions", "update_rate")


def _nodes(context, *args, **kwargs):
    share = get_package_share_directory(PACKAGE)
    params = arm_parameters(share, **argument_values(LaunchConfiguration, context, PARAMETERS))
    controllers = write_parameter_file(params["controllers_yaml"], "ros2_controllers.yaml")
    return [
        state_publisher_action(Node, ParameterValue, params),
        # no name=: a __node remap would rename every node of the process, the controllers' too
        Node(package="controller_manager", executable="ros2_control_node", output="screen",
             parameters=text_parameters([{"robot_description": params["robot_description"]}, controllers],
                                        ParameterValue)),
        *(Node(package="controller_manager", executable="spawner", name=f"spawner_{c}", output="screen",
               arguments=[c, "--controller-manager", "/controller_manager"])
          for c in ("joint_state_broadcaster", "effort_controller")),
        *node_actions(Node, ParameterValue, params,
                      ("simulator", "controller", "trajectory", "dynamics") if params["simulator"] is not None
                      else ("controller", "trajectory", "dynamics")),
        rviz_action(Node, params, LaunchConfiguration("rviz_config").perform(context),
                    IfCondition(LaunchConfiguration("use_rviz"))),
    ]


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory(PACKAGE)
    names = PARAMETERS + ("use_rviz", "rviz_config")
    return LaunchDescription([*declare_arguments(DeclareLaunchArgument, share, names), OpaqueFunction(function=_nodes)])
