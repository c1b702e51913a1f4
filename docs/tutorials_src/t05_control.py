"""
Controllers and closed-loop simulation
======================================

Khalil's chapter 9, each controller an object built once whose
``update(t, q, qd, reference)`` returns torques and a status and never raises. The controllers
and their gains (the full list of options is on the :ref:`control API page
<api-robot_dynamics.control>`):

======================== ================================== ==============================================
name (CLI, node, YAML)   law                                gains
======================== ================================== ==============================================
``pid``                  joint PID [9.5]                    ``kp``, ``kd``, ``ki`` per joint; or ``omega``
                                                            (Khalil [9.10]'s triple pole)
``pd_gravity``           PD + gravity compensation [9.12]   ``kp``, ``kd``; or ``omega``, ``xi``
``computed_torque``      computed torque [9.24]             ``kp``, ``kd``; or ``omega`` (bandwidth
                                                            [rad/s]) and ``xi`` (damping):
                                                            ``Kp = omega^2``, ``Kd = 2 xi omega`` [9.26]
``lqr``                  LQR about the reference:           ``Q``, ``R`` (weights); or ``omega``, ``xi``:
                         ``rnea(ref) - K (x - x^d)``,       ``R = M^-2``, ``Q = diag(omega^4,``
                         K by Riccati of ``rd.linearize``   ``(4 xi^2 - 2) omega^2)``
``task_pid``             task-space PID through ``J^T``     ``kp``, ``kd``, ``ki`` per task row
``task_computed_torque`` resolved acceleration [9.33]       ``kp``, ``kd``; or ``omega``, ``xi``
======================== ================================== ==============================================

The command line spells them with hyphens (``--controller computed-torque``); both spellings
are accepted by ``build_controller``.
"""

import matplotlib.pyplot as plt
import numpy as np

import robot_dynamics as rd
from robot_dynamics import trajectory as tr
from robot_dynamics.control import CONTROLLERS, Reference, build_controller
from robot_dynamics.simulation import simulate

model = rd.load_robot("puma560")
motion = tr.plan("quintic", np.zeros(6), np.array([0.5, -0.4, 0.3, 0.2, -0.1, 0.6]), duration=1.0)
print("controllers:", CONTROLLERS)

# %%
# One controller tick
# -------------------
ctrl = build_controller(model, "computed_torque", omega=20.0, xi=1.0)
print("Kp:", ctrl.kp.round(1), "Kd:", ctrl.kd.round(1))
q_d, qd_d, qdd_d = motion.sample(np.array([0.3]))
reference = Reference(q_d[0], qd_d[0], qdd_d[0])          # desired q, qd, qdd at t = 0.3 s
measured_q, measured_qd = q_d[0] + 0.01, qd_d[0]           # the arm is 10 mrad off
out = ctrl.update(0.3, measured_q, measured_qd, reference)
print("torques [N m]:", np.round(out.tau, 3), "status:", out.status)
assert out.status == 0

# %%
# Closed loop
# -----------
# ``simulate`` closes the loop on the direct dynamics (friction and rotor inertia included)
# with the controller sampled at 1 kHz and held (ZOH), RK4 in between.
results = {}
for name in ("pd_gravity", "computed_torque"):
    results[name] = simulate(model, build_controller(model, name, omega=20.0), motion, progress=False)
    m = results[name].metrics
    print(f"{name:16} RMS error [mrad]: {np.round(1e3 * m.rms_error, 3)}  peak torque [N m]: {m.peak_torque.round(1)}")
assert results["computed_torque"].metrics.rms_error.max() < results["pd_gravity"].metrics.rms_error.max()

fig, axes = plt.subplots(1, 2, figsize=(9, 3.2), sharey=True)
for ax, (name, res) in zip(axes, results.items()):
    ax.plot(res.t, 1e3 * (res.q_ref - res.q))
    ax.set_title(name)
    ax.set_xlabel("t [s]")
axes[0].set_ylabel("tracking error q_ref - q [mrad]")
axes[1].legend(model.joint_names, fontsize=7, ncol=2)
fig.tight_layout()

# %%
# A wrong model
# -------------
# The controller's model may differ from the plant: here the controller believes the links
# 20 % lighter than they are; the error predicted by Khalil [9.28] is reported beside the
# measured one.
light = model.replace(mass=0.8 * model.mass)
res = simulate(model, build_controller(light, "computed_torque", omega=20.0), motion, progress=False)
print("measured RMS error [mrad]: ", np.round(1e3 * res.metrics.rms_error, 3))
print("predicted RMS error [mrad]:", np.round(1e3 * res.metrics.predicted_rms_error, 3))
