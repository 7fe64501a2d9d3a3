"""Sample weights in the metrics: hand-computed values, repeated rows, scikit-learn's AUC."""

import math

import pytest
import torch
from sklearn.metrics import roc_auc_score

from deepctrl.core.metrics import auc, score, weighted_mean


def test_weighted_errors_by_hand():
    y_hat, y = torch.tensor([[1.0], [4.0], [2.0]]), torch.tensor([[2.0], [2.0], [5.0]])
    w = torch.tensor([3.0, 1.0, 0.0])  # errors 1, 2, 3; the last row does not count
    assert float(score("mae", y_hat, y, w)) == (3 * 1 + 1 * 2) / 4
    assert float(score("mse", y_hat, y, w)) == (3 * 1 + 1 * 4) / 4
    assert float(score("rmse", y_hat, y, w)) == math.sqrt(7 / 4)
    p, labels = torch.tensor([[0.8], [0.4]]), torch.tensor([[1.0], [0.0]])
    bce = (-math.log(0.8) - 3 * math.log(0.6)) / 4
    assert float(score("bce", p, labels, torch.tensor([1.0, 3.0]))) == pytest.approx(bce, rel=1e-6)
    logits = torch.tensor([[2.0, 0.0, 0.0], [0.0, 0.0, 3.0]])
    first, second = math.log(math.exp(2) + 2) - 2, math.log(2 + math.exp(3))
    w = torch.tensor([1.0, 2.0])
    assert float(score("cross_entropy", logits, torch.tensor([0, 1]), w)) == pytest.approx(
        (first + 2 * second) / 3, rel=1e-6
    )
    assert float(score("accuracy", logits, torch.tensor([0, 1]), torch.tensor([1.0, 3.0]))) == 0.25
    assert float(score("accuracy", p, labels, torch.tensor([1.0, 3.0]))) == 1.0


def test_weighted_auc_by_hand_with_ties():
    s, y = torch.tensor([0.1, 0.4, 0.4, 0.8]), torch.tensor([0, 1, 0, 1])
    w = torch.tensor([2.0, 1.0, 3.0, 1.0])
    # positive pairs: 0.4 beats 0.1 (1 * 2), ties 0.4 (half of 1 * 3); 0.8 beats both (2 + 3)
    assert float(auc(s, y, w)) == (2 + 1.5 + 2 + 3) / (2 * 5)
    assert math.isnan(float(auc(s, y, torch.tensor([2.0, 0.0, 3.0, 0.0]))))  # no positive weight
    with pytest.raises(ValueError, match="3 weights for 4 samples"):
        auc(s, y, w[:3])


def test_integer_weights_are_repeated_rows():
    g = torch.Generator().manual_seed(0)
    p = torch.rand(60, 1, generator=g, dtype=torch.float64).round(decimals=1)  # ties
    y = (torch.rand(60, 1, generator=g, dtype=torch.float64) < p).double()
    w = torch.arange(60) % 4
    repeated = p.repeat_interleave(w, dim=0), y.repeat_interleave(w, dim=0)
    for name in ("mae", "mse", "rmse", "bce", "accuracy", "auc"):
        assert float(score(name, p, y, w)) == pytest.approx(
            float(score(name, *repeated)), rel=1e-12
        ), name


def test_weighted_auc_matches_scikit_learn_and_unit_weights_change_nothing():
    g = torch.Generator().manual_seed(2)
    p = torch.rand(500, generator=g).round(decimals=2)
    y = (torch.rand(500, generator=g) < p).long()
    w = torch.rand(500, generator=g, dtype=torch.float64) * 3
    reference = roc_auc_score(y.numpy(), p.numpy(), sample_weight=w.numpy())
    assert float(auc(p, y, w)) == pytest.approx(reference, rel=1e-12)
    assert auc(p, y).dtype == torch.float32 and auc(p, y, w).dtype == torch.float64
    assert float(auc(p, y, torch.ones(500))) == float(auc(p.double(), y))


def test_weighted_mean_sums_in_float64():
    values = torch.full((3,), 0.1, dtype=torch.float32)
    mean = weighted_mean(values, torch.tensor([1.0, 1.0, 2.0]))
    assert mean.dtype == torch.float64 and float(mean) == pytest.approx(float(values[0]), rel=1e-15)
    assert weighted_mean(values).dtype == torch.float32
    assert math.isnan(float(weighted_mean(values, torch.zeros(3))))


def test_auc_of_several_outputs_is_the_mean_of_each_class_against_the_rest():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(300, 3, generator=g, dtype=torch.float64)
    labels = torch.randint(0, 3, (300,), generator=g)
    proba = torch.softmax(logits, dim=1).numpy()
    expected = roc_auc_score(labels.numpy(), proba, multi_class="ovr", average="macro")
    assert float(auc(logits, labels)) == pytest.approx(expected, rel=1e-12)
    # two logits of a binary target: the AUC of P(class 1), not of the first logit
    two = logits[:, :2]
    binary = (labels % 2).float()
    p1 = torch.softmax(two, dim=1)[:, 1].numpy()
    assert float(auc(two, binary)) == pytest.approx(roc_auc_score(binary.numpy(), p1), rel=1e-12)
    assert math.isnan(float(auc(logits, torch.zeros(300))))  # classes 1 and 2 absent


@pytest.mark.parametrize("metric", ["cross_entropy", "accuracy", "auc"])
@pytest.mark.parametrize(
    ("labels", "shown"), [([0.0, 2.5], "got 2.5"), ([0, 5], "got 5"), ([-1, 0], "got -1")]
)
def test_class_metrics_refuse_labels_that_are_not_classes(metric, labels, shown):
    logits = torch.zeros(2, 3)
    with pytest.raises(
        ValueError,
        match=f"{metric} over 3 outputs needs one class label per "
        f"sample, a whole number from 0 to 2; {shown}",
    ):
        score(metric, logits, torch.tensor(labels))
