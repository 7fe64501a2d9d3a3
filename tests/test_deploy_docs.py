"""The deployment guide's examples run as written, in order, and say what they claim."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from deepctrl.io.onnx_export import EXPORTER_READY

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "deploy.md"


@pytest.mark.slow
@pytest.mark.skipif(not EXPORTER_READY, reason="the guide exports to ONNX")
def test_the_deployment_guide_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.S)
    assert len(blocks) == 5
    namespace: dict = {}
    for i, block in enumerate(blocks):
        exec(compile(block, f"deploy.md block {i + 1}", "exec"), namespace)
    est, session, request = namespace["est"], namespace["session"], namespace["request"]
    assert namespace["probabilities"].shape == (5, 2)  # the last call scored orders[:5]
    # the server's request, as the estimator sees it (missing values as NaN, '' and NaT)
    frame = pd.DataFrame(
        {
            "dist_km": [12.5, 48.0, np.nan],
            "carrier": ["north", "east", ""],
            "day": pd.to_datetime(["2025-03-01T09:30", "2025-06-15", None], format="ISO8601"),
        }
    )
    label, proba = session.run(None, request)
    want = est.predict_proba(frame, alpha=request["alpha"].astype(float))
    assert np.abs(proba - want).max() < 1e-4
    assert label[1] == "late" and proba[1, 0] > 0.5  # 48 km at full rule strength: late
    assert namespace["default_alpha"] == est.alpha_
    assert request["day"][2] == np.iinfo(np.int64).min  # NaT reaches the file as missing
    assert (tmp_path / "late.onnx").is_file() and (tmp_path / "model.onnx").is_file()
    assert namespace["y"].shape == (3, 1) and (tmp_path / "model.pt2").is_file()
