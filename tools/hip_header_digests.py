#!/usr/bin/env python3
"""Print the content digest of each built HIP header set, for ``digest`` in
``mappings/hip_header_sets.toml`` (``hipport.header_manifest.digest``).

Run after ``hipport verify --fetch-headers`` built the sets from the wheels (in a fresh
cache: ``HOME=$(mktemp -d) hipport verify --fetch-headers``), whenever the catalogue's
packages, stubs or fill change what a build writes. A pinned digest lets a cache built
before manifests existed be adopted without a download; a stale one only costs that
download.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hipport import header_manifest, headers  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", nargs="?", type=Path, help="the hip-headers folder (default: the cache's)")
    args = ap.parse_args(argv)
    sets = headers.installed(args.root)
    if not sets:
        print(f"no header set under {args.root or headers.default_root()}", file=sys.stderr)
        return 2
    for hs in sets:
        print(f'{hs.root.name}: digest = "{header_manifest.digest(header_manifest.scan(hs.root))}"')
    return 0


if __name__ == "__main__":
    sys.exit(main())
