"""Test stand-in for robot_state_publisher: latches the URDF on /robot_description, nothing else.

The minimal ROS 2 that the tests build has no robot_state_publisher (C++, rclcpp); the nodes
under test need only its /robot_description (std_msgs/String, transient local, as it
publishes it). /tf is not published: nothing under test reads it.

    python robot_description_publisher.py URDF_FILE
"""

from __future__ import annotations

import sys

import rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String


def main() -> None:
    text = open(sys.argv[1], encoding="utf-8").read()
    rclpy.init()
    node = rclpy.create_node("robot_state_publisher_stand_in")
    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
    pub = node.create_publisher(String, "/robot_description", latched)
    pub.publish(String(data=text))
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
