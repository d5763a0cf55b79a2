"""A progress line on standard error for long runs, and nothing otherwise.

Files are discovered lazily (a 100,000-file tree is never listed first), so there is no
total to draw a bar against: the line counts files done, the rate and the elapsed time,
and names the file just finished. It appears only on a terminal, only after the run has
taken ``delay`` seconds (short runs stay silent, as a pre-commit hook should), redraws at
most every ``interval`` seconds, and erases itself at the end so the summary line that
follows is not mixed with it.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TextIO, TypeVar

T = TypeVar("T")


def track(
    items: Iterable[T],
    *,
    describe: Callable[[T], str] = str,
    stream: TextIO | None = None,
    enabled: bool | None = None,
    delay: float = 1.0,
    interval: float = 0.1,
) -> Iterator[T]:
    """Yield ``items`` unchanged, drawing progress on ``stream`` (stderr) as they pass.

    ``enabled`` defaults to whether ``stream`` is a terminal; pass False for ``--quiet``.
    """
    stream = stream if stream is not None else sys.stderr
    if enabled is None:
        enabled = stream.isatty()
    if not enabled:
        yield from items
        return
    start = last = time.monotonic()
    drawn = False
    done = 0
    try:
        for item in items:
            done += 1
            now = time.monotonic()
            if now - start >= delay and (not drawn or now - last >= interval):
                _draw(stream, done, now - start, describe(item))
                drawn, last = True, now
            yield item
    finally:
        if drawn:
            stream.write("\r\x1b[K")  # erase the line
            stream.flush()


def _draw(stream: TextIO, done: int, elapsed: float, current: str) -> None:
    width = shutil.get_terminal_size((80, 20)).columns
    minutes, seconds = divmod(int(elapsed), 60)
    head = f"hipport: {done} files, {done / max(elapsed, 1e-6):.0f}/s, {minutes}:{seconds:02d} "
    room = width - len(head) - 1
    if room < len(current):
        current = "…" + current[-(room - 1):] if room > 1 else ""
    stream.write("\r\x1b[K" + head + current)
    stream.flush()
