"""The code version a cached result was computed with: a hash of the package's source.

Why not the git commit: an installed package has none, and uncommitted edits change
results too. Every ``.py``, ``.csv`` and ``.json`` file under ``hare_opt/`` counts
(code and the data tables it reads); anything else (docs) does not.
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path

SUFFIXES = (".py", ".csv", ".json")


@cache
def code_version() -> str:
    """16 hex digits; ``HARE_OPT_CODE_VERSION`` overrides it (e.g. to reuse a cache on
    purpose after a change that cannot alter results)."""
    forced = os.environ.get("HARE_OPT_CODE_VERSION")
    if forced:
        return forced
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.suffix in SUFFIXES and "__pycache__" not in path.parts and path.is_file():
            h.update(path.relative_to(root).as_posix().encode())
            h.update(b"\0")
            h.update(path.read_bytes())
            h.update(b"\0")
    return h.hexdigest()[:16]
