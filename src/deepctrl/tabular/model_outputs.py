"""The model's outputs by name (regression targets, or class probabilities), and model
outputs in the table's units, as the rules that name them see them."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from deepctrl.tabular.table_messages import listed


def is_int(value: Any) -> bool:
    """Whether ``value`` is an integer (Python's or numpy's), not a boolean."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def whole_value(label: Any) -> int | None:
    """The whole number a class label is: 2 for 2, 2.0, '2' or '2.0' (the estimators keep
    labels as text, and pandas reads a column of whole numbers with a blank cell as floats);
    None for any other label.

    >>> [whole_value(v) for v in (2, 2.0, "2", "-2.0", "2.5", "two", True)]
    [2, 2, 2, -2, None, None, None]
    """
    if is_int(label):
        return int(label)
    if isinstance(label, float | np.floating) and float(label).is_integer():
        return int(label)
    if isinstance(label, str):
        whole, _, zeros = label.strip().partition(".")
        if whole.lstrip("-").isdigit() and whole.count("-") <= 1 and set(zeros) <= {"0"}:
            return int(whole)
    return None


def whole_label(label: Any) -> bool:
    """A whole-number class label (one that ``whole_value`` reads as a number)."""
    return whole_value(label) is not None


def _composed(label: Any) -> str:
    """A label as text with its accents composed (Unicode NFC)."""
    return unicodedata.normalize("NFC", str(label))


class Outputs:
    """The model's outputs by name, and how to turn model outputs into the table's units."""

    def __init__(
        self,
        kind: str,
        names: list[str],
        mean: Iterable[float] = (),
        std: Iterable[float] = (),
        labels: Sequence[Any] = (),
        recoded_hint: bool = True,
        link: str = "identity",
    ) -> None:
        self.kind, self.names = kind, names
        self.link = link
        """How regression outputs f become the target's units: ``"identity"``,
        f * std + mean, or ``"log"``, exp(f) * std + mean (a Poisson model's log-rate), so
        that rules see the values ``predict`` returns."""
        self.labels = list(labels)
        """The class labels of a classifier (empty for regression)."""
        self.recoded_hint = recoded_hint
        """Whether a class not found with labels 0, 1, ... hints that a meta-estimator may
        have recoded the labels (never so on the command line, which reads them from the
        file)."""
        self.mean = torch.tensor(list(mean), dtype=torch.float32)
        self.std = torch.tensor(list(std), dtype=torch.float32)

    @classmethod
    def regression(
        cls,
        names: list[str],
        mean: Iterable[float] | None = None,
        std: Iterable[float] | None = None,
        link: str = "identity",
    ) -> Outputs:
        """Regression outputs `names`, in the target's units f * std + mean, or under the
        ``"log"`` link exp(f) * std + mean.

        >>> import math
        >>> out = Outputs.regression(["sales"], [0.0], [20.0], link="log")
        >>> out.raw(torch.tensor([[0.0], [math.log(2.0)]]))["sales"].tolist()
        [20.0, 40.0]
        """
        k = len(names)
        return cls(
            "regression",
            names,
            mean if mean is not None else [0.0] * k,
            std if std is not None else [1.0] * k,
            link=link,
        )

    @classmethod
    def classification(cls, classes: Sequence[Any], recoded_hint: bool = True) -> Outputs:
        names = [f"proba_{c}" for c in classes]
        labels = [c.item() if isinstance(c, np.generic) else c for c in classes]
        kind = "binary" if len(classes) == 2 else "multiclass"
        return cls(kind, names, labels=labels, recoded_hint=recoded_hint)

    def find(self, output: Any) -> int:
        """The index of a class label or target name, or of an index given as such;
        ``output`` None is the first output (regression) or ``classes_[1]`` (binary).

        With whole-number class labels an integer names a label, never a position, so that
        ``1`` cannot mean one class here and another there. A label's accents may be
        written either way (``ö``, or ``o`` and a combining mark).

        >>> Outputs.classification(["late", "ontime"]).find(1)
        1
        >>> Outputs.classification(["1", "2", "5"]).find(2)
        1
        >>> Outputs.classification(["1.0", "2.0", "5.0"]).find(2)
        1
        """
        if output is None:
            return 1 if self.kind == "binary" else 0
        keys = self.labels if self.labels else self.names
        for i, key in enumerate(keys):
            if key == output or _composed(key) == _composed(output):
                return i
        whole = any(whole_label(k) for k in self.labels)
        if whole and whole_label(output):  # 2, '2' and 2.0 name the class 2.0 alike
            for i, key in enumerate(keys):
                if whole_value(key) == whole_value(output):
                    return i
        if is_int(output) and not whole and 0 <= output < len(keys):
            return int(output)
        what, plural = ("class", "classes") if self.labels else ("target", "targets")
        hint = ""
        if is_int(output) and whole:
            hint = "; with whole-number classes an output names a class, not a position"
        elif (
            self.recoded_hint
            and isinstance(output, str)
            and [str(k) for k in keys] == [str(i) for i in range(len(keys))]
        ):
            hint = (
                "; a meta-estimator (cross_val_predict, VotingClassifier, StackingClassifier) "
                "may have recoded the labels to 0, 1, ...: name the class by its position in "
                "the sorted original labels (output=0 for the first, output=1 for the second)"
            )
        elif isinstance(output, str):
            alike = [k for k in keys if str(k).strip().casefold() == output.strip().casefold()]
            hint = f"; did you mean {alike[0]!r}?" if alike else ""
        raise ValueError(
            f"output {output!r} is not a {what} of this model ({plural}: "
            f"{listed(list(keys))}){hint}"
        )

    def describe(self, index: int) -> str:
        """``P('late')`` for a class, the target name for regression."""
        return f"P({self.labels[index]!r})" if self.labels else self.names[index]

    def at_targets(self, scaled: Tensor) -> Tensor:
        """The model outputs that predict regression targets given as the networks train
        on them: the targets themselves, or under the log link their log, a target of 0
        taken as a millionth (exp(f) is never 0, so a zero count is only approached).

        >>> Outputs.regression(["n"], link="log").at_targets(torch.tensor([[1.0], [0.0]]))
        tensor([[  0.0000],
                [-13.8155]])
        """
        return scaled.clamp_min(1e-6).log() if self.link == "log" else scaled

    @property
    def n_model_outputs(self) -> int:
        return 1 if self.kind == "binary" else len(self.names)

    def raw(self, y_hat: Tensor) -> dict[str, Tensor]:
        """Model outputs (batch, n_model_outputs) by name in the table's units: regression
        outputs unscaled (exp first under the log link), class probabilities from the logit
        (binary) or log-probabilities."""
        if self.kind == "regression":
            linked = y_hat.exp() if self.link == "log" else y_hat
            values = linked * self.std.to(y_hat) + self.mean.to(y_hat)
        elif self.kind == "binary":
            p = torch.sigmoid(y_hat[:, :1])
            values = torch.cat([1 - p, p], dim=1)
        else:
            values = y_hat.exp()
        return {name: values[:, j] for j, name in enumerate(self.names)}
