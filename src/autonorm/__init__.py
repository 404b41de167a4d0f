"""AutoNorm reproduction package."""
from .fingerprint import package_digest as _package_digest

__version__ = "0.1.0"

#: the code this process runs, taken at the package's first import (autonorm.fingerprint)
CODE_AT_IMPORT = _package_digest()
#: the part of it that computes learned numbers (a study record keeps it per run)
TRAINING_CODE_AT_IMPORT = _package_digest(training_only=True)
