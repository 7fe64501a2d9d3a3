"""Tables: scikit-learn estimators with rules that name columns.

``estimators`` (``DeepCTRLRegressor`` from ``regressor``, ``DeepCTRLClassifier`` from
``classifier``) on ``estimator_base`` and ``network_training`` (how the networks train),
``encoding`` (standardized numbers, one-hot categories), ``table_rules`` (rules on column
names, resolved to the encoded inputs), ``network`` (the network sized from the table) and
``model_file`` (one file per fitted estimator); rule tests: ``rule_test`` (a rule judged
per group of a table), ``rule_verdict`` (its statistics and verdicts), ``rule_test_report``
(its files) and ``known_truth`` (tables whose truth is known). Needs pandas, scikit-learn,
scipy and matplotlib (the ``tabular`` extra); imports the core, the engine and io.
"""
