import pytest
import torch
import torch.nn.functional as F
from torch import nn

from deepctrl.core.layers import OneHotLinear, one_hot_codes

BLOCKS = ((1, 5), (6, 9))


def _rows(n: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """Rows of 10 inputs: numbers at 0 and 5 and 9, one-hot blocks at 1-4 and 6-8, some of
    them all zeros (an unseen category)."""
    g = torch.Generator().manual_seed(0)
    x = torch.zeros(n, 10, dtype=dtype)
    for j in (0, 5, 9):
        x[:, j] = torch.randn(n, generator=g, dtype=dtype)
    rows = torch.arange(n)
    x[rows, 1 + torch.randint(0, 4, (n,), generator=g)] = 1.0
    x[rows, 6 + torch.randint(0, 3, (n,), generator=g)] = 1.0
    x[::5, 1:5] = 0.0
    x[::7, 6:9] = 0.0
    return x


def test_codes_and_values_by_hand():
    x = torch.tensor([[9.0, 0, 1, 0, 0, 7.0, 0, 0, 1, 2.0], [9.0, 0, 0, 0, 0, 7.0, 1, 0, 0, 2.0]])
    codes, values = one_hot_codes(x, BLOCKS)
    assert codes.tolist() == [[2, 8], [1, 6]]
    assert values.tolist() == [[1.0, 1.0], [0.0, 1.0]]


def test_forward_and_gradients_equal_a_plain_linear_layer_in_float64():
    torch.manual_seed(0)
    layer = OneHotLinear(10, 6, BLOCKS).double()
    x = _rows(40).requires_grad_(False)
    upstream = torch.randn(40, 6, dtype=torch.float64)
    (layer(x) * upstream).sum().backward()
    w, b = (
        layer.weight.detach().clone().requires_grad_(),
        layer.bias.detach().clone().requires_grad_(),
    )
    plain = F.linear(x, w, b)
    (plain * upstream).sum().backward()
    torch.testing.assert_close(layer(x), plain, rtol=0, atol=1e-12)
    torch.testing.assert_close(layer.weight.grad, w.grad, rtol=0, atol=1e-12)
    torch.testing.assert_close(layer.bias.grad, b.grad, rtol=0, atol=1e-12)
    # a weight column of a value no row has gets no gradient; one of every row's value does
    assert torch.all(layer.weight.grad[:, 1:5].abs().sum(0) > 0)


def test_leading_axes_and_no_bias():
    layer = OneHotLinear(10, 3, BLOCKS, bias=False).double()
    x = _rows(12).view(3, 4, 10)
    torch.testing.assert_close(layer(x), F.linear(x, layer.weight), rtol=0, atol=1e-12)


def test_replacing_shares_the_parameters_and_draws_no_random_numbers():
    dense = nn.Linear(10, 4)
    torch.manual_seed(3)
    layer = OneHotLinear.replacing(dense, BLOCKS)
    after = torch.rand(1)
    torch.manual_seed(3)
    assert torch.equal(after, torch.rand(1))
    assert layer.weight is dense.weight and layer.bias is dense.bias
    assert list(layer.state_dict()) == ["weight", "bias"]


@pytest.mark.parametrize("blocks", [(), ((2, 2),), ((3, 6), (5, 8)), ((6, 8), (1, 3)), ((8, 11),)])
def test_bad_blocks_are_refused(blocks):
    with pytest.raises(ValueError, match="one-hot blocks must be"):
        OneHotLinear(10, 2, blocks)


def test_a_layer_whose_every_input_is_one_hot_equals_a_plain_linear_layer():
    torch.manual_seed(0)
    layer = OneHotLinear(4, 3, ((0, 4),)).double()
    x = torch.eye(4, dtype=torch.float64)[[0, 3, 1, 1]]
    assert layer.dense_columns.dtype == torch.long and layer.dense_columns.numel() == 0
    torch.testing.assert_close(layer(x), F.linear(x, layer.weight, layer.bias), rtol=0, atol=1e-12)
