"""Line numbers for values that a parser (TOML, YAML, configparser) reports without them.

Each index is built in one pass over the text and answers in O(1), so a manifest with N
entries costs O(N), not the O(N²) of searching the text once per entry (#17: a 1.7 MB
Poetry file or a 1.8 MB environment.yml did not finish in 240 s). Lines found this way
point a reader at the entry; they are never used for judgement.
"""

from __future__ import annotations

import re

_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'')
_KEY = re.compile(r'^[ \t]*["\']?([A-Za-z0-9_.\-]+)["\']?[ \t]*=')
_SECTION = re.compile(r"^[ \t]*\[([^\]\n]*)\]")
_LIST_ITEM = re.compile(r"^[ \t]*-[ \t]+(.*?)[ \t]*(?:#.*)?$")


class LineIndex:
    """First line (1-based) of each quoted string, ``key =``, ``[section]`` and ``- item``."""

    def __init__(self, text: str):
        self.strings: dict[str, int] = {}
        self.keys: dict[str, int] = {}
        self.sections: dict[str, int] = {}
        self.items: dict[str, int] = {}
        for n, line in enumerate(text.splitlines(), 1):
            for m in _QUOTED.finditer(line):
                self.strings.setdefault(m.group(1) if m.group(1) is not None else m.group(2), n)
            if m := _KEY.match(line):
                self.keys.setdefault(m.group(1), n)
            if m := _SECTION.match(line):
                self.sections.setdefault(m.group(1).strip(), n)
            if m := _LIST_ITEM.match(line):
                self.items.setdefault(m.group(1).strip("\"'"), n)

    def string(self, value: str) -> int:
        return self.strings.get(value, 0)

    def key(self, name: str) -> int:
        return self.keys.get(name, 0)

    def section(self, name: str) -> int:
        return self.sections.get(name, 0)

    def item(self, value: str) -> int:
        """A YAML list item (``- pytorch=2.1``), quoted or not; 0 when not written as one."""
        return self.items.get(value.strip(), 0) or self.strings.get(value, 0)
