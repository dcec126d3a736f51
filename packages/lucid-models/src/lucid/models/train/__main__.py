"""``python -m lucid.models.train``: the same as the ``lucid-train`` command."""

from __future__ import annotations

import sys

from lucid.models.train import main

if __name__ == "__main__":
    sys.exit(main())
