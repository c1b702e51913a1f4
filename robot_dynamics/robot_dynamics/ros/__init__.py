"""ROS 2 layer: the only part of robot_dynamics that talks to rclpy and message packages.

Pure modules (no rclpy, tested without ROS): ``conversion`` (messages <-> arrays, joints by
name), ``params`` (parameter tables and validation), ``logic`` (the dynamics node's
services), ``motion`` (trajectory streamer, control loop, simulated plant), ``launch_support``
(what the launch files compute), ``compat`` (what differs between Humble and Jazzy),
``messages`` (message classes of the real field layout, for tests, and typing stubs),
``command_log`` (the controller node's record of the commands it published). rclpy
modules: ``node_common`` and the four nodes ``dynamics_node``, ``trajectory_node``,
``controller_node``, ``simulator_node`` (console scripts ``dynamics``, ``trajectory``,
``controller``, ``simulator``).
"""
