"""What serving a table model costs: the ONNX file against the estimator's ``predict``.

The generated table of ``table_speed.py`` (20 numeric columns, 2 text columns) with a date
column added (timestamps over two years, 2 % missing), 10,000 rows by default, fitted by
``DeepCTRLRegressor(rules=[Monotonic("x0", "increasing")])`` with its defaults. Then, on
held-out rows:

* the export: seconds for ``est.to_onnx`` (PyTorch's exporter included) and the file size;
* the latency of one call on batches of 1, 100 and 1,000 rows, median over repeats, for
  onnxruntime (``session.run`` on ready inputs; default threads), for ``est.predict`` at one
  alpha and at one alpha per row, and for ``est.onnx_inputs`` (turning a data frame into the
  file's inputs, which a server that receives typed columns does not need);
* the largest difference between the two predictions.

    python benchmarks/onnx_serving.py [--rows 10000] [--repeats 30]

Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pandas as pd

import deepctrl as dc
from table_speed import table


def dated_table(rows: int, seed: int) -> tuple[pd.DataFrame, pd.Series]:
    X, y = table(rows, seed)
    rng = np.random.default_rng(seed + 1)
    X["day"] = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.uniform(0, 730, rows), unit="D")
    X.loc[rng.random(rows) < 0.02, "day"] = pd.NaT
    return X, y


def median_ms(call: Any, repeats: int) -> float:
    call()  # warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    X, y = dated_table(args.rows + 1000, args.seed)
    X_tr, y_tr, X_te = X[: args.rows], y[: args.rows], X[args.rows :]
    est = dc.DeepCTRLRegressor(
        rules=[dc.Monotonic("x0", "increasing")], random_state=args.seed
    ).fit(X_tr, y_tr)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.onnx"
        start = time.perf_counter()
        est.to_onnx(path)
        export_s = time.perf_counter() - start
        size = path.stat().st_size
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(args.seed)
    latency: dict[str, dict[str, float]] = {}
    for n in (1, 100, 1000):
        rows = X_te.iloc[:n]
        alphas = rng.uniform(0, 1, n)
        feed = est.onnx_inputs(rows, alphas)
        latency[str(n)] = {
            "onnxruntime_ms": median_ms(lambda f=feed: session.run(None, f), args.repeats),
            "predict_ms": median_ms(lambda r=rows: est.predict(r, alpha=0.5), args.repeats),
            "predict_per_row_alpha_ms": median_ms(
                lambda r=rows, a=alphas: est.predict(r, alpha=a), args.repeats
            ),
            "onnx_inputs_ms": median_ms(
                lambda r=rows, a=alphas: est.onnx_inputs(r, a), args.repeats
            ),
        }
    alphas = rng.uniform(0, 1, len(X_te))
    served = session.run(None, est.onnx_inputs(X_te, alphas))[0]
    gap = float(np.abs(served - est.predict(X_te, alpha=alphas)).max())
    print(
        json.dumps(
            {
                "rows": args.rows,
                "inputs": est.encoder_.n_encoded,
                "networks": len(est.models_),
                "hidden": est.network_["hidden"],
                "export_seconds": round(export_s, 2),
                "file_bytes": size,
                "latency_per_call": latency,
                "ms_per_1000_rows": {k: round(v, 3) for k, v in latency["1000"].items()},
                "max_abs_difference": gap,
                "target_std": float(y.std()),
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
