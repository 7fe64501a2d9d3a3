"""``python -m deepctrl``: the same as the ``deepctrl`` command."""

import sys

from deepctrl.cli.entry import main

if __name__ == "__main__":
    sys.exit(main())
