"""``python -m scorekit``: the command-line interface (see :mod:`scorekit.cli`)."""

import sys

try:
    from scorekit.cli import main
except KeyboardInterrupt:  # Ctrl-C while the package is still importing
    sys.exit(130)

sys.exit(main())
