"""The synthetic retail market of the paper's reproduction (seed 0, 400 items) as a table
for ``deepctrl test-rule``: one row per item and week over the last 26 training weeks, the
13 features in raw units, the weekly sales / 100 as target, and the group column

- ``band``: the item's measured correlation between price changes and sales changes on its
  training weeks (what a user would have), cut into disjoint bands: r < -0.3, -0.3 to
  -0.2, -0.2 to -0.1, -0.1 to 0.2, 0.2 to 0.3, r > 0.3 (the paper's groups NEG0.3 ...
  POS0.3, made disjoint).

It prints, per band, the rows and the share of rows whose item's demand truly falls when
its price rises (positive elasticity in the simulation), which no user's table holds.

    python benchmarks/rule_test_retail_table.py retail.csv
    deepctrl test-rule retail.csv --target sales --group band \\
        --monotonic week_sell_price=decreasing --out docs/results/rule_test/retail
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from deepctrl.paper.datasets.retail import FEATURES, build_table
from deepctrl.paper.datasets.retail_synthetic import synthetic_market

WEEKS = 26
EDGES = [-np.inf, -0.3, -0.2, -0.1, 0.2, 0.3, np.inf]
NAMES = ["r<-0.3", "-0.3..-0.2", "-0.2..-0.1", "-0.1..0.2", "0.2..0.3", "r>0.3"]


def retail_frame(items: int = 400) -> pd.DataFrame:
    sm = synthetic_market(seed=0, n_items=items)
    table = build_table(sm.market)
    rows = np.flatnonzero(table.split_mask("train") & (table.row_week >= table.val_start - WEEKS))
    item = table.row_id[rows]
    r = table.correlation[item]
    keep = np.isfinite(r)
    rows, item, r = rows[keep], item[keep], r[keep]
    frame = pd.DataFrame(table.features[rows], columns=list(FEATURES))
    frame["sales"] = table.target[rows]
    frame["band"] = pd.Categorical.from_codes(np.digitize(r, EDGES[1:-1]), NAMES)
    frame["elastic"] = np.where(sm.elasticity[item] > 0, "falls", "rises")
    return frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--items", type=int, default=400)
    args = parser.parse_args()
    frame = retail_frame(args.items)
    frame.drop(columns="elastic").to_csv(args.out, index=False, float_format="%.6g")
    print(
        frame.groupby("band", observed=True).agg(
            rows=("sales", "size"), truly_falls=("elastic", lambda s: (s == "falls").mean())
        )
    )


if __name__ == "__main__":
    main()
