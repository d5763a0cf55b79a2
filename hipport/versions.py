"""ROCm/HIP versions as integer tuples, so that 7.10.0 > 7.2.1 (string order would lie)."""

from __future__ import annotations

import re

Version = tuple[int, ...]

_VERSION_RE = re.compile(r"^\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.(\d+))?\s*$")

#: The two releases hipport's tables and rules are written against.
NAMED_RELEASES: dict[str, Version] = {"6.3": (6, 3, 0), "7.2.1": (7, 2, 1)}
DEFAULT_ROCM = "7.2.1"


def parse_version(text: str) -> Version:
    """Parse ``"7.2"``/``"7.2.1"``/``"1.4.0.0"`` into a tuple padded to three parts.

    Padding makes ``(7, 2)`` and ``(7, 2, 0)`` equal, which is what a user typing
    ``--rocm 7.2`` means.
    """
    m = _VERSION_RE.match(text)
    if not m:
        raise ValueError(f"not a version: {text!r} (expected X.Y or X.Y.Z)")
    parts = [int(p) for p in m.groups() if p is not None]
    while len(parts) < 3:
        parts.append(0)
    return tuple(parts)


def format_version(v: Version) -> str:
    """``(7, 2, 0)`` → ``"7.2.0"``; ``(6, 3, 0)`` → ``"6.3.0"``."""
    return ".".join(str(p) for p in v)


def short_version(v: Version) -> str:
    """Drop a trailing ``.0`` patch for messages: ``(6, 3, 0)`` → ``"6.3"``."""
    parts = list(v)
    while len(parts) > 2 and parts[-1] == 0:
        parts.pop()
    return ".".join(str(p) for p in parts)
