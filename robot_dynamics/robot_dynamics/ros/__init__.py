"""ROS 2 layer: the only part of robot_dynamics that talks to rclpy and message packages.

Pure modules (no rclpy import): ``conversion`` (messages <-> arrays), ``params`` (parameter
tables and validation), ``logic`` / ``motion`` (what each node callback does), ``messages``
(message classes of the real layout, for tests). Node modules (import rclpy when run):
``dynamics_node``, ``trajectory_node``, ``controller_node``, ``simulator_node``.
"""
