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

from robot_dynamics.ros.launch_support import (
    argument_values,
    declare_arguments,
    node_actions,
    rviz_action,
    sim_parameters,
    state_publisher_action,
)

PACKAGE = "robot_dynamics"
PARAMETERS = ("robot", "urdf", "drivetrain", "controller", "goal", "initial_positions")


def _nodes(context, *args, **kwargs):
    share = get_package_share_directory(PACKAGE)
    params = sim_parameters(share, **argument_values(LaunchConfiguration, context, PARAMETERS))
    return [
        state_publisher_action(Node, ParameterValue, params, IfCondition(LaunchConfiguration("use_robot_state_publisher"))),
        *node_actions(Node, ParameterValue, params, ("simulator", "controller", "trajectory", "dynamics")),
        rviz_action(Node, params, LaunchConfiguration("rviz_config").perform(context),
                    IfCondition(LaunchConfiguration("use_rviz"))),
    ]


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory(PACKAGE)
    names = PARAMETERS + ("use_rviz", "use_robot_state_publisher", "rviz_config")
    return LaunchDescription([*declare_arguments(DeclareLaunchArgument, share, names), OpaqueFunction(function=_nodes)])
