import pytest
import torch
from torch import nn

import deepctrl as dc
from deepctrl.core.layers import Residual
from deepctrl.engine.ensemble import FlatAdam, Stack


class Custom(nn.Module):
    """Not lowerable: goes through vmap."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Linear(3, 5), nn.Linear(5, 3)

    def forward(self, x):
        return self.b(torch.tanh(self.a(x))) * 2.0


class LastStep(nn.Module):
    """Not vmappable (no batching rule for GRU): runs seed after seed."""

    def __init__(self) -> None:
        super().__init__()
        self.rnn, self.head = nn.GRU(3, 4, batch_first=True), nn.Linear(4, 3)

    def forward(self, x):
        return self.head(self.rnn(x.reshape(x.shape[0], 1, 3))[0][:, -1])


class Conv(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv, self.head = nn.Conv1d(1, 2, 2), nn.Linear(4, 3)

    def forward(self, x):
        return self.head(torch.relu(self.conv(x[:, None])).flatten(1))


ARCHITECTURES = {
    "twin encoders": lambda: dc.DeepCTRL(
        dc.mlp(4, 8, 6), dc.mlp(4, 8, 6), dc.mlp(12, 5, 3), shared=dc.mlp(3, 4), residual=True
    ),
    "different encoders": lambda: dc.DeepCTRL(dc.mlp(3, 8, 6), dc.mlp(3, 5, 6), dc.mlp(12, 3)),
    "add": lambda: dc.DeepCTRL(dc.mlp(3, 6), dc.mlp(3, 6), dc.mlp(6, 3), merge="add"),
    "concat": lambda: dc.DeepCTRL(dc.mlp(3, 6), dc.mlp(3, 6), dc.mlp(12, 3), merge="concat"),
    "input": lambda: dc.DeepCTRL(
        dc.mlp(4, 6), None, dc.mlp(6, 3, out_activation="sigmoid"), merge="input"
    ),
    "residual sequential": lambda: Residual(
        nn.Sequential(dc.mlp(3, 7), nn.Tanh(), nn.Linear(7, 3, bias=False))
    ),
    "classifier head": lambda: dc.DeepCTRL(
        dc.mlp(3, 8, 6), dc.mlp(3, 8, 6), nn.Sequential(dc.mlp(12, 5, 3), nn.LogSoftmax(-1))
    ),
    "softmax over axis 1 (vmap)": lambda: nn.Sequential(dc.mlp(3, 4), nn.Softmax(dim=1)),
    "custom module (vmap)": Custom,
    "convolution (vmap)": Conv,
    "GRU (loop)": LastStep,
}
PATHS = {
    "custom module (vmap)": "vmap",
    "convolution (vmap)": "vmap",
    "GRU (loop)": "loop",
    "softmax over axis 1 (vmap)": "vmap",
}  # axis 1 of (seeds, rows, ...) is the rows


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_stack_forward_and_gradients_match_each_model(name):
    torch.manual_seed(0)
    models = [ARCHITECTURES[name]() for _ in range(3)]
    stack = Stack(models)
    x, alpha = torch.randn(3, 5, 3), torch.tensor([0.0, 0.4, 1.2])
    out = stack(x, alpha)
    assert stack.path == PATHS.get(name, "lowered")
    for i, m in enumerate(models):
        ref = m(x[i], float(alpha[i])) if isinstance(m, dc.DeepCTRL) else m(x[i])
        assert torch.allclose(out[i], ref, atol=1e-6)
        (ref**2).sum().backward()
    (out**2).sum().backward()
    for i, m in enumerate(models):
        for k, p in m.named_parameters():
            assert torch.allclose(stack.state_of(i)[k], p.detach())
            assert torch.allclose(stack.params[k].grad[i], p.grad, rtol=1e-5, atol=1e-7), k


def _other_layout(g: torch.Tensor) -> torch.Tensor:
    """The same values with the last two axes stored the other way round."""
    return g.transpose(-1, -2).contiguous().transpose(-1, -2) if g.dim() > 2 else g.clone()


@pytest.mark.parametrize("fused", [True, False])
def test_flat_adam_matches_torch_adam_and_dropping_seeds_keeps_state(fused: bool):
    torch.manual_seed(0)
    models = [ARCHITECTURES["twin encoders"]() for _ in range(3)]
    refs = [dc.DeepCTRL.from_spec(m.spec()) for m in models]
    for r, m in zip(refs, models, strict=True):
        r.load_state_dict(m.state_dict())
    opts = [torch.optim.Adam(r.parameters(), lr=0.01) for r in refs]
    stack = Stack(models)
    adam = FlatAdam(stack, lr=0.01)
    adam.fused = fused  # False: the foreach path of devices and dtypes without a fused kernel
    for step in range(6):
        x = torch.randn(3, 8, 3)
        if step == 3:
            adam.keep(torch.tensor([True, False, True]))
            refs, opts = [refs[0], refs[2]], [opts[0], opts[2]]
        x_ref = x if step < 3 else x[[0, 2]]
        stack.zero_grad()
        stack(x_ref, torch.full((stack.size,), 0.3)).pow(2).sum().backward()
        if step % 2:  # every other step from per-view gradients (the compiled step's way)
            twinned = {n for pair in stack.twins for n in pair}
            names = [k for k in stack.views if k not in twinned]
            assert not _other_layout(stack.views["twin.0.weight"].grad).is_contiguous()
            adam.step_views(names, [_other_layout(stack.views[k].grad) for k in names])
        else:
            adam.step()
        for i, (r, o) in enumerate(zip(refs, opts, strict=True)):
            o.zero_grad()
            r(x_ref[i], 0.3).pow(2).sum().backward()
            o.step()
    for i, r in enumerate(refs):
        for k, p in r.named_parameters():
            assert torch.allclose(stack.state_of(i)[k], p.detach(), atol=1e-6), k
