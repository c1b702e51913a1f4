"""The compiled core gives the numbers the numpy core gave, to 1e-12 relative (see core_reference.py)."""

from __future__ import annotations

import numpy as np
import pytest

from core_reference import PATH, models, outputs

REFERENCE = np.load(PATH)
CASES = list(models())


@pytest.mark.parametrize("case,model", CASES, ids=[c for c, _ in CASES])
def test_every_algorithm_equals_the_recorded_numpy_core(case, model):
    k = [c for c, _ in CASES].index(case)
    thunks = outputs(model, 100 + k)
    recorded = sorted(key.split("/", 1)[1] for key in REFERENCE.files if key.startswith(case + "/"))
    assert recorded == sorted(thunks), "the recorded quantities changed: re-record deliberately"
    for key, thunk in thunks.items():
        ref = REFERENCE[f"{case}/{key}"]
        got = thunk()
        assert got.shape == ref.shape, key
        scale = max(float(np.max(np.abs(ref))), 1.0)
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12 * scale, err_msg=f"{case}: {key}")
