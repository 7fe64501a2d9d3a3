"""DeepCTRL and TaskOnly on the three NEG groups and the NEG0.2 transfers, printed per alpha.

Usage: python curves.py RECOMPUTE(0|1) SEEDS N_ITEMS
(used here with 90 items to see what a market with M5-like tiny groups does).
"""

import sys
import time

import numpy as np

import deepctrl as dc
from deepctrl.datasets.retail import group_split
from deepctrl.evaluation import sweep
from deepctrl.experiments import common, retail

recompute, seeds, n_items = sys.argv[1] == "1", int(sys.argv[2]), int(sys.argv[3])
table, _ = retail.load_data(None, False, False, n_items)
print(table.group_sizes(), flush=True)
s = retail.Settings.make(seeds, False)
A = retail.ALPHAS


def show(tag, e):
    m, v = e["test"]["mae"]["mean"], e["val"]["mae"]["mean"]
    r = e["test"]["verification_ratio"]["mean"]
    print(
        tag,
        "test MAE at alpha 0, 0.1, ..., 1:",
        " ".join(f"{x:.4f}" for x in m[::2]),
        "| best",
        A[int(np.argmin(m))],
        "val-best",
        A[int(np.argmin(v))],
        "| ratio at 0 / 1",
        round(r[0], 3),
        round(r[-1], 3),
        flush=True,
    )


for g in ("NEG0.3", "NEG0.2", "NEG0.1"):
    split = group_split(table, g, aux=recompute)
    rule = retail.price_rule(split, recompute=recompute)
    runs = {}
    for name, model, method in [
        ("DeepCTRL", retail.deepctrl_net(recompute), dc.methods.DeepCTRL(rho=1.0)),
        ("TaskOnly", retail.task_net(recompute), dc.methods.TaskOnly()),
    ]:
        t = time.time()
        runs[name] = common.run_method(
            name,
            model,
            rule,
            method,
            split.train,
            split.val,
            split.test,
            A,
            ("mae",),
            s.seeds,
            **s.fit_kwargs("cpu", False),
        )
        e = runs[name].entry()
        print(g, name, "epochs", e["epochs"], "seconds", round(time.time() - t), flush=True)
        show(f"  {g} {name}", e)
    if g == "NEG0.2":
        for tgt in ("NEG0.1", "POS0.2", "POS0.3"):
            ts = group_split(table, tgt, stats=split.stats, aux=recompute)
            for name, run in runs.items():
                val = [sweep(m, rule, *ts.val, A, ("mae",)) for m in run.fit.models]
                test = [sweep(m, rule, *ts.test, A, ("mae",)) for m in run.fit.models]
                show(
                    f"  NEG0.2->{tgt} {name}",
                    {"test": common.summarize(test), "val": common.summarize(val)},
                )
