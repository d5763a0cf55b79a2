"""The build-file maps (``mappings/build.toml``), read once, as plain values.

Kept apart from the CMake, Make and PyTorch modules because all three share the nvcc flag
table and the library table: a flag or a library is ported the same way wherever it is
written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from hipport.datafiles import toml_data

DEFAULT_ARCH = "gfx942"


@dataclass(frozen=True)
class Library:
    """One CUDA library and its ROCm counterpart (``package``/``target``/``lib``), or none."""

    key: str
    cmake: tuple[str, ...]
    libs: tuple[str, ...]
    package: str = ""
    target: str = ""
    lib: str = ""
    none: str = ""  # why there is no counterpart (a finding instead of a rewrite)


@dataclass(frozen=True)
class Flag:
    """One nvcc flag row (see the comment above ``[[flag]]`` in build.toml)."""

    match: tuple[str, ...]
    action: str
    takes: int = 0
    value: str = ""
    with_: str = ""
    code: str = ""
    note: str = ""


@dataclass(frozen=True)
class BuildMaps:
    raw: dict
    flags: tuple[Flag, ...]

    @property
    def cmake(self) -> dict:
        return self.raw["cmake"]

    def libraries(self, roc: bool) -> tuple[Library, ...]:
        return _libraries(roc)

    def library_for_target(self, name: str, roc: bool) -> Library | None:
        return _by_target(roc).get(name)

    def library_for_lib(self, name: str, roc: bool) -> Library | None:
        return _by_lib(roc).get(name)

    def flag(self, word: str) -> tuple[Flag, str | None] | None:
        """The row for ``word`` and the value glued to it (``-arch=sm_80`` → ``sm_80``);
        the value is None when the word is the flag alone (its value may follow)."""
        exact = _exact_flags().get(word)
        if exact is not None:
            return exact, None
        head, eq, rest = word.partition("=")
        if eq:
            row = _exact_flags().get(head + "=")
            if row is not None:
                return row, rest
        return None

    def is_flag_variable(self, name: str) -> bool:
        return _flag_variable_re().match(name) is not None


@lru_cache(maxsize=1)
def load() -> BuildMaps:
    raw = toml_data("build.toml")
    flags = tuple(
        Flag(match=tuple(r["match"]), action=r["action"], takes=int(r.get("takes", 0)),
             value=r.get("value", ""), with_=r.get("with", ""), code=r.get("code", ""),
             note=r.get("note", ""))
        for r in raw["flag"]
    )
    return BuildMaps(raw, flags)


@lru_cache(maxsize=1)
def _exact_flags() -> dict[str, Flag]:
    return {m: f for f in load().flags for m in f.match}


@lru_cache(maxsize=1)
def _flag_variable_re() -> re.Pattern[str]:
    return re.compile(load().cmake["flag_variable_pattern"])


@lru_cache(maxsize=2)
def _libraries(roc: bool) -> tuple[Library, ...]:
    out = []
    for key, row in load().raw["target"].items():
        side = (row.get("roc") if roc else None) or row.get("hip") or {}
        out.append(Library(key=key, cmake=tuple(row.get("cmake", ())), libs=tuple(row.get("lib", ())),
                           package=side.get("package", ""), target=side.get("target", ""),
                           lib=side.get("lib", ""), none=row.get("none", "")))
    return tuple(out)


@lru_cache(maxsize=2)
def _by_target(roc: bool) -> dict[str, Library]:
    return {t: lib for lib in _libraries(roc) for t in lib.cmake}


@lru_cache(maxsize=2)
def _by_lib(roc: bool) -> dict[str, Library]:
    return {n: lib for lib in _libraries(roc) for n in lib.libs}


def arch_list(options) -> list[str]:
    """The GPUs to build for: ``--offload-arch`` (comma-separated), else gfx942.

    Read with a fallback, as a string or a sequence of strings: the option is becoming a
    global one (a GPU parameter of every rule), whose shape may differ."""
    value = getattr(options, "offload_arch", None) or DEFAULT_ARCH
    items = [value] if isinstance(value, str) else list(value)
    return [a.strip() for item in items for a in str(item).split(",") if a.strip()] or [DEFAULT_ARCH]
