"""The ``deepctrl`` command: ``main`` parses the arguments (``main.py``; each command's are
declared in a ``*_arguments`` module); ``fit_command``, ``sweep_command``,
``predict_command``, ``export_command`` and ``rule_test_command`` run them; ``rules_file``
reads rules files (TOML), ``table_reading`` reads CSV and Parquet files and
``table_cleaning`` checks their columns. The top layer: it may import every other one.

Every problem with the user's input raises ValueError with one line naming it (file,
column, row counts, line numbers), which the command line prints without a traceback. The
options, the table, the rules and the model file's header are checked before PyTorch and
scikit-learn are imported, so mistakes in the input are reported within about a second.
"""
