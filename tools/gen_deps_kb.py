#!/usr/bin/env python3
"""Regenerate mappings/python-deps.json from the sourced reference and the curation overlay.

The reference (../shared/reference/python-deps-rocm.json) holds the facts and their sources;
mappings/python-deps-curation.toml adds what hipport needs to match and score them
(distribution names, patterns, version and ROCm bands, effort). Keeping the two apart means
the reference can be refreshed and the curation re-applied, instead of hand-editing JSON.

Usage:  python tools/gen_deps_kb.py [--reference PATH] [--check]
``--check`` exits 1 when the committed JSON differs from what would be generated (for CI).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_REFERENCE = ROOT.parent / "shared" / "reference" / "python-deps-rocm.json"
CURATION = ROOT / "mappings" / "python-deps-curation.toml"
OUTPUT = ROOT / "mappings" / "python-deps.json"

STATUSES = (
    "native official support",
    "official ROCm wheels from a separate index",
    "AMD-maintained fork",
    "community build",
    "not supported",
)
_IMPORT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_FACT_KEYS = ("status", "rocm_since", "replacement", "install_hint", "caveats", "sources")
_CURATED_KEYS = ("names", "patterns", "cuda_only_names", "source_build", "experimental",
                 "remove_only", "no_replacement", "drop_in", "effort", "versions", "rocm", "validated")


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _entry(title: str, facts: dict, cur: dict) -> dict:
    """One knowledge-base entry: the reference facts, then the curated matching data."""
    imports = cur.get("imports", facts.get("import_names", []))
    bad = [i for i in imports if not _IMPORT_RE.match(i)]
    if bad:
        raise SystemExit(f"{title}: import names {bad} are not modules; set `imports` in {CURATION.name}")
    if facts["status"] not in STATUSES:
        raise SystemExit(f"{title}: unknown status {facts['status']!r}")
    for band in cur.get("versions", []) + cur.get("rocm", []):
        if "status" in band and band["status"] not in STATUSES:
            raise SystemExit(f"{title}: band status {band['status']!r} unknown")
    out = {"key": cur["key"], "title": title, "imports": imports}
    out.update({k: facts.get(k) for k in _FACT_KEYS})
    for k in _CURATED_KEYS:
        if k in cur:
            out[k] = [_normalize(n) for n in cur[k]] if k in ("names", "patterns", "cuda_only_names") else cur[k]
    return out


def generate(reference: Path) -> dict:
    ref = json.loads(reference.read_text(encoding="utf-8"))
    curation = tomllib.loads(CURATION.read_text(encoding="utf-8"))
    entries = curation["entries"]
    missing = [r["package"] for r in ref if r["package"] not in entries]
    unknown = sorted(set(entries) - {r["package"] for r in ref})
    if missing or unknown:
        raise SystemExit(f"curation out of step with the reference: missing {missing}, stale {unknown}")
    packages = [_entry(r["package"], r, entries[r["package"]]) for r in ref]
    packages += [_entry(title, cur, cur) for title, cur in curation.get("extra", {}).items()]
    keys = [p["key"] for p in packages]
    dupes = {k for k in keys if keys.count(k) > 1}
    if dupes:
        raise SystemExit(f"duplicate keys: {sorted(dupes)}")
    return {
        "_generated_by": "python tools/gen_deps_kb.py  (from ../shared/reference/python-deps-rocm.json"
                         " + mappings/python-deps-curation.toml; do not edit by hand)",
        "statuses": list(STATUSES),
        "gpu_hints": curation["gpu_hints"],
        "cpu_packages": sorted(_normalize(n) for n in curation["cpu_packages"]["names"]),
        "packages": packages,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", type=Path, default=DEFAULT_REFERENCE)
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed JSON is stale")
    args = ap.parse_args(argv)
    text = json.dumps(generate(args.reference), indent=1, ensure_ascii=False) + "\n"
    if args.check:
        stale = not OUTPUT.exists() or OUTPUT.read_text(encoding="utf-8") != text
        print(f"{OUTPUT.name}: {'stale' if stale else 'up to date'}")
        return 1 if stale else 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
