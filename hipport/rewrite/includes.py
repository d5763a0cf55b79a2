"""Rewrite ``#include`` paths, merge duplicates, and add ``hip/hip_runtime.h`` where nvcc
would have included ``cuda_runtime.h`` implicitly (``.cu``/``.cuh``), or where another
source calls the HIP runtime after conversion and includes no HIP header.

Only the path between the delimiters changes; ``<>`` vs ``""``, trailing comments and
line endings stay. Two CUDA headers that map to one HIP header (``cuda.h`` and
``cuda_runtime.h`` both → ``hip/hip_runtime.h``) would include it twice: the second
include in the same preprocessor branch is removed. Includes in different ``#if``
branches are independent.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from hipport.context import Context
from hipport.edits import Edit
from hipport.parse import Node, starts_line
from hipport.rewrite import REGISTRY
from hipport.rules import REGISTRY as RULES
from hipport.rules.libraries import counterparts  # noqa: F401  (registers HP409)

HIP_RUNTIME = "hip/hip_runtime.h"
HIP_RUNTIME_INCLUDE = b"#include <" + HIP_RUNTIME.encode() + b">"
#: nvcc includes cuda_runtime.h in every translation unit it compiles as CUDA; hipcc
#: does not, so these files get an explicit include when they use HIP.
IMPLICIT_RUNTIME_SUFFIXES = (".cu", ".cuh")
_DEVICE_MARKERS = (b"__global__", b"__device__", b"__shared__", b"threadIdx", b"<<<", b"blockIdx")
#: HP409 (CUB → hipCUB): also reported where an include of a bundled copy is routed
_LIBRARY_ROUTE = RULES.rules["HP409"]
_PROJECT_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"', re.M)


@dataclass
class _Includes:
    """Per file: (branch id, header) pairs seen so far, where hip_runtime.h and the first
    other HIP header are included (None: not yet), the includes read from the bytes
    (start, end, the edits of their own rewrite), and the bundled copies it includes."""

    seen: set[tuple[int, str]] = field(default_factory=set)
    read_from_bytes: list[tuple[int, int, frozenset]] = field(default_factory=list)
    runtime_at: int | None = None
    hip_header_at: int | None = None
    bundled: set[str] = field(default_factory=set)  # bundled copies whose include was reported


def _included(ctx: Context) -> set[tuple[int, str]]:
    """(branch id, header) pairs seen so far in this file."""
    return ctx.state(_Includes).seen


@REGISTRY.visits("preproc_include")
def rewrite_include(node: Node, ctx: Context) -> None:
    path = node.child_by_field_name("path")
    before = len(ctx.edits)
    if path is not None and path.type in ("system_lib_string", "string_literal"):
        _rewrite(ctx, node, path.start_byte + 1, path.end_byte - 1, node.end_byte)
    elif node.has_error and (m := _PATH.match(ctx.src, node.start_byte)) is not None:
        group = 1 if m.start(1) != -1 else 2  # extra tokens made the parser lose the path
        _rewrite(ctx, node, m.start(group), m.end(group), node.end_byte)
    line_end = ctx.src.find(b"\n", node.start_byte)
    end = len(ctx.src) if line_end == -1 else line_end + 1
    if (node.has_error or node.end_byte != end) and starts_line(ctx.src, node.start_byte):
        # Tokens after a broken path (``#include<>,cudaStream_t``, ``#include<>*x``), in
        # the node or after it on its line, are the directive's too, as in an include read
        # from the bytes: not renamed (found by tools/fuzz.py: the first run read that line
        # as loose tokens, the second as this include).
        ctx.state(_Includes).read_from_bytes.append(
            (node.start_byte, end, frozenset(ctx.edits[before:])))


#: The path of an include read from the bytes: ``<...>`` or ``"..."`` after ``#include``.
_PATH = re.compile(rb'#[ \t]*include[ \t]*(?:<([^>\n]*)>|"([^"\n]*)")')


@REGISTRY.visits("#include")
def rewrite_include_in_error(node: Node, ctx: Context) -> None:
    """An ``#include`` the parser could only recover as loose tokens inside an ERROR node
    (unbalanced code before it, no newline after it): still an include to convert, if it
    starts its line. The path is read from the bytes: the parser may have taken
    ``<cuda.h>`` for comparisons (``< cuda.h >``), which it reads as a path only once a
    conversion has changed the code before it."""
    if node.parent is None or node.parent.type != "ERROR":
        return
    m = _PATH.match(ctx.src, node.start_byte)
    if m is not None and starts_line(ctx.src, node.start_byte):
        group = 1 if m.start(1) != -1 else 2
        line_end = ctx.src.find(b"\n", m.end())
        end = len(ctx.src) if line_end == -1 else line_end + 1
        before = len(ctx.edits)
        _rewrite(ctx, node, m.start(group), m.end(group), end)
        ctx.state(_Includes).read_from_bytes.append((node.start_byte, end, frozenset(ctx.edits[before:])))


def _drop_edits_inside(ctx: Context) -> None:
    """An include read from the bytes is a directive, not code: renames the walk made in
    it (``cuComplex`` of ``<cuComplex.h>`` taken for a type) are dropped, as they would
    collide with the include's own rewrite, or rename a path a parsed include keeps."""
    for start, end, own in ctx.state(_Includes).read_from_bytes:
        ctx.edits[:] = [e for e in ctx.edits if e in own or not (start <= e.start and e.end <= end)]


def _rewrite(ctx: Context, node: Node, inner_start: int, inner_end: int, end: int) -> None:
    """Rewrite the include starting at ``node`` whose path (between its delimiters) is
    ``src[inner_start:inner_end]``; ``end`` is where the whole directive (with its
    newline) ends, for removing a duplicate."""
    if not starts_line(ctx.src, node.start_byte):
        return  # not a directive (parse.starts_line): left as text, neither converted nor counted
    header = ctx.src[inner_start:inner_end].decode("utf-8", "replace").strip()
    if header.endswith(".cu") and ctx.options.rename:  # x.cu is written as x.hip
        at = ctx.src.rindex(b".cu", inner_start, inner_end)
        ctx.edit(at, at + 3, ".hip")
        ctx.rewrites += 1
        return
    copy = _bundled_copy(ctx, header) if ctx.options.bundled_copies else None
    res = ctx.view.header(copy[1] if copy is not None else header)
    if copy is not None and res is not None and res.apply and res.action == "map" and res.target \
            and copy[0] not in (routed := ctx.state(_Includes).bundled):
        routed.add(copy[0])  # one finding per copy and file: the other includes merge into the first
        ctx.report(_LIBRARY_ROUTE, node, f"{header}: a file of the tree's own copy {copy[0]}, which builds for "
                   f"NVIDIA GPUs only; included as <{res.target}> ({res.library}), its ROCm port",
                   f"delete {copy[0]}: convert leaves it as it is, and nothing includes it once converted")
    seen = _included(ctx)
    branch = _branch(node)
    _note_hip_include(ctx, node, res.target if res is not None and res.apply and res.action == "map" else header)
    if res is None or not res.apply:
        seen.add((branch, header))
        return
    if res.action == "drop":
        ctx.edit(node.start_byte, end, b"")
        ctx.rewrites += 1
        return
    if res.action != "map" or not res.target:
        seen.add((branch, header))
        return
    if (branch, res.target) in seen:
        ctx.edit(node.start_byte, end, b"")  # already included in this branch
    elif res.target != header:
        ctx.edit(inner_start, inner_end, res.target)
    seen.add((branch, res.target))
    ctx.rewrites += 1


def _bundled_copy(ctx: Context, header: str) -> tuple[str, str] | None:
    """(the include's path to the copy, the path as the library's own) when ``header`` is a
    file of a bundled library copy of the run (``Options.bundled_copies``):
    ``src/acc/cuda/cub/device/device_scan.cuh`` in relion, whose copy is
    ``…/relion/src/acc/cuda/cub``, is CUB's ``cub/device/device_scan.cuh``. The path is
    matched by its last components, wherever the build's ``-I`` points."""
    parts = header.split("/")
    for copy in ctx.options.bundled_copies:
        root = os.path.basename(copy)
        if root not in parts[:-1]:
            continue
        at = len(parts) - 2 - parts[:-1][::-1].index(root)
        before = [p for p in parts[:at] if p not in ("", ".", "..")]
        if before and os.path.normpath(copy).split(os.sep)[-1 - len(before):-1] != before:
            continue
        if os.path.isfile(os.path.join(copy, *parts[at + 1:])):
            return "/".join(parts[:at + 1]), "/".join(parts[at:])
    return None


def _branch(node: Node) -> int:
    """The preprocessor branch (or file) an include belongs to, looking through ERROR nodes."""
    parent = node.parent
    while parent is not None and parent.type in ("ERROR", "preproc_include"):
        parent = parent.parent
    return parent.id if parent is not None else 0


def _note_hip_include(ctx: Context, node: Node, header: str) -> None:
    """Remember where hip_runtime.h, and the first other HIP header, are included."""
    state = ctx.state(_Includes)
    if header == HIP_RUNTIME:
        if state.runtime_at is None:
            state.runtime_at = node.start_byte
    elif header.startswith("hip"):
        if state.hip_header_at is None:
            state.hip_header_at = node.start_byte


@REGISTRY.visits_file
def add_hip_runtime(ctx: Context) -> None:
    """Insert ``#include <hip/hip_runtime.h>`` once, before the first top-level include.

    nvcc includes cuda_runtime.h before anything else, so CUDA headers may be included in
    any order; HIP headers such as hip_cooperative_groups.h need hip_runtime.h first. A
    file that includes hip_runtime.h only after another HIP header gets it at the top too
    (the later include is then harmless).
    """
    state = ctx.state(_Includes)
    if state.read_from_bytes:
        _drop_edits_inside(ctx)
    runtime_at, hip_header_at = state.runtime_at, state.hip_header_at
    if not ctx.path.lower().endswith(IMPLICIT_RUNTIME_SUFFIXES):
        # Another source (.cpp, .h …) that calls the CUDA runtime got it from an include
        # hipport does not see (a project header, or nvcc -x cu): it gets hip_runtime.h
        # when it now calls the HIP runtime and includes no HIP header itself.
        if runtime_at is not None or hip_header_at is not None or not _uses_hip_runtime(ctx):
            return
    elif runtime_at is not None and (hip_header_at is None or runtime_at < hip_header_at):
        return
    if ctx.rewrites == 0 and not any(m in ctx.src for m in _DEVICE_MARKERS) and not (
            ctx.path.lower().endswith(".cu") and _PROJECT_INCLUDE.search(ctx.src)):
        return  # a .cu whose CUDA is in the project headers it includes (OpenCV's color.cu,
        # all OPENCV_CUDA macros) still lost nvcc's implicit cuda_runtime.h: it gets it too
    newline = newline_of(ctx.src)
    at, before = top_include_place(ctx)
    if runtime_at is not None and at >= runtime_at:
        return  # the first place it could go is the existing include (the HIP header
        # before it sits in an #if branch): a second copy there would add nothing
    if runtime_at is None and ctx.tree.root_node.has_error and HIP_RUNTIME_INCLUDE in ctx.src:
        return  # broken code the parser could not read the include out of: the bytes say
        # it is there, and adding another would make every later run add one more
    if any(e.start < at < e.end for e in ctx.edits):
        at, before = 0, b""  # inside another rewrite (broken code): the file's first line
    # First in the list: among insertions at the same offset (a launch rewrite at the
    # first byte of the file) the include must come before everything else.
    ctx.edits.insert(0, Edit(at, at, before + b"#include <" + HIP_RUNTIME.encode() + b">" + newline))
    ctx.rewrites += 1


def newline_of(src: bytes) -> bytes:
    """The line ending an added line gets: CRLF when the file has any, else LF."""
    return b"\r\n" if b"\r\n" in src else b"\n"


def top_include_place(ctx: Context) -> tuple[int, bytes]:
    """Where an include added at the top of the file goes, and what comes before it there
    (a newline, or nothing): the place of the added hip_runtime.h, which another include
    added for a file that has none (HP334's <cstring>) shares, so that both are added on
    the first run instead of one per run."""
    at, before = _own_line(ctx, _insertion_point(ctx), newline_of(ctx.src))
    return (at if before else _unspliced(ctx.src, at)), before


def _own_line(ctx: Context, at: int, newline: bytes) -> tuple[int, bytes]:
    """Where the include goes so that it stands on a line of its own, and what must come
    before it there (a newline, or nothing).

    The parser may put ``at`` anywhere in broken code: at the end of a ``//`` comment
    (the include would be commented out, and added again by every later run), between
    ``\r`` and ``\n``, or after indentation. Only comments and blanks precede ``at`` on
    its line, so the start of that line is the place, unless only blanks follow ``at``
    there (then: the next line), the line starts inside a block comment begun earlier
    (then: a newline at ``at``) or ``at`` ends a file with no final newline (then: a
    newline first).
    """
    src = ctx.src
    start = src.rfind(b"\n", 0, at) + 1
    if not src[start:at].strip(b" \t\f\v\r"):
        return start, b""
    end = src.find(b"\n", at)
    if end != -1 and not src[at:end].strip(b" \t\f\v\r"):
        return end + 1, b""  # at the end of a comment line: the next line
    if at == len(src):
        return at, newline
    node = ctx.tree.root_node.descendant_for_byte_range(start, start)
    if node is not None and node.type == "comment" and node.start_byte < start:
        return at, newline
    return start, b""


def _unspliced(src: bytes, at: int) -> int:
    """The start of the logical line that line start ``at`` is part of: after a line
    ending in a backslash, an include added at ``at`` would continue that line (no
    directive), and push what stood there onto a line of its own for the next run."""
    while at > 0 and src[max(0, at - 3):at].rstrip(b"\r\n").endswith(b"\\"):
        at = src.rfind(b"\n", 0, at - 1) + 1
    return at


#: A rename to one of these spellings is a call of the HIP runtime API (hipMalloc,
#: hipStream_t, hipLaunchKernelGGL); the math libraries' names (hipblas…, hipfft…) are not.
_HIP_RUNTIME_NAME = re.compile(rb"^hip[A-Z]")


def _uses_hip_runtime(ctx: Context) -> bool:
    return any(e.start != e.end and _HIP_RUNTIME_NAME.match(e.text) for e in ctx.edits)


def _insertion_point(ctx: Context) -> int:
    """Before the first top-level ``#include`` (one that starts its line: the parser also
    reads one out of the middle of a line of broken code, and the line start before that
    is inside the broken statement, whose parse a new line there changes); else after a header guard or ``#pragma
    once``; else before the first code (after the leading comment block)."""
    root = ctx.tree.root_node
    children = [c for c in root.children]
    for c in children:
        if c.type == "preproc_include" and starts_line(ctx.src, c.start_byte):
            return c.start_byte
    first = next((c for c in children if c.type != "comment"), None)
    if first is None:
        return len(ctx.src)
    if first.type == "preproc_ifdef" and first.children[0].type == "#ifndef":
        inner = [c for c in first.children[2:] if c.type != "comment"]
        for c in inner:
            if c.type == "preproc_include":
                return c.start_byte
        if inner and inner[0].type == "preproc_def":
            return inner[0].end_byte
    if first.type == "preproc_call" and ctx.text(first).split()[:2] == ["#pragma", "once"]:
        return first.end_byte
    return first.start_byte
