"""rd_crba in either of its two ways: bodies in depth-first order (each subtree's force columns
moved together) and bodies in any other tree order (each column walked to the base); with and
without mimic joints, on random trees with general axes and prismatic joints."""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.engine import engine
from robot_dynamics.engine.layout import model_text
from robot_dynamics.testing import random_tree_urdf

#: the per-body fields of the model text and their widths (engine.h's RD_MODEL_FIELDS)
PER_BODY = {"parent": 1, "type": 1, "joint": 1, "mult": 1, "offset": 1, "axis": 3, "E0": 9, "r0": 3, "mass": 1,
            "h": 3, "Io": 9}


def _by_depth(text: str) -> tuple[str, list[int], list[int]]:
    """The model text with its bodies sorted by depth (parent[i] < i still, but no longer depth
    first), the frames following their bodies; returns it, the new order and the new parents."""
    lines = text.splitlines()
    at = {line.split()[0]: n for n, line in enumerate(lines) if line.split()}
    parent = [int(float(x)) for x in lines[at["parent"]].split()[2:]]
    depth = []
    for p in parent:
        depth.append(0 if p < 0 else depth[p] + 1)
    order = sorted(range(len(parent)), key=lambda i: (depth[i], i))
    new = {old: k for k, old in enumerate(order)}
    for name, width in PER_BODY.items():
        words = lines[at[name]].split()
        rows = [words[2 + width * i: 2 + width * (i + 1)] for i in range(len(parent))]
        rows = [rows[i] for i in order]
        if name == "parent":
            rows = [[str(new[int(float(r[0]))]) if float(r[0]) >= 0 else "-1"] for r in rows]
        lines[at[name]] = " ".join(words[:2] + [v for r in rows for v in r])
    words = lines[at["frame_body"]].split()
    bodies = [str(new[int(float(b))]) if float(b) >= 0 else "-1" for b in words[2:]]
    lines[at["frame_body"]] = " ".join(words[:2] + bodies)
    return "\n".join(lines) + "\n", order, [new[parent[i]] if parent[i] >= 0 else -1 for i in order]


def _depth_first(parent: list[int]) -> bool:
    """Whether every body's subtree is the bodies i..max of it (rd_crba's column blocks)."""
    last = list(range(len(parent)))
    for i in range(len(parent) - 1, -1, -1):
        if parent[i] >= 0:
            last[parent[i]] = max(last[parent[i]], last[i])
    size = [1] * len(parent)
    for i in range(len(parent) - 1, -1, -1):
        if parent[i] >= 0:
            size[parent[i]] += size[i]
    return all(last[i] - i + 1 == size[i] for i in range(len(parent)))


@pytest.mark.parametrize("mimic", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_any_body_order_gives_the_same_matrix(seed, mimic):
    model = rd.load_urdf(random_tree_urdf(np.random.default_rng(seed), 12, mimic=mimic))
    assert (model.nq < len(model.parent)) == mimic
    assert _depth_first(list(model.parent))  # the loader's order: the column blocks
    text = model_text(model)
    shuffled, order, parent = _by_depth(text)
    assert order != sorted(order) and not _depth_first(parent)  # the walks
    e = engine()
    first, _, _ = e.parse_model(text)
    other, _, _ = e.parse_model(shuffled)
    rng = np.random.default_rng(seed)
    for q in rng.uniform(-2.0, 2.0, size=(5, model.nq)):
        H = e.crba(first, first.create_data(), q)
        np.testing.assert_array_equal(H, rd.crba(model, q))
        np.testing.assert_allclose(e.crba(other, other.create_data(), q), H, rtol=1e-12, atol=1e-12)
        # and the matrix is A(q): its columns are rnea's torques of unit accelerations, no gravity
        zero = np.zeros(model.nq)
        cols = [rd.rnea(model, q, zero, u, gravity=[0.0, 0.0, 0.0], friction=False) for u in np.eye(model.nq)]
        np.testing.assert_allclose(np.stack(cols, 1), H, rtol=1e-11, atol=1e-11)
        np.testing.assert_array_equal(H, H.T)
