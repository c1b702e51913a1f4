"""The 3-D view without ROS: skeleton geometry and the animation files."""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.io import animate_robot, skeleton_segments
from robot_dynamics.testing import random_tree_urdf


@pytest.mark.parametrize("name", ["puma560", "planar2"])
def test_each_segment_joins_a_frame_to_its_parent_frame(name):
    model = rd.load_robot(name)
    rng = np.random.default_rng(3)
    q = rng.uniform(-1, 1, (4, model.nq))
    seg = skeleton_segments(model, q)
    T = rd.frame_poses(model, q)
    assert seg.shape == (4, len(model.frame_names) - 1, 2, 3)
    # every segment ends at its frame's origin, and starts at the origin of some other frame
    np.testing.assert_allclose(seg[..., 1, :], T[:, 1:, :3, 3], atol=1e-12)
    for k in range(seg.shape[1]):
        starts = np.linalg.norm(T[:, :, :3, 3] - seg[:, k, 0, None, :], axis=-1).min(axis=1)
        assert starts.max() < 1e-12


def test_segments_form_a_tree_rooted_at_the_base():
    """On a random tree with branches and fixed frames, following the segments' starts from
    any frame leads to the base: the skeleton is connected and has no cycle."""
    model = rd.load_urdf(random_tree_urdf(np.random.default_rng(7), 9, n_fixed=3))
    from robot_dynamics.io.animation import _frame_parents

    parents = _frame_parents(model)
    for k in range(len(model.frame_names)):
        seen, j = set(), k
        while j != 0:
            assert j not in seen
            seen.add(j)
            j = int(parents[j])
    # a body's own frame hangs from the frame of its parent body, as the URDF's tree says
    for b, name in enumerate(model.body_names):
        up = int(model.parent[b])
        expected = 0 if up < 0 else model.frame_names.index(model.body_names[up])
        assert parents[model.frame_names.index(name)] == expected


def test_gif_and_html_are_written(tmp_path):
    from PIL import Image

    model = rd.load_robot("planar2")
    t = np.linspace(0.0, 1.0, 11)
    q = np.column_stack([np.sin(t), 0.5 * t])
    anim = animate_robot(model, t, q, tmp_path / "arm.gif", fps=10)
    with Image.open(tmp_path / "arm.gif") as im:
        assert im.n_frames == 11  # 1 s at 10 frames per second, both ends
        assert im.size[0] > 100 and im.size[1] > 100
    animate_robot(model, t, q, tmp_path / "arm.html", fps=10)
    html = (tmp_path / "arm.html").read_text()
    assert html.count("data:image/png;base64") == 11
    assert anim._fig is not None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arm.gif", "arm.html"]  # no temporary left


@pytest.mark.parametrize(
    "t, q, path, match",
    [
        (np.linspace(0, 1, 5), np.zeros((5, 3)), None, "expected t"),
        (np.array([0.0, 1.0, 0.5]), np.zeros((3, 2)), None, "increasing"),
        (np.linspace(0, 1, 5), np.full((5, 2), np.nan), None, "finite"),
        (np.linspace(0, 1, 5), np.zeros((5, 2)), "arm.mp4", "suffix"),
    ],
)
def test_bad_input_is_refused_with_the_package_error(tmp_path, t, q, path, match):
    model = rd.load_robot("planar2")
    with pytest.raises(rd.InputError, match=match):
        animate_robot(model, t, q, None if path is None else tmp_path / path)
    assert not any(tmp_path.iterdir())
