"""Sphinx configuration of the robot_dynamics site (``bash docs/build.sh`` builds it)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
os.environ.setdefault("MPLBACKEND", "Agg")

import robot_dynamics  # noqa: E402

project = "robot_dynamics"
author = "robot_dynamics contributors"
copyright = "robot_dynamics contributors"  # noqa: A001
release = version = robot_dynamics.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
    "rd_reference",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "README.md", "tutorials_src/*.md", "Thumbs.db", ".DS_Store", "**/GALLERY_HEADER.rst"]
nitpicky = False
smartquotes = False  # option names such as --list stay as typed

# The figures of the repository's README live beside these sources; the pages show them too.
html_theme = "furo"
html_title = f"robot_dynamics {release}"
html_static_path = ["_static"]
html_css_files = ["rd.css"]
html_favicon = "_static/favicon.svg"
html_theme_options = {"navigation_with_keys": True}
html_show_sourcelink = False

autodoc_typehints = "description"
autodoc_typehints_description_target = "documented"
autodoc_typehints_format = "short"
autodoc_member_order = "bysource"
autodoc_inherit_docstrings = True
autodoc_default_options = {"undoc-members": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
napoleon_attr_annotations = True
napoleon_use_ivar = True
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
# Attributes named alike in several classes (q, qd, t) make Sphinx warn that an unqualified
# reference has several targets; it links the first, which is what the docstrings mean.
suppress_warnings = ["ref.python"]

sphinx_gallery_conf = {
    "examples_dirs": ["tutorials_src"],
    "gallery_dirs": ["tutorials"],
    "filename_pattern": r"/t\d\d_",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "remove_config_comments": True,
    "download_all_examples": False,
    "line_numbers": False,
    "min_reported_time": 1e9,
    "show_memory": False,
    "write_computation_times": False,
    "image_scrapers": ("rd_gallery.gif_scraper", "matplotlib"),
    "matplotlib_animations": False,
    "within_subsection_order": "FileNameSortKey",
}
