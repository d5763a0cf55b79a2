"""Host-side gaps the released HIP headers showed: what CUDA's runtime header brings along.

CUDA's ``cuda_runtime.h`` (which nvcc also includes into every ``.cu`` file) includes the
C string and assert headers and defines the callback calling-convention macro
``CUDART_CB``. HIP 7's ``hip_runtime.h`` does none of it: ``memset`` no longer resolves on
the host ("no matching function", only HIP's device overload is seen), ``assert`` is
undeclared and ``void CUDART_CB f(...)`` does not parse. Facts: ``mappings/released_headers.toml`` ``[host_header]``, ``[empty_macros]``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hipport.context import Context
from hipport.edits import Edit
from hipport.findings import Effort, Severity
from hipport.facts import is_device_only_code
from hipport.files import read_bytes
from hipport.options import Options
from hipport.preprocessor.includers import HEADER_SUFFIXES, Includers
from hipport.parse import Node, call_name
from hipport.registry import any_word_of
from hipport.rewrite.includes import newline_of, top_include_place
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.rules.released_headers.common import raw_data as _data
from hipport.rules.warp.logical import defer_to_includers

if TYPE_CHECKING:
    from hipport.mapping import MappingView


@REGISTRY.rule
class HostHeaderNotIncluded(SaysWhatItIs):
    """A C string function, `assert` or `isnan` used without its header, which CUDA's runtime header brought

    ## Why
    `cuda_runtime.h` includes `<string.h>` and `<assert.h>`, so CUDA code calls `memset`,
    `strlen` or `assert` with no include of its own (and NVRTC declares `assert` itself).
    HIP 7's `hip_runtime.h` (7.1.25424) includes neither: host calls fail ("no matching
    function for call to 'memset'": only HIP's device overload is declared; "use of
    undeclared identifier 'assert'"). HIP 6.2's still did. It also declares host overloads
    of `isnan`, `isinf` and `isfinite` in the global namespace, which HIP's headers (6.2 and
    7.1) declare for device code only: a host call with no `<math.h>` (`<cmath>` declares
    `std::isnan` only) is "no matching function for call to 'isnan'".

    ## Example
    ```cuda
    #include <cuda_runtime.h>
    void clear(char* b, int n) { memset(b, 0, n); }
    ```
    becomes
    ```cuda
    #include <hip/hip_runtime.h>
    #include <cstring>
    void clear(char* b, int n) { memset(b, 0, n); }
    ```

    ## Fix
    `hipport convert` adds `#include <cstring>` (`<cassert>`, `<math.h>`; `<string.h>`,
    `<assert.h>` in a `.c` file) after the file's first include. A hipRTC source has no standard
    headers and no `assert` (NVRTC's is built in): define it there.
    """

    code = "HP334"
    slug = "host-header-not-included"
    severity = Severity.HIGH
    effort = Effort.NONE


@REGISTRY.rule
class CallingConventionMacro(SaysWhatItIs):
    """CUDA's callback calling-convention macro, which HIP does not define

    ## Why
    `CUDART_CB` (and the driver's `CUDA_CB`) is `__stdcall` on Windows and empty elsewhere;
    CUDA's callback types carry it. HIP's callback types (`hipStreamCallback_t`,
    `hipHostFn_t`) have no calling convention, and no HIP header defines the macro, so
    `void CUDART_CB f(...)` does not parse.

    ## Example
    ```cuda
    void CUDART_CB done(cudaStream_t s, cudaError_t e, void* p) { }
    ```
    becomes
    ```cuda
    void done(hipStream_t s, hipError_t e, void* p) { }
    ```

    ## Fix
    `hipport convert` removes the macro: HIP's callback types are plain function pointers.
    """

    code = "HP335"
    slug = "calling-convention-macro"
    severity = Severity.HIGH
    effort = Effort.NONE


_SOURCES = {name: src for src in _data()["host_header"]["sources"] for name in src["functions"]}
_STRING_FUNCTIONS = any_word_of(tuple(_SOURCES))
_MACROS = any_word_of(_data()["empty_macros"]["names"])


@dataclass
class _StringHeader:
    """Per file: HP334 is reported once per header (one include fixes every call); the
    file's includes are read, and whether the runtime header is their sure source worked
    out, once."""

    reported: set[str] = field(default_factory=set)
    includes: frozenset[str] | None = None
    implied: bool = False


@REGISTRY.visits("call_expression", names=_STRING_FUNCTIONS, codes=(HostHeaderNotIncluded,))
def _string_call(node: Node, ctx: Context) -> None:
    state = ctx.state(_StringHeader)
    name = call_name(ctx.src, node)
    source = _SOURCES.get(name or "")
    if source is None or ctx.rocm[0] not in source.get("majors", _data()["host_header"]["majors"]) \
            or source["header"] in state.reported:
        return
    if source.get("host_only") and is_device_only_code(ctx, node):
        return  # HIP declares it for device code: only a host call fails
    header = source["c_header"] if Path(ctx.path).suffix.lower() == ".c" else source["header"]
    if state.includes is None:
        state.includes = frozenset(m.group(1).decode("utf-8", "replace") for m in _INCLUDE.finditer(ctx.src))
        state.implied = _runtime_implied(ctx, state.includes)
    if source["header"] in state.includes or source["c_header"] in state.includes or not state.implied:
        return  # the file includes the header itself (either spelling), or it may come along
    state.reported.add(source["header"])  # once per file: one include fixes every call
    first = next((c for c in ctx.tree.root_node.children if c.type == "preproc_include"), None)
    fix = [] if ctx.in_macro_body else [_after(ctx, first, header) if first is not None else _at_top(ctx, header)]
    if "what" in source:
        reported = ctx.report(HostHeaderNotIncluded, node, f"`{name}` on the host needs <{source['c_header']}>: "
                              f"CUDA's runtime header {source['what']}", f"#include <{header}>", fix=fix)
    else:
        reported = ctx.report(HostHeaderNotIncluded, node,
               f"`{name}` is declared by <{source['c_header']}>, which CUDA's runtime header included"
               + (" (and NVRTC declares itself)" if name == "assert" else "")
               + f" and HIP {ctx.rocm[0]}'s hip_runtime.h does not"
               + ("; a hipRTC source gets neither: define it there" if name == "assert" else ""),
               f"#include <{header}>", fix=fix)
    if reported and ctx.path.endswith(HEADER_SUFFIXES):
        defer_to_includers(ctx, BROUGHT + source["header"])  # an includer's earlier include may bring it


#: The name of an HP334 of a header left to its includers (``brought_by_includers``), then the header.
BROUGHT = "<brought>"
#: How many levels of header includers ``brought_by_includers`` asks.
MAX_LEVELS = 4


def brought_by_includers(header: str, wanted: str, includers: Includers, options: Options,
                         view: MappingView) -> bool:
    """Every file of the run that includes ``header`` (where a HIP build compiles the
    include) has, before that include, one that may bring the C header ``wanted`` names
    along: ``wanted`` itself (either spelling), a project header or a library's that is no
    standard and no CUDA header: DeepSpeed's cuda_linear/utils_gmem.cuh includes <assert.h>
    just before ptx_cp.async.cuh, whose ``assert`` HP334 found in the header alone. An
    includer that is a header with nothing such before asks its own includers, up to
    ``MAX_LEVELS``; a header no file of the run includes keeps the finding. Only the
    includes a HIP build compiles count: not a ``// #include``, nor one under ``#ifndef
    USE_ROCM``."""
    from hipport.preprocessor import model
    from hipport.preprocessor.directives import directive_starts

    source = next(s for s in _data()["host_header"]["sources"] if s["header"] == wanted)

    def brought(path: str, target: str, level: int) -> bool:
        src = read_bytes(Path(path))
        base = os.path.basename(target).encode()
        branches = None
        for line, at, _, directive in directive_starts(src):
            m = _INCLUDE.match(src, at) if directive == b"include" else None
            if m is None:
                continue
            branches = branches or model(src, path, options)
            if branches.never_compiled(line):
                continue
            name = m.group(1).decode("utf-8", "replace")
            if os.path.basename(name).encode() == base:
                break  # the include of ``target``: what came before decides
            quoted = src[m.end(1):m.end(1) + 1] == b'"'
            if name in (source["header"], source["c_header"]) or quoted \
                    or (name not in _STANDARD and name not in _RUNTIME_HEADERS and view.header(name) is None):
                return True
        if level >= MAX_LEVELS or not path.endswith(HEADER_SUFFIXES):
            return False
        ups = includers.of(path)
        return bool(ups) and all(brought(u, path, level + 1) for u in ups)

    ups = includers.of(header)
    return bool(ups) and all(brought(u, header, 1) for u in ups)


def _runtime_implied(ctx: Context, includes: frozenset[str]) -> bool:
    """The string header reached the file only through CUDA's runtime header: the file
    includes that (or cuda.h) itself, or it is a ``.cu`` file (nvcc adds it), and every
    other include is a standard C or C++ header or a CUDA header hipport maps. Any other
    include (a project header, a library's) may bring the string header along: not sure,
    so nothing is said (cuda-samples' helper_functions.h includes <assert.h>, torch's
    headers give vLLM's kernels theirs)."""
    runtime = any(path in _RUNTIME_HEADERS for path in includes)
    if not runtime and Path(ctx.path).suffix.lower() != ".cu":
        return False
    return all(path in _STANDARD or ctx.view.header(path) is not None for path in includes)


_INCLUDE = re.compile(rb'#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]')
_RUNTIME_HEADERS = frozenset(_data()["host_header"]["runtime"])
_STANDARD = frozenset(_data()["host_header"]["standard"])


def _at_top(ctx: Context, header: str) -> Edit:
    """An insertion of ``#include <header>`` in a file with no include: where the added
    hip_runtime.h goes (that one first, its edit leads the list). Without it, the next run
    would put it after the hip_runtime.h this run added: two runs, two outputs."""
    at, before = top_include_place(ctx)
    return Edit(at, at, before + f"#include <{header}>".encode() + newline_of(ctx.src))


def _after(ctx: Context, include: Node, header: str) -> Edit:
    """An insertion of ``#include <header>`` on the line after ``include``."""
    src = ctx.src
    end = src.find(b"\n", include.start_byte)
    end = len(src) if end < 0 else end + 1
    newline = b"\r\n" if src[end - 2:end] == b"\r\n" else b"\n"
    return Edit(end, end, (b"" if src[end - 1:end] == b"\n" else newline) + f"#include <{header}>".encode() + newline)


@REGISTRY.visits("identifier", "type_identifier", names=_MACROS, codes=(CallingConventionMacro,))
def _calling_convention(node: Node, ctx: Context) -> None:
    name = ctx.text(node)
    if name not in _data()["empty_macros"]["names"]:
        return
    end = node.end_byte
    while end < len(ctx.src) and ctx.src[end:end + 1] in (b" ", b"\t"):
        end += 1
    ctx.report(CallingConventionMacro, node, f"`{name}` is CUDA's callback calling convention; HIP's "
               "callback types have none and no HIP header defines it", "remove it",
               fix=[Edit(node.start_byte, end, b"")])


@REGISTRY.rule
class CudaTypedefMissing(SaysWhatItIs):
    """A fixed-width typedef of CUDA's `cuda.h` that HIP does not have

    ## Why
    `cuda.h` declares `typedef uint32_t cuuint32_t;` and `typedef uint64_t cuuint64_t;`
    (the tensor-map and driver APIs use them). No HIP header declares them and no mapping
    table lists them, so the converted code stops at "unknown type name".

    ## Example
    ```cuda
    cuuint64_t dims[2] = {1024, 1024};
    ```
    becomes
    ```cuda
    uint64_t dims[2] = {1024, 1024};
    ```

    ## Fix
    `hipport convert` writes the standard type the typedef names.
    """

    code = "HP336"
    slug = "cuda-typedef-missing"
    severity = Severity.MEDIUM
    effort = Effort.NONE


_TYPEDEFS = any_word_of(_data()["typedefs"])


@REGISTRY.visits("type_identifier", names=_TYPEDEFS, codes=(CudaTypedefMissing,))
def _typedef(node: Node, ctx: Context) -> None:
    name = ctx.text(node)
    target = _data()["typedefs"].get(name)
    if target is None or ctx.branches.provides(name):
        return
    ctx.report(CudaTypedefMissing, node, f"`{name}` is cuda.h's typedef of `{target}`; HIP has none",
               target, fix=[Edit(node.start_byte, node.end_byte, target.encode())])
