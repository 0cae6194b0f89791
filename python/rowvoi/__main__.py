"""``python -m rowvoi`` runs the command line."""

import sys

from rowvoi.cli.main import main

sys.exit(main())
