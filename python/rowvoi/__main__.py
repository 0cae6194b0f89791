"""``python -m rowvoi`` runs the command line."""

import sys

from rowvoi.cli import main

sys.exit(main())
