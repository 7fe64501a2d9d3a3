"""dc.to_onnx on core models: the file takes the model's inputs and a per-row alpha, and
onnxruntime gives the model's outputs on batches of any size."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
import torch
from torch import nn

import deepctrl as dc
from deepctrl.io.onnx_export import EXPORTER_READY

pytestmark = pytest.mark.skipif(not EXPORTER_READY, reason="torch.onnx.export is too old")


def run(path, feed: dict[str, torch.Tensor]) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {k: v.numpy() for k, v in feed.items()})[0]


def per_row_alpha(n: int) -> torch.Tensor:
    return torch.linspace(-0.2, 1.3, n)  # outside [0, 1] too: alpha extrapolates


class LastStep(nn.Module):
    """The last hidden state of a GRU over (batch, time, features)."""

    def __init__(self, features: int, hidden: int) -> None:
        super().__init__()
        self.gru = nn.GRU(features, hidden, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gru(x)[0][:, -1]


def conv_encoder() -> nn.Module:
    return nn.Sequential(nn.Conv1d(2, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten())


@pytest.mark.parametrize("kind", ["mlp", "cnn", "gru"])
def test_a_model_and_its_file_agree_at_every_rows_alpha(kind, tmp_path):
    torch.manual_seed(0)
    if kind == "mlp":
        model, shape = dc.DeepCTRL(dc.mlp(4, 8), dc.mlp(4, 8), dc.mlp(16, 2)), (4,)
    elif kind == "cnn":
        model, shape = dc.DeepCTRL(conv_encoder(), conv_encoder(), dc.mlp(8, 1)), (2, 12)
    else:
        model, shape = dc.DeepCTRL(LastStep(3, 4), LastStep(3, 4), dc.mlp(8, 1)), (6, 3)
    model.train()
    path = dc.to_onnx(model, torch.randn(5, *shape), tmp_path / f"{kind}.onnx")
    assert model.training  # the caller's mode is restored
    x, alpha = torch.randn(17, *shape), per_row_alpha(17)
    got = run(path, {"x": x, "alpha": alpha})
    with torch.no_grad():
        want = model.eval()(x, alpha=alpha).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)
    # alpha is used row by row: row 3 at its own alpha equals a batch at that alpha
    with torch.no_grad():
        row3 = model(x, alpha=float(alpha[3]))[3].numpy()
    np.testing.assert_allclose(got[3], row3, atol=1e-5, rtol=1e-5)


class Mixed(nn.Module):
    """A shared module over a dict input: an embedded category and two numbers."""

    def __init__(self) -> None:
        super().__init__()
        self.emb, self.lin = nn.Embedding(5, 3), nn.Linear(2, 3)

    def forward(self, x: dict[str, torch.Tensor]) -> torch.Tensor:
        return torch.cat([self.emb(x["cat"]), self.lin(x["num"])], dim=-1)


def test_a_dict_input_becomes_one_input_per_key(tmp_path):
    """Keys keep their names, even one the exporter uses internally ('cat')."""
    torch.manual_seed(1)
    model = dc.DeepCTRL(dc.mlp(6, 4), dc.mlp(6, 4), dc.mlp(8, 1), shared=Mixed())
    example = {"num": torch.randn(4, 2), "cat": torch.randint(0, 5, (4,))}
    path = dc.to_onnx(model, example, tmp_path / "dict.onnx")
    session = ort.InferenceSession(str(path))
    assert [i.name for i in session.get_inputs()] == ["num", "cat", "alpha"]
    x = {"num": torch.randn(9, 2), "cat": torch.randint(0, 5, (9,))}
    alpha = per_row_alpha(9)
    with torch.no_grad():
        want = model.eval()(x, alpha=alpha).numpy()
    np.testing.assert_allclose(run(path, {**x, "alpha": alpha}), want, atol=1e-5, rtol=1e-5)


class Branching(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x) if x.sum() > 0 else -self.lin(x)


def test_ctrl_c_inside_the_exporter_is_an_interrupt_not_a_model_that_cannot_export(
    tmp_path, monkeypatch
):
    def interrupted(*args, **kwargs):
        try:
            raise KeyboardInterrupt  # while the exporter imported torch._dynamo
        except KeyboardInterrupt as stop:
            raise AttributeError("module 'torch._dynamo' has no attribute 'exc'") from stop

    monkeypatch.setattr(torch.onnx, "export", interrupted)
    plain = dc.DeepCTRL(dc.mlp(3, 4), dc.mlp(3, 4), dc.mlp(8, 1))
    with pytest.raises(KeyboardInterrupt):
        dc.to_onnx(plain, torch.randn(4, 3), tmp_path / "i.onnx")
    assert not (tmp_path / "i.onnx").exists()


def test_what_does_not_export_says_so(tmp_path, capsys):
    model = dc.DeepCTRL(Branching(), Branching(), dc.mlp(8, 1))
    with pytest.raises(ValueError, match="this DeepCTRL does not export to ONNX: .*data-dependent"):
        dc.to_onnx(model, torch.randn(4, 3), tmp_path / "b.onnx")
    assert not (tmp_path / "b.onnx").exists()
    assert capsys.readouterr().err == ""  # the one line is the error; no graph dump before it
    plain = dc.DeepCTRL(dc.mlp(3, 4), dc.mlp(3, 4), dc.mlp(8, 1))
    with pytest.raises(ValueError, match="at least two rows"):
        dc.to_onnx(plain, torch.randn(1, 3), tmp_path / "c.onnx")
    with pytest.raises(ValueError, match="'alpha' would clash"):
        dc.to_onnx(plain, {"alpha": torch.randn(4, 3)}, tmp_path / "d.onnx")
    with pytest.raises(ValueError, match="a dict input named 'y' would clash with the output"):
        dc.to_onnx(plain, {"y": torch.randn(4, 3)}, tmp_path / "d.onnx")
    with pytest.raises(ValueError, match="it is a folder; give a file name"):
        dc.to_onnx(plain, torch.randn(4, 3), tmp_path)
    with pytest.raises(ValueError, match="a tensor or a non-empty dict of tensors, got list"):
        dc.to_onnx(plain, [torch.randn(4, 3)], tmp_path / "e.onnx")


class FixedBatch(nn.Module):
    """A model that only runs on batches of four rows."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = dc.DeepCTRL(dc.mlp(3, 4), dc.mlp(3, 4), dc.mlp(8, 1))

    def forward(self, x: torch.Tensor, alpha: torch.Tensor) -> torch.Tensor:
        return self.inner(x, alpha=alpha).reshape(4, 1)


@pytest.mark.parametrize(
    ("model", "example", "message"),
    [
        ("plain", {}, "non-empty dict of tensors, got dict \\(empty\\)"),
        ("plain", {"num": [1.0, 2.0]}, "example_inputs\\['num'\\] must be a tensor, got list"),
        ("plain", torch.tensor(1.0), "must have a batch dimension \\(rows first\\)"),
        (
            "plain",
            torch.zeros(4, 3, dtype=torch.long),
            "this DeepCTRL does not run on example_inputs \\(4 rows\\): mat1 and mat2",
        ),
        (
            "plain",
            torch.zeros(4, 5),
            "this DeepCTRL does not run on example_inputs \\(4 rows\\): mat1 and mat2 shapes",
        ),
        ("fixed", torch.randn(4, 3), "this FixedBatch does not run on one row of example_inputs"),
    ],
)
def test_an_example_the_model_cannot_take_is_one_line(model, example, message, tmp_path):
    net = (
        FixedBatch() if model == "fixed" else dc.DeepCTRL(dc.mlp(3, 4), dc.mlp(3, 4), dc.mlp(8, 1))
    )
    with pytest.raises(ValueError, match=message):
        dc.to_onnx(net, example, tmp_path / "m.onnx")
    assert not (tmp_path / "m.onnx").exists()
