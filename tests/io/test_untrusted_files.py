"""Model and rules files someone else wrote: crafted ones are refused in one line, before
their claims make the loader allocate memory or shadow the estimator's methods. The
checksums are recomputed as any writer can, so only the loaders' own checks stop them."""

from __future__ import annotations

import json
import os
import re
import resource
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import deepctrl as dc
from deepctrl.cli.rules_file import read_rules_file
from deepctrl.core.rules.expression import parse
from deepctrl.io.file_format import CONFIG_DIGEST, text_digest


def rewrite(path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """``path`` with its config changed by ``change`` and its config checksum recomputed."""
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    meta = header["__metadata__"]
    config = json.loads(meta["config"])
    change(config)
    meta["config"] = json.dumps(config)
    meta[CONFIG_DIGEST] = text_digest(meta["config"])
    head = json.dumps(header).encode()
    out = path.with_name("crafted" + path.suffix)
    out.write_bytes(struct.pack("<Q", len(head)) + head + data[8 + n :])
    return out


@pytest.fixture(scope="module")
def table_model(tmp_path_factory) -> Path:
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"price": rng.uniform(1, 9, 80), "size": rng.normal(size=80)})
    y = pd.Series(np.where(X.price + rng.normal(size=80) > 5, "late", "on time"))
    est = dc.DeepCTRLClassifier(
        rules=[dc.Monotonic("price", "increasing", output="late")], max_epochs=2, n_seeds=2
    )
    return est.fit(X, y).save(tmp_path_factory.mktemp("m") / "m.deepctrl")


@pytest.fixture()
def small_memory():
    """At most 1.5 GB more address space while the test runs: a loader that believed a
    crafted size would fail with MemoryError instead of the ValueError expected."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as statm:
        used = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (used + 1_500_000_000, hard))
    yield
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda c: c["fitted"]["network_"].update(hidden=6000),
            "network settings give .* the shape",
        ),
        (
            lambda c: c["fitted"]["network_"].update(latent=10**6),
            "network settings give .* the shape",
        ),
        (
            lambda c: c.update(n_models=10**9),
            "names 1000000000 networks and stores the weights of 2",
        ),
        (lambda c: c["fitted"].update(classes_dtype="<U300000000"), "stored as '<U300000000'"),
        (lambda c: c["fitted"].update(predict=1), "name 'predict', which is no fitted attribute"),
        (lambda c: c["fitted"].update(alpha_=-5.0), "default alpha -5.0 is not a number from 0"),
        (lambda c: c["fitted"].update(alpha_=1e300), "default alpha 1e\\+300 is not a number"),
        (lambda c: c["fitted"].update(selected_alpha_=3.0), "chosen alphas \\(3.0, "),
        (
            lambda c: c["preprocessing"]["columns"][1].update(mean=float("inf")),
            "column 'size' has the mean inf",
        ),
    ],
    ids=[
        "hidden",
        "latent",
        "n_models",
        "classes_dtype",
        "method",
        "alpha<0",
        "alpha huge",
        "chosen alpha",
        "column mean",
    ],
)
def test_crafted_table_model_claims_are_refused_before_they_cost(
    table_model, change, message, small_memory
):
    with pytest.raises(ValueError, match=f"is a damaged table model: it.*{message}"):
        dc.DeepCTRLClassifier.load(rewrite(table_model, change))


def test_crafted_core_architecture_is_refused_before_it_is_built(tmp_path, small_memory):
    path = dc.save(dc.DeepCTRL(dc.mlp(2, 4), dc.mlp(2, 4), dc.mlp(8, 1)), tmp_path / "m.st")
    wide = rewrite(path, lambda c: c["architecture"]["data_encoder"].update(dims=[2, 10**5, 4]))
    with pytest.raises(ValueError, match="does not hold together: its architecture gives"):
        dc.load(wide)
    deep = rewrite(
        path, lambda c: c["architecture"]["data_encoder"].update(dims=[2] + [4] * 50_000)
    )
    with pytest.raises(ValueError, match="claims 50002 layers, and it holds 6 weight tensors"):
        dc.load(deep)  # refused before 50,000 layers are built


def test_deeply_nested_json_and_toml_are_corrupt_files(tmp_path, table_model):
    deep = "[" * 100_000 + "]" * 100_000
    header = tmp_path / "header.deepctrl"
    header.write_bytes(struct.pack("<Q", len(deep)) + deep.encode())
    with pytest.raises(ValueError, match="its header is corrupt"):
        dc.read_checkpoint(header)
    config = tmp_path / "config.deepctrl"
    config.write_bytes(_with_config_text(table_model, '{"x": ' + deep + "}"))
    with pytest.raises(ValueError, match="its config is nested too deeply"):
        dc.read_checkpoint(config)
    rules = tmp_path / "rules.toml"
    rules.write_text("[[rule]]\nkind = 'monotonic'\ntau = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ValueError, match="not valid TOML: nested too deeply"):
        read_rules_file(rules)


def _with_config_text(path: Path, text: str) -> bytes:
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    header["__metadata__"].update({"config": text, CONFIG_DIGEST: text_digest(text)})
    head = json.dumps(header).encode()
    return struct.pack("<Q", len(head)) + head + data[8 + n :]


def test_a_long_expression_is_refused_before_it_is_parsed():
    with pytest.raises(ValueError, match=r"\.\.\. \(1000006 characters\)': too long") as caught:
        parse("y <= " + "x + " * 250_000 + "1")
    assert len(str(caught.value)) < 250


def test_files_that_are_no_regular_files_say_so(tmp_path):
    loop = tmp_path / "loop.deepctrl"
    loop.symlink_to(loop)
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="is a symbolic link to nothing \\(or a loop of links\\)"):
        dc.load(loop)
    with pytest.raises(ValueError, match="rules file .* is not a regular file \\(a pipe"):
        read_rules_file(fifo)


def test_weights_of_one_network_too_few_are_named(table_model):
    dropped = rewrite(table_model, lambda c: c.update(n_models=3))
    with pytest.raises(ValueError, match="it names 3 networks and stores the weights of 2"):
        dc.DeepCTRLClassifier.load(dropped)


class SquaredMonotonic(dc.Monotonic):
    """A rule class of one's own: the squared violation of a monotone rule."""

    def loss(self, ctx):
        return super().loss(ctx) ** 2


def test_a_rule_class_of_ones_own_is_refused_at_save_and_named_at_load(tmp_path, table_model):
    X = pd.DataFrame({"price": np.linspace(1, 9, 60), "size": np.zeros(60)})
    est = dc.DeepCTRLRegressor(rules=[SquaredMonotonic("price", "increasing")], max_epochs=2)
    est.fit(X, X.price)
    with pytest.raises(ValueError, match="SquaredMonotonic is a subclass of Monotonic"):
        est.save(tmp_path / "own.deepctrl")
    assert not (tmp_path / "own.deepctrl").exists()

    def own_kind(config: dict[str, Any]) -> None:
        config["rules"][0]["rule"]["kind"] = "squaredmonotonic"

    with pytest.raises(ValueError, match="cannot be loaded: .* kind 'squaredmonotonic'") as err:
        dc.DeepCTRLClassifier.load(rewrite(table_model, own_kind))
    assert "damaged" not in str(err.value)


def test_a_regressors_target_scale_and_weights_that_no_fit_writes_are_refused(tmp_path):
    import torch

    X = pd.DataFrame({"price": np.linspace(1, 9, 60)})
    est = dc.DeepCTRLRegressor(max_epochs=1, n_seeds=1).fit(X, 20 - X["price"])
    path = est.save(tmp_path / "r.deepctrl")
    mirrored = rewrite(path, lambda c: c["fitted"].update(target_scale_=[-1.0]))
    with pytest.raises(ValueError, match="its target mean or scale is not a finite number"):
        dc.DeepCTRLRegressor.load(mirrored)
    with torch.no_grad():
        next(est.models_[0].parameters())[0, 0] = float("nan")
    with pytest.raises(ValueError, match="its weight 0.data_encoder.0.weight holds NaN"):
        dc.DeepCTRLRegressor.load(est.save(tmp_path / "nan.deepctrl"))


def test_numbers_too_large_for_a_float_are_one_line_errors(tmp_path):
    huge = "1" + "0" * 400
    with pytest.raises(ValueError, match="the number 10000000000000000000... is too large"):
        parse(f"sales <= {huge}")
    rules = tmp_path / "rules.toml"
    monotonic = "[[rule]]\nkind = 'monotonic'\ncolumn = 'price'\ndirection = 'increasing'\n"
    rules.write_text(f"{monotonic}weight = {huge}\n")
    with pytest.raises(ValueError, match="weight must be a finite number, got one too large"):
        read_rules_file(rules)


@pytest.mark.parametrize(
    ("text", "part"),
    [
        ("sales <= 9 ** 9 ** 9 * price", "9 ** 9 ** 9"),
        ("sales <= min(1 / 0, price)", "1 / 0"),
        ("sales <= price + log(-1)", "log(-1)"),
    ],
)
def test_a_part_without_a_finite_value_is_named_when_parsed(text, part):
    with pytest.raises(ValueError, match=f"^penalty expression .*: {re.escape(repr(part))} is not"):
        parse(text)
    assert parse("sales <= log(2) * log + 2 ** 10").names == ["sales", "log"]


def test_a_header_length_of_zero_is_foreign(tmp_path):
    empty = tmp_path / "zero.deepctrl"
    empty.write_bytes(struct.pack("<Q", 0) + b"{}" + b"\0" * 1000)
    with pytest.raises(ValueError, match="is not a deepctrl model file: it is not a safetensors"):
        dc.read_checkpoint(empty)


def test_metadata_that_is_not_text_is_refused(tmp_path, table_model):
    data = table_model.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    header["__metadata__"]["config"] = 5
    head = json.dumps(header).encode()
    crafted = tmp_path / "five.deepctrl"
    crafted.write_bytes(struct.pack("<Q", len(head)) + head + data[8 + n :])
    with pytest.raises(ValueError, match="its metadata is not all text"):
        dc.read_checkpoint(crafted)
