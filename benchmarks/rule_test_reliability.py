"""How often does a rule test's verdict match the truth? Generated markets whose segments
follow the rule "sales fall when the price rises", contradict it (sales truly rise) or do
not depend on the price, at several effect sizes, noise levels and segment sizes.

    python benchmarks/rule_test_reliability.py run --replicates 4 --workers 2 \\
        --out docs/results/rule_test/segments.jsonl
    python benchmarks/rule_test_reliability.py run --replicates 6 --workers 2 \\
        --out docs/results/rule_test/segments.jsonl   # adds replicates 4 and 5
    python benchmarks/rule_test_reliability.py table docs/results/rule_test/segments.jsonl

``run`` tests every generated segment on its own with the default settings of
``deepctrl test-rule`` (5 folds) and appends one JSON line per segment: the condition,
the truth and the statistics (not the verdict), so that ``table`` can judge them again
under other thresholds without training; an interrupted run resumes. ``table`` prints
JSON: how often each truth gets each verdict under the default thresholds (overall and per
condition) and under a grid of alternatives, on replicates 0-3; and, under the default
thresholds only, on the held-out replicates 4 and up, which played no part in choosing
them.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

EFFECTS = (0.3, 1.0)
NOISES = (0.5, 2.0)
ROWS = (100, 300, 1000)
TRUTHS = ("follows", "contradicts", "none")
FEATURES = ["price", "quality", "season"]


def _one(task: tuple[float, float, int, str, int]) -> dict[str, Any]:
    import torch

    import deepctrl as dc
    from deepctrl.tabular.known_truth import RULE, known_truth_table

    torch.set_num_threads(1)
    effect, noise, rows, truth, replicate = task
    seed = 1000 * replicate + 10 * ROWS.index(rows) + TRUTHS.index(truth)
    table = known_truth_table(
        {"s": truth},
        rows=rows,
        effect=effect,
        noise=noise,
        seed=seed + 7919 * NOISES.index(noise) + 104729 * EFFECTS.index(effect),
    )
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic(*RULE)], n_seeds=1)
    start = time.perf_counter()
    result = dc.rule_test(
        est, table[FEATURES], table["sales"], random_state=replicate, progress=False
    )
    return {
        "effect": effect,
        "noise": noise,
        "rows": rows,
        "truth": truth,
        "replicate": replicate,
        "seconds": round(time.perf_counter() - start, 2),
        "statistics": result.all.statistics,
    }


def run(replicates: int, workers: int, out: Path) -> None:
    done = set()
    if out.exists():
        for line in out.read_text().splitlines():
            r = json.loads(line)
            done.add((r["effect"], r["noise"], r["rows"], r["truth"], r["replicate"]))
    tasks = [
        t
        for t in itertools.product(EFFECTS, NOISES, ROWS, TRUTHS, range(replicates))
        if t not in done
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(workers) as pool, out.open("a") as f:
        for i, record in enumerate(pool.map(_one, tasks), 1):
            f.write(json.dumps(record) + "\n")
            f.flush()
            print(
                f"{i}/{len(tasks)} {record['truth']} rows {record['rows']} {record['seconds']} s",
                flush=True,
            )


def _confusion(records: list[dict[str, Any]], limits: Any) -> dict[str, dict[str, int]]:
    from deepctrl.tabular.rule_verdict import judge

    table: dict[str, Counter[str]] = {t: Counter() for t in TRUTHS}
    for r in records:
        table[r["truth"]][judge(r["statistics"], limits)[0]] += 1
    return {t: dict(c) for t, c in table.items()}


def table(path: Path, holdout: int) -> None:
    from deepctrl.tabular.rule_verdict import Thresholds

    every = [json.loads(line) for line in path.read_text().splitlines()]
    records = [r for r in every if r["replicate"] < holdout]
    later = [r for r in every if r["replicate"] >= holdout]
    default = Thresholds()
    by_condition = {}
    for key in sorted({(r["effect"], r["noise"], r["rows"]) for r in records}):
        subset = [r for r in records if (r["effect"], r["noise"], r["rows"]) == key]
        by_condition[f"effect {key[0]}, noise {key[1]}, rows {key[2]}"] = _confusion(
            subset, default
        )
    grid = {}
    for agree, disagree, tol in itertools.product(
        (0.6, 0.7, 0.8, 0.9), (0.1, 0.2, 0.3, 0.4), (0.005, 0.01, 0.02, 0.05)
    ):
        limits = Thresholds(agree, disagree, tol)
        grid[f"agree {agree}, disagree {disagree}, tolerance {tol}"] = _confusion(records, limits)
    print(
        json.dumps(
            {
                "segments": len(records),
                "seconds_per_segment": {
                    str(n): round(
                        sum(r["seconds"] for r in records if r["rows"] == n)
                        / max(1, sum(r["rows"] == n for r in records)),
                        1,
                    )
                    for n in ROWS
                },
                "default": {
                    "thresholds": vars(default),
                    "overall": _confusion(records, default),
                    "by_condition": by_condition,
                },
                "held_out": {"segments": len(later), "overall": _confusion(later, default)},
                "alternatives": grid,
            },
            indent=1,
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--replicates", type=int, default=4)
    r.add_argument("--workers", type=int, default=2)
    r.add_argument("--out", type=Path, default=Path("docs/results/rule_test/segments.jsonl"))
    t = sub.add_parser("table")
    t.add_argument("path", type=Path)
    t.add_argument(
        "--holdout",
        type=int,
        default=4,
        help="replicates from this one on are held out: judged only with the "
        "default thresholds, after those were chosen on the others",
    )
    args = parser.parse_args()
    if args.command == "run":
        run(args.replicates, args.workers, args.out)
    else:
        table(args.path, args.holdout)


if __name__ == "__main__":
    main()
