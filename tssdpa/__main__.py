"""``python -m tssdpa``: the ``tssdpa`` command, as ``python -m tssdpa.cli``."""

import sys

from tssdpa.cli import main

sys.exit(main())
