import json
import pickle
import struct

import pytest
import torch
from safetensors.torch import save_file

import deepctrl as dc
from deepctrl.core.merges import Merge
from deepctrl.io.checkpoint import read_checkpoint


def model():
    torch.manual_seed(0)
    return dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 2), shared=dc.mlp(3, 3))


def test_round_trip_gives_identical_outputs(tmp_path):
    m = model()
    path = dc.save(m, tmp_path / "m.safetensors", {"rule": "demo", "alpha": 0.4})
    x = torch.randn(5, 3)
    for loaded in (dc.load(path), dc.load(path, model())):
        for a in (0.0, 0.4, 1.0):
            assert torch.equal(loaded(x, a), m(x, a))
    ckpt = read_checkpoint(path)
    assert ckpt.config["alpha"] == 0.4 and ckpt.version == dc.__version__
    assert [p.name for p in tmp_path.iterdir()] == ["m.safetensors"]  # no temp files left


def test_a_checkpoints_repr_counts_the_weights_and_shows_a_short_config(tmp_path):
    m = model()
    values = sum(p.numel() for p in m.state_dict().values())
    plain = read_checkpoint(dc.save(torch.nn.Linear(3, 2), tmp_path / "p.safetensors", {"a": 1}))
    assert repr(plain) == (
        f"Checkpoint(state_dict=<2 tensors, 8 values>, config={{'a': 1}}, "
        f"version={dc.__version__!r})"
    )
    shown = repr(read_checkpoint(dc.save(m, tmp_path / "m.safetensors", {"rule": "demo"})))
    assert shown == (
        f"Checkpoint(state_dict=<{len(m.state_dict())} tensors, {values:,} values>, "
        f"config=<keys 'rule', 'architecture'>, version={dc.__version__!r})"
    )


def test_a_pickle_is_refused_and_never_executed(tmp_path):
    marker = tmp_path / "executed"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    path = tmp_path / "evil.pt"
    path.write_bytes(pickle.dumps(Evil()))
    with pytest.raises(ValueError, match="pickle"):
        dc.load(path, model())
    assert not marker.exists()
    torch.save(model().state_dict(), tmp_path / "torch.pt")
    with pytest.raises(ValueError, match="pickle or torch.save"):
        dc.load(tmp_path / "torch.pt", model())


def test_foreign_corrupt_and_incompatible_files_are_refused(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello world, not a model")
    with pytest.raises(ValueError, match="not a deepctrl model file"):
        dc.load(text, model())
    foreign = tmp_path / "foreign.safetensors"
    save_file({"w": torch.zeros(2)}, foreign)
    with pytest.raises(ValueError, match="safetensors file but not a deepctrl model file"):
        dc.load(foreign, model())
    good = dc.save(model(), tmp_path / "good.safetensors")
    data = good.read_bytes()
    (tmp_path / "cut.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="corrupt"):
        dc.load(tmp_path / "cut.safetensors", model())
    (n,) = struct.unpack("<Q", data[:8])
    header = data[8 : 8 + n].replace(b'"format_version":"1"', b'"format_version":"9"')
    (tmp_path / "future.safetensors").write_bytes(data[:8] + header + data[8 + n :])
    with pytest.raises(ValueError, match="reads format 1"):
        dc.load(tmp_path / "future.safetensors", model())
    with pytest.raises(ValueError, match="does not exist"):
        dc.load(tmp_path / "missing.safetensors")


def test_wrong_architecture_and_missing_architecture(tmp_path):
    path = dc.save(model(), tmp_path / "m.safetensors")
    other = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 3), shared=dc.mlp(3, 3))
    before = {k: v.clone() for k, v in other.state_dict().items()}
    with pytest.raises(ValueError, match=r"decision.0.bias has the shape \(3,\) in the model "):
        dc.load(path, other)
    unshared = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 2))
    with pytest.raises(ValueError, match="the file's shared.0.bias is not in the model"):
        dc.load(path, unshared)
    with pytest.raises(ValueError, match="the file has no shared.0.bias, which the model has"):
        dc.load(dc.save(unshared, tmp_path / "unshared.safetensors"), model())
    for name, value in other.state_dict().items():  # a refused file copies no weight
        assert torch.equal(value, before[name]), name
    plain = dc.save(torch.nn.Linear(2, 1), tmp_path / "plain.safetensors")
    with pytest.raises(
        ValueError,
        match=r"stores no architecture \(only models made of dc.mlp "
        r"parts as built, with a built-in merge, do\): build the same "
        r"model in code and pass it, "
        r"dc.load\(.*plain.safetensors', "
        r"model=YourModel\(...\)\)",
    ):
        dc.load(plain)


def test_a_model_whose_mlp_was_changed_after_building_stores_no_architecture(tmp_path):
    changed = model()
    changed.decision.append(torch.nn.Sigmoid())  # still a dc.MLP, its dims unchanged
    path = dc.save(changed, tmp_path / "m.safetensors")
    with pytest.raises(ValueError, match="stores no architecture"):
        dc.load(path)  # rebuilding dims (16, 2) would drop the sigmoid, silently
    again = model()
    again.decision.append(torch.nn.Sigmoid())
    x = torch.randn(5, 3)
    assert torch.equal(dc.load(path, again)(x, 0.3), changed(x, 0.3))
    swapped = dc.DeepCTRL(dc.mlp(3, 8, 4), dc.mlp(3, 8, 4), dc.mlp(8, 2))
    assert swapped.spec() is not None
    swapped.data_encoder[1] = torch.nn.Tanh()  # the ReLU replaced
    assert swapped.spec() is None


def test_a_table_model_file_points_to_its_estimator(tmp_path):
    import numpy as np

    X = np.random.default_rng(0).normal(size=(40, 2))
    path = dc.DeepCTRLRegressor(max_epochs=1).fit(X, X[:, 0]).save(tmp_path / "t.deepctrl")
    with pytest.raises(
        ValueError,
        match=r"is a table model \(DeepCTRLRegressor\): read it "
        r"with dc.DeepCTRLRegressor.load\(",
    ):
        dc.load(path)


def test_save_refuses_non_json_config_and_missing_folder(tmp_path):
    with pytest.raises(ValueError, match="JSON"):
        dc.save(model(), tmp_path / "m.safetensors", {"x": object()})
    with pytest.raises(ValueError, match="does not exist"):
        dc.save(model(), tmp_path / "nope" / "m.safetensors")


def test_written_files_get_the_usual_mode(tmp_path):
    import os

    umask = os.umask(0o022)
    try:
        path = dc.save(model(), tmp_path / "m.safetensors")
    finally:
        os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o644


def test_only_rank_zero_writes_under_torchrun(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    dc.save(model(), tmp_path / "m.safetensors")
    assert not (tmp_path / "m.safetensors").exists()
    monkeypatch.setenv("RANK", "0")
    dc.save(model(), tmp_path / "m.safetensors")
    assert (tmp_path / "m.safetensors").exists()


def test_damaged_weights_are_refused_and_files_without_a_checksum_still_load(tmp_path):
    model = dc.DeepCTRL(dc.mlp(3, 4), dc.mlp(3, 4), dc.mlp(8, 1))
    path = dc.save(model, tmp_path / "m.safetensors")
    data = bytearray(path.read_bytes())
    data[-4:] = bytes(4)  # the last weight's bytes zeroed
    damaged = tmp_path / "damaged.safetensors"
    damaged.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="damaged: its weights differ from the checksum"):
        dc.load(damaged)
    # a file written before checksums (the same weights, no digest in the metadata) loads
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    meta = read_checkpoint(path)
    header = {"format": "deepctrl", "format_version": "1", "deepctrl_version": meta.version}
    older = tmp_path / "older.safetensors"
    save_file(state, older, metadata={**header, "config": json.dumps(meta.config)})
    x = torch.randn(5, 3)
    torch.testing.assert_close(dc.load(older)(x, 0.3), model(x, 0.3), rtol=0, atol=0)


def test_a_changed_config_is_refused_like_changed_weights(tmp_path):
    model = dc.DeepCTRL(dc.mlp(3, 4), dc.mlp(3, 4), dc.mlp(8, 1))
    path = dc.save(model, tmp_path / "m.safetensors", config={"mean": 31.04})
    data = path.read_bytes()
    assert data.count(b"31.04") == 1
    changed = tmp_path / "changed.safetensors"
    changed.write_bytes(data.replace(b"31.04", b"61.04"))  # one digit, same length
    with pytest.raises(ValueError, match="damaged: its settings .* differ from the checksum"):
        dc.load(changed)
    assert read_checkpoint(path).config["mean"] == 31.04


def test_save_refuses_devices_read_only_files_and_reserved_keys_and_follows_links(tmp_path):
    import os
    import stat

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="pipe: it is not a regular file"):
        dc.save(model(), fifo)
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    locked = tmp_path / "locked.safetensors"
    locked.write_bytes(b"keep")
    locked.chmod(0o444)
    with pytest.raises(ValueError, match="the file is read-only"):
        dc.save(model(), locked)
    assert locked.read_bytes() == b"keep"
    target = tmp_path / "real.safetensors"
    (tmp_path / "link.safetensors").symlink_to(target)
    dc.save(model(), tmp_path / "link.safetensors")
    assert (tmp_path / "link.safetensors").is_symlink() and target.is_file()
    for key in ("architecture", "estimator"):
        with pytest.raises(ValueError, match=f"config key '{key}' is reserved"):
            dc.save(model(), tmp_path / "m.safetensors", {key: "mine"})


def test_save_refuses_places_that_are_devices_or_streams():
    # /proc cannot hold files: without the check the temporary file fails instead
    with pytest.raises(ValueError, match="it is a device or a stream, not a file"):
        dc.save(model(), "/proc/deepctrl-model.safetensors")


def test_a_file_cut_inside_its_header_is_called_damaged_whatever_its_header_length(tmp_path):
    model = dc.DeepCTRL(dc.mlp(3, 4), dc.mlp(3, 4), dc.mlp(8, 1))
    data = dc.save(model, tmp_path / "m.safetensors").read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    for length in (0x80, 0x2780):  # a first byte of 0x80 is also how a pickle starts
        header = data[8 : 8 + n].ljust(length, b" ")
        cut = tmp_path / f"cut{length}.safetensors"
        cut.write_bytes(struct.pack("<Q", length) + header[: length // 2])
        with pytest.raises(ValueError, match="is damaged: it ends inside its header") as e:
            dc.load(cut)
        assert "\n" not in str(e.value)


def test_the_same_model_and_config_always_give_the_same_bytes(tmp_path):
    config = {"alpha": 0.4, "note": "prix €", "sizes": [3, 8]}
    first = dc.save(model(), tmp_path / "a.safetensors", config).read_bytes()
    again = [dc.save(model(), tmp_path / f"{i}.safetensors", config).read_bytes() for i in range(4)]
    resaved = dc.save(dc.load(tmp_path / "a.safetensors"), tmp_path / "r.safetensors", config)
    assert all(b == first for b in again) and resaved.read_bytes() == first
    (n,) = struct.unpack("<Q", first[:8])
    header = json.loads(first[8 : 8 + n])
    assert list(header) == sorted(header) and list(header["__metadata__"]) == sorted(
        header["__metadata__"]
    )
    assert n % 8 == 0  # the weights start where safetensors puts them
    from safetensors.torch import load_file

    assert set(load_file(tmp_path / "a.safetensors")) == set(model().state_dict())


class Squared(Merge):
    name = "squared"

    def latent(self, z_r, z_d, a):
        return torch.cat([a**2 * z_r, (1 - a) ** 2 * z_d], dim=-1)


def mixed(merge="deepctrl", residual=False):
    torch.manual_seed(0)
    return dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 3), merge=merge, residual=residual)


def test_a_file_loads_only_into_a_model_of_its_merge_and_residual(tmp_path):
    path = dc.save(mixed(), tmp_path / "paper.safetensors")  # the weights fit all three below
    with pytest.raises(
        ValueError,
        match="saved from a model with merge='deepctrl', and this "
        "model has merge='concat': build it with the merge it was trained with",
    ):
        dc.load(path, mixed("concat"))
    with pytest.raises(ValueError, match="residual=False, and this model has residual=True"):
        dc.load(path, mixed(residual=True))
    own = mixed(Squared())
    saved = dc.save(own, tmp_path / "own.safetensors")
    assert read_checkpoint(saved).config["architecture"] == {"merge": "squared", "residual": False}
    with pytest.raises(ValueError, match="merge='squared', and this model has merge='deepctrl'"):
        dc.load(saved, mixed())
    with pytest.raises(ValueError, match="stores no architecture"):
        dc.load(saved)  # a merge of one's own is rebuilt in code
    x = torch.randn(4, 3)
    assert torch.equal(dc.load(saved, mixed(Squared()))(x, 0.3), own.eval()(x, 0.3))
