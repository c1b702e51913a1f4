"""sphinx-gallery helpers of the robot_dynamics site (referred to by name in conf.py)."""

from __future__ import annotations

from pathlib import Path


def gif_scraper(block, block_vars, gallery_conf):
    """Matplotlib animations left in a tutorial's namespace become GIF images on its page
    (the same file ``robot_dynamics.io.animate_robot`` writes); the page then needs no
    player script nor its icon font from a CDN."""
    import matplotlib.pyplot as plt
    from matplotlib.animation import Animation, PillowWriter
    from sphinx_gallery.scrapers import figure_rst

    paths = []
    for value in list(block_vars["example_globals"].values()):
        fig = getattr(value, "_fig", None)
        if isinstance(value, Animation) and fig is not None and plt.fignum_exists(fig.number):
            path = Path(next(block_vars["image_path_iterator"])).with_suffix(".gif")
            value.save(path, writer=PillowWriter(fps=12), dpi=80)
            plt.close(fig)
            paths.append(str(path))
    return figure_rst(paths, gallery_conf["src_dir"])
