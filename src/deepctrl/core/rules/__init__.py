"""Rules: what the model should respect, as per-sample losses and checks.

Examples:
    >>> import deepctrl as dc
    >>> rule = dc.rules.Monotonic(0, "decreasing", perturbation=dc.rules.Relative(0.1))
"""

from typing import Any

from deepctrl.core.rules.base import Context, Rule, SignedRule, output_column
from deepctrl.core.rules.combine import AllOf
from deepctrl.core.rules.monotonic import Monotonic, Threshold, feature_rule_from_config
from deepctrl.core.rules.penalty import Penalty
from deepctrl.core.rules.perturbation import Additive, Perturbation, Relative, Standardized


def rule_from_config(cfg: dict[str, Any]) -> Rule:
    """Rebuild a rule from `rule.config()`.

    Args:
        cfg: The description, as [Rule.config][deepctrl.rules.Rule.config] returns it.

    Returns:
        The rule.

    Raises:
        ValueError: When the description's kind is unknown or it lacks a value its kind
            needs.
        TypeError: When `cfg` is not a dict.
    """
    if not isinstance(cfg, dict):
        raise TypeError(f"cfg must be a rule's config() dict, got {cfg!r}")
    kind = cfg.get("kind")
    if kind is None:
        raise ValueError(
            f"a rule's config needs 'kind' (monotonic, threshold or allof), got {cfg!r}"
        )
    try:
        if kind in ("monotonic", "threshold"):
            return feature_rule_from_config(cfg)
        if kind == "allof":
            return AllOf.as_stored([rule_from_config(c) for c in cfg["rules"]], cfg["weights"])
    except KeyError as missing:
        raise ValueError(f"the {kind} rule's config needs {missing}, got {cfg!r}") from None
    raise ValueError(f"unknown rule kind {kind!r} (monotonic, threshold or allof)")


__all__ = [
    "Additive",
    "AllOf",
    "Context",
    "Monotonic",
    "Penalty",
    "Perturbation",
    "Relative",
    "Rule",
    "SignedRule",
    "Standardized",
    "Threshold",
    "output_column",
    "rule_from_config",
]
