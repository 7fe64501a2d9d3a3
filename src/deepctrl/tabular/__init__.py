"""Tables: scikit-learn estimators with rules that name columns.

``estimators`` (``DeepCTRLRegressor``, ``DeepCTRLClassifier``) on ``estimator_base``,
``encoding`` (standardized numbers, one-hot categories), ``table_rules`` (rules on column
names, resolved to the encoded inputs), ``network`` (the network sized from the table) and
``model_file`` (one file per fitted estimator). Needs pandas and scikit-learn (the
``tabular`` extra); imports the core, the engine and io.
"""
