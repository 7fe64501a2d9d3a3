"""PyTorch's private API behind deepctrl.engine.torch_private: each piece does its work on
this PyTorch, and the public fallback does the same work where the piece is missing."""

from __future__ import annotations

import pytest
import torch

from deepctrl.engine import torch_private as tp


def _adam_inputs() -> tuple[list[torch.Tensor], ...]:
    w = [torch.tensor([1.0, -2.0], dtype=torch.float64)]
    g = [torch.tensor([0.5, -0.25], dtype=torch.float64)]
    return w, g, [torch.zeros(2, dtype=torch.float64)], [torch.zeros(2, dtype=torch.float64)]


TORCH = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
OPTIONS = dict(
    lr=0.1, beta1=0.9, beta2=0.999, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False
)


def test_fused_adam_takes_the_first_adam_step():
    w, g, m, v = _adam_inputs()
    # torch < 2.4 has the kernel for CUDA only: False on the CPU, nothing changed
    cpu_kernel = tp.HAS_FUSED_ADAM and TORCH >= (2, 4)
    assert tp.fused_adam_(w, g, m, v, torch.tensor(1.0), **OPTIONS) is cpu_kernel
    if not cpu_kernel:
        assert w[0].tolist() == [1.0, -2.0] and m[0].tolist() == [0.0, 0.0]
        pytest.skip("this PyTorch has no fused Adam kernel for the CPU")
    # the first step from zero moments moves each weight by lr * g / (|g| + eps)
    expected = [1.0 - 0.1 * 0.5 / (0.5 + 1e-8), -2.0 + 0.1 * 0.25 / (0.25 + 1e-8)]
    assert w[0].tolist() == pytest.approx(expected, rel=1e-12)
    assert m[0].tolist() == pytest.approx([0.05, -0.025], rel=1e-12)  # (1 - beta1) g


def test_without_a_fused_kernel_adam_reports_false_and_changes_nothing(monkeypatch):
    monkeypatch.setattr(tp, "HAS_FUSED_ADAM", False)
    w, g, m, v = _adam_inputs()
    assert tp.fused_adam_(w, g, m, v, torch.tensor(1.0), **OPTIONS) is False
    assert w[0].tolist() == [1.0, -2.0] and m[0].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("private", [True, False])
def test_foreach_copy_copies_with_or_without_the_private_kernel(monkeypatch, private):
    if not private:
        monkeypatch.delattr(torch, "_foreach_copy_", raising=False)
    dst = [torch.zeros(3), torch.zeros(2, 2)]
    src = [torch.arange(3.0), torch.ones(2, 2)]
    tp.foreach_copy_(dst, src)
    assert dst[0].tolist() == [0.0, 1.0, 2.0] and dst[1].tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_compile_errors_name_dynamo_s_exception_or_nothing(monkeypatch):
    from torch.fx.experimental.symbolic_shapes import ConstraintViolationError

    errors = tp.compile_errors()
    assert errors == (torch._dynamo.exc.TorchDynamoException, ConstraintViolationError)
    monkeypatch.delattr(torch._dynamo, "exc")
    assert tp.compile_errors() == (ConstraintViolationError,)


def test_mark_dynamic_marks_and_is_harmless_without_dynamo(monkeypatch):
    t = torch.zeros(4, 3)
    tp.mark_dynamic(t, 0)
    assert 0 in getattr(t, "_dynamo_dynamic_indices", set())
    monkeypatch.delattr(torch._dynamo, "mark_dynamic")
    tp.mark_dynamic(torch.zeros(4, 3), 0)  # nothing to do, no error


def test_distinct_sizes_switches_duck_shapes_off_only_inside():
    import torch.fx.experimental._config as fx_config

    if not hasattr(fx_config, "use_duck_shape"):  # torch < 2.5: nothing to switch
        with tp.distinct_sizes():
            pass
        pytest.skip("this PyTorch has no use_duck_shape")
    before = fx_config.use_duck_shape
    with tp.distinct_sizes():
        assert fx_config.use_duck_shape is False
    assert fx_config.use_duck_shape == before


def test_a_fresh_code_object_keeps_the_function():
    def f(x: int) -> int:
        return x + 1

    code = f.__code__
    assert tp.with_fresh_code(f) is f
    assert f.__code__ is not code and f.__code__ == code and f(1) == 2
