"""Regenerate the converter's golden files under fixtures/convert/expected/.

    python tools/update_goldens.py

Goldens are checked by hand once (read the diff with ``git diff fixtures/``), then the
tests compare them byte for byte. Each variant is a target and launch syntax:

    expected/rocm-7.2.1/NAME             converted for ROCm 7.2.1 (the default)
    expected/rocm-6.3/NAME               converted for ROCm 6.3
    expected/launch-hip/NAME             7.2.1 with --launch-syntax hip
    expected/<variant>/NAME.findings     one finding a line: LINE:COL CODE SEVERITY SLUG
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hipport.options import Options  # noqa: E402
from hipport.pipeline import transform  # noqa: E402
from hipport.versions import parse_version  # noqa: E402

FIXTURES = ROOT / "fixtures" / "convert"
VARIANTS: dict[str, Options] = {
    "rocm-7.2.1": Options(rocm=parse_version("7.2.1"), apply_fixes=True),
    "rocm-6.3": Options(rocm=parse_version("6.3"), apply_fixes=True),
    "launch-hip": Options(rocm=parse_version("7.2.1"), apply_fixes=True, launch_syntax="hip"),
}


def inputs() -> list[Path]:
    return sorted(p for p in FIXTURES.iterdir() if p.is_file())


def findings_text(findings) -> str:
    return "".join(f"{f.line}:{f.col} {f.code} {f.severity} {f.slug}\n" for f in findings)


def render(path: Path, options: Options) -> tuple[bytes, str]:
    out, findings, _ = transform(path.read_bytes(), path.name, options)
    return out, findings_text(findings)


def main() -> int:
    for variant, options in VARIANTS.items():
        dest = FIXTURES / "expected" / variant
        dest.mkdir(parents=True, exist_ok=True)
        for path in inputs():
            out, found = render(path, options)
            (dest / path.name).write_bytes(out)
            (dest / (path.name + ".findings")).write_text(found, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
