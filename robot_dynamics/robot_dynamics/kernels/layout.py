"""The flat layout of a RobotModel that the compiled kernels read (the model half of model/data).

One float64 buffer per model, built once (:func:`kernel_model`) and cached on the model; integers
(parent indices, joint indices, types) are stored as floats, exact for any tree size. Passing
one buffer instead of a dozen arrays keeps a kernel call from Python cheap (numba unboxes every
array argument). The offsets below are the only description of the layout: the kernels in
``_compiled.py`` use the same names.

Header (``HEADER`` slots): nb, nq, nr, has_mimic, coupled, gravity (3), nf.
Per body i (``BODY`` slots from ``HEADER + i * BODY``): parent (-1: base), type (0 revolute,
1 prismatic), independent joint index k and its map ``q_body = mult * q[k] + offset`` (mimic
joints), unit axis in the body frame (3), the joint rotation basis E0, [a]x E0, a a^T E0
(3x3 each, row-major: E = c E0 - s [a]x E0 + (1 - c) a a^T E0 for a revolute joint, Rodrigues),
the joint origin r0 in parent coordinates (3), the prismatic slide direction d = E0^T a (3),
mass, first moment h = m c (3), rotational inertia about the body origin (3x3).
Per independent joint k (``JOINT`` slots): rotor inertia Ia, Fv, Fc, Fst - Fc, Stribeck B.
Per secondary link s of a drive train (``SECONDARY + nq`` slots): carrier body, axis e_s in
the carrier frame (3), axial inertia I_s, then the coefficients b_s (nq) of Chen & Wang eq. (11).
Per frame f (every link of the description, ``FRAME`` slots): the body carrying it (-1: the
base) and its placement body_R_frame (3x3, row-major), body_p_frame (3).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..model.robot_model import RobotModel
from ..spatial import skew

__all__ = ["KernelModel", "kernel_model", "W_FRICTION"]

Array = NDArray[np.float64]

HEADER = 16
H_NB, H_NQ, H_NR, H_MIMIC, H_COUPLED, H_GRAVITY, H_NF = 0, 1, 2, 3, 4, 5, 8

BODY = 56
B_PARENT, B_TYPE, B_JOINT, B_MULT, B_OFFSET = 0, 1, 2, 3, 4
B_AXIS, B_E0, B_KE0, B_AE0, B_R0, B_D = 5, 8, 17, 26, 35, 38
B_MASS, B_H, B_IO = 41, 42, 45

JOINT = 8
J_IA, J_FV, J_FC, J_FS, J_STRIBECK = 0, 1, 2, 3, 4

SECONDARY = 8
S_CARRIER, S_AXIS, S_INERTIA, S_B = 0, 1, 4, 8

FRAME = 13
F_BODY, F_R, F_P = 0, 1, 10

W_FRICTION = 0  # the one-state workspace's first slot: friction on (1.0) or off (0.0); the rest is scratch


@dataclass(frozen=True, eq=False)
class KernelModel:
    """What a kernel call needs from Python: the buffer and the sizes (cached per model).

    Attributes:
        buffer: the flat model, (size,); never written after packing.
        nb, nq, nr: bodies, independent joints, secondary links.
        tree: True when the articulated-body recursion applies (no mimic joint, no coupled
            gear train); otherwise direct dynamics solves the joint-space equation.
        work, work_friction: the one-state entry points' workspace (the data half), so that a
            call allocates nothing but its result; slot ``W_FRICTION`` holds 0.0 in ``work`` and
            1.0 in ``work_friction`` (which one is passed says whether friction is on, cheaper
            than a flag argument). One per model suffices: the one-state kernels hold the GIL
            (no ``nogil``), so two threads never run them at once; the parallel batches
            allocate a workspace per chunk instead.
    """

    buffer: Array
    nb: int
    nq: int
    nr: int
    tree: bool
    work: Array
    work_friction: Array


def kernel_model(model: RobotModel) -> KernelModel:
    """The model's kernel layout, built on first use and kept on the (immutable) model."""
    try:
        return model.__dict__["_kernel_model"]  # type: ignore[no-any-return]
    except KeyError:
        pass
    km = _pack(model)
    object.__setattr__(model, "_kernel_model", km)
    return km


def _pack(model: RobotModel) -> KernelModel:
    nb, nq = model.nb, model.nq
    dt = model.drivetrain
    coupled = dt is not None and bool(dt.coupled)
    nr = dt.n_secondary if coupled else 0
    nf = len(model.frame_names)
    buf = np.zeros(HEADER + nb * BODY + nq * JOINT + nr * (SECONDARY + nq) + nf * FRAME)
    buf[H_NB], buf[H_NQ], buf[H_NR], buf[H_NF] = nb, nq, nr, nf
    buf[H_MIMIC], buf[H_COUPLED] = float(model.has_mimic), float(coupled)
    buf[H_GRAVITY : H_GRAVITY + 3] = model.gravity
    G = model.mimic_matrix
    for i in range(nb):
        o = HEADER + i * BODY
        k = int(np.flatnonzero(G[i])[0])  # one independent joint drives each body
        a = model.axis[i]
        E0 = model.E_tree[i]
        buf[o + B_PARENT] = model.parent[i]
        buf[o + B_TYPE] = 1.0 if model.is_prismatic[i] else 0.0
        buf[o + B_JOINT] = k
        buf[o + B_MULT] = G[i, k]
        buf[o + B_OFFSET] = model.mimic_offset[i]
        buf[o + B_AXIS : o + B_AXIS + 3] = a
        buf[o + B_E0 : o + B_E0 + 9] = E0.ravel()
        buf[o + B_KE0 : o + B_KE0 + 9] = (skew(a) @ E0).ravel()
        buf[o + B_AE0 : o + B_AE0 + 9] = (np.outer(a, a) @ E0).ravel()
        buf[o + B_R0 : o + B_R0 + 3] = model.r_tree[i]
        buf[o + B_D : o + B_D + 3] = E0.T @ a
        buf[o + B_MASS] = model.mass[i]
        buf[o + B_H : o + B_H + 3] = model.h[i]
        buf[o + B_IO : o + B_IO + 9] = model.I_origin[i].ravel()
    oj = HEADER + nb * BODY
    for k in range(nq):
        o = oj + k * JOINT
        buf[o + J_IA] = model.rotor_inertia[k]
        buf[o + J_FV] = model.viscous[k]
        buf[o + J_FC] = model.coulomb[k]
        if model.static_friction is not None:
            buf[o + J_FS] = model.static_friction[k] - model.coulomb[k]
        if model.stribeck is not None:
            buf[o + J_STRIBECK] = model.stribeck[k]
    os_ = oj + nq * JOINT
    for s in range(nr):
        o = os_ + s * (SECONDARY + nq)
        buf[o + S_CARRIER] = dt.carrier_body[s]
        buf[o + S_AXIS : o + S_AXIS + 3] = dt.axis_body[s]
        buf[o + S_INERTIA] = dt.inertia[s]
        buf[o + S_B : o + S_B + nq] = dt.B[s]
    of = os_ + nr * (SECONDARY + nq)
    for f in range(nf):
        o = of + f * FRAME
        T = model.frame_placement[f]
        buf[o + F_BODY] = model.frame_body[f]
        buf[o + F_R : o + F_R + 9] = T[:3, :3].ravel()
        buf[o + F_P : o + F_P + 3] = T[:3, 3]
    from ._compiled import one_state_work  # numba is imported by the first dynamics call anyway

    work = np.zeros(one_state_work(nb, nq))
    work_friction = work.copy()
    work_friction[W_FRICTION] = 1.0
    return KernelModel(buf, nb, nq, nr, not (model.has_mimic or coupled), work, work_friction)
