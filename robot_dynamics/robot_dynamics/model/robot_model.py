"""RobotModel: the immutable description every algorithm reads (model/data split).

Loaders (URDF, xacro, DH YAML) produce :class:`LinkSpec` and :class:`JointSpec` lists;
:func:`build_model` turns them into a :class:`RobotModel`:

* fixed joints are merged into their parent body (their links stay as frames);
* the movable joints are ordered so that ``parent[i] < i`` (depth first, document order);
* mimic joints become bodies whose coordinate is ``multiplier * q[k] + offset`` of an
  independent joint k, so ``model.joint_names`` holds the independent joints only.

Bodies are the links carried by movable joints, in the frame of their joint (the URDF child
link frame). Joint properties (limits, friction, rotor inertia) are per independent joint.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..conventions import GRAVITY
from ..errors import ModelError, UnknownNameError
from ..spatial import homogeneous, rotational_inertia_about_origin, skew

__all__ = ["LinkSpec", "JointSpec", "RobotModel", "build_model", "JOINT_TYPES"]

Array = NDArray[np.float64]

#: Joint types a robot description may use (URDF names; ``continuous`` is an unlimited revolute).
JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed")


@dataclass
class LinkSpec:
    """A link as written in the description.

    Attributes:
        name: link name.
        mass: [kg]; 0 for a link without inertial (massless by the URDF spec).
        com: centre of mass in the link frame, (3,) [m].
        inertia: rotational inertia about the centre of mass, link-frame axes, (3, 3) [kg m^2].
    """

    name: str
    mass: float = 0.0
    com: Array = field(default_factory=lambda: np.zeros(3))
    inertia: Array = field(default_factory=lambda: np.zeros((3, 3)))


@dataclass
class JointSpec:
    """A joint as written in the description.

    Attributes:
        name: joint name.
        type: one of :data:`JOINT_TYPES`.
        parent, child: link names.
        origin: T_parent_joint, (4, 4): the child link frame at q = 0.
        axis: unit axis in the joint (child) frame, (3,).
        lower, upper: position limits [rad or m] (inf for continuous or unlimited).
        velocity, effort: limits [rad/s or m/s], [N m or N] (inf when not given).
        damping: viscous friction Fv [N m s/rad]; friction: Coulomb friction Fc [N m].
        mimic: (joint name, multiplier, offset) or None.
    """

    name: str
    type: str
    parent: str
    child: str
    origin: Array = field(default_factory=lambda: np.eye(4))
    axis: Array = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))
    lower: float = -np.inf
    upper: float = np.inf
    velocity: float = np.inf
    effort: float = np.inf
    damping: float = 0.0
    friction: float = 0.0
    mimic: tuple[str, float, float] | None = None


def _readonly(a: Any, dtype: Any = float) -> NDArray[Any]:
    arr = np.array(a, dtype=dtype)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class RobotModel:
    """An immutable rigid-body tree with its joint properties.

    Body arrays have nb = number of moving joints (mimic joints included); joint arrays have
    nq = number of independent joints. All arrays are read-only.

    Attributes:
        name: robot name.
        base_link: name of the root link (fixed to the world).
        joint_names: independent movable joints in tree order, (nq,).
        body_names: links carried by the moving joints, (nb,).
        body_joint_names: the moving joints, (nb,); equals ``joint_names`` without mimic joints.
        parent: parent body index of each body, -1 for the base, with ``parent[i] < i``, (nb,).
        joint_type: ``'revolute'`` or ``'prismatic'`` per body (continuous joints are revolute).
        axis: unit joint axis in the body frame, (nb, 3).
        E_tree: rotation joint_R_parent of the joint frame at q = 0, (nb, 3, 3).
        r_tree: joint frame origin in parent body coordinates, (nb, 3) [m].
        mass: body mass (fixed children merged), (nb,) [kg].
        com: body centre of mass in the body frame, (nb, 3) [m].
        inertia_com: rotational inertia about the centre of mass, body axes, (nb, 3, 3).
        mimic_matrix: G with q_body = G q + mimic_offset, (nb, nq).
        mimic_offset: (nb,).
        lower, upper, velocity_limit, effort_limit: joint limits, (nq,).
        viscous, coulomb: Khalil's Fv, Fc [7.27] per joint, (nq,).
        static_friction: Khalil's Fst of [7.26] per joint, (nq,) [N m or N], or None for the
            Coulomb + viscous model [7.27] (the same as Fst = Fc).
        stribeck: Khalil's B of [7.26] per joint, (nq,) [s/rad or s/m]: the static excess
            Fst - Fc decays as exp(-|qd| B); None for 0 (an undecayed static term).
        rotor_inertia: Ia = N^2 Jm per joint (Khalil [7.29]), (nq,) [kg m^2 or kg].
        continuous: True for continuous joints, (nq,).
        frame_names: every link of the description, base first, (nf,).
        frame_body: body carrying each frame, -1 for the base, (nf,).
        frame_placement: T_body_frame, (nf, 4, 4).
        gravity: default gravity in the base frame, (3,) [m/s^2].
        drivetrain: drive-train description (geared mechanisms, a
            :class:`robot_dynamics.drivetrain.DriveTrain`), or None. When set, the body inertias
            are those of the virtual links (secondary links lumped into their carriers) and the
            dynamics algorithms add the secondary links' spin terms.
        description: the source text (URDF) when known, for /robot_description.
        transmissions: raw ros2_control ``<transmission>`` XML elements of the URDF.
        accepted_issues: the issues of :func:`robot_dynamics.model.check_model` that the robot's
            YAML declares known and accepted (``accepted_model_issues``), as
            ``((link or joint name, kind, reason), ...)``; loaders do not warn about them.
    """

    name: str
    base_link: str
    joint_names: tuple[str, ...]
    body_names: tuple[str, ...]
    body_joint_names: tuple[str, ...]
    parent: NDArray[np.int_]
    joint_type: tuple[str, ...]
    axis: Array
    E_tree: Array
    r_tree: Array
    mass: Array
    com: Array
    inertia_com: Array
    mimic_matrix: Array
    mimic_offset: Array
    lower: Array
    upper: Array
    velocity_limit: Array
    effort_limit: Array
    viscous: Array
    coulomb: Array
    rotor_inertia: Array
    continuous: NDArray[np.bool_]
    frame_names: tuple[str, ...]
    frame_body: NDArray[np.int_]
    frame_placement: Array
    gravity: Array = field(default_factory=lambda: _readonly(GRAVITY))
    drivetrain: Any = None
    description: str | None = None
    transmissions: tuple[str, ...] = ()
    static_friction: Array | None = None
    stribeck: Array | None = None
    accepted_issues: tuple[tuple[str, str, str], ...] = ()

    # Derived in __post_init__ (never passed in): per-model constants of the recursions.
    h: Array = field(init=False, repr=False)  # first moments of mass m c, (nb, 3)
    I_origin: Array = field(init=False, repr=False)  # rotational inertia about the body origin, (nb, 3, 3)
    is_prismatic: NDArray[np.bool_] = field(init=False, repr=False)
    S: Array = field(init=False, repr=False)  # motion subspace per body, (nb, 6)
    has_mimic: bool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            if not f.init:
                continue
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray) and value.flags.writeable:
                object.__setattr__(self, f.name, _readonly(value, value.dtype))
        for name in ("static_friction", "stribeck"):
            value = getattr(self, name)
            if value is not None:
                arr = _readonly(value)
                if arr.shape != (self.nq,) or not np.all(np.isfinite(arr)) or np.any(arr < 0):
                    raise ModelError(f"{name}: expected {self.nq} finite numbers >= 0, got {value!r}")
                object.__setattr__(self, name, arr)
        # Derived, cached quantities used by every algorithm.
        h = self.mass[:, None] * self.com
        I_o = rotational_inertia_about_origin(self.mass, self.com, self.inertia_com)
        is_prismatic = np.array([t == "prismatic" for t in self.joint_type], dtype=bool)
        # Motion subspace S = [axis; 0] (revolute) or [0; axis] (prismatic), Featherstone order.
        S = np.zeros((self.nb, 6))
        S[~is_prismatic, :3] = self.axis[~is_prismatic]
        S[is_prismatic, 3:] = self.axis[is_prismatic]
        identity = (
            self.mimic_matrix.shape[0] == self.mimic_matrix.shape[1]
            and np.array_equal(self.mimic_matrix, np.eye(self.nq))
            and not np.any(self.mimic_offset)
        )
        object.__setattr__(self, "h", _readonly(h))
        object.__setattr__(self, "I_origin", _readonly(I_o))
        object.__setattr__(self, "is_prismatic", _readonly(is_prismatic, bool))
        object.__setattr__(self, "S", _readonly(S))
        object.__setattr__(self, "has_mimic", not identity)

    # -- sizes ---------------------------------------------------------------------------
    @property
    def nq(self) -> int:
        """Number of independent joint coordinates (one angle per continuous joint)."""
        return len(self.joint_names)

    @property
    def nv(self) -> int:
        """Number of joint velocities; equals nq here (no quaternion joints)."""
        return len(self.joint_names)

    @property
    def nb(self) -> int:
        """Number of moving bodies (mimic joints included)."""
        return len(self.body_names)

    # -- names -----------------------------------------------------------------------------
    def joint_index(self, name: str) -> int:
        """Index of an independent joint in ``joint_names``; raises UnknownNameError."""
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise UnknownNameError("joint", name, self.joint_names) from None

    def frame_index(self, name: str) -> int:
        """Index of a link frame in ``frame_names``; raises UnknownNameError."""
        try:
            return self.frame_names.index(name)
        except ValueError:
            raise UnknownNameError("frame", name, self.frame_names) from None

    def moving_frame(self, name: str | None) -> str:
        """``name`` (default :attr:`end_effector`) checked to be a frame that some joint moves.

        Raises:
            UnknownNameError: not a frame of the model (lists them).
            InputError: a frame on the fixed base, which no joint moves.
        """
        from ..errors import InputError

        frame = name or self.end_effector
        k = self.frame_index(frame)
        if self.frame_body[k] < 0:
            moving = [f for f, b in zip(self.frame_names, self.frame_body) if b >= 0]
            raise InputError(f"frame {frame!r} is on the fixed base: no joint moves it; choose one of "
                             f"{moving[-5:]} (the default is the tip of the longest chain, {self.end_effector!r})")
        return frame

    @functools.cached_property
    def end_effector(self) -> str:
        """The default tool frame: the tip of the longest moving chain.

        Among the frames on the body with the most moving joints between it and the base,
        the one farthest from that body's origin (a tool flange before the link itself); on a
        tie, the last declared. A frame on the fixed base is never chosen while a joint moves.
        Found on first use and kept (the model is immutable): every call that defaults its frame
        reads it (a search over the frames took 47 us of a 48 us Jacobian).
        """
        if self.nb == 0:
            return self.frame_names[-1]
        depth = np.zeros(self.nb, dtype=int)
        for b in range(self.nb):  # parents come before their children
            p = int(self.parent[b])
            depth[b] = 1 + (depth[p] if p >= 0 else 0)
        best, key = len(self.frame_names) - 1, (-1, -1.0, -1)
        for f, b in enumerate(self.frame_body):
            d = int(depth[b]) if b >= 0 else 0
            k = (d, round(float(np.linalg.norm(self.frame_placement[f][:3, 3])), 12), f)
            if k > key:
                best, key = f, k
        return self.frame_names[best]

    def total_mass(self) -> float:
        """Mass of the moving bodies [kg]."""
        return float(self.mass.sum())

    @functools.cached_property
    def engine_model(self) -> Any:
        """This model packed for the compiled engine: its ``Model`` (the model half of the engine's
        model/data pair, ``src/engine/engine.h``'s ``rd_model``; ``create_data()`` gives a workspace).
        Built on first use (:func:`robot_dynamics.engine.layout.packed_model`) and kept, read-only,
        with the model; the one way the package and the engine's C side reach it. Not pickled."""
        from ..engine.layout import packed_model

        return packed_model(self)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the engine's packed copy (``engine_model``), which is rebuilt on first use."""
        return {k: v for k, v in self.__dict__.items() if k != "engine_model"}

    def replace(self, **changes: Any) -> RobotModel:
        """A new model with some fields changed (the model itself is never mutated)."""
        return dataclasses.replace(self, **changes)

    def __repr__(self) -> str:
        return (
            f"RobotModel(name={self.name!r}, nq={self.nq}, bodies={self.nb}, "
            f"joints={list(self.joint_names)})"
        )


def _merge_inertia(
    m1: float, c1: Array, I1: Array, m2: float, c2: Array, I2: Array
) -> tuple[float, Array, Array]:
    """Combine two rigid inertias given in the same frame (about their own centres of mass)."""
    m = m1 + m2
    if m <= 0.0:
        return 0.0, np.zeros(3), I1 + I2
    c = (m1 * c1 + m2 * c2) / m
    d1, d2 = skew(c1 - c), skew(c2 - c)
    return m, c, I1 - m1 * d1 @ d1 + I2 - m2 * d2 @ d2


def _transform_inertia(T: Array, link: LinkSpec) -> tuple[float, Array, Array]:
    """The inertia of ``link`` expressed in the frame F where T = T_F_link."""
    R, p = T[:3, :3], T[:3, 3]
    return link.mass, R @ link.com + p, R @ link.inertia @ R.T


def _links_by_name(links: list[LinkSpec], strict: bool) -> dict[str, LinkSpec]:
    """The links keyed by name, each inertia checked (:func:`_check_inertia`); refuses a name
    defined twice and an empty robot."""
    link_by_name: dict[str, LinkSpec] = {}
    for link in links:
        if link.name in link_by_name:
            raise ModelError(f"Link {link.name!r} is defined twice")
        _check_inertia(link, strict)
        link_by_name[link.name] = link
    if not link_by_name:
        raise ModelError("The robot has no links")
    return link_by_name


def _joint_graph(
    joints: list[JointSpec], link_by_name: dict[str, LinkSpec]
) -> tuple[dict[str, list[JointSpec]], dict[str, JointSpec]]:
    """``(children, parent_joint)``: the joints leaving each link (document order) and the joint
    carrying each child link, after checking names, types, axes and that no link has two parents."""
    joint_names_all = [j.name for j in joints]
    if len(set(joint_names_all)) != len(joint_names_all):
        dup = sorted({n for n in joint_names_all if joint_names_all.count(n) > 1})
        raise ModelError(f"Joint names defined twice: {dup}")

    children: dict[str, list[JointSpec]] = {n: [] for n in link_by_name}
    parent_joint: dict[str, JointSpec] = {}
    for j in joints:
        if j.type not in JOINT_TYPES:
            raise ModelError(
                f"Joint {j.name!r} has type {j.type!r}; supported joint types: {list(JOINT_TYPES)}"
            )
        for role, link_name in (("parent", j.parent), ("child", j.child)):
            if link_name not in link_by_name:
                raise ModelError(
                    f"Joint {j.name!r} names {role} link {link_name!r}, which is not defined. "
                    f"Valid links: {sorted(link_by_name)}"
                )
        if j.child in parent_joint:
            raise ModelError(
                f"Link {j.child!r} is the child of two joints ({parent_joint[j.child].name!r} and "
                f"{j.name!r}); a URDF describes a tree"
            )
        parent_joint[j.child] = j
        children[j.parent].append(j)
        if j.type != "fixed":
            n = float(np.linalg.norm(j.axis))
            if not np.isfinite(n) or n < 1e-12:
                raise ModelError(f"Joint {j.name!r} has a zero or non-finite axis {list(j.axis)}")
    return children, parent_joint


def _root_link(link_by_name: dict[str, LinkSpec], parent_joint: dict[str, JointSpec]) -> str:
    """The one link that is no joint's child (the base)."""
    roots = [n for n in link_by_name if n not in parent_joint]
    if len(roots) != 1:
        raise ModelError(
            f"A robot needs exactly one root link (a link that is no joint's child); found {roots or 'none (a cycle)'}"
        )
    return roots[0]


@dataclass
class _Tree:
    """The bodies and frames of a depth-first walk, bodies in ``parent[i] < i`` order.

    Attributes:
        body_names, body_joints, parent_idx: per body (nb,).
        E_tree, r_tree: joint_R_parent (3, 3) and joint origin in the parent body (3,) [m] per body.
        inertia: (mass [kg], com (3,) [m], inertia about the com (3, 3)) per body, fixed
            children merged, in the body frame.
        frame_names, frame_body, frame_T: every link, the body carrying it (-1: base) and
            T_body_frame (4, 4).
    """

    body_names: list[str] = field(default_factory=list)
    body_joints: list[JointSpec] = field(default_factory=list)
    parent_idx: list[int] = field(default_factory=list)
    E_tree: list[Array] = field(default_factory=list)
    r_tree: list[Array] = field(default_factory=list)
    inertia: list[tuple[float, Array, Array]] = field(default_factory=list)
    frame_names: list[str] = field(default_factory=list)
    frame_body: list[int] = field(default_factory=list)
    frame_T: list[Array] = field(default_factory=list)


def _walk_tree(base: str, link_by_name: dict[str, LinkSpec], children: dict[str, list[JointSpec]]) -> _Tree:
    """Depth-first walk in document order from ``base``: bodies get parent[i] < i, fixed joints
    merge their link's inertia into the moving body that carries it."""
    tree = _Tree(frame_names=[base], frame_body=[-1], frame_T=[np.eye(4)])

    visited = {base}
    # stack items: (joint, body index of the parent link, T_parentbody_parentlink)
    stack: list[tuple[JointSpec, int, Array]] = [(j, -1, np.eye(4)) for j in reversed(children[base])]
    while stack:
        j, pbody, T_pb_pl = stack.pop()
        if j.child in visited:
            raise ModelError(f"The joint graph has a cycle through link {j.child!r}")
        visited.add(j.child)
        child = link_by_name[j.child]
        T_pb_c = T_pb_pl @ j.origin
        if j.type == "fixed":
            body, T_body_child = pbody, T_pb_c
            if body >= 0:  # a link fixed to the base moves nothing: its inertia is the base's
                tree.inertia[body] = _merge_inertia(*tree.inertia[body], *_transform_inertia(T_body_child, child))
        else:
            body = len(tree.body_names)
            tree.body_names.append(j.child)
            tree.body_joints.append(j)
            tree.parent_idx.append(pbody)
            tree.E_tree.append(T_pb_c[:3, :3].T)
            tree.r_tree.append(T_pb_c[:3, 3].copy())
            tree.inertia.append(_transform_inertia(np.eye(4), child))
            T_body_child = np.eye(4)
        tree.frame_names.append(j.child)
        tree.frame_body.append(body)
        tree.frame_T.append(T_body_child)
        for cj in reversed(children[j.child]):
            stack.append((cj, body, T_body_child))

    unreached = sorted(set(link_by_name) - visited)
    if unreached:
        raise ModelError(f"Links not connected to the root {base!r}: {unreached}")
    return tree


def _mimic_map(body_joints: list[JointSpec], joint_names: tuple[str, ...]) -> tuple[Array, Array]:
    """``(G, offset)`` with q_body = G q + offset, (nb, nq) and (nb,): each body's coordinate
    as an affine function of the independent joint its mimic chain ends at."""
    by_name = {j.name: j for j in body_joints}
    nq, nb = len(joint_names), len(body_joints)
    G = np.zeros((nb, nq))
    offset = np.zeros(nb)
    for i, j in enumerate(body_joints):
        mult, off, cur, seen = 1.0, 0.0, j, {j.name}
        while cur.mimic is not None:
            target, m_k, o_k = cur.mimic
            if target not in by_name:
                raise ModelError(
                    f"Joint {cur.name!r} mimics {target!r}, which is not a movable joint. "
                    f"Valid joints: {list(by_name)}"
                )
            if target in seen:
                raise ModelError(f"Mimic joints form a cycle through {target!r}")
            seen.add(target)
            # q_cur = m_k q_target + o_k, composed along the chain
            off = off + mult * o_k
            mult = mult * m_k
            cur = by_name[target]
        G[i, joint_names.index(cur.name)] = mult
        offset[i] = off
    return G, offset


def _stack_inertias(inertia: list[tuple[float, Array, Array]], nb: int) -> tuple[Array, Array, Array]:
    """The per-body (mass, com, inertia about the com) tuples as arrays (nb,), (nb, 3), (nb, 3, 3)."""
    masses = np.array([m for m, _, _ in inertia], dtype=float).reshape(nb)
    coms = np.array([c for _, c, _ in inertia], dtype=float).reshape(nb, 3)
    inert = np.array([I for _, _, I in inertia], dtype=float).reshape(nb, 3, 3)
    return masses, coms, inert


def build_model(
    name: str,
    links: list[LinkSpec],
    joints: list[JointSpec],
    *,
    description: str | None = None,
    gravity: tuple[float, float, float] | Array = GRAVITY,
    strict: bool = False,
) -> RobotModel:
    """Build a :class:`RobotModel` from link and joint specs (shared by every loader).

    Inertias are checked after the links a fixed joint carries are lumped into their moving
    body (:func:`check_body_inertias`): round-off of CAD exports (iCub's -2.4e-35, a lumped
    antenna's -3.5e-8 on TIAGo's base) is accepted (the loaders warn of it naming the link,
    with the other issues of :func:`robot_dynamics.model.check_model`), a genuinely
    indefinite moving body is refused. ``strict=True`` refuses any link whose own
    inertia tensor has a negative principal moment beyond 1e-9 of its own scale.

    Raises:
        ModelError: unknown link names, a link with two parents, a cycle, several roots,
            an unsupported joint type, a bad mimic reference, or a non-physical inertia.
    """
    link_by_name = _links_by_name(links, strict)
    children, parent_joint = _joint_graph(joints, link_by_name)
    base = _root_link(link_by_name, parent_joint)
    tree = _walk_tree(base, link_by_name, children)
    body_joints = tree.body_joints

    # Independent coordinates and mimic map.
    independent = [j for j in body_joints if j.mimic is None]
    joint_names = tuple(j.name for j in independent)
    nq, nb = len(independent), len(body_joints)
    G, offset = _mimic_map(body_joints, joint_names)

    def prop(attr: str) -> Array:
        return np.array([getattr(j, attr) for j in independent], dtype=float)

    masses, coms, inert = _stack_inertias(tree.inertia, nb)
    check_body_inertias(tree.body_names, masses, inert)
    axes = np.array([np.asarray(j.axis, float) / np.linalg.norm(j.axis) for j in body_joints]).reshape(nb, 3)

    return RobotModel(
        name=name,
        base_link=base,
        joint_names=joint_names,
        body_names=tuple(tree.body_names),
        body_joint_names=tuple(j.name for j in body_joints),
        parent=np.array(tree.parent_idx, dtype=int),
        joint_type=tuple("prismatic" if j.type == "prismatic" else "revolute" for j in body_joints),
        axis=axes,
        E_tree=np.array(tree.E_tree, dtype=float).reshape(nb, 3, 3),
        r_tree=np.array(tree.r_tree, dtype=float).reshape(nb, 3),
        mass=masses,
        com=coms,
        inertia_com=inert,
        mimic_matrix=G,
        mimic_offset=offset,
        lower=prop("lower"),
        upper=prop("upper"),
        velocity_limit=prop("velocity"),
        effort_limit=prop("effort"),
        viscous=prop("damping"),
        coulomb=prop("friction"),
        rotor_inertia=np.zeros(nq),
        continuous=np.array([j.type == "continuous" for j in independent], dtype=bool),
        frame_names=tuple(tree.frame_names),
        frame_body=np.array(tree.frame_body, dtype=int),
        frame_placement=np.array(tree.frame_T, dtype=float),
        gravity=np.asarray(gravity, dtype=float),
        description=description,
    )


def _check_inertia(link: LinkSpec, strict: bool = False) -> None:
    """Reject what no tolerance makes physical: negative or non-finite mass, non-finite or
    non-symmetric tensors; with ``strict``, also a negative principal moment beyond 1e-9 of
    the link's own scale. (Indefinite tensors are judged on the lumped bodies otherwise.)

    The triangle inequality of principal moments is not enforced: many published URDFs
    break it slightly and every peer library loads them.
    """
    name = link.name
    if not np.isfinite(link.mass) or link.mass < 0:
        raise ModelError(f"Link {name!r}: mass must be a finite number >= 0, got {link.mass}")
    if link.mass > 1e7:
        raise ModelError(f"Link {name!r}: mass {link.mass:g} kg is beyond 1e7 kg, not a robot link")
    I = np.asarray(link.inertia, dtype=float)
    if I.shape != (3, 3) or not np.all(np.isfinite(I)):
        raise ModelError(f"Link {name!r}: inertia must be a finite 3x3 tensor")
    if not np.allclose(I, I.T, atol=1e-12 * max(1.0, float(np.abs(I).max()))):
        raise ModelError(f"Link {name!r}: inertia tensor is not symmetric")
    if not np.all(np.isfinite(link.com)):
        raise ModelError(f"Link {name!r}: centre of mass must be finite")
    if strict:
        ev = np.linalg.eigvalsh(I)
        scale = max(float(np.max(np.abs(ev))), 1e-300)
        if ev[0] < -1e-9 * scale:
            raise ModelError(f"Link {name!r}: inertia tensor has a negative principal moment {ev[0]:.3g} kg m^2 "
                             "(strict check; without strict=True round-off is accepted with a warning)")


#: Relative tolerance of the lumped-body check: a negative principal moment down to this
#: fraction of the robot's largest principal moment is round-off (warned once), below it an error.
INERTIA_TOLERANCE = 1e-6


def check_body_inertias(body_names: Sequence[str], masses: Array, inertia_com: Array) -> None:
    """Check the moving bodies' inertias (fixed links lumped) against the robot's own scale.

    A principal moment below ``-INERTIA_TOLERANCE`` times the largest principal moment of any
    body (or of the body itself) is refused naming the link; a smaller negative one is
    round-off, accepted here (the loaders warn of it: ``inertia_not_positive_definite`` of
    :func:`robot_dynamics.model.check_model`).

    Raises:
        ModelError: a body whose inertia is genuinely indefinite.
    """
    if len(body_names) == 0:
        return
    ev = np.linalg.eigvalsh(np.asarray(inertia_com, dtype=float))
    robot_scale = max(float(np.abs(ev).max()), 1e-300)
    for b, name in enumerate(body_names):
        low = float(ev[b, 0])
        if low >= 0.0:
            continue
        scale = max(robot_scale, float(np.abs(ev[b]).max()))
        if low < -INERTIA_TOLERANCE * scale:
            raise ModelError(
                f"Link {name!r}: inertia tensor (with the fixed links it carries) has a negative principal "
                f"moment {low:.3g} kg m^2, beyond round-off of this robot's scale ({scale:.3g} kg m^2); "
                "fix the <inertia> values (a tensor must be positive semi-definite)"
            )


def origin_matrix(xyz: Any, rpy: Any) -> Array:
    """T from URDF ``<origin xyz rpy>`` (translation then fixed-axis RPY)."""
    from ..spatial import rpy_to_matrix

    return homogeneous(rpy_to_matrix(np.asarray(rpy, float)), np.asarray(xyz, float))
