"""DeepCTRL on a table, step by step: scikit-learn's diabetes data (it ships with
scikit-learn, nothing is downloaded) and the rule "disease progression rises with BMI".

Run it with ``python examples/tabular_diabetes.py`` (5 to 6 s on 2 CPU cores).
"""

# %% The data: 442 patients, 10 standardized measurements, progression after one year.
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_diabetes
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import RidgeCV
from sklearn.model_selection import train_test_split

import deepctrl as dc

data = load_diabetes(as_frame=True)
X, y = data.data, data.target.rename("progression")
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
X_train, X_val, y_train, y_val = train_test_split(X_train, y_train, test_size=0.2, random_state=0)

# %% The rule. The bmi column is centred on 0, so a relative perturbation (10 % of the
# value) would barely move it: raise BMI by up to a tenth of its standard deviation
# instead, in the column's own units.
rule = dc.Monotonic("bmi", "increasing", perturbation=dc.rules.Additive(0.1 * X_train["bmi"].std()))

# %% Train once. Preprocessing, early stopping and the network size are automatic.
model = dc.DeepCTRLRegressor(rules=[rule], random_state=0).fit(X_train, y_train)
print(
    f"trained for {model.n_epochs_} epochs; alpha chosen on its validation split: "
    f"{model.selected_alpha_:g}"
)

# %% Sweep the rule strength on held-out data: error and how often the rule holds.
print(model.sweep(X_test, y_test, alphas=[0.0, 0.25, 0.5, 0.75, 1.0]).round(3))

# %% Here the rule holds for every patient at every alpha, and it also helps accuracy:
# choose alpha on our own validation set, as fit does on its held-out rows: the lowest
# error among the alphas at which the rule holds for 99 % of the patients (here every
# alpha). (With ``min_verification=0.99`` it would instead be the smallest such alpha.)
# ``select_alpha`` sets ``model.alpha_``.
alpha = model.select_alpha(X_val, y_val)
test_mse = float(np.mean((model.predict(X_test) - y_test) ** 2))
print(
    f"alpha {alpha:g}: test MSE {test_mse:.0f}, rule holds for "
    f"{model.verification_ratio(X_test):.1%} of the test patients"
)

# %% Side by side: gradient boosting with a monotonic constraint, and ridge regression.
boosting = HistGradientBoostingRegressor(monotonic_cst={"bmi": 1}, random_state=0)
ridge = RidgeCV(alphas=np.logspace(-3, 3, 13))
for name, other in (("boosting (monotonic)", boosting), ("ridge", ridge)):
    other.fit(X_train, y_train)
    print(f"{name}: test MSE {np.mean((other.predict(X_test) - y_test) ** 2):.0f}")

# %% Save to one file (safetensors + JSON, never pickle) and load it back; the command
# line reads it too, here on the test patients written to a CSV file.
with tempfile.TemporaryDirectory() as folder:
    path = Path(folder) / "diabetes.deepctrl"
    model.save(path)
    again = dc.DeepCTRLRegressor.load(path)
    assert np.allclose(again.predict(X_test), model.predict(X_test))
    X_test.to_csv(Path(folder) / "patients.csv", index=False)
    command = ["deepctrl", "predict", "diabetes.deepctrl", "patients.csv", "--alpha", f"{alpha:g}"]
    print("$", " ".join([*command, "--out", "predictions.csv"]))
    subprocess.run(
        [sys.executable, "-m", *command, "--out", "predictions.csv"], cwd=folder, check=True
    )
    cli = pd.read_csv(Path(folder) / "predictions.csv")["progression"]  # named as y
    assert np.allclose(cli, model.predict(X_test, alpha=alpha), atol=1e-4)
