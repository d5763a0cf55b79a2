"""The compile tier runs in CI (``CI`` set) or when asked for (``HIPPORT_COMPILE_TIER=1``).

It drives clang against two HIP header sets and Debian's hipcc for every fixture and
example: minutes of both cores. A plain local ``python -m pytest`` skips it so that the
rest of the suite stays quick; CI, which sets ``CI``, always runs it.
"""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("CI") or os.environ.get("HIPPORT_COMPILE_TIER"):
        return
    skip = pytest.mark.skip(reason="compile tier: runs in CI, or set HIPPORT_COMPILE_TIER=1")
    for item in items:
        if item.get_closest_marker("compile") is not None:
            item.add_marker(skip)
