"""
Identification of an arm from a recording
=========================================

A URDF's inertias come from CAD without cables, motors and gears, and friction is not in a
URDF at all. Khalil's section 7.5 and Gautier's IDIM-WLS close the loop from a recording of
the arm to a model every command and node can use: design an exciting motion, run and record
it, estimate the base parameters by weighted least squares, and write the identified URDF and
drive-train YAML. Here the "real" arm is simulated: the bundled two-link arm with masses,
inertias, centres of mass and friction changed by up to 30 %, recorded with encoder
quantisation and effort noise into a rosbag2, as ``ros2 bag record /joint_states`` would.
On a real arm, ``robot-dynamics excite`` and ``robot-dynamics identify`` do the same from the
shell.
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import robot_dynamics as rd
from robot_dynamics import identification as idn
from robot_dynamics.identification.example import perturbed_arm, record_simulated
from robot_dynamics.identification.output import write_identified
from robot_dynamics.dynamics.regressor import standard_parameters

nominal = rd.load_robot("planar2")                  # what the URDF says
true = perturbed_arm(nominal, spread=0.3, seed=1)   # what the arm is (unknown to the method)

# %%
# An optimised excitation
# -----------------------
# A periodic Fourier series per joint, its shape optimised for the condition number of the
# base regressor while staying inside the position, velocity, acceleration and effort limits.
design = idn.design_excitation(nominal, frequency=0.25, harmonics=3, maxiter=8, seed=0)
print(f"condition number: random start {design.initial_condition:.0f} -> optimised {design.condition:.1f}")

# %%
# Record, prepare, estimate
# -------------------------
folder = Path(tempfile.mkdtemp())
bag = record_simulated(true, nominal, design.trajectory, folder / "excitation")
recording = idn.read_recording(bag, nominal)        # a rosbag2 folder (or a CSV file)
data = idn.prepare(nominal, recording)              # filter, differentiate, decimate
estimate = idn.identify(nominal, data)
print(f"{data.tau.shape[0]} rows, position filter at {data.cutoff:.1f} Hz")
for name, value, rel in zip(estimate.names, estimate.values, estimate.rel_sigma):
    print(f"  {name:6} {value:10.4f}   %sigma {rel:6.2f}")

# %%
# Against the truth
# -----------------
# The simulated arm's true parameters are known, so the estimate can be checked: the
# well-determined base parameters (small %sigma) are close to the true ones, while the URDF's
# values are off by up to 30 %.
true_beta = estimate.base.base_values(standard_parameters(true))
nominal_beta = estimate.base.base_values(standard_parameters(nominal))
beta = estimate.base_values()
good = estimate.rel_sigma[: beta.size] < 3.0
error = np.abs(beta - true_beta) / np.maximum(np.abs(true_beta), 1e-9)
error_urdf = np.abs(nominal_beta - true_beta) / np.maximum(np.abs(true_beta), 1e-9)
print(f"{good.sum()} of {beta.size} base parameters with %sigma < 3")
print("  relative error, identified:", error[good].round(3))
print("  relative error, URDF:      ", error_urdf[good].round(3))
assert good.sum() >= 3 and np.all(error[good] < 0.05)

# %%
# The identified model predicts the efforts
# -----------------------------------------
# The measured efforts against those predicted by the identified and by the URDF's parameters
# (``robot-dynamics identify`` writes the same plot, on a separate validation recording).
predicted = estimate.predict(data.W, data.stribeck)
urdf_prediction = np.einsum("mjp,p->mj", data.W, standard_parameters(nominal))
t = data.t - data.t[0]
fig, axes = plt.subplots(nominal.nq, 1, figsize=(7, 4.5), sharex=True)
for j, ax in enumerate(axes):
    ax.plot(t, data.tau[:, j], "k", lw=2, alpha=0.4, label="measured")
    ax.plot(t, predicted[:, j], label="identified")
    ax.plot(t, urdf_prediction[:, j], "--", label="URDF")
    ax.set_ylabel(f"{nominal.joint_names[j]} [N m]")
axes[-1].set_xlabel("t [s]")
axes[0].legend(fontsize=8, ncol=3)
fig.tight_layout()
rms = np.sqrt(np.mean((data.tau - predicted) ** 2, axis=0))
rms_urdf = np.sqrt(np.mean((data.tau - urdf_prediction) ** 2, axis=0))
print("effort RMS error [N m], identified:", rms.round(3), " URDF:", rms_urdf.round(3))
assert np.all(rms < rms_urdf)

# %%
# The identified parameters as files: the drive-train YAML (friction, armature) beside the
# URDF, ready for ``robot-dynamics simulate --drivetrain`` or the nodes' ``drivetrain``.
pi = idn.standard_from_base(estimate.base, beta, standard_parameters(nominal))
files = write_identified(nominal, pi, folder / "identified.yaml")
print(Path(files[0]).read_text())
