"""The training engine behind ``dc.fit``: many seeds trained as one stacked model.

``training`` (``fit``, ``fit_methods``, ``FitResult``), ``trainer`` (epochs, validation, early
stopping), ``compiled`` (the compiled training step of ``fit(compile=True)``),
``ensemble`` (stacked weights, the three forward paths, a flat Adam), ``lowering`` (MLPs
as batched matrix products), ``distributed`` (data parallel under torchrun) and
``progress``. It imports the core and nothing else of the package.
"""
