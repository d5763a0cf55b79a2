"""Write ``mappings/roc-arity.json``: how many parameters each rocSPARSE function takes.

    python tools/gen_roc_arity.py HEADER [HEADER ...] [--out FILE]

Read from rocSPARSE's public declarations (``rocsparse/rocsparse-functions.h``; no registry
has ROCm 6.3's, Debian's ``librocsparse-dev`` 5.3.0 has 5.3's: ``apt-get download
librocsparse-dev`` and ``dpkg-deb -x``). ``hipport.rewrite.arguments`` uses the counts with
``--roc``: a call renamed to a rocSPARSE function with no argument rewrite is reported
(HP119) unless its argument count is the function's. Deterministic: sorted keys, one entry
per line.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "mappings" / "roc-arity.json"
_DECL = re.compile(r"\brocsparse_status\s+(rocsparse_\w+)\s*\(([^;{)]*)\)\s*;", re.S)


def arities(text: str) -> dict[str, int]:
    """Function name → parameter count (``(void)`` and ``()`` are 0)."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
    out: dict[str, int] = {}
    for name, params in _DECL.findall(text):
        params = params.strip()
        out[name] = 0 if params in ("", "void") else params.count(",") + 1
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("headers", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--source", default="rocSPARSE 5.3.0 rocsparse-functions.h and rocsparse-auxiliary.h (Debian librocsparse-dev 5.3.0+dfsg-2)")
    args = parser.parse_args(argv)
    found: dict[str, int] = {}
    for h in args.headers:
        found.update(arities(h.read_text(encoding="utf-8", errors="replace")))
    body = ",\n".join(f"{json.dumps(k)}:{v}" for k, v in sorted(found.items()))
    args.out.write_text(f'{{\n"generated_by":"python tools/gen_roc_arity.py",\n"source":{json.dumps(args.source)},\n'
                        f'"arity":{{\n{body}\n}}\n}}\n', encoding="utf-8", newline="\n")
    print(f"{len(found)} functions → {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
