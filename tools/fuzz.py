#!/usr/bin/env python3
"""Mutation fuzzer for ``transform``: crashes, hangs, idempotence and include placement.

Seeds are the repository's own real-shaped CUDA (fixtures and examples), cut into windows
of a few lines; each input is a seed with a few mutations of the kinds that broke hipport
before: unbalanced ``<<<``/braces/comments/quotes, a comment header over broken code, CRLF
and lone ``\\r``, backslash continuations, stray non-UTF-8 bytes, 32-bit masks and CUDA
includes dropped in anywhere. Every input is converted twice under three option sets
(default, ``--rocm 6.3``, ``--launch-syntax hip --roc``) and sorted into:

* **crash** — ``transform`` raised (an ``EditConflict`` counts: the file would be an error);
* **hang** — one conversion took longer than ``--hang-seconds`` (interrupted by an alarm);
* **idempotence** — converting the output again changed it;
* **include** — an added ``#include <hip/hip_runtime.h>`` does not stand on a line of its own.

``python tools/fuzz.py -n 10000`` prints the counts per 10,000 inputs and the first few
failing inputs of each class (``--show``); the test suite runs a seeded few hundred
(``tests/test_fuzz.py``). Deterministic for a given ``--seed``.
"""

from __future__ import annotations

import argparse
import random
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE_GLOBS = ("fixtures/convert/*.cu", "fixtures/convert/*.cuh", "fixtures/convert/*.cpp",
                "examples/**/*.cu", "examples/**/*.cuh", "fixtures/deep/*.cu")
CLASSES = ("crash", "hang", "idempotence", "include")
INCLUDE = b"#include <hip/hip_runtime.h>"
#: Includes of the input that become INCLUDE where they stand.
RUNTIME_INCLUDES = (INCLUDE, b"#include <cuda_runtime.h>", b"#include <cuda.h>",
                    b'#include "cuda_runtime.h"', b'#include "cuda.h"')

#: Fragments that broke the parser or a rewriter before, inserted at random places.
FRAGMENTS = [
    b"<<<", b">>>", b"<<<g, b>>>(x);", b"k<<<1, 32, 0, s>>>(p);", b"{", b"}", b"(", b")",
    b"//", b"// header comment\n", b"/*", b"*/", b"\"", b"'", b"\\\n", b"\\\r\n", b"\r",
    b"\r\n", b"#include <cuda_runtime.h>\n", b"#include <cuda.h>\n", b"#include \"cublas_v2.h\"",
    b"#include <cub/cub.cuh>", b"#if", b"#ifdef X\n", b"#else\n", b"#endif\n", b"#define M(x) ",
    b"0xffffffff", b"__shfl_down_sync(0xffffffff, v, 16)", b"__ballot_sync(0xFFFFFFFFu, p)",
    b"__global__ void k(){}\n", b"cudaMalloc(&p, n);", b"cudaStream_t", b"cub::", b"template <",
    b"\xff", b"\xc3", b"\t", b";", b"\n\n", b"threadIdx.x & 31",
]


def seeds() -> list[bytes]:
    """The real-shaped sources the inputs are cut from."""
    found: list[bytes] = []
    for pattern in SOURCE_GLOBS:
        found += [p.read_bytes() for p in sorted(ROOT.glob(pattern))]
    if not found:
        raise SystemExit(f"fuzz: no seed sources under {ROOT}")
    return found


def make_input(rng: random.Random, sources: list[bytes], mutations: int = 6) -> bytes:
    """A window of a few lines of one source, then 1 to ``mutations`` mutations."""
    lines = rng.choice(sources).splitlines(keepends=True)
    start = rng.randrange(len(lines))
    data = b"".join(lines[start:start + rng.randint(1, 25)])
    for _ in range(rng.randint(1, mutations)):
        data = rng.choice(MUTATIONS)(rng, data)
    return data


def _at(rng: random.Random, data: bytes) -> int:
    return rng.randint(0, len(data))


def _insert(rng: random.Random, data: bytes) -> bytes:
    i = _at(rng, data)
    return data[:i] + rng.choice(FRAGMENTS) + data[i:]


def _delete(rng: random.Random, data: bytes) -> bytes:
    i = _at(rng, data)
    return data[:i] + data[i + rng.randint(1, 12):]


def _duplicate(rng: random.Random, data: bytes) -> bytes:
    i = _at(rng, data)
    j = min(len(data), i + rng.randint(1, 60))
    return data[:j] + data[i:j] + data[j:]


def _crlf(rng: random.Random, data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def _comment_header(rng: random.Random, data: bytes) -> bytes:
    return rng.choice([b"// header comment\n", b"/* licence */\n", b"// a\r\n"]) + data


def _truncate(rng: random.Random, data: bytes) -> bytes:
    return data[:_at(rng, data)]


MUTATIONS: list[Callable[[random.Random, bytes], bytes]] = [
    _insert, _insert, _insert, _delete, _duplicate, _crlf, _comment_header, _truncate,
]


class _Timeout(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001 - signal handler signature
    raise _Timeout


def option_sets():
    from hipport.options import Options
    from hipport.versions import parse_version

    return [Options(apply_fixes=True),
            Options(rocm=parse_version("6.3"), apply_fixes=True),
            Options(apply_fixes=True, launch_syntax="hip", roc=True)]


def classify(data: bytes, name: str, options, hang_seconds: float = 5.0) -> str | None:
    """The failure class of one input under one option set, or None when it is fine."""
    from hipport.pipeline import transform

    use_alarm = hasattr(signal, "setitimer")
    old = signal.signal(signal.SIGALRM, _alarm) if use_alarm else None
    try:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, hang_seconds)
        once = transform(data, name, options)[0]
        twice = transform(once, name, options)[0]
    except _Timeout:
        return "hang"
    except Exception:  # noqa: BLE001 - any exception is the finding
        return "crash"
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    if twice != once:
        return "idempotence"
    if _misplaced(once, (INCLUDE,)) > _misplaced(data, RUNTIME_INCLUDES):
        return "include"
    return None


def _misplaced(data: bytes, includes: tuple[bytes, ...]) -> int:
    """How many of ``includes`` do not start a line, or are not followed by a line end
    (an include the input already had mid-line is converted where it stands)."""
    count = 0
    for inc in includes:
        at = data.find(inc)
        while at != -1:
            after = data[at + len(inc):at + len(inc) + 2]
            own = (at == 0 or data[at - 1:at] == b"\n") and (
                after[:1] in (b"\n", b"") or after == b"\r\n")
            count += not own
            at = data.find(inc, at + 1)
    return count


def run(n: int, seed: int, hang_seconds: float = 5.0, show: int = 0,
        mutations: int = 6, out=sys.stdout) -> Counter[str]:
    """Fuzz ``n`` inputs; returns the count per failure class (each input counted once,
    under its first failing option set)."""
    rng = random.Random(seed)
    sources = seeds()
    options = option_sets()
    counts: Counter[str] = Counter()
    shown: Counter[str] = Counter()
    for _ in range(n):
        data = make_input(rng, sources, mutations)
        name = rng.choice(["a.cu", "b.cuh", "c.cpp"])
        for opts in options:
            kind = classify(data, name, opts, hang_seconds)
            if kind is not None:
                counts[kind] += 1
                if shown[kind] < show:
                    shown[kind] += 1
                    print(f"--- {kind} ({name}, launch={opts.launch_syntax}, rocm={opts.rocm}):"
                          f" {data!r}", file=out)
                break
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=10_000, help="inputs (default 10,000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hang-seconds", type=float, default=5.0)
    ap.add_argument("--show", type=int, default=3, help="failing inputs printed per class")
    ap.add_argument("--mutations", type=int, default=6, help="most mutations per input")
    args = ap.parse_args(argv)
    started = time.perf_counter()
    counts = run(args.n, args.seed, args.hang_seconds, args.show, args.mutations)
    took = time.perf_counter() - started
    scale = 10_000 / args.n
    print(f"inputs: {args.n} (seed {args.seed}, {took:.0f} s)")
    for kind in CLASSES:
        print(f"{kind:12} {counts[kind]:6}   per 10,000: {counts[kind] * scale:8.1f}")
    return 1 if sum(counts.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
