"""
Trajectories
============

Khalil's chapter 8: point-to-point profiles ``q(t) = qi + r(t) D`` (linear, cubic, quintic,
bang-bang, trapezoidal, double S), minimum time from the joints' limits with every joint
synchronised to the slowest, splines through via points, the task-space straight line, and a
time scaling until the torques of the dynamic model fit the effort limits.
"""

import matplotlib.pyplot as plt
import numpy as np

import robot_dynamics as rd
from robot_dynamics import trajectory as tr

model = rd.load_robot("puma560")
q_start, q_goal = np.zeros(6), np.array([0.5, -0.4, 0.3, 0.8, -0.6, 1.0])
print("profiles:", tr.PROFILES)

# %%
# Minimum time, synchronised
# --------------------------
# With ``model=``, the velocity and acceleration limits come from the model; every joint
# starts and stops together.
traj = tr.plan("trapezoidal", q_start, q_goal, model=model)
t = np.linspace(0.0, traj.duration, 400)
q, qd, qdd = traj.sample(t)
print(f"minimum time: {traj.duration:.3f} s")
assert np.allclose(q[0], q_start) and np.allclose(q[-1], q_goal)
assert np.all(np.abs(qd) <= model.velocity_limit + 1e-9)

fig, axes = plt.subplots(3, 1, figsize=(6, 6), sharex=True)
for j, name in enumerate(model.joint_names):
    axes[0].plot(t, q[:, j], label=name)
    axes[1].plot(t, qd[:, j])
    axes[2].plot(t, qdd[:, j])
axes[0].set_ylabel("q [rad]")
axes[1].set_ylabel("qd [rad/s]")
axes[2].set_ylabel("qdd [rad/s^2]")
axes[2].set_xlabel("t [s]")
axes[0].legend(ncol=3, fontsize=7)
fig.suptitle("synchronised trapezoids on the PUMA 560")
fig.tight_layout()

# %%
# Torque-feasible
# ---------------
# A kinematically minimum-time motion may need more torque than the motors have; the uniform
# time scaling slows it just enough (Khalil's remark after [8.3]).
fast = tr.plan("quintic", q_start, q_goal, duration=0.3)
check = tr.check_torques(model, fast)
print(f"0.3 s quintic: peak |tau| / effort limit = {check.ratio:.2f} at {check.joint}")
slow, check = tr.scale_to_torque_limits(model, fast)
print(f"scaled to {slow.duration:.3f} s: ratio {check.ratio:.3f}, feasible: {check.feasible}")
assert check.feasible and check.ratio <= 1.0 + 1e-9

# %%
# Via points
# ----------
# A cubic spline through via points, and a fixed-rate table (the rows of a JointTrajectory).
spline = tr.spline_through("cubic_spline", np.stack([q_start, 0.5 * q_goal + 0.2, q_goal]), durations=[1.0, 1.0])
t_s, q_s, qd_s, qdd_s = tr.sample_table(spline, rate=50.0)
print(f"{t_s.size} rows at 50 Hz, ends at rest: {np.allclose(qd_s[-1], 0)}")

fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(t_s, q_s)
ax.set_xlabel("t [s]")
ax.set_ylabel("q [rad]")
ax.set_title("cubic spline through a via point")
fig.tight_layout()
