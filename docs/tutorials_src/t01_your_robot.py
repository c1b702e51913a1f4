"""
Your robot: a URDF and a drive-train YAML
=========================================

A robot is its URDF (kinematics, masses, inertias, limits) plus, beside it, a YAML file of
what a URDF cannot say: friction, rotor inertia and gear ratios, and gear trains. This
tutorial writes both for a small three-joint arm, loads them, and checks that the YAML's
numbers arrive where the dynamics uses them.
"""

# %%
# The URDF
# --------
# Any URDF works (xacro too: ``rd.load_urdf("arm.urdf.xacro", xacro_args={...})``). Geometry
# is never loaded, so ``package://`` meshes that cannot be found do not matter. A link without
# ``<inertial>`` is massless, as the URDF specification says.
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import robot_dynamics as rd

URDF = """<?xml version="1.0"?>
<robot name="my_arm">
  <link name="base_link"/>
  <link name="shoulder">
    <inertial><origin xyz="0 0 0.1"/><mass value="4.0"/>
      <inertia ixx="0.02" iyy="0.02" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <link name="upper_arm">
    <inertial><origin xyz="0.2 0 0"/><mass value="3.0"/>
      <inertia ixx="0.005" iyy="0.05" izz="0.05" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <link name="forearm">
    <inertial><origin xyz="0.15 0 0"/><mass value="1.5"/>
      <inertia ixx="0.002" iyy="0.015" izz="0.015" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <link name="tool0"/>
  <joint name="yaw" type="revolute">
    <parent link="base_link"/><child link="shoulder"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>
    <limit lower="-3.0" upper="3.0" velocity="2.0" effort="80"/>
  </joint>
  <joint name="pitch" type="revolute">
    <parent link="shoulder"/><child link="upper_arm"/>
    <origin xyz="0 0 0.2" rpy="1.5708 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-2.0" upper="2.0" velocity="2.0" effort="120"/>
  </joint>
  <joint name="elbow" type="revolute">
    <parent link="upper_arm"/><child link="forearm"/>
    <origin xyz="0.4 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-2.5" upper="2.5" velocity="3.0" effort="60"/>
  </joint>
  <joint name="tool_joint" type="fixed">
    <parent link="forearm"/><child link="tool0"/><origin xyz="0.3 0 0"/>
  </joint>
</robot>
"""

# %%
# The drive-train YAML
# --------------------
# Per joint: viscous and Coulomb friction (Khalil [7.27]), the motor's rotor inertia with the
# gear ratio (the joint then sees ``Ia = N^2 Jm``, Khalil [7.29]) or directly an
# ``armature``, and limits that override the URDF's. Gear trains that couple joints
# (``secondary_links``, ``gear_pairs``) are in the :doc:`drive-train tutorial
# <t03_drive_trains>`.
YAML = """
joints:
  yaw:   {viscous: 2.0, coulomb: 1.5, rotor_inertia: 1.0e-4, gear_ratio: 100}
  pitch: {viscous: 3.0, coulomb: 2.5, rotor_inertia: 1.2e-4, gear_ratio: 120}
  elbow: {viscous: 1.0, coulomb: 0.8, armature: 0.5}
"""

folder = Path(tempfile.mkdtemp())
(folder / "my_arm.urdf").write_text(URDF)
(folder / "my_arm_drivetrain.yaml").write_text(YAML)

model = rd.load_urdf(folder / "my_arm.urdf", drivetrain=folder / "my_arm_drivetrain.yaml")
print(model.name, "joints:", model.joint_names, "nq =", model.nq)
print("viscous  Fv [N m s/rad]:", model.viscous)
print("Coulomb  Fc [N m]:      ", model.coulomb)
print("rotor    Ia [kg m^2]:   ", model.rotor_inertia)

# %%
# The YAML's numbers are where the dynamics uses them: the mass matrix of the model with the
# drive train exceeds the bare URDF's by exactly ``N^2 Jm`` (or the armature) on its diagonal.
bare = rd.load_urdf(folder / "my_arm.urdf")
q = np.array([0.3, -0.5, 0.8])
extra = rd.crba(model, q) - rd.crba(bare, q)
expected = np.diag([100**2 * 1.0e-4, 120**2 * 1.2e-4, 0.5])
print("M(with drive train) - M(URDF alone):\n", extra.round(6))
assert np.allclose(extra, expected, atol=1e-12)

# %%
# Friction enters the inverse dynamics: at constant velocity and without gravity, each
# joint's torque is ``Fv qd + Fc sign(qd)`` plus the velocity terms of the rigid body.
qd = np.array([0.5, -0.2, 1.0])
zero = np.zeros(3)
friction = rd.rnea(model, q, qd, zero, gravity=(0, 0, 0)) - rd.rnea(model, q, qd, zero, gravity=(0, 0, 0), friction=False)
print("friction torques [N m]:", friction)
assert np.allclose(friction, model.viscous * qd + model.coulomb * np.sign(qd))

# %%
# Mistakes are reported with the valid choices
# --------------------------------------------
try:
    rd.load_urdf(folder / "my_arm.urdf", drivetrain={"joints": {"elbw": {"viscous": 1.0}}})
except rd.ModelError as exc:
    print("ModelError:", exc)

# %%
# The gravity load over the arm's range
# -------------------------------------
# ``rd.gravity_torques`` takes a batch of states: every posture in one call.
pitch = np.linspace(-2.0, 2.0, 81)
Q = np.zeros((pitch.size, 3))
Q[:, 1] = pitch
Q[:, 2] = 0.5
G = rd.gravity_torques(model, Q)
fig, ax = plt.subplots(figsize=(6, 3.2))
for j, name in enumerate(model.joint_names):
    ax.plot(pitch, G[:, j], label=name)
ax.axhline(model.effort_limit[1], ls=":", c="k", lw=0.8, label="pitch effort limit")
ax.set_xlabel("pitch angle [rad] (elbow at 0.5 rad)")
ax.set_ylabel("gravity torque [N m]")
ax.legend()
fig.tight_layout()
