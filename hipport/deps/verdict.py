"""From requirements to one verdict per dependency, for one ROCm target.

A dependency is a knowledge-base entry (so ``nvidia-cublas-cu12`` and ``nvidia-cudnn-cu12``
are one "nvidia-* CUDA wheels" verdict) or, when unknown, its normalized name. Its evidence
is every line that declares, constrains or imports it. Version bands are judged against the
*best* version the declared specifiers still admit: ``flash-attn>=2.3`` can be satisfied by
a ROCm-capable release, ``flash-attn==2.5.8`` cannot.
"""

from __future__ import annotations

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from hipport.deps import kb
from hipport.deps.kb import Entry
from hipport.deps.model import Requirement, Verdict
from hipport.deps.pep508 import normalize
from hipport.findings import Effort
from hipport.versions import Version as RocmVersion
from hipport.versions import format_version, short_version

_STATUS_LEVEL = {
    "native official support": "native",
    "official ROCm wheels from a separate index": "separate_index",
    "AMD-maintained fork": "amd_fork",
    "community build": "community",
    "not supported": "not_supported",
}
UNKNOWN_GPU = "unknown - check"
UNKNOWN_FINE = "unknown (pure Python)"


def verdicts(reqs: list[Requirement], local_modules: set[str], rocm: RocmVersion) -> list[Verdict]:
    """One verdict per dependency the repository declares or imports, worst first."""
    base = kb.load()
    groups: dict[str, list[Requirement]] = {}
    entries: dict[str, Entry | None] = {}
    for req in reqs:
        if req.kind == "import":
            continue
        entry = base.by_name(req.name)
        key = entry.key if entry else req.name
        groups.setdefault(key, []).append(req)
        entries[key] = entry
    for req in reqs:
        if req.kind != "import" or req.name.split(".")[0] in local_modules:
            continue
        key, entry = _import_target(req.name, groups, base)
        if key is not None:
            groups.setdefault(key, []).append(req)
            entries[key] = entry
    out = []
    for key, evidence in groups.items():
        if all(r.kind == "constraint" for r in evidence):
            continue
        entry = entries[key]
        out.append(judge(entry, evidence, rocm) if entry else _unknown(key, evidence))
    return sorted(out, key=lambda v: (v.factor, v.key))


def _import_target(dotted: str, groups: dict, base: kb.KnowledgeBase) -> tuple[str | None, Entry | None]:
    """Which dependency an import belongs to: a declared entry first, then the KB's best guess."""
    candidates = base.by_import(dotted)
    if candidates:
        declared = [e for e in candidates if e.key in groups]
        top = normalize(dotted.split(".")[0])
        entry = (declared or [e for e in candidates if e.key == top] or candidates)[0]
        return entry.key, entry
    top = dotted.split(".")[0]
    if "." not in dotted and base.looks_gpu(top):
        return normalize(top), None
    return None, None


def judge(entry: Entry, evidence: list[Requirement], rocm: RocmVersion) -> Verdict:
    """The verdict for a knowledge-base entry given every line that mentions it."""
    facts = {"status": entry.status, "replacement": entry.replacement, "install_hint": entry.install_hint,
             "experimental": entry.experimental, "source_build": entry.source_build}
    notes: list[str] = []
    spec = _combined(evidence)
    band = _best_version_band(entry, spec)
    rocm_band = next((b for b in entry.rocm if _contains(b["range"], format_version(rocm))), None)
    for chosen in (band, rocm_band):
        if chosen:
            facts.update({k: v for k, v in chosen.items() if k in facts})
            if "note" in chosen:
                notes.append(chosen["note"])
    level = _level(entry, facts)
    weights = kb.scoring()["factor"]
    factor = weights[level] * (weights["experimental"] if facts["experimental"] else 1.0)
    declared = any(r.kind != "import" for r in evidence)
    reason = facts["status"]
    if band and "status" in band:
        reason += " at the declared version"
    if rocm_band and "status" in rocm_band:
        reason += f" on ROCm {short_version(rocm)}"
    if facts["source_build"] and level == "native_source_build":
        reason += "; no ROCm wheel, build from source"
    if facts["experimental"]:
        reason += "; ROCm support is experimental"
    if spec:
        reason += f" (declared {spec})"
    if not declared:
        reason += "; imported but declared in no manifest"
    return Verdict(
        key=entry.key, title=entry.title, level=level, status=facts["status"], factor=round(factor, 4),
        reason=reason, install=facts["install_hint"], replacement=facts["replacement"],
        caveats=entry.caveats, notes=tuple(notes), effort=Effort[entry.effort.upper()],
        evidence=tuple(evidence), declared=declared,
    )


def _unknown(name: str, evidence: list[Requirement]) -> Verdict:
    """An unknown package: fine when pure Python, "unknown - check" when anything says GPU."""
    base = kb.load()
    hints = [name] + [r.url for r in evidence if r.url] + [r.local for r in evidence if r.local]
    gpu = any(base.looks_gpu(h) for h in hints) or any(base.cuda_local.search(r.local) for r in evidence if r.local)
    declared = any(r.kind != "import" for r in evidence)
    if not gpu:
        return Verdict(key=name, title=name, level="fine", status=UNKNOWN_FINE, factor=1.0,
                       reason="not in the knowledge base; nothing suggests GPU code", evidence=tuple(evidence),
                       declared=declared)
    factor = kb.scoring()["factor"]["unknown_gpu"]
    return Verdict(key=name, title=name, level="unknown_gpu", status=UNKNOWN_GPU, factor=factor,
                   reason="not in the knowledge base, and its name or pin suggests CUDA/GPU code: check it"
                          + ("" if declared else "; imported but declared in no manifest"),
                   install="Find out whether it has a ROCm build or a pure-PyTorch fallback.",
                   effort=Effort.MEDIUM, evidence=tuple(evidence), declared=declared)


def _level(entry: Entry, facts: dict) -> str:
    if entry.remove_only:
        return "remove"
    level = _STATUS_LEVEL[facts["status"]]
    if level in ("native", "separate_index") and facts["source_build"]:
        return "native_source_build"
    if level == "not_supported" and facts["replacement"] and not entry.no_replacement:
        return "not_supported_with_replacement"
    return level


def _combined(evidence: list[Requirement]) -> str:
    specs = sorted({r.specifier for r in evidence if r.specifier})
    return ",".join(specs)


def _best_version_band(entry: Entry, spec: str) -> dict | None:
    """The most portable version band that the declared specifier still admits."""
    if not entry.versions:
        return None
    try:
        declared = SpecifierSet(spec)
    except InvalidSpecifier:
        return None
    admitted = [b for b in entry.versions if _admits(declared, SpecifierSet(b["range"]))]
    if not admitted:
        return None
    order = list(_STATUS_LEVEL)
    return min(admitted, key=lambda b: (order.index(b.get("status", entry.status)), b.get("experimental", False)))


def _admits(declared: SpecifierSet, band: SpecifierSet) -> bool:
    """Is some version allowed by both specifier sets? Probed at the versions they mention."""
    probes: set[str] = {"0", "0.0.1", "99999"}
    for spec in list(declared) + list(band):
        try:
            v = Version(spec.version.rstrip(".*"))
        except InvalidVersion:
            continue
        rel = list(v.release)
        probes |= {str(v), ".".join(map(str, rel + [1])),
                   ".".join(map(str, rel[:-1] + [rel[-1] + 1])), v.public}
        if rel[-1] > 0:
            probes.add(".".join(map(str, rel[:-1] + [rel[-1] - 1])))
    return any(declared.contains(p, prereleases=True) and band.contains(p, prereleases=True) for p in probes)


def _contains(range_: str, version: str) -> bool:
    return SpecifierSet(range_).contains(version, prereleases=True)
