"""
Closed chains: the Stewart platform
===================================

URDF describes trees; :mod:`robot_dynamics.closedchain` adds loop closures. The general layer
takes a spanning tree (a ``RobotModel``) plus point-on-point, spherical, universal and
fixed-point constraints, solves the loops for the passive coordinates, and gives inverse
dynamics for any set of actuated joints and forward dynamics with Lagrange multipliers. The
Stewart platform of Lopes is built on it and, independently, in the paper's own
generalized-momentum formulation: here both compute the actuator forces along the paper's
test motion and agree.
"""

import matplotlib.pyplot as plt
import numpy as np

from robot_dynamics.closedchain import actuator_forces, complete_state
from robot_dynamics.closedchain import stewart as st
from robot_dynamics.trajectory import trigonometric_spline

params = st.load_stewart_parameters()           # the paper's Table 2 (config/stewart_platform.yaml)
P1, P2, duration = st.test_motion_points(params)
print("P1:", P1.round(4), "\nP2:", P2.round(4), f"\n{duration} s per segment")

# %%
# The paper's model
# -----------------
# The platform pose ``x = [position; Euler angles]`` moves P1 -> P2 -> P1 on trigonometric
# splines; ``stewart_dynamics`` gives the leg forces and their split into the platform's,
# the cylinders' and the pistons' contributions (the paper's Fig. 6).
spline = trigonometric_spline(np.stack([P1, P2, P1]), duration)
t = np.linspace(0.0, 2 * duration, 201)
x, xd, xdd = spline.sample(t)
d = st.stewart_dynamics(params, x, xd, xdd)
print("peak |force| per leg [N]:", np.abs(d.tau).max(axis=0).round(1))
assert np.allclose(d.tau, d.tau_platform + d.tau_cylinders + d.tau_pistons)

# %%
# The general layer
# -----------------
# The same mechanism as a spanning tree with six spherical closures: complete the state of
# the tree from the platform's, then the actuator forces of the legs.
mechanism = st.stewart_closed_chain(params)
sel = slice(None, None, 20)
q, qd, qdd = complete_state(mechanism, x[sel], xd[sel], xdd[sel], q_guess=st.tree_coordinates(mechanism, params, x[sel]))
tau_general = actuator_forces(mechanism, q, qd, qdd).tau
difference = np.abs(tau_general - d.tau[sel]).max() / np.abs(d.tau).max()
print(f"general layer against the paper's model: {difference:.1e} relative")
assert difference < 1e-9

fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
axes[0].plot(t, d.lengths)
axes[0].set_ylabel("leg length [m]")
axes[1].plot(t, d.tau)
axes[1].plot(t[sel], tau_general, "k.", ms=4, label="general layer")
axes[1].set_ylabel("actuator force [N]")
axes[1].legend(fontsize=8)
for ax in axes:
    ax.set_xlabel("t [s]")
fig.tight_layout()
