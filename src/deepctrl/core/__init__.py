"""The core: everything DeepCTRL is, for one model, with PyTorch alone.

The network (``model``) and its merges (``merges``), rules (``rules``), alpha priors
(``priors``), training objectives (``methods``), the per-batch loss (``losses``,
``objective``), metrics and evaluation over alpha (``metrics``, ``evaluation``), and the
plumbing they share: model inputs (``inputs``), conversions and devices (``data``), Datasets
and DataLoaders (``sources``), seeds (``seeding``), the rule-loss scale behind rho="auto"
(``scale``) and informational lines (``log``). It imports nothing above it in the package,
and never pandas, scikit-learn or scipy.
"""
