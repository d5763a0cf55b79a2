"""The rules stay linear on deeply nested input (issue #17, item 4).

tree-sitter finds ``Node.parent`` by descending from the root, so a rule that asks each
node for its parent, or climbs to the enclosing function, costs the nesting depth per
node: 200 KB of nested qualified names (``cub::cub::…``) took 64 s to scan. The inputs
are built here, at test time.
"""

from __future__ import annotations

import time

from hipport import parse
from hipport.options import Options
from hipport.pipeline import transform


def _cpu_seconds(src: bytes) -> float:
    start = time.process_time()
    transform(src, "nested.cu", Options())
    return time.process_time() - start


def test_nested_qualified_names_scan_in_linear_time() -> None:
    """200 KB of ``cub::`` took 64 s (two visitors asking each part for its parent); the
    bound is generous, and 4x the input must cost far less than the 16x of a square."""
    small = b"cub::" * 10_000 + b"x y;\n"
    large = b"cub::" * 40_000 + b"x y;\n"  # 200 KB
    transform(small, "warm.cu", Options())  # tables and grammar loaded outside the timing
    t_small = min(_cpu_seconds(small) for _ in range(2))
    t_large = min(_cpu_seconds(large) for _ in range(2))
    assert t_large < 20.0
    assert t_large < 10 * max(t_small, 0.02)


def test_nested_qualified_names_still_found() -> None:
    """The library rule still reports the outermost name, once (HP409 for CUB)."""
    _, findings, _ = transform(b"void f() { cub::cub::cub::DeviceReduce::Sum(); }\n", "t.cu", Options())
    assert [f.code for f in findings if f.code.startswith("HP4")] == ["HP409"]


def test_device_rules_do_not_climb_to_the_enclosing_function(monkeypatch) -> None:
    """Calls deep inside a kernel (``clock64()`` in nested blocks, a device-side launch)
    learn their function from the walk, not by climbing ``Node.parent``: the climbing
    helper is never called for the file's own nodes."""
    climbs = []
    original = parse.ancestors
    monkeypatch.setattr(parse, "ancestors", lambda node: climbs.append(node) or original(node))
    depth = 400
    src = (b"__global__ void child() {}\n__global__ void k() "
           + b"{ clock64(); child<<<1, 1>>>(); cudaDeviceSynchronize();\n" * depth + b"}" * depth + b"\n")
    _, findings, _ = transform(src, "k.cu", Options())
    assert climbs == []
    codes = [f.code for f in findings]
    assert codes.count("HP319") == 1  # clock64 in device code: once per file
    assert codes.count("HP302") == 2 * depth  # each launch and each cudaDeviceSynchronize
