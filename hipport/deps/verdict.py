"""From requirements to one verdict per dependency, for one ROCm target.

A dependency is a knowledge-base entry (so ``nvidia-cublas-cu12`` and ``nvidia-cudnn-cu12``
are one "nvidia-* CUDA wheels" verdict) or, when unknown, its normalized name. Its evidence
is every line that declares, constrains or imports it.

Each verdict has three separate parts: the *verdict* (ok / check / needs-work / blocker,
from ``[verdict]`` in python-deps-scoring.toml), the *kind* of ROCm route (``level``:
native, separate index, fork, source build …) and the *reason*. Versions are judged in
two steps (``hipport.deps.pins_to_use``): the entry's version bands (flash-attn before 2.6.2
has no ROCm support) and, for frameworks, the releases the target ROCm validates
(torch 2.1.2 is in neither 6.3's nor 7.2.1's matrix). A declared pin that misses them is
needs-work with the pin to use and the price of the bump, never a blocker: the package
has a ROCm route, the pin has to move.
"""

from __future__ import annotations

from hipport.deps import kb
from hipport.deps.kb import Entry
from hipport.deps.model import Requirement, Verdict
from hipport.deps.pep508 import normalize, squash
from hipport.deps.versioning import VersionCheck, check_bands, check_matrix, combined_spec
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
VERDICTS = ("ok", "check", "needs-work", "blocker")  # in rising order of concern
UNKNOWN_GPU = "unknown - check"
UNKNOWN_FINE = "unknown (no sign of GPU code)"
CPU_PACKAGE = "no CUDA code of its own"


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
    squashed = {squash(k): k for k in groups}
    for req in reqs:
        if req.kind != "import" or req.name.split(".")[0] in local_modules:
            continue
        key, entry = _import_target(req.name, groups, squashed, base)
        if key is not None:
            groups.setdefault(key, []).append(req)
            entries.setdefault(key, entry)
    out = []
    for key, evidence in groups.items():
        if all(r.kind == "constraint" for r in evidence):
            continue
        entry = entries[key]
        out.append(judge(entry, evidence, rocm) if entry else _unknown(key, evidence))
    return sorted(out, key=lambda v: (-VERDICTS.index(v.verdict), v.factor, v.key))


def _import_target(dotted: str, groups: dict, squashed: dict[str, str],
                   base: kb.KnowledgeBase) -> tuple[str | None, Entry | None]:
    """Which dependency an import belongs to: a declared entry, the KB's guess, a declared name."""
    candidates = base.by_import(dotted)
    top = dotted.split(".")[0]
    if candidates:
        declared = [e for e in candidates if e.key in groups]
        entry = (declared or [e for e in candidates if e.key == normalize(top)] or candidates)[0]
        return entry.key, entry
    if squash(top) in squashed:  # import tinycudann ↔ git+…/tiny-cuda-nn
        return squashed[squash(top)], None
    if "." not in dotted and base.looks_gpu(top):
        return normalize(top), None
    return None, None


def judge(entry: Entry, evidence: list[Requirement], rocm: RocmVersion) -> Verdict:
    """The verdict for a knowledge-base entry given every line that mentions it."""
    facts = {"status": entry.status, "replacement": entry.replacement, "install_hint": entry.install_hint,
             "experimental": entry.experimental, "source_build": entry.source_build}
    notes: list[str] = []
    spec = combined_spec(evidence)
    bands = check_bands(entry, spec)
    if bands.band:
        facts.update({k: v for k, v in bands.band.items() if k in facts})
    rocm_band = next((b for b in entry.rocm if _contains(b["range"], format_version(rocm))), None)
    if rocm_band:
        facts.update({k: v for k, v in rocm_band.items() if k in facts})
    notes += [b["note"] for b in (bands.band, rocm_band) if b and "note" in b]
    matrix = check_matrix(entry, spec, rocm)
    notes += matrix.notes
    level = _level(entry, facts)
    weights = kb.scoring()
    factor = weights["factor"][level] * (weights["factor"]["experimental"] if facts["experimental"] else 1.0)
    bump = bands if bands.pin else matrix if matrix.pin else None
    if bump is not None:
        factor *= weights["bump"][bump.price]
    declared = any(r.kind != "import" for r in evidence)
    optional = all(r.optional for r in evidence)
    verdict = weights["verdict"][level]
    cuda_named = sorted({r.name for r in evidence if r.kind != "import" and entry.is_cuda_only(r.name)})
    if (bump is not None or cuda_named) and VERDICTS.index(verdict) < VERDICTS.index("needs-work"):
        verdict = "needs-work"
    if optional and verdict == "blocker":
        verdict = "needs-work"
    reason = _reason(facts, level, spec, bands, matrix, rocm_band, rocm, declared, optional)
    if cuda_named and level != "remove":
        reason += f"; declared as the CUDA build ({', '.join(cuda_named)})"
    effort = max(Effort[entry.effort.upper()], bump.effort if bump else Effort.SMALL)
    install = bump.route if bump is not None and bump.route else facts["install_hint"]
    return Verdict(
        key=entry.key, title=entry.title, level=level, verdict=verdict, status=facts["status"],
        factor=round(factor, 4), reason=reason, install=install, replacement=facts["replacement"],
        caveats=entry.caveats, notes=tuple(notes), effort=effort, evidence=tuple(evidence),
        declared=declared, optional=optional, pin=bump.pin if bump else matrix.suggest,
        bump=bump.price_text if bump else "",
    )


def _reason(facts: dict, level: str, spec: str, bands: VersionCheck, matrix: VersionCheck,
            rocm_band: dict | None, rocm: RocmVersion, declared: bool, optional: bool) -> str:
    parts = [facts["status"]]
    said_spec = bool(bands.pin or matrix.pin)
    if bands.pin:
        parts.append(bands.why)
    elif bands.band and "status" in bands.band:
        parts.append(f"at the declared version ({spec})")
        said_spec = True
    if rocm_band and "status" in rocm_band:
        parts.append(f"on ROCm {short_version(rocm)}")
    if matrix.pin:
        parts.append(matrix.why)
    if facts["source_build"] and level == "native_source_build":
        parts.append("no ROCm wheel, build from source")
    if facts["experimental"]:
        parts.append("ROCm support is experimental")
    if spec and not said_spec:
        parts.append(f"declared {spec}")
    if not declared:
        parts.append("imported but declared in no manifest")
    if optional:
        parts.append("optional (an extra, a dev group or a guarded import): the code runs without it")
    return "; ".join(parts)


def _unknown(name: str, evidence: list[Requirement]) -> Verdict:
    """An unknown package: ok when nothing says GPU, "check" when its name, URL or pin does."""
    base = kb.load()
    hints = [name] + [r.url for r in evidence if r.url] + [r.local for r in evidence if r.local]
    gpu = any(base.looks_gpu(h) for h in hints) or any(base.cuda_local.search(r.local) for r in evidence if r.local)
    declared = any(r.kind != "import" for r in evidence)
    optional = all(r.optional for r in evidence)
    tail = ("" if declared else "; imported but declared in no manifest") + ("; optional" if optional else "")
    if not gpu:
        cpu = name in base.cpu_packages
        return Verdict(key=name, title=name, level="fine", verdict="ok", status=CPU_PACKAGE if cpu else UNKNOWN_FINE,
                       factor=1.0, evidence=tuple(evidence), declared=declared, optional=optional,
                       reason=("a known package with no CUDA code (a CPU library, or pure Python on PyTorch): runs unchanged" if cpu
                               else "not in the knowledge base; nothing suggests GPU code") + tail)
    factor = kb.scoring()["factor"]["unknown_gpu"]
    return Verdict(key=name, title=name, level="unknown_gpu", verdict="check", status=UNKNOWN_GPU, factor=factor,
                   reason="not in the knowledge base, and its name, URL or pin suggests CUDA/GPU code: check it" + tail,
                   install="Find out whether it has a ROCm build or a pure-PyTorch fallback.",
                   effort=Effort.MEDIUM, evidence=tuple(evidence), declared=declared, optional=optional)


def _level(entry: Entry, facts: dict) -> str:
    if entry.remove_only:
        return "remove"
    level = _STATUS_LEVEL[facts["status"]]
    if level in ("native", "separate_index") and facts["source_build"]:
        return "native_source_build"
    if level == "not_supported" and facts["replacement"] and not entry.no_replacement:
        return "drop_in_replacement" if entry.drop_in else "not_supported_with_replacement"
    return level


def _contains(range_: str, version: str) -> bool:
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(range_).contains(version, prereleases=True)
