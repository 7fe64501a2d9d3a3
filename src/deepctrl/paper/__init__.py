"""The paper's experiments for ``deepctrl reproduce``: ``datasets`` (the double pendulum
simulator, the M5 retail and Kaggle cardio loaders and their synthetic stand-ins),
``experiments`` (training, sweeps, reports) and ``plots``. Needs the ``paper`` extra
(scipy, pandas, scikit-learn, matplotlib); imports the core, the engine and io.
"""
