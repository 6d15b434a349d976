"""``python -m trio_mcp``: the same as the ``trio-mcp`` command."""

import sys

from ._cli import main

sys.exit(main())
