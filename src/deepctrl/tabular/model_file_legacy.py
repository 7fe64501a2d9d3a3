"""Model files written by earlier versions, read as they were trained.

Three meanings changed after files were written with them; each file says which it was
written under by the fitted values it holds (each written by every fit from the change on):

* rules on a class: before rules named classes (files without ``min_error_alpha_``), an
  integer ``output`` was a position among the model's outputs, and a two-class model had
  one, the probability of the second class;
* before an integer output named a whole-number class label (files without ``recipe_``),
  an integer that is no class label was a position among the classes, and so it was for
  classes of whole numbers written with a decimal point (``1.0``, ``2.0``) until such an
  output named the class of that value (files written since store the label itself,
  ``2.0``: a stored integer that is no label's text is a position);
* before whole-number columns were perturbed by at least one unit (files without
  ``judged_rows_``), a rule that gave no perturbation moved such a column by a tenth of
  its standard deviation. (Development builds of the two hours between that change and
  the first fits keeping ``judged_rows_``, 2026-11-26 22:45 to 2026-11-27 01:03 UTC, none
  released, trained with one unit and are read with the tenth.)

The stored rules are rewritten to say what they meant: the class by its label, the
perturbation given.
"""

from __future__ import annotations

from typing import Any

from deepctrl.tabular.column_kinds import NUMERIC
from deepctrl.tabular.encoding import TableEncoder
from deepctrl.tabular.model_outputs import is_int


def _class_named(output: Any, classes: list[Any], fitted: dict[str, Any]) -> Any:
    """The class label an old file's integer ``output`` meant, or ``output`` itself."""
    if not is_int(output) or not classes:
        return output
    if "min_error_alpha_" not in fitted:  # positions among the model's outputs
        if len(classes) == 2:
            return classes[1] if output == 0 else output
        return classes[output] if 0 <= output < len(classes) else output
    labels = {str(c) for c in classes}
    counted = "recipe_" in fitted and any(_whole_when_written(c) for c in classes)
    if not counted and str(output) not in labels and 0 <= output < len(classes):
        return classes[output]  # a position among the classes
    return output


def _whole_when_written(label: Any) -> bool:
    """Whether a class label was a whole number to the files that named classes by whole
    numbers before labels written with a decimal point were: an integer or its digits."""
    return is_int(label) or (isinstance(label, str) and label.lstrip("-").isdigit())


def _old_default(rule: dict[str, Any], encoder: TableEncoder) -> dict[str, Any] | None:
    """The perturbation a rule without one had on a whole-number column, where today's
    default differs; None elsewhere."""
    ref = rule.get("feature")
    if not isinstance(ref, str | int):
        return None
    try:  # a column by name, or by position for rules on arrays
        col = encoder.column(ref)
    except (ValueError, IndexError, KeyError):
        return None
    if col.kind != NUMERIC or not col.integer or 0.1 * col.std >= 1.0:
        return None
    return {"kind": "additive", "scale": 0.1 * col.std}


def as_trained(
    items: list[dict[str, Any]], fitted: dict[str, Any], encoder: TableEncoder
) -> list[dict[str, Any]]:
    """A model file's stored rules (``rules_config``'s items) with the meanings of the
    version that wrote them made explicit (see the module's docstring).

    >>> old = [{"rule": {"kind": "monotonic", "feature": "x", "output": 0}, "weight": 1.0}]
    >>> as_trained(old, {"classes_": ["sick", "well"]}, TableEncoder([]))[0]["rule"]["output"]
    'well'
    """
    classes = list(fitted.get("classes_", []))
    out = []
    for item in items:
        rule = dict(item["rule"])
        if "output" in rule:
            rule["output"] = _class_named(rule["output"], classes, fitted)
        if "judged_rows_" not in fitted and rule.get("perturbation", 0) is None:
            rule["perturbation"] = _old_default(rule, encoder)
        out.append({**item, "rule": rule})
    return out
