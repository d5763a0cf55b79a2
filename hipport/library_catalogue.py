"""The catalogue of CUDA-only and CUDA-flavoured libraries (``mappings/libraries.toml``),
read for the HP4xx rules (``hipport.rules.libraries``): which includes, namespaces and
identifiers name a library, and which API uses carry a version-dependent risk.

It is data beside the API mapping tables (``hipport.mapping``); the rules hold the pages
and the matching.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from hipport.datafiles import toml_data
from hipport.rule import Rule
from hipport.versions import Version, parse_version


@dataclass(frozen=True)
class Library:
    key: str
    rule: Rule
    includes: tuple[str, ...]
    include_prefixes: tuple[str, ...]
    namespaces: tuple[tuple[str, ...], ...]
    identifiers: frozenset[str]
    pattern: re.Pattern[str] | None
    message: str
    suggestion: str
    notes: tuple[tuple[Version | None, Version | None, str], ...] = ()

    def matches_include(self, header: str) -> bool:
        def under(p: str) -> bool:
            return header == p or header.endswith("/" + p)

        return any(under(i) for i in self.includes) or any(
            header.startswith(p) or f"/{p}" in header for p in self.include_prefixes)

    def matches_path(self, parts: list[str]) -> bool:
        return any(tuple(parts[:len(ns)]) == ns for ns in self.namespaces)

    def notes_for(self, rocm: Version) -> str:
        """The notes that hold for a target release, joined."""
        return "".join(t for lo, hi, t in self.notes if _in_range(rocm, lo, hi))


@dataclass(frozen=True)
class ApiUse:
    rule: Rule
    pattern: re.Pattern[str]
    message: str
    suggestion: str
    rocm_min: Version | None = None
    rocm_max: Version | None = None
    once: bool = False
    requires: bytes = b""
    receiver: str = ""

    def applies_to(self, rocm: Version) -> bool:
        """Whether the use is a risk on this target release."""
        return _in_range(rocm, self.rocm_min, self.rocm_max)


@dataclass(frozen=True)
class Catalogue:
    libraries: tuple[Library, ...]
    apis: tuple[ApiUse, ...]

    @cached_property
    def receivers(self) -> frozenset[str]:
        return frozenset(a.receiver for a in self.apis if a.receiver)

    @cached_property
    def names(self) -> re.Pattern[str]:
        """Every identifier any entry could match, as one pattern: most names match nothing."""
        alts = [lib.pattern.pattern for lib in self.libraries if lib.pattern is not None]
        alts += [re.escape(i) for lib in self.libraries for i in lib.identifiers]
        alts += [a.pattern.pattern for a in self.apis]
        return re.compile("|".join(f"(?:{p})" for p in alts))


def _in_range(rocm: Version, lo: Version | None, hi: Version | None) -> bool:
    return (lo is None or rocm >= lo) and (hi is None or rocm < hi)


def _version(value: object) -> Version | None:
    return parse_version(str(value)) if value is not None else None


def parse_catalogue(data: dict, rules: Mapping[str, Rule]) -> Catalogue:
    """Build the catalogue from the TOML table, its codes looked up in ``rules``; an
    unknown rule code is an error in the data."""

    def rule(code: str) -> Rule:
        if code not in rules or not code.startswith("HP4"):
            raise ValueError(f"libraries.toml: unknown HP4xx rule {code!r}")
        return rules[code]

    libs = tuple(
        Library(
            key=key,
            rule=rule(t["rule"]),
            includes=tuple(t.get("includes", ())),
            include_prefixes=tuple(t.get("include_prefixes", ())),
            namespaces=tuple(tuple(ns.split("::")) for ns in t.get("namespaces", ())),
            identifiers=frozenset(t.get("identifiers", ())),
            pattern=re.compile(t["pattern"]) if "pattern" in t else None,
            message=t["message"],
            suggestion=t.get("suggestion", ""),
            notes=tuple((_version(n.get("rocm_min")), _version(n.get("rocm_max")), n["text"])
                        for n in t.get("notes", ())),
        )
        for key, t in data.get("library", {}).items()
    )
    apis = tuple(
        ApiUse(
            rule=rule(a["rule"]),
            pattern=re.compile(a["pattern"]),
            message=a["message"],
            suggestion=a.get("suggestion", ""),
            rocm_min=_version(a.get("rocm_min")),
            rocm_max=_version(a.get("rocm_max")),
            once=bool(a.get("once", False)),
            requires=a.get("requires", "").encode(),
            receiver=a.get("receiver", ""),
        )
        for a in data.get("api", ())
    )
    return Catalogue(libs, apis)


def read_catalogue(rules: Mapping[str, Rule]) -> Catalogue:
    """The packaged catalogue, its codes looked up in ``rules``."""
    return parse_catalogue(toml_data("libraries.toml"), rules)
