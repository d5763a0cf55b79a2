"""Which HIP spelling of a CUDA name is valid for a target release.

HIPIFY's tables come in editions; each says what HIP calls a CUDA name *as of its sync*,
and the newer one dates changes without saying what a name was called before. The
generator (``tools/gen_mappings.py``, rules in ``mappings/timeline.toml``) combines the
editions into a timeline per CUDA name: spans, each a HIP name valid from one release
(inclusive) until another (exclusive), with that spelling's own cells. Only names with more
than one spelling, or whose cells a header overrode, carry spans; every other row is its
own single span.

This module only reads spans and picks one; ``MappingView`` applies the pick once per name
and target, so the rename hot path never sees a timeline.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from hipport.versions import Version, parse_version, short_version

if TYPE_CHECKING:
    from hipport.mapping import ApiEntry


@dataclass(frozen=True, slots=True)
class Span:
    """One HIP spelling and the releases it is the right one for."""

    hip: str | None
    valid_from: Version | None  # None: every release before ``valid_until``
    valid_until: Version | None  # exclusive; None: still valid
    added: Version | None
    deprecated: Version | None
    changed: tuple[Version, ...]
    removed: Version | None
    unsupported_cuda: tuple[Version, ...]
    experimental: Version | Literal[True] | None
    note: str | None  # why this span is what it is (edition, header override)

    def covers(self, rocm: Version) -> bool:
        return (self.valid_from is None or self.valid_from <= rocm) and (
            self.valid_until is None or rocm < self.valid_until)

    def range_text(self) -> str:
        """``"until 7.0"``, ``"from 7.0"``, ``"7.0 to 7.1"`` or ``"every release"``."""
        lo = short_version(self.valid_from) if self.valid_from else None
        hi = short_version(self.valid_until) if self.valid_until else None
        if lo and hi:
            return f"from {lo} until {hi}"
        return f"from {lo}" if lo else (f"until {hi}" if hi else "every release")


def parse_spans(columns: list[str], raw: list[list[Any]]) -> tuple[Span, ...]:
    """A ``spans`` entry of a generated document (layout: its ``span_columns``)."""
    out = []
    for values in raw:
        v = dict(zip(columns, values))

        def one(key: str) -> Version | None:
            return parse_version(v[key]) if v.get(key) else None

        def many(key: str) -> tuple[Version, ...]:
            return tuple(parse_version(t) for t in v.get(key) or ())

        exp = v.get("hip_experimental")
        out.append(Span(
            hip=v["hip"], valid_from=one("from"), valid_until=one("until"),
            added=one("hip_added"), deprecated=one("hip_deprecated"), changed=many("hip_changed"),
            removed=one("hip_removed"), unsupported_cuda=many("hip_unsupported"),
            experimental=True if exp is True else (parse_version(exp) if exp else None),
            note=v.get("note")))
    return tuple(out)


def span_at(spans: tuple[Span, ...], rocm: Version) -> Span | None:
    return next((s for s in spans if s.covers(rocm)), None)


def entry_at(entry: "ApiEntry", rocm: Version) -> "ApiEntry":
    """``entry`` with the HIP name and HIP cells of the span valid on ``rocm``."""
    span = span_at(entry.spans, rocm)
    if span is None or (span.hip == entry.hip and span.added == entry.hip_added
                        and span.removed == entry.hip_removed):
        return entry
    return replace(entry, hip=span.hip, hip_added=span.added, hip_deprecated=span.deprecated,
                   hip_changed=span.changed, hip_removed=span.removed,
                   hip_unsupported_cuda=span.unsupported_cuda, hip_experimental=span.experimental)


def later_spelling(entry: "ApiEntry", rocm: Version) -> str | None:
    """For a resolution's detail: ``"hipblasScnrm2 from ROCm 7.0"`` when the spelling
    valid on ``rocm`` is replaced by another in a later release."""
    span = span_at(entry.spans, rocm)
    if span is None or span.valid_until is None:
        return None
    nxt = span_at(entry.spans, span.valid_until)
    if nxt is None or nxt.hip == span.hip or nxt.hip is None:
        return None
    return f"{nxt.hip} from ROCm {short_version(span.valid_until)}"
