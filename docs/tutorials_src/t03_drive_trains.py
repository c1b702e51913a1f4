"""
Drive trains: gear trains, transmissions and elastic joints
===========================================================

Motors drive real arms through gear trains, and a gear spinning on a moving link couples the
joints. robot_dynamics models the whole gear train with Chen & Wang's *virtual link approach*:
every gear, rotor or pulley is a *secondary link* carried by a link of the URDF and turning at
``qdot_j = sum_k b_jk thetadot_k``; its spin adds ``M_s(q) qdd + C_s(q, qd)`` inside the same
recursions (rnea, crba, aba, Coriolis, energy). This tutorial uses the bundled
``three_dof_geared`` robot, the paper's 3-dof example, whose drive-train YAML is
``config/three_dof_geared_drivetrain.yaml`` (the format is on :doc:`the geared robots page
</drive_trains>` and on the :ref:`API page <api-robot_dynamics.drivetrain>`).
"""

import matplotlib.pyplot as plt
import numpy as np

import robot_dynamics as rd
from robot_dynamics import drivetrain as dtr
from robot_dynamics import trajectory as tr

model = rd.load_robot("three_dof_geared")
print("joints:", model.joint_names)
print("structure matrix A (eq. 12):\n", model.drivetrain.A)

# %%
# Motor torques
# -------------
# The joint torques ``G`` and the motor (input) torques ``xi = A^-1 G`` (eq. 22);
# ``actuated_aba`` is the direct dynamics driven by the motors.
q, qd, qdd = np.array([0.3, -0.2, 0.5]), np.array([0.4, 0.1, -0.3]), np.array([1.0, -0.5, 0.2])
tau = rd.rnea(model, q, qd, qdd)
xi = rd.actuator_torques(model, q, qd, qdd)
print("joint torques G [N m]:", tau.round(4))
print("motor torques xi [N m]:", xi.round(4))
assert np.allclose(model.drivetrain.A @ xi, tau, atol=1e-10)
assert np.allclose(rd.actuated_aba(model, q, qd, xi), qdd, atol=1e-9)

# %%
# What the coupling changes
# -------------------------
# Peer libraries stop at a diagonal armature (``sum_j I_j b_jk^2`` on the diagonal of M).
# Along a fast motion, the full model differs from that approximation by the off-diagonal,
# posture-dependent and gyroscopic terms of the gear train.
armature = dtr.diagonal_armature_model(model)
motion = tr.plan("quintic", [-1.86, -1.2, -1.5], [1.86, 1.2, 1.5], duration=1.2)
t = np.linspace(0.0, motion.duration, 241)
Q, QD, QDD = motion.sample(t)
full = rd.rnea(model, Q, QD, QDD)
diag = rd.rnea(armature, Q, QD, QDD)
fig, axes = plt.subplots(1, 3, figsize=(9, 3), sharex=True)
for j, ax in enumerate(axes):
    ax.plot(t, full[:, j], label="full coupling")
    ax.plot(t, diag[:, j], "--", label="diagonal armature")
    ax.set_title(model.joint_names[j])
    ax.set_xlabel("t [s]")
axes[0].set_ylabel("joint torque [N m]")
axes[0].legend(fontsize=8)
fig.tight_layout()
peak = np.abs(full).max(axis=0)
print("max |armature - full| / peak:", (np.abs(diag - full).max(axis=0) / peak).round(3))

# %%
# The identities hold for the geared robot too: ``M`` symmetric positive definite, ``aba``
# undoes ``rnea`` and ``Mdot - 2C`` is skew-symmetric.
M = rd.crba(model, q)
assert np.allclose(M, M.T) and np.linalg.eigvalsh(M).min() > 0
assert np.allclose(rd.aba(model, q, qd, tau), qdd, atol=1e-9)
h = 1e-6
Mdot = (rd.crba(model, q + h * qd) - rd.crba(model, q - h * qd)) / (2 * h)
N = Mdot - 2 * rd.coriolis_matrix(model, q, qd)
assert np.abs(N + N.T).max() < 1e-6

# %%
# Elastic joints
# --------------
# An ``elastic:`` section gives every joint a spring and a motor (Khalil 7.3.8); the state
# doubles to (q, qM). The inverse model gives the motor torques for a desired link motion, and
# the direct model driven by them gives the motion back.
arm = rd.load_urdf(rd.model.registry.robot_files("planar2")[0], drivetrain={"elastic": {
    "shoulder": {"stiffness": 2000.0, "motor_inertia": 0.05},
    "elbow": {"stiffness": 1000.0, "motor_inertia": 0.02}}})
q2, qd2, qdd2, zero = np.array([0.3, -0.4]), np.array([0.5, 0.2]), np.array([1.0, -1.0]), np.zeros(2)
res = dtr.elastic_inverse_dynamics(arm, q2, qd2, qdd2, zero, zero)
print("motor torques [N m]:", res.motor_torque.round(4), " spring deflection q - qM [rad]:", (q2 - res.qm).round(5))
qdd_back, _ = dtr.elastic_aba(arm, q2, qd2, res.qm, res.qmd, res.motor_torque)
assert np.allclose(qdd_back, qdd2, atol=1e-8)
