"""Estimator model files: one safetensors file whose JSON metadata holds the parameters,
preprocessing, rules and architecture (written with :func:`deepctrl.save`, atomically).
Loading checks the format and version and never unpickles anything.

>>> import os, tempfile, numpy as np, deepctrl as dc
>>> X, y = np.random.default_rng(0).normal(size=(40, 2)), np.arange(40.0)
>>> est = dc.DeepCTRLRegressor(max_epochs=2, random_state=0).fit(X, y)
>>> path = est.save(os.path.join(tempfile.mkdtemp(), "model.deepctrl"))
>>> bool(np.allclose(dc.DeepCTRLRegressor.load(path).predict(X), est.predict(X)))
True
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import os
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted
from torch import Tensor, nn

from deepctrl.core.rules import AllOf, Rule
from deepctrl.io.checkpoint import read_checkpoint, save, shape_mismatch
from deepctrl.io.file_format import (
    LOG_LINK_FORMAT,
    TABLE_MODEL_FORMAT,
    check_table_model,
    damaged_table_model,
)
from deepctrl.tabular.encoding import TableEncoder
from deepctrl.tabular.model_file_legacy import as_trained
from deepctrl.tabular.model_outputs import is_int
from deepctrl.tabular.network import build_network, network_shapes
from deepctrl.tabular.params import fit_snapshot
from deepctrl.tabular.recipe import Recipe
from deepctrl.tabular.stored_rules import UnknownRuleKindError, rules_config, rules_from_config
from deepctrl.tabular.table_rules import resolve

_COMMON = (
    "n_features_in_",
    "network_",
    "n_epochs_",
    "best_epochs_",
    "batch_size_",
    "n_train_",
    "n_validation_",
    "validation_sweep_",
    "selected_alpha_",
    "min_error_alpha_",
    "alpha_",
    "rho_",
)
ESTIMATORS: dict[str, type[BaseEstimator]] = {}
"""Estimator classes a model file may name, filled by :func:`register`."""


def register(cls: type[Estimator]) -> type[Estimator]:
    """Class decorator: model files naming ``cls.__name__`` load as ``cls``."""
    ESTIMATORS[cls.__name__] = cls
    return cls


def built_in(cls: type) -> type[BaseEstimator]:
    """The registered estimator class that ``cls`` is or derives from: a file saved from a
    subclass names it, so that the class itself and any of its subclasses read the file."""
    for base in cls.__mro__:
        if ESTIMATORS.get(base.__name__) is base:
            return base
    raise ValueError(f"{cls.__name__} is not a deepctrl estimator")


_REGRESSION = ("output_names_", "target_1d_")
Estimator = TypeVar("Estimator", bound=BaseEstimator)


def _plain(value: Any) -> Any:
    """numpy scalars and arrays as plain JSON values, inside dicts and lists too, and a
    torch.device as its name.

    >>> _plain({"hidden": np.int64(16), "sizes": [np.float32(0.5)]})
    {'hidden': 16, 'sizes': [0.5]}
    >>> _plain(torch.device("cpu"))
    'cpu'
    """
    if isinstance(value, torch.device):
        return str(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _class_weight_pairs(weights: Any) -> Any:
    """A class_weight dict as [label, weight] pairs, so that JSON keeps the labels' types
    (its object keys are text); "balanced" and None as they are."""
    if not isinstance(weights, dict):
        return weights
    return {"pairs": [[_plain(k), _plain(v)] for k, v in weights.items()]}


def _class_weight_dict(saved: Any) -> Any:
    """The class_weight that ``_class_weight_pairs`` wrote."""
    if isinstance(saved, dict) and list(saved) == ["pairs"]:
        return dict(saved["pairs"])
    return saved


def _outputs_as_labels(items: list[dict[str, Any]], est: Any) -> list[dict[str, Any]]:
    """The stored rules with a classifier's integer ``output`` written as the class label it
    names where their texts differ (``2`` naming the class ``2.0``), so that no reader takes
    the number for a position among the classes."""
    if not hasattr(est, "classes_"):
        return items
    outputs = est.rule_outputs()
    out = []
    for item in items:
        rule = dict(item["rule"])
        if is_int(rule.get("output")):
            label = _plain(est.classes_[outputs.find(rule["output"])])
            rule["output"] = label if str(label) != str(rule["output"]) else rule["output"]
        out.append({**item, "rule": rule})
    return out


def estimator_config(est: Any) -> dict[str, Any]:
    """The JSON config of a fitted estimator."""
    check_is_fitted(est, "models_")
    # the parameters of the fit (set_params since then waits for the next), but alpha's now
    given = getattr(est, "fitted_params_", None) or est.get_params(deep=False)
    rules = given["rules"]
    kind = built_in(type(est))
    own = set(inspect.signature(kind.__init__).parameters)  # a subclass's extras are not
    params = {
        k: _plain(v) for k, v in {**given, "alpha": est.alpha}.items() if k in own - {"rules"}
    }
    if "class_weight" in params:
        params["class_weight"] = _class_weight_pairs(given["class_weight"])
    if not isinstance(params.get("random_state"), int | None):
        params["random_state"] = None
    fitted = {k: _plain(getattr(est, k)) for k in _COMMON}
    if getattr(est, "judged_rows_", None) is not None:  # nor this
        fitted["judged_rows_"] = list(est.judged_rows_)
    if hasattr(est, "sample_weighted_"):  # nor this
        fitted["sample_weighted_"] = bool(est.sample_weighted_)
    if getattr(est, "recipe_", None) is not None:  # a model loaded from an older file has none
        fitted["recipe_"] = dataclasses.asdict(est.recipe_)
    if hasattr(est, "feature_names_in_"):
        fitted["feature_names_in_"] = _plain(est.feature_names_in_)
    if hasattr(est, "classes_"):
        fitted["classes_"] = _plain(est.classes_)
        fitted["target_name_"] = est.target_name_
        fitted["classes_dtype"] = (
            est.classes_.dtype.str if est.classes_.dtype != object else "object"
        )
    else:
        fitted.update({k: _plain(getattr(est, k)) for k in _REGRESSION})
        fitted["target_mean_"] = _plain(est.target_mean_)
        fitted["target_scale_"] = _plain(est.target_scale_)
    log_link = not hasattr(est, "classes_") and est.rule_outputs().link == "log"
    return {
        "estimator": kind.__name__,
        "estimator_format": LOG_LINK_FORMAT if log_link else TABLE_MODEL_FORMAT,
        "params": params,
        "rules": _outputs_as_labels(rules_config(rules), est),
        **({"rules_given": "one rule"} if isinstance(rules, Rule) else {}),
        "preprocessing": est.encoder_.config(),
        "n_models": len(est.models_),
        "fitted": fitted,
    }


def save_estimator(est: Any, path: str | os.PathLike[str]) -> Path:
    """Write ``est`` to ``path`` atomically (no partial file on a crash)."""
    return save(nn.ModuleList(est.models_), path, estimator_config(est))


def _classes(values: list[Any], dtype: str) -> np.ndarray:
    """The class labels in the NumPy type they were saved from, which must be one `save`
    writes and no wider than the labels need (a crafted type would allocate gigabytes).

    >>> _classes(["no", "yes"], "<U3").dtype, _classes([0, 1], "<i8").dtype
    (dtype('<U3'), dtype('int64'))
    """
    if dtype == "object":
        return np.asarray(values, dtype=object)
    natural, wanted = np.asarray(values), np.dtype(dtype)
    if wanted.kind not in "biufU" or wanted.itemsize > max(natural.dtype.itemsize, 16):
        raise ValueError(f"its class labels are stored as {dtype!r}, which they do not need")
    return natural.astype(wanted)


def _rebuild(cfg: dict[str, Any], kind: type[BaseEstimator]) -> Any:
    params = dict(cfg["params"])
    if "class_weight" in params:
        params["class_weight"] = _class_weight_dict(params["class_weight"])
    est = kind(**params)
    encoder = TableEncoder.from_config(cfg["preprocessing"])
    rules: list[Rule] | Rule | None = rules_from_config(
        as_trained(cfg["rules"], cfg["fitted"], encoder)
    )
    if isinstance(rules, list) and rules and cfg.get("rules_given") == "one rule":
        rules = rules[0] if len(rules) == 1 else AllOf.as_stored(rules, [1.0] * len(rules))
    est.set_params(rules=rules)
    est.fitted_params_ = fit_snapshot(est.get_params(deep=False))
    fitted: dict[str, Any] = dict(cfg["fitted"])
    if "classes_" in fitted:
        fitted["classes_"] = _classes(fitted["classes_"], fitted.pop("classes_dtype"))
    else:
        fitted["target_mean_"] = np.asarray(fitted["target_mean_"], dtype=np.float64)
        fitted["target_scale_"] = np.asarray(fitted["target_scale_"], dtype=np.float64)
    if "feature_names_in_" in fitted:
        fitted["feature_names_in_"] = np.asarray(fitted["feature_names_in_"], dtype=object)
    fitted["selected_alpha_"] = float(fitted["selected_alpha_"])
    if "judged_rows_" in fitted:  # a pair, which JSON writes as a list
        fitted["judged_rows_"] = tuple(int(v) for v in fitted["judged_rows_"])
    if "recipe_" in fitted:  # files written before the recipe was saved have none
        fitted["recipe_"] = Recipe(**fitted["recipe_"])
    # files written before the rule-keeping default chose alpha by the lowest error alone
    fitted["min_error_alpha_"] = float(fitted.get("min_error_alpha_", fitted["selected_alpha_"]))
    alpha = cfg["params"].get("alpha", "auto")  # files written before alpha_ existed
    fitted["alpha_"] = float(
        fitted.get("alpha_", fitted["selected_alpha_"] if alpha == "auto" else alpha)
    )
    for key, value in fitted.items():
        if key.startswith("_") or hasattr(type(est), key):  # a method, such as predict
            raise ValueError(f"its fitted values name {key!r}, which is no fitted attribute")
        setattr(est, key, value)
    est.encoder_ = encoder
    if est.encoder_.n_encoded != est.network_["inputs"]:
        raise ValueError("the preprocessing does not match the network's inputs")
    est.rule_ = resolve(rules, est.encoder_, est.rule_outputs(), strict=False)
    return est


def _check_sizes(spec: dict[str, Any], n_models: int, weights: dict[str, Tensor]) -> None:
    """Check that the file's config and its weights describe the same networks, before any
    is built: a config claiming other sizes would otherwise have gigabytes allocated before
    the weights are found not to fit."""
    stored = {key.split(".", 1)[0] for key in weights}
    if n_models != len(stored):
        raise ValueError(f"it names {n_models} networks and stores the weights of {len(stored)}")
    expected = network_shapes(spec).state_dict()  # shapes only: nothing is allocated
    first = {k.split(".", 1)[1]: v for k, v in weights.items() if k[:2] == "0."}
    differ = shape_mismatch(expected, first)
    if differ is not None:
        key, want, have = differ
        raise ValueError(
            f"its network settings give {key} the shape {want}, and its weights {have}"
        )


def load_estimator(path: str | os.PathLike[str], kind: type[BaseEstimator] | None = None) -> Any:
    """Read an estimator written by :func:`save_estimator`, with clear errors for files
    that are foreign, corrupt, pickles or from an incompatible version."""
    ckpt = read_checkpoint(path)
    cfg = ckpt.config
    name = check_table_model(cfg, path, ckpt.version, built_in(kind).__name__ if kind else None)
    try:
        if name not in ESTIMATORS:
            raise ValueError(f"no estimator class {name!r} is registered")
        est = _rebuild(cfg, kind if kind is not None else ESTIMATORS[name])
        n_models = int(cfg["n_models"])
        _check_sizes(est.network_, n_models, ckpt.state_dict)
        models = nn.ModuleList(build_network(est.network_, empty=True) for _ in range(n_models))
        models.load_state_dict(ckpt.state_dict)
    except UnknownRuleKindError as exc:
        raise ValueError(f"{path} cannot be loaded: {exc}") from None
    except (
        KeyError,
        TypeError,
        ValueError,
        IndexError,
        AttributeError,
        RuntimeError,
        OverflowError,
    ) as exc:
        raise damaged_table_model(path, exc) from None
    problem = _implausible(est, ckpt.state_dict)
    if problem is not None:
        raise damaged_table_model(path, problem)
    est.models_ = [m.eval() for m in models]
    return est


def _implausible(est: Any, weights: dict[str, Tensor]) -> str | None:
    """What no fit writes, in a loaded estimator's numbers: alphas chosen outside 0 to 1 or a
    default alpha below 0 or beyond float32, a target scale that is not positive, weights
    that are not finite float32 (a crafted file would predict nonsense without a word)."""
    chosen = (est.selected_alpha_, est.min_error_alpha_)
    if not all(0.0 <= float(a) <= 1.0 for a in chosen):
        return f"its chosen alphas {chosen} are not from 0 to 1"
    if not 0.0 <= float(est.alpha_) <= float(np.finfo(np.float32).max):
        return f"its default alpha {est.alpha_} is not a number from 0 up"
    for col in est.encoder_.columns:
        if not (math.isfinite(col.mean) and math.isfinite(col.std) and col.std > 0):
            return f"its column {col.name!r} has the mean {col.mean} and the scale {col.std}"
    if hasattr(est, "target_scale_"):
        scale, mean = np.asarray(est.target_scale_), np.asarray(est.target_mean_)
        if not (np.isfinite(mean).all() and np.isfinite(scale).all() and (scale > 0).all()):
            return "its target mean or scale is not a finite number (a scale above 0)"
    for name, tensor in weights.items():
        if tensor.dtype != torch.float32:
            return f"its weight {name} is {tensor.dtype}, not float32"
        if not bool(torch.isfinite(tensor).all()):
            return f"its weight {name} holds NaN or infinite values"
    return None
