"""The engine's pairs of doubles (internal.h's ``rd_x2``): one vector register where the compiler
has vector types, two doubles computed lane by lane where it has none (``RD_NO_LANES``, as a
compiler without GNU C's vector extensions builds the engine).

The derivatives form two values at a time (``tree_fill``, the composites, -A^-1 dtau/dx); each
lane must perform the scalar code's operations in its order. The engine's C sources, built here
with ``-DRD_NO_LANES`` by the compiler that built the extension, must give the extension's
derivatives bit for bit.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.engine.layout import model_text

ENGINE = Path(__file__).resolve().parents[2] / "src" / "engine"
LIBRARY = ("algorithms", "model", "derivatives", "control", "plant", "simulate")

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "engine.h"

/* driver MODEL_TEXT q qd qdd tau (4 nq hexadecimal doubles): the status and the three matrices
 * of rd_rnea_derivatives, then of rd_aba_derivatives, one double per line ("%a") */
int main(int argc, char **argv)
{
    static char text[1 << 20];
    FILE *f = fopen(argv[1], "r");
    if (!f)
        return 2;
    text[fread(text, 1, sizeof text - 1, f)] = 0;
    fclose(f);
    rd_model_size size;
    rd_model m;
    char err[256];
    void *extra;
    if (rd_model_text_size(text, &size, err, sizeof err) ||
        rd_model_parse(&m, text, rd_work_bytes(size.nb, size.nq), &extra, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    rd_work w;
    rd_work_bind(&w, extra, m.nb, m.nq);
    const int nq = m.nq;
    if (argc != 2 + 4 * nq)
        return 2;
    double *x = malloc(sizeof(double) * (4 * nq + 3 * nq * nq));
    double *out = x + 4 * nq;
    for (int k = 0; k < 4 * nq; ++k)
        x[k] = strtod(argv[2 + k], NULL);
    const rd_input in = {x, x + nq, x + 2 * nq, x + 3 * nq, NULL, 0};
    const rd_options o = {NULL, 1, 0.0};
    for (int pass = 0; pass < 2; ++pass) {
        const int st = pass ? rd_aba_derivatives(&m, &in, &o, out, out + nq * nq, out + 2 * nq * nq, &w)
                            : rd_rnea_derivatives(&m, &in, &o, out, out + nq * nq, out + 2 * nq * nq, &w);
        printf("%d\n", st);
        for (int k = 0; k < 3 * nq * nq; ++k)
            printf("%a\n", out[k]);
    }
    return 0;
}
"""


@pytest.fixture(scope="module")
def lane_by_lane(tmp_path_factory) -> Path:
    """The engine built without vector types, with a driver of its derivatives."""
    where = tmp_path_factory.mktemp("no_lanes")
    (where / "driver.c").write_text(DRIVER)
    cc = shlex.split(sysconfig.get_config_var("CC") or "cc")
    if not shutil.which(cc[0]):  # Python's own compiler name may not exist here: the system's
        cc = ["cc"]
    exe = where / "driver"
    flags = ["-std=c99", "-O3", "-fno-tree-loop-vectorize", "-fno-math-errno", "-ffp-contract=fast", "-DRD_NO_LANES"]
    sources = [str(where / "driver.c"), *(str(ENGINE / f"{name}.c") for name in LIBRARY)]
    built = subprocess.run([*cc, *flags, f"-I{ENGINE}", *sources, "-lm", "-o", str(exe)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    return exe


@pytest.mark.parametrize("name", ["puma560", "iiwa14", "rx90"])
def test_the_pairs_equal_their_lane_by_lane_build(name, lane_by_lane, tmp_path):
    model = rd.load_robot(name)
    text = tmp_path / f"{name}.txt"
    text.write_text(model_text(model))
    rng = np.random.default_rng(11)
    n = model.nq
    for _ in range(3):
        q, qd, qdd = rng.uniform(-1.5, 1.5, size=(3, n))
        tau = rd.rnea(model, q, qd, qdd)
        args = [float(v).hex() for v in (*q, *qd, *qdd, *tau)]
        lines = subprocess.run([str(lane_by_lane), str(text), *args], check=True, capture_output=True,
                               text=True).stdout.split()
        rnea_st, aba_st = int(lines[0]), int(lines[1 + 3 * n * n])
        assert rnea_st == 0 and aba_st == 0
        theirs = [np.array([float.fromhex(v) for v in lines[1 + k * (1 + 3 * n * n):][:3 * n * n]]).reshape(3, n, n)
                  for k in range(2)]
        ours = (np.array(rd.rnea_derivatives(model, q, qd, qdd)), np.array(rd.aba_derivatives(model, q, qd, tau)))
        for mine, built in zip(ours, theirs):
            np.testing.assert_array_equal(mine, built)
        # and they are the derivatives: M from rnea_derivatives inverts to aba_derivatives' M^-1
        np.testing.assert_allclose(ours[0][2] @ ours[1][2], np.eye(n), atol=1e-9)
