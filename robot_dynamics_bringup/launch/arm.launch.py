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

from robot_dynamics.ros.arm_launch import START_GRACE_S, BringupError, launch_description  # noqa: F401


def generate_launch_description():  # noqa: ANN201 - a launch.LaunchDescription
    return launch_description()
