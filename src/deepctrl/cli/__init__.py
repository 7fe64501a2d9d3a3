"""The ``deepctrl`` command: ``main`` parses the arguments (``main.py``) and ``commands``
runs fit, sweep and predict on tables; ``rules_file`` reads rules files (TOML) and
``tables`` reads CSV and Parquet files. The top layer: it may import every other one.
"""
