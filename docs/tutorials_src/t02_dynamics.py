"""
Inverse and direct dynamics, mass matrix, Coriolis and energy
=============================================================

The five quantities of a rigid-body tree, each computed here on the PUMA 560 and checked
against an identity that cannot be faked: the mass matrix rebuilt column by column from the
inverse dynamics, ``aba`` undoing ``rnea``, ``Mdot - 2C`` skew-symmetric, the power balance
``tau . qd = dE/dt`` and the energy of an unforced, frictionless motion. A tutorial that fails
one of these checks stops the build of this site.
"""

import matplotlib.pyplot as plt
import numpy as np

import robot_dynamics as rd

model = rd.load_robot("puma560")
rng = np.random.default_rng(0)
q, qd, qdd = rng.uniform(-1, 1, (3, model.nq))

# %%
# Inverse dynamics: ``rnea``
# --------------------------
# ``tau = M(q) qdd + C(q, qd) qd + g(q) + friction``, in ``model.joint_names`` order.
tau = rd.rnea(model, q, qd, qdd)
print("tau [N m]:", tau.round(3))

# %%
# The mass matrix: ``crba``
# -------------------------
# Symmetric positive definite, and equal to rnea's columns for unit accelerations without
# gravity, velocity or friction.
M = rd.crba(model, q)
zero = np.zeros(model.nq)
columns = np.column_stack([rd.rnea(model, q, zero, e, gravity=(0, 0, 0), friction=False) for e in np.eye(model.nq)])
print("max |M - columns of rnea| =", np.abs(M - columns).max())
assert np.allclose(M, M.T, atol=1e-12) and np.linalg.eigvalsh(M).min() > 0
assert np.allclose(M, columns, atol=1e-10)

# %%
# Direct dynamics: ``aba``
# ------------------------
# The articulated-body algorithm gives back the accelerations that produced ``tau``.
qdd_back = rd.aba(model, q, qd, tau)
print("max |aba(rnea(qdd)) - qdd| =", np.abs(qdd_back - qdd).max())
assert np.allclose(qdd_back, qdd, atol=1e-9)

# %%
# Coriolis and gravity
# --------------------
# ``C`` is built from the Christoffel symbols, so ``Mdot - 2C`` is skew-symmetric; ``Mdot`` is
# taken here by central differences of ``crba`` along ``qd``.
C = rd.coriolis_matrix(model, q, qd)
g = rd.gravity_torques(model, q)
h = 1e-6
Mdot = (rd.crba(model, q + h * qd) - rd.crba(model, q - h * qd)) / (2 * h)
N = Mdot - 2 * C
print("max |N + N^T| =", np.abs(N + N.T).max())
assert np.abs(N + N.T).max() < 1e-6
tau_rigid = rd.rnea(model, q, qd, qdd, friction=False)
assert np.allclose(tau_rigid, M @ qdd + C @ qd + g, atol=1e-9)

# %%
# An external wrench
# ------------------
# ``f_ext`` maps a link to the wrench it exerts **on** the environment, ``[force; moment]`` in
# base axes, moment about the link origin (see :doc:`/conventions`): the torques grow by
# ``J^T f``.
f = np.array([0.0, 0.0, -10.0, 0.5, 0.0, 0.0])
J = rd.jacobian(model, q, "link6")
with_wrench = rd.rnea(model, q, qd, qdd, f_ext={"link6": f})
assert np.allclose(with_wrench - tau, J.T @ f, atol=1e-10)
print("J^T f [N m]:", (J.T @ f).round(3))

# %%
# Energy and power
# ----------------
# Without friction the power of the joint torques is the rate of change of the mechanical
# energy: ``tau . qd = dE/dt``. Then an unforced motion (tau = 0, friction off) keeps its
# energy; a fixed-step RK4 integration of ``aba`` shows it to the integrator's accuracy.
E = rd.mechanical_energy(model, q, qd)
dt = 1e-6
dE = (rd.mechanical_energy(model, q + dt * qd, qd + dt * qdd) - rd.mechanical_energy(model, q - dt * qd, qd - dt * qdd)) / (2 * dt)
print(f"tau . qd = {tau_rigid @ qd:.6f} W, dE/dt = {dE:.6f} W")
assert abs(tau_rigid @ qd - dE) < 1e-5 * max(1.0, abs(dE))


def f_free(x):
    p, v = x[: model.nq], x[model.nq :]
    return np.concatenate([v, rd.aba(model, p, v, zero, friction=False)])


x = np.concatenate([q, zero])
step = 1e-3
times = np.arange(0.0, 1.0 + step / 2, step)
energy = np.empty(times.size)
for k in range(times.size):
    energy[k] = rd.mechanical_energy(model, x[: model.nq], x[model.nq :])
    k1 = f_free(x)
    k2 = f_free(x + step / 2 * k1)
    k3 = f_free(x + step / 2 * k2)
    k4 = f_free(x + step * k3)
    x = x + step / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
drift = np.abs(energy - energy[0]).max() / np.abs(energy).max()
print(f"1 s of free fall: relative energy drift {drift:.1e}")
assert drift < 1e-6

fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(times, energy - energy[0])
ax.set_xlabel("t [s]")
ax.set_ylabel("E(t) - E(0) [J]")
ax.set_title("PUMA 560 falling freely: the mechanical energy stays constant")
fig.tight_layout()

# %%
# Batches
# -------
# Every function takes leading batch dimensions: 10,000 states in one call, the same numbers
# as a loop.
Q = rng.uniform(-1, 1, (10_000, model.nq))
taus = rd.rnea(model, Q, Q, Q)
assert taus.shape == (10_000, model.nq)
assert np.allclose(taus[17], rd.rnea(model, Q[17], Q[17], Q[17]))
