"""A RobotModel packed for the engine (the model half of model/data), once per model:
``RobotModel.engine_model`` is :func:`packed_model` of it, built on first use.

The engine's structs (``src/engine/engine.h``) are filled from the named fields below; the C
side derives every size from nb, nq, nr, nf and checks each field's length:

* per body i (nb, tree order, ``parent[i] < i``): ``parent`` (-1: the base), ``type`` (0 revolute,
  1 prismatic), the independent ``joint`` k that drives it and its map
  ``q_body = mult * q[k] + offset`` (mimic joints), the unit ``axis`` in the body frame, ``E0``
  (body_R_parent at q = 0), ``r0`` (joint origin in parent coordinates), ``mass``, first moment
  ``h = m c`` and rotational inertia ``Io`` about the body origin;
* per independent joint k (nq): rotor inertia ``Ia``, friction ``Fv``, ``Fc``, ``Fs = Fst - Fc``
  and the Stribeck coefficient ``B`` (Khalil [7.26], [7.29]);
* per secondary link s of a coupled drive train (nr): its ``carrier`` body, ``secondary_axis``
  e_s in the carrier frame, ``secondary_inertia`` I_s and the coefficients ``b`` (nq) of Chen &
  Wang eq. (11);
* per frame f (nf, every link of the description): ``frame_body`` (-1: the base), ``frame_R``
  body_R_frame and ``frame_p`` body_p_frame;
* ``gravity`` (3,) and ``tree``: True when the articulated-body recursion applies (no mimic
  joint, no coupled drive train); otherwise direct dynamics solves the joint-space equation.

The field list is written once, in ``engine.h`` (``RD_MODEL_FIELDS``); the engine exposes it as
``FIELDS`` and :func:`pack` must give exactly those. :func:`model_text` writes the same fields as
the engine's text form (``rd_model_parse``), with the joint names, limits and frame names: the way C
and C++ users (the ros2_control plugins of robot_dynamics_control) load a model that this
package read from its URDF and drive-train YAML, with no second parser.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import RobotModel

__all__ = ["TEXT_MAGIC", "TEXT_VERSION", "model_text", "pack", "packed_model"]

#: The first line of the text form: magic, version, robot name (engine.h, rd_model_parse).
TEXT_MAGIC = "robot_dynamics-engine-model"
TEXT_VERSION = 1


def packed_model(model: RobotModel) -> Any:
    """A new engine ``Model`` of ``model`` (its fields, :func:`pack`). The package reaches it as
    ``model.engine_model``, which calls this once per model and keeps the result."""
    from . import engine

    return engine().Model(**pack(model))


def pack(model: RobotModel) -> dict[str, Any]:
    """The engine's fields of ``model`` (see the module docstring)."""
    nb, nq = model.nb, model.nq
    dt = model.drivetrain
    coupled = dt is not None and bool(dt.coupled)
    nr = dt.n_secondary if coupled else 0
    G = np.asarray(model.mimic_matrix, dtype=float).reshape(nb, nq)
    # one independent joint drives each body; a row of zeros (a mimic multiplier of 0) leaves
    # the body at its offset, driven by none: joint 0 with mult 0
    joint = np.argmax(np.abs(G), axis=1) if nq else np.zeros(nb, dtype=int)
    mult = G[np.arange(nb), joint] if nq else np.zeros(nb)
    zeros = np.zeros(nq)
    static = model.static_friction
    return {
        "nb": nb,
        "nq": nq,
        "nr": nr,
        "nf": len(model.frame_names),
        "tree": int(not (model.has_mimic or coupled)),
        "gravity": model.gravity,
        "parent": model.parent,
        "type": model.is_prismatic,
        "joint": joint,
        "mult": mult,
        "offset": model.mimic_offset,
        "axis": model.axis,
        "E0": model.E_tree,
        "r0": model.r_tree,
        "mass": model.mass,
        "h": model.h,
        "Io": model.I_origin,
        "Ia": model.rotor_inertia,
        "Fv": model.viscous,
        "Fc": model.coulomb,
        "Fs": zeros if static is None else static - model.coulomb,
        "B": zeros if model.stribeck is None else model.stribeck,
        "carrier": dt.carrier_body if coupled else np.zeros(0),
        "secondary_axis": dt.axis_body if coupled else np.zeros(0),
        "secondary_inertia": dt.inertia if coupled else np.zeros(0),
        "b": dt.B if coupled else np.zeros(0),
        "frame_body": model.frame_body,
        "frame_R": np.asarray(model.frame_placement)[:, :3, :3],
        "frame_p": np.asarray(model.frame_placement)[:, :3, 3],
    }


def _values(x: Any) -> str:
    """Numbers as C's strtod reads them back exactly (repr: the shortest round-trip form)."""
    return " ".join(repr(float(v)) for v in np.asarray(x, dtype=float).reshape(-1))


def model_text(model: RobotModel) -> str:
    """The engine's text form of ``model`` (engine.h, ``rd_model_parse``): the first line
    ``robot_dynamics-engine-model 1 <name>``, the sizes, ``joint_names``, ``effort_limit`` [N m or N]
    (``inf``: none), ``position_lower``, ``position_upper`` [rad or m] and ``velocity_limit``
    [rad/s or m/s] (``-inf``, ``inf`` or ``nan``: none), ``frame_names`` (nf: the description's
    links in the model's frame order, ``model.frame_names``, base first; the engine's
    ``rd_frame_index`` and ros2_control's frame parameters name frames by them) and every field of
    :func:`pack` as ``<name> <count> <values>``, each double written so that C reads back the same bits.

    Raises:
        ModelError: a joint or link name with white space (the text form separates names by spaces).
    """
    from . import engine
    from ..errors import ModelError

    fields = pack(model)
    names = list(model.joint_names)
    frames = list(model.frame_names)
    for kind, group in (("joint", names), ("link", frames)):
        for name in group:
            if not name or any(ch.isspace() for ch in name):
                raise ModelError(f"Robot {model.name!r}: {kind} name {name!r} has white space; the engine's text form cannot carry it")
    robot = "".join(ch if not ch.isspace() else "_" for ch in str(model.name)) or "robot"
    lines = [f"{TEXT_MAGIC} {TEXT_VERSION} {robot}"]
    lines += [f"{key} {int(fields[key])}" for key in ("nb", "nq", "nr", "nf", "tree")]
    lines.append(f"joint_names {len(names)} {' '.join(names)}".rstrip())
    for key, values in (("effort_limit", model.effort_limit), ("position_lower", model.lower),
                        ("position_upper", model.upper), ("velocity_limit", model.velocity_limit)):
        limit = np.asarray(values, dtype=float).reshape(-1)
        lines.append(f"{key} {limit.size} {_values(limit)}".rstrip())
    lines.append(f"frame_names {len(frames)} {' '.join(frames)}".rstrip())
    for key in engine().FIELDS:
        x = np.asarray(fields[key], dtype=float).reshape(-1)
        lines.append(f"{key} {x.size} {_values(x)}".rstrip())
    return "\n".join(lines) + "\n"
