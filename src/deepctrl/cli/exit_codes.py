"""The command's exit codes after a signal, as shells report them (128 + the signal)."""

INTERRUPTED = 130
"""After Ctrl-C (SIGINT)."""
TERMINATED = 143
"""After SIGTERM (``kill``, ``timeout``)."""
