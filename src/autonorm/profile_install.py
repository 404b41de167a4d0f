"""``autonorm-install-profile`` moved to :mod:`autonorm.workflow_support.profile_install`; this
name stays so that a console script installed before the move (``pip install -e .`` writes the
module's name into it) keeps working until the package is installed again."""
from .workflow_support.profile_install import main

__all__ = ["main"]

if __name__ == "__main__":
    import sys

    sys.exit(main())
