"""Ablations of the pendulum experiment: ``deepctrl reproduce pendulum-ablations``.

* ``prior``: alpha ~ Beta(beta, beta), beta in {0.1, 0.5, 1.0} (paper Sec. 5, Fig. 7a-b);
* ``merge``: the paper's cat(alpha z_r, (1 - alpha) z_d) against three variants after
  those of Sec. 5 / Fig. 7c-d: ``concat`` (cat(z_r, z_d), alpha only weights the losses:
  the paper's Concat); ``add`` (alpha z_r + (1 - alpha) z_d, coupled to alpha as in the
  authors' code; the paper's Add is z_r + z_d without alpha); ``input`` (no rule encoder,
  one encoder fed cat(h, alpha) with h the output of the shared 4-64-16 layer, where the
  paper feeds [x; alpha]);
* ``rho``: rho = L_rule,0 / L_task,0 ("auto") against rho = 1 and rho re-estimated after
  every epoch (App. A.5, Fig. 10);
* ``tsne``: t-SNE maps of z_r, z_d and of z for several alphas (App. A.3, Fig. 9).

The reference variant (Beta(0.1), merge "deepctrl", rho auto) is trained once and shared by
the three studies; the t-SNE uses its first seed. Each study writes OUT/<study>/results.json,
report.md and figures; OUT/report.md links them. Protocol, seeds and validation noise are
those of :mod:`deepctrl.paper.experiments.pendulum_setup`.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch

import deepctrl as dc
from deepctrl.io import reports
from deepctrl.io.file_format import written_together
from deepctrl.io.reports import markdown_table
from deepctrl.paper.experiments.common import MethodRun, alpha_grid
from deepctrl.paper.experiments.pendulum import prepare
from deepctrl.paper.experiments.pendulum_setup import TARGET_RATIO, deepctrl_net
from deepctrl.paper.experiments.pendulum_training import Group, group_job, train_stacked

TSNE_ALPHAS = (0.0, 0.25, 0.5, 0.75, 1.0)
PAPER_FINDINGS = {
    "prior": "Paper: Beta(1, 1) lets the (much larger) rule loss dominate for alpha > 0.1 and "
    "hurts the task; an intermediate beta < 1 such as 0.1 works best.",
    "merge": "Paper: its Add (z_r + z_d, no alpha) and Concat reach a high verification ratio "
    "but have higher errors at intermediate alpha than DeepCTRL; feeding alpha with the input "
    "does not help. Here `add` is alpha z_r + (1 - alpha) z_d (coupled to alpha, unlike the "
    "paper's Add), `concat` the paper's Concat, and `input` appends alpha to the shared "
    "layer's output rather than to x.",
    "rho": "Paper: rho re-estimated every epoch gives similar curves; the initial ratio decouples "
    "alpha = 0 better (verification near 0 there). Here, once the training-set rule loss "
    "at alpha = 1 reaches 0, the library's guard sets the re-estimated rho to 1.0 (with a "
    "warning), so the final rho of `rho=epoch` is often 1.",
}


RHO_FALLBACK = "rho: the re-measured"
"""How the warning starts that a rho re-estimated after an epoch fell back to 1.0."""


def ablation_job(*args: Any) -> list[MethodRun]:
    """:func:`group_job` without the warning that a re-estimated rho fell back to 1.0: the
    rho study's `rho=epoch` variant causes it on purpose, and its advice (a fit option)
    does not apply to a reproduction; :func:`rho_fallback_note` says it instead."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=RHO_FALLBACK, category=RuntimeWarning)
        return group_job(*args)


def rho_fallback_note(rho: list[float]) -> str | None:
    """The line printed when the final rho of `rho=epoch` (per seed) fell back to 1.0.

    >>> rho_fallback_note([1.0, 0.34, 1.0]).split(" (")[0]
    'pendulum-ablations: rho=epoch fell back to rho = 1.0 for 2 of 3 seeds'
    >>> rho_fallback_note([0.34]) is None
    True
    """
    fell = sum(r == 1.0 for r in rho)
    if not fell:
        return None
    return (
        f"pendulum-ablations: rho=epoch fell back to rho = 1.0 for {fell} of {len(rho)} seeds "
        "(a re-estimate with a zero rule or task loss); rho/report.md lists the final rho "
        "per seed"
    )


def _variants(study: str) -> list[tuple[str, str, dc.methods.DeepCTRL]]:
    """(name, merge, method) of the non-reference variants of ``study``."""
    if study == "prior":
        return [
            (f"Beta({b})", "deepctrl", dc.methods.DeepCTRL(dc.priors.Beta(b, b)))
            for b in (0.5, 1.0)
        ]
    if study == "merge":
        return [(m, m, dc.methods.DeepCTRL()) for m in ("add", "concat", "input")]
    return [
        ("rho=1", "deepctrl", dc.methods.DeepCTRL(rho=1.0)),
        ("rho=epoch", "deepctrl", dc.methods.DeepCTRL(rho="epoch")),
    ]


def _stack_key(merge: str, method: dc.methods.DeepCTRL) -> tuple[str, bool]:
    """Variants with equal keys train as one stacked job: same network, and rho re-estimated
    every epoch or not (that estimate measures every copy of a stack, so it trains apart)."""
    return merge, method.rho_mode == "epoch"


REFERENCE_NAME = {"prior": "Beta(0.1)", "merge": "deepctrl", "rho": "rho=auto"}


def _summary(run: MethodRun, alphas: list[float]) -> dict[str, Any]:
    """Alpha of lowest validation MAE, smallest alpha reaching the target ratio, rho."""
    entry = run.entry()
    val = {
        "alpha": alphas,
        "mae": entry["val"]["mae"]["mean"],
        "verification_ratio": entry["val"]["verification_ratio"]["mean"],
    }
    test_mae = entry["test"]["mae"]["mean"]
    test_ratio = entry["test"]["verification_ratio"]["mean"]
    i_mae = alphas.index(dc.select_alpha(val, metric="mae"))
    try:
        a_ratio: float | None = dc.select_alpha(val, min_verification=TARGET_RATIO)
    except ValueError:
        a_ratio = None
    return {
        "alpha_min_val_mae": alphas[i_mae],
        "test_mae_at_it": test_mae[i_mae],
        "test_ratio_at_it": test_ratio[i_mae],
        "min_test_mae": min(test_mae),
        "alpha_val_ratio_target": a_ratio,
        "test_ratio_at_alpha_1": test_ratio[-1],
        "rho": run.fit.state["rho"].tolist(),
    }


def write_study(
    study: str, runs: dict[str, MethodRun], base: dict[str, Any], out_dir: Path
) -> dict[str, Any]:
    """results.json, report.md and figures of one study."""
    from deepctrl.paper.plots.pendulum import alpha_figures

    out_dir.mkdir(parents=True, exist_ok=True)
    alphas = base["alphas"]
    results = {
        **base,
        "experiment": f"pendulum-ablations/{study}",
        "methods": {name: run.entry() for name, run in runs.items()},
        "selection": {name: _summary(run, alphas) for name, run in runs.items()},
    }
    with written_together():  # the figures, results and report of one study, or none
        results["figures"] = alpha_figures(results, out_dir, title=f"{study}: ")
        reports.write_json(out_dir / "results.json", results)
        reports.write_text(out_dir / "report.md", study_report(study, results))
    return results


def study_report(study: str, results: dict[str, Any]) -> str:
    """report.md of one study: test curves of every variant, alpha choices, rho."""
    names, alphas, m = list(results["methods"]), results["alphas"], results["methods"]
    lines = [f"# Pendulum ablation: {study} (preset `{results['preset']}`)", ""]
    if results["quick"]:
        lines += ["> **SMOKE RUN (`--quick`)**: few seeds and epochs; not a result.", ""]
    lines += [
        f"Seeds {results['seeds']}; {PAPER_FINDINGS[study]}",
        "",
        "![MAE vs alpha](mae_vs_alpha.png)",
        "![verification vs alpha](verification_vs_alpha.png)",
        "",
        "Test MAE / verification ratio (means over seeds):",
        "",
    ]
    rows = [
        [
            a,
            *(
                f"{m[n]['test']['mae']['mean'][i]:.5f} / "
                f"{m[n]['test']['verification_ratio']['mean'][i]:.3f}"
                for n in names
            ),
        ]
        for i, a in enumerate(alphas)
    ]
    lines += [markdown_table(["alpha", *names], rows), ""]
    sel = results["selection"]
    rows = [
        [
            n,
            s["alpha_min_val_mae"],
            s["test_mae_at_it"],
            s["test_ratio_at_it"],
            "n/a" if s["alpha_val_ratio_target"] is None else s["alpha_val_ratio_target"],
            s["test_ratio_at_alpha_1"],
            ", ".join(f"{r:.3g}" for r in s["rho"]),
            max(m[n]["epochs"]),
        ]
        for n, s in sel.items()
    ]
    header = [
        "variant",
        "alpha (min val MAE)",
        "test MAE there",
        "test verification there",
        f"min alpha val ratio >= {TARGET_RATIO}",
        "test verification alpha=1",
        "rho per seed (final)",
        "epochs (max)",
    ]
    lines += [markdown_table(header, rows), ""]
    return "\n".join(lines)


def _neighbour_agreement(points: np.ndarray, labels: np.ndarray) -> float:
    """Fraction of points whose nearest other point has the same label."""
    from sklearn.neighbors import NearestNeighbors

    idx = NearestNeighbors(n_neighbors=2).fit(points).kneighbors(points)[1][:, 1]
    return float(np.mean(labels[idx] == labels))


@torch.no_grad()
def write_tsne(
    model: dc.DeepCTRL, x: torch.Tensor, n_points: int, base: dict[str, Any], out_dir: Path
) -> dict[str, Any]:
    """t-SNE of z_r vs z_d and of z over ``TSNE_ALPHAS`` on a fixed subsample of ``x``."""
    from sklearn.manifold import TSNE

    from deepctrl.paper.plots.pendulum import tsne_figure

    out_dir.mkdir(parents=True, exist_ok=True)
    pick = np.sort(np.random.default_rng(0).choice(len(x), min(n_points, len(x)), replace=False))
    z_r, z_d = model.encode(x[pick].to(next(model.parameters()).device))
    latents = torch.cat([z_r, z_d]).cpu().numpy()
    encoder = np.array(["z_r"] * len(pick) + ["z_d"] * len(pick))
    mixed = torch.cat([model.mix(z_r, z_d, a) for a in TSNE_ALPHAS]).cpu().numpy()
    mixed_alpha = np.repeat(np.array(TSNE_ALPHAS), len(pick))

    def embed(points: np.ndarray) -> np.ndarray:
        tsne = TSNE(n_components=2, perplexity=30.0, init="pca", random_state=0)
        return tsne.fit_transform(points)

    map_enc, map_mixed = embed(latents), embed(mixed)
    results = {
        **base,
        "experiment": "pendulum-ablations/tsne",
        "n_points": len(pick),
        "seed": base["seeds"][0],
        "mix_alphas": list(TSNE_ALPHAS),
        "perplexity": 30.0,
        "neighbour_agreement": {
            "encoder_latent": _neighbour_agreement(latents, encoder),
            "encoder_map": _neighbour_agreement(map_enc, encoder),
            "alpha_map": _neighbour_agreement(map_mixed, mixed_alpha),
        },
    }
    with written_together():  # the figure, results and report of one study, or none
        results["figures"] = [
            tsne_figure(
                map_enc, encoder, map_mixed, mixed_alpha, out_dir / "tsne.png", base["quick"]
            )
        ]
        agree = results["neighbour_agreement"]
        text = [f"# Pendulum ablation: t-SNE of the latents (preset `{base['preset']}`)", ""]
        if base["quick"]:
            text += ["> **SMOKE RUN (`--quick`)**: briefly trained model; not a result.", ""]
        text += [
            f"Model: reference DeepCTRL, seed {results['seed']}; {len(pick)} random test points;"
            f" z for alpha in {list(TSNE_ALPHAS)}. Paper (Fig. 9): z_r and z_d do not overlap and"
            " z moves gradually with alpha.",
            "",
            "![t-SNE](tsne.png)",
            "",
            "Nearest-neighbour label agreement (1.0 = perfectly separated, 0.5 = mixed for two"
            " groups):",
            "",
            markdown_table(
                ["what", "agreement"],
                [
                    ["z_r vs z_d, 64-d latents", agree["encoder_latent"]],
                    ["z_r vs z_d, t-SNE map", agree["encoder_map"]],
                    [f"alpha of z ({len(TSNE_ALPHAS)} values), t-SNE map", agree["alpha_map"]],
                ],
            ),
            "",
        ]
        reports.write_json(out_dir / "results.json", results)
        reports.write_text(out_dir / "report.md", "\n".join(text))
    return results


def reproduce(
    seeds: int = 10,
    quick: bool = False,
    out: str = "results/pendulum-ablations",
    device: str = "cpu",
    progress: bool = True,
    preset: str = "paper",
    workers: int | None = None,
) -> dict[str, Any]:
    """Run the prior, merge and rho studies and the t-SNE; write OUT/<study>/ and OUT/report.md.

    Variants of one network train as one stacked job per share of the seeds, ``workers``
    processes side by side (default: one per CPU core).
    """
    wall = time.perf_counter()
    s, workers, out_dir, pend = prepare(seeds, quick, out, device, preset, workers)
    base = {"preset": preset, "quick": s.quick, "seeds": list(s.seeds), "alphas": alpha_grid()}
    variants = {study: _variants(study) for study in ("prior", "merge", "rho")}
    jobs = [
        ("reference", "deepctrl", dc.methods.DeepCTRL()),
        *(variant for study_variants in variants.values() for variant in study_variants),
    ]
    by_key: dict[tuple[str, bool], list[tuple[str, dc.methods.DeepCTRL]]] = {}
    for name, merge, method in jobs:
        by_key.setdefault(_stack_key(merge, method), []).append((name, method))
    groups: list[Group] = [
        ([n for n, _ in members], deepctrl_net(key[0]), [m for _, m in members])
        for key, members in by_key.items()
    ]
    trained = train_stacked(preset, s, device, progress, workers, groups, ablation_job)
    reference = trained["reference"]
    note = rho_fallback_note(trained["rho=epoch"].fit.state["rho"].tolist())
    if note:
        print(note)
    done: dict[str, Any] = {}
    for study, study_variants in variants.items():
        runs = {REFERENCE_NAME[study]: reference}
        runs.update({name: trained[name] for name, _, _ in study_variants})
        done[study] = write_study(study, runs, base, out_dir / study)
    done["tsne"] = write_tsne(
        cast(dc.DeepCTRL, reference.fit.models[0]),
        pend.test[0],
        150 if s.quick else 600,
        base,
        out_dir / "tsne",
    )
    minutes = (time.perf_counter() - wall) / 60
    lines = [f"# Pendulum ablations (preset `{preset}`)", ""]
    if s.quick:
        lines += ["> **SMOKE RUN (`--quick`)**: few seeds and epochs; not a result.", ""]
    lines += [f"Seeds {list(s.seeds)}, wall time {minutes:.1f} min.", ""]
    lines += [f"- [{study}]({study}/report.md)" for study in done]
    reports.write_text(out_dir / "report.md", "\n".join(lines) + "\n")
    print(
        f"pendulum-ablations ({preset}{', quick' if s.quick else ''}): wrote "
        f"{out_dir / 'report.md'} in {minutes:.1f} min"
    )
    return done
