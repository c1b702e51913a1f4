"""Only the dynamics node, beside a real arm that already publishes /joint_states and
/robot_description (its robot_state_publisher):

    ros2 launch robot_dynamics dynamics.launch.py
    ros2 launch robot_dynamics dynamics.launch.py urdf:=/path/to/arm.urdf drivetrain:=/path/to/drive.yaml

Without urdf:= the node takes the URDF from the /robot_description topic.
"""

from __future__ import annotations

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from robot_dynamics.ros.launch_support import dynamics_parameters

PACKAGE = "robot_dynamics"


def _nodes(context, *args, **kwargs):
    share = get_package_share_directory(PACKAGE)
    params = dynamics_parameters(share, urdf=LaunchConfiguration("urdf").perform(context),
                                 drivetrain=LaunchConfiguration("drivetrain").perform(context))
    overrides = params[1]
    if "robot_description" in overrides:
        overrides["robot_description"] = ParameterValue(overrides["robot_description"], value_type=str)
    overrides["joint_states_topic"] = LaunchConfiguration("joint_states_topic").perform(context)
    return [Node(package=PACKAGE, executable="dynamics", name="dynamics", output="screen", parameters=params)]


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([
        DeclareLaunchArgument("urdf", default_value="",
                              description="URDF/xacro file; empty: take /robot_description from the topic"),
        DeclareLaunchArgument("drivetrain", default_value="", description="Drive-train YAML (friction, rotor inertia)"),
        DeclareLaunchArgument("joint_states_topic", default_value="/joint_states",
                              description="Joint states of the arm"),
        OpaqueFunction(function=_nodes),
    ])
