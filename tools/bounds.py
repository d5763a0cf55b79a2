#!/usr/bin/env python3
"""Measure ``hipport convert`` on each bounded input class of a source (issue #17): worst-case
CPU time, wall time and peak memory, each class in a fresh process.

Every input is made here, in a temporary directory, just under the bound that applies to
it (``pipeline.MAX_SOURCE_BYTES`` unless ``--size``): dense real-shaped code one statement
a line and all on one line, a numeric table, the inputs that cost tree-sitter itself the
most (``parse.budget`` stops them), nested qualified names, deep brackets, a file over the
bound. tools/deps_hostile.py does the same for ``deps``; the README's bounds are these
figures.

    python tools/bounds.py [--size MB] [--timeout S] [CLASS ...]

On a machine others share, read the CPU time (user + system): wall time is whatever the
load makes it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: A function body's worth of the statements hipport rewrites or reports, one kind each.
STATEMENTS = [
    b"cudaMalloc(&p, n);", b"v = __shfl_down_sync(0xffffffff, v, 16);",
    b"cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);", b"unsigned m = __ballot_sync(0xffffffff, x);",
    b"int lane = threadIdx.x & 31;",
    b"cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &a, A, m, B, n, &b, C, m);",
    b"cudaStream_t s; cudaStreamCreate(&s);", b"k<<<g, b, 0, s>>>(x);",
    b"cub::DeviceReduce::Sum(t, b, i, o, n);", b"if (warpSize == 32) { y = 1; }",
]
HEAD = b"#include <cuda_runtime.h>\n__global__ void k(float* x) {}\nvoid f() {"


def _dense(size: int, sep: bytes) -> bytes:
    body = sep.join(STATEMENTS) + sep
    return HEAD + sep + body * ((size - len(HEAD) - 3) // len(body)) + b"}\n"


def _repeat(head: bytes, unit: bytes, size: int, tail: bytes = b"") -> bytes:
    return head + unit * ((size - len(head) - len(tail)) // len(unit)) + tail


CUDA = b"cudaMalloc(p);\n"  # so that the file pre-filter lets the input through

CLASSES: dict[str, Callable[[int], bytes]] = {
    "dense_lines": lambda size: _dense(size, b"\n"),
    "dense_one_line": lambda size: _dense(size, b" "),
    "digit_table": lambda size: _repeat(b"__device__ const char t[] = {", b"1,", size, b"1};\n"),
    "nested_templates": lambda size: _repeat(CUDA, b"a<", size),
    "escaped_quotes": lambda size: _repeat(CUDA, b'"\\"', size),
    "nested_names": lambda size: _repeat(CUDA, b"cub::", size, b"x;\n"),
    "nested_parens": lambda size: CUDA + b"(" * ((size - 16) // 2) + b")" * ((size - 16) // 2),
    "nested_braces": lambda size: CUDA + b"void f()" + b"{" * ((size - 24) // 2) + b"}" * ((size - 24) // 2),
    "long_macro": lambda size: _repeat(CUDA + b"#define M(x) ", b"cudaMemcpy(x, x, 1, cudaMemcpyHostToDevice); ", size, b"\n"),
    "over_the_bound": lambda size: _repeat(CUDA, b"cudaFree(p);\n", _source_bound() + 64),
}


def _source_bound() -> int:
    from hipport.pipeline import MAX_SOURCE_BYTES

    return MAX_SOURCE_BYTES


def measure(name: str, size: int, timeout: float) -> str:
    """Convert one input of class ``name`` in a fresh process: its figures, one line."""
    with tempfile.TemporaryDirectory(prefix="hipport-bounds-") as tmp:
        src = Path(tmp) / f"{name}.cu"
        data = CLASSES[name](size)
        src.write_bytes(data)
        del data
        cmd = [sys.executable, "-m", "hipport", "convert", str(src), "-o", str(Path(tmp) / "out.cu"),
               "--jobs", "1", "-q"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        deadline = started + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                _, status, usage = os.wait4(proc.pid, 0)
                return f"{src.stat().st_size / 1e6:6.1f} MB  killed after {timeout:.0f} s"
            time.sleep(0.05)
        wall = time.perf_counter() - started
        err = proc.stderr.read().decode("utf-8", "replace").strip().splitlines() if proc.stderr else []
        proc.stderr.close()
        said = next((line for line in err if "error" in line), "converted" if status == 0 else "?")
        said = said.replace(str(src), src.name)
        return (f"{src.stat().st_size / 1e6:6.1f} MB  cpu {usage.ru_utime + usage.ru_stime:6.1f} s  "
                f"wall {wall:6.1f} s  peak {usage.ru_maxrss / 1024:6.0f} MB  exit {os.waitstatus_to_exitcode(status)}  "
                f"{said[:140]}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("classes", nargs="*", metavar="CLASS", help=f"of {', '.join(CLASSES)} (default: all)")
    ap.add_argument("--size", type=float, help="input size in MB (default: just under the source bound)")
    ap.add_argument("--timeout", type=float, default=300)
    args = ap.parse_args(argv)
    size = int(args.size * 1e6) if args.size else _source_bound() - 64
    unknown = [c for c in args.classes if c not in CLASSES]
    if unknown:
        ap.error(f"unknown class {unknown[0]!r}: one of {', '.join(CLASSES)}")
    for name in args.classes or list(CLASSES):
        print(f"{name:<17} {measure(name, size, args.timeout)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
