"""``python -m bench``: see :mod:`bench.runner`."""

import sys

from .runner import main

sys.exit(main())
