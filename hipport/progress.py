"""A progress line on standard error for long runs, and nothing otherwise.

Files are discovered lazily (a 100,000-file tree is never listed first, so work starts at
once); the total comes from a second, cheap listing the caller runs beside the work
(``count_in_background``). Until it is known the line shows files done, the rate and the
elapsed time; then ``N/M files``, the rate and an ETA. It names the last *source* file
finished (a copied README is not news). It appears only on a terminal, only after the run
has taken ``delay`` seconds (short runs stay silent, as a pre-commit hook should), redraws
at most every ``interval`` seconds, and erases itself at the end so the summary line that
follows is not mixed with it.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TextIO, TypeVar

T = TypeVar("T")


class Total:
    """A count filled in by a background thread; ``value`` is None until it is complete."""

    def __init__(self, items: Callable[[], Iterable[object]]) -> None:
        self.value: int | None = None
        self._thread = threading.Thread(target=self._count, args=(items,), daemon=True)
        self._thread.start()

    def _count(self, items: Callable[[], Iterable[object]]) -> None:
        n = 0
        try:
            for _ in items():
                n += 1
        except Exception:  # the listing is only for the display; the run reports real errors
            return
        self.value = n


def track(
    items: Iterable[T],
    *,
    describe: Callable[[T], str | None] = str,
    total: Callable[[], Iterable[object]] | None = None,
    stream: TextIO | None = None,
    enabled: bool | None = None,
    delay: float = 1.0,
    interval: float = 0.1,
) -> Iterator[T]:
    """Yield ``items`` unchanged, drawing progress on ``stream`` (stderr) as they pass.

    ``describe(item)`` names the item as current, or None to keep the last name. ``total``
    lists the same items again (counted in a thread, only when the line is enabled).
    ``enabled`` defaults to whether ``stream`` is a terminal; pass False for ``--quiet``.
    """
    stream = stream if stream is not None else sys.stderr
    if enabled is None:
        enabled = stream.isatty()
    if not enabled:
        yield from items
        return
    counter = Total(total) if total is not None else None
    start = last = time.monotonic()
    drawn = False
    done = 0
    current = ""
    try:
        for item in items:
            done += 1
            current = describe(item) or current
            now = time.monotonic()
            if now - start >= delay and (not drawn or now - last >= interval):
                _draw(stream, line(done, counter.value if counter else None, now - start), current)
                drawn, last = True, now
            yield item
    finally:
        if drawn:
            stream.write("\r\x1b[K")  # erase the line
            stream.flush()


def line(done: int, total: int | None, elapsed: float) -> str:
    """``hipport: 120/400 files, 35/s, 0:03, ETA 0:08`` (no total yet: no ``/M`` nor ETA)."""
    rate = done / max(elapsed, 1e-6)
    head = f"hipport: {done}/{total} files" if total is not None and total >= done else f"hipport: {done} files"
    head += f", {rate:.0f}/s, {_clock(elapsed)}"
    if total is not None and total >= done:
        head += f", ETA {_clock((total - done) / rate if rate > 0 else 0)}"
    return head + " "


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds + 0.5), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _draw(stream: TextIO, head: str, current: str) -> None:
    width = shutil.get_terminal_size((80, 20)).columns
    room = width - len(head) - 1
    if room < len(current):
        current = "…" + current[-(room - 1):] if room > 1 else ""
    stream.write("\r\x1b[K" + head + current)
    stream.flush()
