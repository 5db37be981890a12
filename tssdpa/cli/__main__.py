"""``python -m tssdpa.cli``: the ``tssdpa`` command."""

import sys

from tssdpa.cli import main

sys.exit(main())
