"""The ablations' own output around training: the warnings a reproduction prints."""

import warnings
from types import SimpleNamespace

import pytest
import torch

from deepctrl.core.rho import safe_ratio
from deepctrl.paper.experiments import ablations


def test_the_fit_advice_of_a_rho_fallback_is_not_printed_by_the_ablations(monkeypatch):
    """rho=epoch falls back to 1.0 on purpose in the rho study; the core warning advises
    `deepctrl fit --rho`, which a reproduction cannot take. Other warnings still show."""

    def job(*args):
        safe_ratio(torch.tensor([0.0]), torch.tensor([1.0]), torch.tensor([0.3]))
        safe_ratio(torch.tensor([0.0]), torch.tensor([1.0]))  # at the start: not the study's
        return ["trained", *args]

    monkeypatch.setattr(ablations, "group_job", job)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert ablations.ablation_job("paper", 1) == ["trained", "paper", 1]
    texts = [str(w.message) for w in caught]
    assert len(texts) == 1 and texts[0].startswith("rho: the initial rule or task loss is zero")
    with pytest.warns(RuntimeWarning, match=r"rho: the re-measured .*deepctrl fit --rho"):
        safe_ratio(torch.tensor([0.0]), torch.tensor([1.0]), torch.tensor([0.3]))


def test_the_ablations_train_with_the_quiet_job_and_say_how_many_seeds_fell_back(monkeypatch):
    used = {}

    class StopError(Exception):
        pass

    def stop(*args):
        used["job"] = args[-1]
        raise StopError

    settings = SimpleNamespace(quick=True, seeds=(10,))
    monkeypatch.setattr(ablations, "prepare", lambda *a: (settings, 1, None, None))
    monkeypatch.setattr(ablations, "train_stacked", stop)
    with pytest.raises(StopError):
        ablations.reproduce(seeds=1, quick=True)
    assert used["job"] is ablations.ablation_job
    assert ablations.rho_fallback_note([1.0, 0.34, 1.0]) == (
        "pendulum-ablations: rho=epoch fell back to rho = 1.0 for 2 of 3 seeds (a re-estimate "
        "with a zero rule or task loss); rho/report.md lists the final rho per seed"
    )
    assert ablations.rho_fallback_note([0.34, 0.5]) is None
