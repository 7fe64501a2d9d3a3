"""Why do the NEG0.2 models like mid alphas on POS items?

Usage: python price_response.py RECOMPUTE(0|1) SEEDS. Forecasts are averaged over seeds;
errors are split by test rows with and without a price change from last week; "slope" is
the median forecast change per dollar of price rise under the rule's perturbation.
"""

import sys

import numpy as np
import torch

import deepctrl as dc
from deepctrl.datasets.retail import group_split
from deepctrl.experiments import retail
from deepctrl.model import predict_alphas

recompute = sys.argv[1] == "1"
seeds = list(range(int(sys.argv[2])))
table, _ = retail.load_data(None, False, False, 400)
kw = retail.Settings.make(len(seeds), False).fit_kwargs("cpu", False)
src = group_split(table, "NEG0.2", aux=recompute)
rule = retail.price_rule(src, recompute=recompute)
deep = dc.fit(
    retail.deepctrl_net(recompute),
    rule,
    dc.methods.DeepCTRL(rho=1.0),
    train=src.train,
    val=src.val,
    seeds=seeds,
    **kw,
)
task = dc.fit(
    retail.task_net(recompute),
    None,
    dc.methods.TaskOnly(),
    train=src.train,
    val=src.val,
    seeds=seeds,
    **kw,
)
alphas = [0.0, 0.2, 0.4, 0.6, 1.0]
gen = torch.Generator().manual_seed(0)
for tgt in ("NEG0.2", "POS0.2", "POS0.3"):
    ts = group_split(table, tgt, stats=src.stats, aux=recompute)
    X, y = ts.test
    moved = (X[:, 1] * src.std[1] + src.mean[1]).abs() > 1e-6
    Xp = rule.perturb(X, gen)
    dprice = (Xp[:, 0] - X[:, 0]) * src.std[0]
    print(
        f"== {tgt}: {len(y)} test rows, {int(moved.sum())} with a price change, "
        f"mean target {y.mean():.3f}"
    )
    with torch.no_grad():
        for name, models in (("DeepCTRL", deep.models), ("TaskOnly", task.models)):
            yh = torch.stack([predict_alphas(m, X, alphas) for m in models]).mean(0)[..., 0]
            yp = torch.stack([predict_alphas(m, Xp, alphas) for m in models]).mean(0)[..., 0]
            for i, a in enumerate(alphas if name == "DeepCTRL" else [0.0]):
                err = yh[i] - y[:, 0]
                slope = ((yp[i] - yh[i]) / dprice.clamp(min=1e-6)).median()
                print(
                    f"  {name:8s} a={a:.1f} MAE all {err.abs().mean():.4f}"
                    f" | changed {err[moved].abs().mean():.4f}"
                    f" | unchanged {err[~moved].abs().mean():.4f} | bias {err.mean():+.4f}"
                    f" | median slope/$ {slope:+.4f}"
                )
pos = group_split(table, "POS0.2", aux=recompute)
own = dc.fit(
    retail.task_net(recompute),
    None,
    dc.methods.TaskOnly(),
    train=pos.train,
    val=pos.val,
    seeds=seeds,
    **kw,
)
pos_rule = retail.price_rule(pos, recompute=recompute)
ratio = np.mean([dc.verification_ratio(m, pos_rule, pos.test[0]) for m in own.models])
mae = np.mean([dc.sweep(m, None, *pos.test, [0.0], ("mae",))["mae"][0] for m in own.models])
print(f"TaskOnly trained on POS0.2 itself: test MAE {mae:.4f}, rule verification ratio {ratio:.3f}")
