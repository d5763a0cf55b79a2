#!/usr/bin/env python3
"""Build the hostile repositories of issue #17 (deps items) and measure `hipport deps` on each.

Each builder writes one input class into an empty directory; tests/test_deps_hostile.py
uses the same builders at test time (nothing hostile is committed: FIFOs and symlink loops
cannot be). Run directly to print worst-case wall time and peak memory per class, each in
a fresh interpreter so one class's memory does not hide another's:

    python tools/deps_hostile.py [--timeout 60] [CLASS ...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path


def gitmodules(repo: Path, size: int = 1_400_000) -> None:
    """A .gitmodules of ~``size`` bytes: one section per vendored library."""
    parts, n, total = [], 0, 0
    while total < size:
        s = f'[submodule "third_party/lib{n}"]\n\tpath = third_party/lib{n}\n\turl = https://github.com/x/lib{n}.git\n'
        parts.append(s)
        total += len(s)
        n += 1
    (repo / ".gitmodules").write_text("".join(parts))


def poetry(repo: Path, size: int = 1_700_000) -> None:
    parts = ['[tool.poetry]\nname = "x"\n\n[tool.poetry.dependencies]\npython = "^3.10"\n']
    n, total = 0, 0
    while total < size:
        s = f'package-number-{n} = "^1.{n % 50}.0"\n'
        parts.append(s)
        total += len(s)
        n += 1
    (repo / "pyproject.toml").write_text("".join(parts))


def environment(repo: Path, size: int = 1_800_000) -> None:
    parts = ["name: big\nchannels:\n  - conda-forge\ndependencies:\n"]
    n, total = 0, 0
    while total < size // 2:
        s = f"  - conda-package-{n}=1.{n % 50}\n"
        parts.append(s)
        total += len(s)
        n += 1
    parts.append("  - pip:\n")
    while total < size:
        s = f"      - pip-package-{n}==2.{n % 50}\n"
        parts.append(s)
        total += len(s)
        n += 1
    (repo / "environment.yml").write_text("".join(parts))


def requirements(repo: Path, size: int = 1_900_000) -> None:
    """Index options apply to the whole file: 1 in 8 lines is one (each line names its URL)."""
    parts, n, total = [], 0, 0
    while total < size:
        s = (f"--extra-index-url https://example.org/{n}/simple\n" if n % 8 == 0
             else f"some-package-{n}>=1.{n % 50},<3 ; python_version >= '3.8'\n")
        parts.append(s)
        total += len(s)
        n += 1
    (repo / "requirements.txt").write_text("".join(parts))


def unary_minus(repo: Path, n: int = 100_000) -> None:
    (repo / "evil.py").write_text("x = " + "-" * n + "1\n")


def deep_toml(repo: Path, n: int = 100_000) -> None:
    (repo / "pyproject.toml").write_text("[project]\ndependencies = " + "[" * n + "]" * n + "\n")


def deep_yaml(repo: Path, n: int = 100_000) -> None:
    (repo / "environment.yml").write_text("dependencies: " + "[" * n + "]" * n + "\n")


def deep_yaml_block(repo: Path, n: int = 100_000) -> None:
    """Block sequences nested on one line: no brackets for the depth pre-check to count."""
    (repo / "environment.yml").write_text("dependencies:\n  " + "- " * n + "x\n")


def fifo(repo: Path) -> None:
    os.mkfifo(repo / "requirements.txt")


def symlink_loop(repo: Path) -> None:
    (repo / "src").mkdir()
    os.symlink("requirements.txt", repo / "requirements.txt")  # points at itself
    os.symlink("b.py", repo / "src" / "a.py")
    os.symlink("a.py", repo / "src" / "b.py")
    os.symlink(".", repo / "src" / "again")  # a directory loop
    (repo / "src" / "ok.py").write_text("import torch\n")


CLASSES = {f.__name__: f for f in (gitmodules, poetry, environment, requirements, unary_minus,
                                   deep_toml, deep_yaml, deep_yaml_block, fifo, symlink_loop)}


def measure(name: str, timeout: float) -> str:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / name
        repo.mkdir()
        CLASSES[name](repo)
        code = ("import resource, sys, time; from pathlib import Path; from hipport.deps import assess; "
                "from hipport.options import Options; t = time.perf_counter(); "
                f"a = assess(Path({str(repo)!r}), Options()); "
                "print(f'{time.perf_counter() - t:.2f} s, '"
                "f'{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB peak RSS, '"
                "f'{len(a.verdicts)} verdicts, {len(a.issues)} errors: ' + '; '.join(str(i) for i in a.issues[:2]))")
        start = time.perf_counter()
        try:
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return f"> {timeout:.0f} s (killed)"
        if out.returncode:
            last = (out.stderr.strip().splitlines() or ["?"])[-1]
            return f"crashed after {time.perf_counter() - start:.1f} s: {last}"
        return out.stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("classes", nargs="*", default=list(CLASSES))
    ap.add_argument("--timeout", type=float, default=60)
    args = ap.parse_args()
    for name in args.classes:
        print(f"{name:<14} {measure(name, args.timeout)}", flush=True)


if __name__ == "__main__":
    main()
