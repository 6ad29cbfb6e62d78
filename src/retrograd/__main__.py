"""``python -m retrograd``: the ``retrograd`` command (its parser and commands are in
``_cli/main.py``).

Example:
    >>> from retrograd.__main__ import main
    >>> main(["check"])  # mistakes are reported in a line, without a traceback
    2
"""

import sys

from ._cli.main import main

if __name__ == "__main__":
    sys.exit(main())
