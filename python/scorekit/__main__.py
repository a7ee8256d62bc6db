"""``python -m scorekit``: the command-line interface (see :mod:`scorekit.cli`). Importing this
module runs nothing."""

import sys

if __name__ == "__main__":
    try:
        from scorekit.cli import main
    except KeyboardInterrupt:  # Ctrl-C while the package is still importing
        sys.exit(130)

    sys.exit(main())
