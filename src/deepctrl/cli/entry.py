"""The ``deepctrl`` command's entry point: the command line is imported here, so that Ctrl-C
while it loads (a few tenths of a second) ends the program with one line, as later, and a
second Ctrl-C while an interrupted run's worker processes end is not met with a traceback.
"""

from __future__ import annotations

import signal
import sys
import threading

from deepctrl.cli.exit_codes import INTERRUPTED, TERMINATED


def main() -> int:
    """Load the command line and run it; an interrupt while loading exits 130."""
    try:
        from deepctrl.cli.main import main as run
    except KeyboardInterrupt:
        print("deepctrl: interrupted", file=sys.stderr)
        return INTERRUPTED
    code = run()
    if code in (INTERRUPTED, TERMINATED) and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the workers are ending: let them
    return code
