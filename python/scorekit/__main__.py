"""``python -m scorekit``: the command-line interface (see :mod:`scorekit.cli`)."""

from scorekit.cli import main

raise SystemExit(main())
