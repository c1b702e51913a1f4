"""Simulated arm: robot_state_publisher + simulator + controller + trajectory + dynamics + rviz.

    ros2 launch robot_dynamics sim.launch.py robot:=puma560 controller:=computed_torque \
        goal:="0.5,-0.4,0.3,0.2,-0.1,0.6" use_rviz:=true

Topic graph: trajectory/reference -> controller -> /effort_controller/commands -> simulator
-> /joint_states -> (robot_state_publisher -> /tf -> rviz, controller, trajectory, dynamics).
Send a goal at any time:
    ros2 topic pub --once /trajectory/goal sensor_msgs/msg/JointState \
        "{name: [joint1, joint2, joint3, joint4, joint5, joint6], position: [0.5, -0.4, 0.3, 0.2, -0.1, 0.6]}"
"""

from __future__ import annotations

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from robot_dynamics.ros.launch_support import node_actions, rviz_action, sim_parameters, text_parameters

PACKAGE = "robot_dynamics"


def _as_ros(params):
    return text_parameters(params, ParameterValue)


def _nodes(context, *args, **kwargs):
    share = get_package_share_directory(PACKAGE)
    arg = {name: LaunchConfiguration(name).perform(context)
           for name in ("robot", "urdf", "drivetrain", "controller", "goal", "initial_positions")}
    params = sim_parameters(share, **arg)
    return [
        Node(package="robot_state_publisher", executable="robot_state_publisher", name="robot_state_publisher",
             output="screen", parameters=_as_ros(params["robot_state_publisher"]),
             condition=IfCondition(LaunchConfiguration("use_robot_state_publisher"))),
        *node_actions(Node, ParameterValue, params, ("simulator", "controller", "trajectory", "dynamics")),
        rviz_action(Node, params, LaunchConfiguration("rviz_config").perform(context),
                    IfCondition(LaunchConfiguration("use_rviz"))),
    ]


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory(PACKAGE)
    return LaunchDescription([
        DeclareLaunchArgument("robot", default_value="puma560",
                              description="Bundled robot: planar2, puma560, rx90, iiwa14"),
        DeclareLaunchArgument("urdf", default_value="", description="URDF/xacro file instead of a bundled robot"),
        DeclareLaunchArgument("drivetrain", default_value="",
                              description="Drive-train YAML (default: the bundled robot's own)"),
        DeclareLaunchArgument("controller", default_value="computed_torque",
                              description="pid, pd_gravity, computed_torque, lqr, task_pid, task_computed_torque"),
        DeclareLaunchArgument("goal", default_value="",
                              description="Goal positions (comma list, model joint order) to move to after start"),
        DeclareLaunchArgument("initial_positions", default_value="",
                              description="Initial positions of the simulated arm (comma list)"),
        DeclareLaunchArgument("use_rviz", default_value="true", description="Start rviz2"),
        DeclareLaunchArgument("use_robot_state_publisher", default_value="true",
                              description="Start robot_state_publisher (false where something else publishes "
                                          "/robot_description and /tf)"),
        DeclareLaunchArgument("rviz_config", default_value=f"{share}/rviz/robot_dynamics.rviz",
                              description="rviz2 configuration"),
        OpaqueFunction(function=_nodes),
    ])
