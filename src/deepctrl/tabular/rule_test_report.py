"""The files of a rule test: rule_test.json, report.md and rule_test.png (see
`deepctrl.rule_test` for an example)."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from deepctrl.io.figures import save_figure, subplots
from deepctrl.io.file_format import written_together
from deepctrl.io.reports import markdown_table, write_json, write_text
from deepctrl.tabular.rule_test_result import ALL, RuleTestResult, Segment
from deepctrl.tabular.rule_verdict import CONFIDENCE, HOLDS, judged_folds

COLOURS = {"consistent": "tab:green", "contradicted": "tab:red", "inconclusive": "tab:gray"}
MAX_PANELS = 24
"""The most panels rule_test.png draws: all rows, and the largest groups judged."""


ABSOLUTE_CAUTION = [
    "The errors here are mean absolute errors (the loss the models were trained with). The "
    "verdicts' thresholds were measured with squared errors, and a cost that is a given "
    "share of the squared error is about half that share of the absolute error, so a "
    "verdict near its threshold leans towards consistent; read such verdicts with care.",
    "",
]

DEVIANCE_CAUTION = [
    "The errors here are mean Poisson deviances (the loss the models were trained with). "
    "The verdicts' thresholds were measured with squared errors; near a good fit a row's "
    "deviance is its squared error divided by its predicted count, so a cost's share of "
    "the error reads much as it would in squared errors, but the thresholds were not "
    "measured on deviances.",
    "",
]


def drawn_panels(result: RuleTestResult) -> tuple[list[tuple[str, Segment]], int]:
    """The segments rule_test.png draws, in the report's order (all rows, and the
    `MAX_PANELS - 1` groups with the most rows among those judged), and how many judged
    groups it leaves out."""
    judged = [(k, v) for k, v in result.groups.items() if v.errors is not None]
    largest = sorted(range(len(judged)), key=lambda i: -judged[i][1].rows)[: MAX_PANELS - 1]
    drawn = [judged[i] for i in sorted(largest)]
    if result.all.errors is not None:
        drawn.append((ALL, result.all))
    return drawn, len(judged) - len(largest)


def _left_out_note(result: RuleTestResult) -> list[str]:
    """The report's line on groups the figure leaves out, if any."""
    left_out = drawn_panels(result)[1]
    if not left_out:
        return []
    others = "the other judged group" if left_out == 1 else f"the {left_out} other judged groups"
    return [
        f"The figure draws all rows and the {MAX_PANELS - 1} largest groups; the table above "
        f"holds {others}.",
        "",
    ]


def _interval(pair: Any, digits: str = ".2f") -> str:
    if not pair or not all(math.isfinite(v) for v in pair):
        return "n/a"
    return f"[{pair[0]:{digits}}, {pair[1]:{digits}}]"


def _row(name: str, seg: Segment) -> list[Any]:
    s = seg.statistics
    if not s:
        return [name, seg.rows, seg.verdict, "", "", "", "", "", "", seg.reason]
    return [
        name,
        seg.rows,
        f"**{seg.verdict}**",
        f"{s['best_alpha']:g} {_interval(s['best_alpha_interval'])}",
        f"{s['verification_alpha0']:.2f}",
        s["error_alpha0"],
        s["error_best"],
        s["error_alpha1"],
        f"{s['enforcement_cost']:.4g} {_interval(s['enforcement_cost_interval'], '.3g')}",
        seg.reason,
    ]


CLASS_METRICS = ("bce", "cross_entropy")
"""The held-out errors of rule tests on a classification target."""

CLASSES_CAUTION = [
    "On a classification target the verdicts are weaker evidence than on a regression "
    "target: their reliability was measured on regression only, and a model trained with "
    "a rule on a class's probability can carry some of it into its data-only path (alpha "
    "0), so a group where the class does not depend on the feature can read as "
    "consistent. Read consistent as not contradicted, and look at the group's rows.",
    "",
]


def report_markdown(result: RuleTestResult) -> str:
    """report.md: one row per segment with its verdict and reason, and how to read them."""
    segments = [*result.groups.items(), (ALL, result.all)]
    header = [
        "group",
        "rows",
        "verdict",
        "best alpha [interval]",
        "verification at alpha 0",
        f"{result.metric} at alpha 0",
        f"{result.metric} best",
        f"{result.metric} at alpha 1",
        "enforcement cost [interval]",
        "reason",
    ]
    lines = [
        f"# Rule test: {result.rule}",
        "",
        f"Target `{result.target}`; error metric {result.metric} on held-out rows "
        f"({result.folds} folds per group, each trained with its own seed; intervals at "
        f"{CONFIDENCE:.0%} over folds, the verification's never narrower than its judged "
        "rows allow). The group column is an input of no model, "
        "`all` included: the `all` row pools the groups' rows without telling them apart, so "
        "its error can exceed that of a model fitted with the group column as an input.",
        "",
        markdown_table(header, [_row(k, v) for k, v in segments]),
        "",
        "## Reading the verdicts",
        "",
        "- **consistent**: a model trained on the group's data alone already follows "
        "the rule on most held-out rows, or follows it on more than half of them while "
        f"making it follow the rule (verification ratio {HOLDS:.0%}) costs no measurable "
        "error.",
        "- **contradicted**: the data-only model breaks the rule on most rows and "
        "following it costs error beyond the noise: the group's data disagree with "
        "the rule.",
        "- **inconclusive**: too few rows, folds that disagree, or no clear direction in "
        "the data (as when the target does not depend on the rule's feature).",
        "",
        "The enforcement cost (error at alpha 1 minus the best error) is positive on "
        "almost every group, because DeepCTRL's rule path fits the data less closely "
        "than its data path; compare it between groups rather than with zero.",
        "",
        "## What to do with them",
        "",
        "- **consistent**: the rule costs this group little; a model of it can keep the "
        "rule strictly (a high alpha) where new rows must follow it.",
        "- **contradicted**: do not impose the rule on this group on the data's word alone. "
        "Either the rule does not hold here, or the history mixes its effect with "
        "something else (below); look at the group's rows before choosing.",
        "- **inconclusive**: the data cannot decide; more rows, or groups merged into "
        "larger ones, may. Until then the rule's strength is a choice made on other "
        "grounds than these data.",
        "",
        "The test judges what the data show, not cause and effect. When something else "
        "moves both the rule's feature and the target (prices raised on busy days, so "
        "that price and sales rise together), a rule that is right about the effect of "
        "the feature can read as contradicted, and a wrong one as consistent. Where the "
        "rule states a cause you trust, its strength is yours to set: the verdict tells "
        "how much the history pulls against it.",
        "",
        *(CLASSES_CAUTION if result.metric in CLASS_METRICS else []),
        *(ABSOLUTE_CAUTION if result.metric == "mae" else []),
        *(DEVIANCE_CAUTION if result.metric == "poisson" else []),
        *_left_out_note(result),
        "![error and verification over alpha](rule_test.png)",
        "",
    ]
    return "\n".join(lines)


def plot_rule_test(result: RuleTestResult, path: str | os.PathLike[str]) -> Path:
    """Error (left axis) and verification ratio (right axis) over alpha per group, titled
    with the verdict; groups too small to judge are left out, and beyond `MAX_PANELS`
    panels the smallest groups (the title says how many)."""
    shown, left_out = drawn_panels(result)
    cols = min(3, max(len(shown), 1))
    rows = max(1, math.ceil(len(shown) / cols))
    fig, axes = subplots(
        rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False, layout="constrained"
    )
    for ax in axes.flat[len(shown) :]:
        ax.set_visible(False)
    for ax, (name, seg) in zip(axes.flat, shown, strict=False):
        assert seg.errors is not None and seg.verification is not None
        mean, low, high = (seg.errors.mean(0), seg.errors.min(0), seg.errors.max(0))
        ax.fill_between(result.alphas, low, high, color="tab:blue", alpha=0.15)
        ax.plot(result.alphas, mean, color="tab:blue", label=result.metric)
        ax.axvline(seg.statistics["best_alpha"], color="tab:blue", ls="--", lw=0.8)
        ax.set_xlabel("alpha")
        ax.set_ylabel(result.metric, color="tab:blue")
        twin = ax.twinx()
        judged = judged_folds(seg.verification)
        if len(judged):
            twin.plot(result.alphas, np.nanmean(judged, axis=0), color="tab:orange")
        twin.set_ylim(-0.02, 1.02)
        twin.set_ylabel("verification ratio", color="tab:orange")
        ax.set_title(
            f"{name} ({seg.rows} rows): {seg.verdict}", color=COLOURS[seg.verdict], fontsize=10
        )
    groups = "group" if left_out == 1 else "groups"
    more = f"\n({left_out} more {groups} not drawn; report.md lists them)" if left_out else ""
    fig.suptitle(f"{result.rule}: held-out error (band: range over folds) and verification{more}")
    return save_figure(fig, path)


def write_rule_test(result: RuleTestResult, out: str | os.PathLike[str]) -> list[Path]:
    """Write rule_test.json, report.md and rule_test.png into the folder `out`.

    Args:
        result: What [rule_test][deepctrl.tabular.rule_test.rule_test] found.
        out: The folder; it is created if need be.

    Returns:
        The three files' paths.
    """
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    with written_together():  # never a new report beside an old figure
        return [
            write_json(folder / "rule_test.json", result.to_dict()),
            write_text(folder / "report.md", report_markdown(result)),
            plot_rule_test(result, folder / "rule_test.png"),
        ]
