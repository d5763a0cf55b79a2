"""Declared versions against what ROCm supports: the pin to use, and what moving it costs.

Two questions, both answered from the knowledge base (never from the network):

* ``check_bands``: does the declared specifier admit the best ROCm route the package has?
  (``flash-attn==2.5.8`` does not — ROCm support starts at 2.6.2 — so the pin must rise;
  ``bitsandbytes==0.43.1`` gets only the AMD fork, 0.50 has official wheels.)
* ``check_matrix``: for frameworks with a validated matrix (torch, torchvision, torchaudio,
  jax, tensorflow), does it admit a release the target ROCm validates? (``torch==2.1.2``
  is neither in ROCm 6.3's 2.4/2.3/2.2/1.13 nor in 7.2.1's 2.9.1/2.8.0/2.7.1.)

Specifier sets are compared by probing the versions they mention (and their neighbours),
which is exact for the ``==``/``<``/``>=`` bands the knowledge base uses. Local labels
(``+cu121``) are dropped first: they are judged as pins (HP502), not as versions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from hipport.deps.kb import Entry
from hipport.deps.model import Requirement
from hipport.findings import Effort
from hipport.versions import Version as RocmVersion
from hipport.versions import format_version, short_version

_ORDER = ("native official support", "official ROCm wheels from a separate index",
          "AMD-maintained fork", "community build", "not supported")
_ROUTE = {"official ROCm wheels from a separate index": "ROCm wheels from a separate index",
          "AMD-maintained fork": "an AMD-maintained fork", "community build": "a community build",
          "native official support": "official support"}
#: What moving a pin costs, by the most significant release number that changes.
PRICES = {"patch": ("a patch bump", Effort.SMALL), "minor": ("a minor bump", Effort.SMALL),
          "minors": ("several minor releases", Effort.MEDIUM), "major": ("a major-version bump", Effort.LARGE)}


@dataclass(frozen=True)
class VersionCheck:
    """The outcome of one version question; ``pin`` is set only when the pin must move."""

    band: dict | None = None  # the version band whose facts apply (None: the entry's own)
    pin: str = ""  # the specifier to use instead of the declared one
    price: str = ""  # a key of PRICES (and of [bump] in python-deps-scoring.toml)
    why: str = ""  # one clause for the verdict's reason
    route: str = ""  # install text that replaces the entry's when the pin moves
    notes: tuple[str, ...] = ()
    suggest: str = ""  # a pin worth using even when nothing is wrong (first validated release)

    @property
    def price_text(self) -> str:
        return PRICES[self.price][0] if self.price else ""

    @property
    def effort(self) -> Effort:
        return PRICES[self.price][1] if self.price else Effort.SMALL


def combined_spec(evidence: list[Requirement]) -> str:
    """Every declared specifier of a dependency as one set, local labels dropped."""
    specs = sorted({re.sub(r"\+[^,]*", "", r.specifier) for r in evidence if r.specifier and r.kind != "import"})
    return ",".join(s for s in specs if s)


def check_bands(entry: Entry, spec: str) -> VersionCheck:
    """The most portable band the declared specifier admits; a pin to raise when none has support."""
    declared = _specifier(spec)
    if not entry.versions or declared is None:
        return VersionCheck()
    bands = [(SpecifierSet(b["range"]), b) for b in entry.versions]
    probes = _probes([declared] + [s for s, _ in bands])
    band_at = {p: next((b for s, b in bands if s.contains(p, prereleases=True)), None) for p in probes}

    def status(p: Version) -> str:
        band = band_at[p]
        return band.get("status", entry.status) if band else entry.status

    admitted = [p for p in probes if declared.contains(p, prereleases=True)]
    if not admitted:
        return VersionCheck()  # contradictory specifiers: nothing honest to say about bands
    def rank(p: Version) -> tuple[int, bool]:
        return _ORDER.index(status(p)), bool((band_at[p] or {}).get("experimental"))

    best = min(admitted, key=rank)
    top = max(admitted)
    better = [p for p in probes if p > top and rank(p) < rank(best)]
    if not better:
        return VersionCheck(band=band_at[best])
    target = min(better, key=lambda p: (rank(p), p))  # the best route, at its first release
    cost = price(top, target)
    held = band_at[best] or {}
    what = "predates ROCm support" if status(best) == "not supported" else f"has only {_ROUTE[status(best)]}"
    return VersionCheck(
        band=band_at[target], pin=f">={target}", price=cost,
        why=f"the declared {spec} {what}: raise the pin to {entry.key}>={target} ({PRICES[cost][0]})",
        route=held.get("install_hint", ""), notes=tuple(n for n in [held.get("note")] if n),
    )


def check_matrix(entry: Entry, spec: str, rocm: RocmVersion) -> VersionCheck:
    """The declared specifier against the releases the target ROCm validates."""
    if not entry.validated:
        return VersionCheck()
    row = next((r for r in entry.validated if SpecifierSet(r["rocm"]).contains(format_version(rocm))), None)
    if row is None:
        known = ", ".join(r["label"] for r in entry.validated)
        return VersionCheck(notes=(f"the knowledge base has no validated {entry.key} releases for ROCm "
                                   f"{short_version(rocm)} (only for ROCm {known}); check AMD's compatibility matrix",))
    versions, label = row["versions"], row["label"]
    listing = ", ".join(versions)
    first = _release_pin(versions[0])
    declared = _specifier(spec)
    if not spec or declared is None:
        return VersionCheck(notes=(f"ROCm {label} validates {entry.key} {listing}: pin one ({entry.key}{first})",),
                            suggest=first)
    fits = [v for v in versions if _admits(declared, SpecifierSet(_release_pin(v)))]
    if fits:
        return VersionCheck(notes=(f"ROCm {label} validates {entry.key} {listing}; the declared {spec} admits {', '.join(fits)}",))
    admitted = [p for p in _probes([declared] + [SpecifierSet(_release_pin(v)) for v in versions])
                if declared.contains(p, prereleases=True)]
    if not admitted:
        return VersionCheck()
    top = max(admitted)
    ordered = sorted(versions, key=Version)
    above = [v for v in ordered if Version(v) >= Version(".".join(map(str, top.release[:len(Version(v).release)])))]
    target = above[0] if above else ordered[-1]
    cost = price(top, Version(target))
    pin = _release_pin(target)
    down = "" if above else ", a downgrade: or target a newer ROCm"
    return VersionCheck(
        pin=pin, price=cost,
        why=f"the declared {spec} is not a release ROCm {label} validates ({listing}): pin {entry.key}{pin} "
            f"({PRICES[cost][0]}{down})",
    )


def price(old: Version, new: Version) -> str:
    """patch / minor / minors / major, counting from the first non-zero release number.

    ``2.1.2 → 2.2`` is a minor bump, ``2.1 → 2.7`` several, ``1.13 → 2.4`` major; for 0.x
    projects the first non-zero number is the one that breaks (``0.0.23 → 0.0.28``: several).
    """
    a, b = list(old.release) + [0, 0, 0], list(new.release) + [0, 0, 0]
    lead = next((i for i, x in enumerate(a[:3]) if x), 0)
    for i in range(3):
        if a[i] != b[i]:
            step = i - lead
            if step < 0 or (step == 0 and lead == 0):
                return "major"
            if step == 0 or (step == 1 and lead == 0):
                return "minor" if abs(a[i] - b[i]) <= 2 else "minors"
            return "patch"
    return "patch"


def _release_pin(v: str) -> str:
    """A matrix entry as a pin: "2.4" means any 2.4.x, "2.9.1" exactly that release."""
    return f"=={v}.*" if len(Version(v).release) < 3 else f"=={v}"


def _specifier(spec: str) -> SpecifierSet | None:
    try:
        return SpecifierSet(spec)
    except InvalidSpecifier:
        return None


def _admits(declared: SpecifierSet, band: SpecifierSet) -> bool:
    """Is some version allowed by both specifier sets?"""
    return any(declared.contains(p, prereleases=True) and band.contains(p, prereleases=True)
               for p in _probes([declared, band]))


def _probes(sets: list[SpecifierSet]) -> list[Version]:
    """Versions at and around every version the sets mention (enough to decide ``<``/``>=``/``==``)."""
    found: set[str] = {"0", "0.0.1", "99999"}
    for spec in (s for ss in sets for s in ss):
        try:
            v = Version(spec.version.rstrip(".*"))
        except InvalidVersion:
            continue
        rel = list(v.release)
        found |= {str(v), v.public, ".".join(map(str, rel + [1])),
                  ".".join(map(str, rel[:-1] + [rel[-1] + 1]))}
        if rel[-1] > 0:
            found.add(".".join(map(str, rel[:-1] + [rel[-1] - 1])))
    return sorted({Version(p) for p in found})
