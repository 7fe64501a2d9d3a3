"""dc.to_onnx on a PyTorch whose exporter is older than the one deepctrl calls: one clear error."""

import pytest
import torch

import deepctrl as dc
from deepctrl.io.onnx_export import EXPORTER_READY


@pytest.mark.skipif(EXPORTER_READY, reason="this PyTorch's exporter is the one deepctrl calls")
def test_an_old_exporter_says_to_upgrade_torch(tmp_path):
    model = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1)).eval()
    with pytest.raises(ValueError, match="ONNX export needs a newer PyTorch than"):
        dc.to_onnx(model, torch.zeros(4, 3), tmp_path / "m.onnx")
    assert not (tmp_path / "m.onnx").exists()
