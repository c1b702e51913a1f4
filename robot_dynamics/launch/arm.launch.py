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
    arm_parameters,
    node_actions,
    rviz_action,
    text_parameters,
    write_parameter_file,
)

PACKAGE = "robot_dynamics"
ARGUMENTS = ("robot", "urdf", "drivetrain", "hardware", "hardware_params", "controller", "goal",
             "initial_positions", "update_rate")


def _as_ros(params):
    return text_parameters(params, ParameterValue)


def _nodes(context, *args, **kwargs):
    share = get_package_share_directory(PACKAGE)
    arg = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    params = arm_parameters(share, **arg)
    controllers = write_parameter_file(params["controllers_yaml"], "ros2_controllers.yaml")
    return [
        Node(package="robot_state_publisher", executable="robot_state_publisher", name="robot_state_publisher",
             output="screen", parameters=_as_ros(params["robot_state_publisher"])),
        # no name=: a __node remap would rename every node of the process, the controllers' too
        Node(package="controller_manager", executable="ros2_control_node", output="screen",
             parameters=_as_ros([{"robot_description": params["robot_description"]}, controllers])),
        Node(package="controller_manager", executable="spawner", name="spawner_joint_state_broadcaster",
             output="screen", arguments=["joint_state_broadcaster", "--controller-manager", "/controller_manager"]),
        Node(package="controller_manager", executable="spawner", name="spawner_effort_controller",
             output="screen", arguments=["effort_controller", "--controller-manager", "/controller_manager"]),
        *node_actions(Node, ParameterValue, params,
                      ("simulator", "controller", "trajectory", "dynamics") if params["simulator"] is not None
                      else ("controller", "trajectory", "dynamics")),
        rviz_action(Node, params, LaunchConfiguration("rviz_config").perform(context),
                    IfCondition(LaunchConfiguration("use_rviz"))),
    ]


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory(PACKAGE)
    return LaunchDescription([
        DeclareLaunchArgument("robot", default_value="puma560",
                              description="Bundled robot: planar2, puma560, rx90, iiwa14, three_dof_geared"),
        DeclareLaunchArgument("urdf", default_value="", description="URDF/xacro file instead of a bundled robot"),
        DeclareLaunchArgument("drivetrain", default_value="",
                              description="Drive-train YAML (default: the bundled robot's own)"),
        DeclareLaunchArgument("hardware", default_value="topic",
                              description="topic (our simulator through TopicBasedSystem), mock "
                                          "(mock_components/GenericSystem), urdf (the URDF's own <ros2_control> "
                                          "block) or a vendor's plugin package/Class"),
        DeclareLaunchArgument("hardware_params", default_value="",
                              description="name=value pairs for the hardware plugin, separated by commas"),
        DeclareLaunchArgument("update_rate", default_value="500",
                              description="controller_manager's rate [Hz] (and the simulated hardware's)"),
        DeclareLaunchArgument("controller", default_value="computed_torque",
                              description="pid, pd_gravity, computed_torque, lqr, task_pid, task_computed_torque"),
        DeclareLaunchArgument("goal", default_value="",
                              description="Goal positions (comma list, model joint order) to move to after start"),
        DeclareLaunchArgument("initial_positions", default_value="",
                              description="Initial positions of the simulated arm (comma list)"),
        DeclareLaunchArgument("use_rviz", default_value="true", description="Start rviz2"),
        DeclareLaunchArgument("rviz_config", default_value=f"{share}/rviz/robot_dynamics.rviz",
                              description="rviz2 configuration"),
        OpaqueFunction(function=_nodes),
    ])
