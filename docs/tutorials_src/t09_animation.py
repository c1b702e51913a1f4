"""
A 3-D view without ROS
======================

rviz shows the robot when ROS runs; without ROS, :func:`robot_dynamics.io.animate_robot`
draws a motion of the robot as its skeleton (each link frame joined to its parent's) and
writes it as an animated GIF or an HTML page with a player. Here the PUMA 560 runs its
computed-torque move of ``robot-dynamics simulate``, and the simulated joint positions are
animated, with the path of the end effector.
"""

import tempfile
from pathlib import Path

import numpy as np

import robot_dynamics as rd
from robot_dynamics import trajectory as tr
from robot_dynamics.control import build_controller
from robot_dynamics.io import animate_robot, skeleton_segments
from robot_dynamics.simulation import simulate

model = rd.load_robot("puma560")
motion = tr.plan("quintic", np.zeros(6), np.array([1.2, -0.8, 0.6, 0.5, -0.6, 1.0]), duration=1.5)
result = simulate(model, build_controller(model, "computed_torque"), motion, settle=0.2, progress=False)

# %%
# The skeleton ends where the forward kinematics puts the end effector.
segments = skeleton_segments(model, result.q[-1])
tip = rd.frame_pose(model, result.q[-1], model.end_effector)[:3, 3]
k = model.frame_names.index(model.end_effector)
assert np.allclose(segments[k - 1, 1], tip)
print("end effector:", model.end_effector, "at", tip.round(4), "m")

# %%
# The animation, written as a GIF file (the same animation is shown below).
gif = Path(tempfile.mkdtemp()) / "puma560_simulate.gif"
animation = animate_robot(model, result.t, result.q, gif, fps=12, title="PUMA 560, computed torque")
print(f"{gif.name}: {gif.stat().st_size / 1024:.0f} KiB")
