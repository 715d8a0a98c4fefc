"""`python -m partita`: the partita command, as the installed script runs it."""

import sys

from .cli import main

sys.exit(main())
