"""Report renderers: one module per format, all taking the same Report value.

``render(report, "sarif")`` is the one entry point callers need. Format modules are
imported only when asked for, so a ``scan`` that prints text never loads the HTML
templates.
"""

from __future__ import annotations

import importlib

from hipport.report.model import Report

#: Each format is the module of that name in this package, exposing
#: ``render(report, *, color=False) -> str``.
FORMATS: tuple[str, ...] = ("text", "markdown", "json", "sarif", "html")


def render(report: Report, fmt: str, color: bool = False) -> str:
    """Render ``report`` in ``fmt`` (a key of FORMATS); ``color`` only affects ``text``."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r} (expected one of: {', '.join(FORMATS)})")
    module = importlib.import_module(f"hipport.report.{fmt}")
    return module.render(report, color=color)
