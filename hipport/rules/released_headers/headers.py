"""HP333: an include of a CUDA header HIP has no counterpart for."""

from __future__ import annotations

from dataclasses import dataclass, field

from hipport.context import Context
from hipport.findings import Effort, Severity
from hipport.rules.libraries.matching import catalogue
from hipport.parse import Node
from hipport.preprocessor.includers import project_include
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.rules.released_headers.common import data


@REGISTRY.rule
class HeaderWithoutCounterpart(SaysWhatItIs):
    """A CUDA header HIP has no counterpart for

    ## Why
    `mappings/headers.toml` lists CUDA headers with no HIP (or ROCm library) header:
    EGL, VDPAU and Direct3D interop, `cuda_occupancy.h`, `cufftw.h`, NVML, libcu++. The
    include is left as written and the compile stops there ("file not found"). Reported at
    the include when no other rule already explains that line or that header (wmma,
    pipelines, cuDNN… have their own). A quoted include the build finds in the project (beside
    the file or in its `-I`) is the project's own header, even in a folder named `cuda/`,
    unless the tables or the library catalogue name that header (a vendored libcu++).

    ## Example

    ```cuda
    #include <cudaEGL.h>
    ```
    becomes
    ```cuda
    // EGL interop has no HIP counterpart: keep this code path CUDA-only
    #ifndef __HIP_PLATFORM_AMD__
    #include <cudaEGL.h>
    #endif
    ```

    ## Fix
    Keep the code that needs the header CUDA-only behind `#ifndef __HIP_PLATFORM_AMD__`,
    or port that part to the ROCm library that covers it, if one does.
    """

    code = "HP333"
    slug = "header-without-counterpart"
    severity = Severity.HIGH
    effort = Effort.MEDIUM


@dataclass
class _Unmatched:
    """Per file: the includes of headers without a counterpart, (include, header, what the
    tables say), reported once the walk is over."""

    includes: list[tuple] = field(default_factory=list)


@REGISTRY.visits("preproc_include")
def _include(node: Node, ctx: Context) -> None:
    path = node.child_by_field_name("path")
    if path is None or path.type not in ("system_lib_string", "string_literal"):
        return
    header = ctx.text(path)[1:-1].strip()
    res = ctx.view.header(header)
    if res is not None and res.action == "none" and header not in data().headers_elsewhere \
            and not (path.type == "string_literal" and _own_header(ctx, header)):
        ctx.state(_Unmatched).includes.append((node, header, res))


def _own_header(ctx: Context, header: str) -> bool:
    """``#include "cuda/q_matrix.cuh"`` that the build's search finds beside the includer or
    in its ``-I``: the project's own header in a folder it named ``cuda/`` (exllamav2's
    extension, auto-gptq's copy of it), not libcu++. Only for a name the tables know by a
    prefix alone (``cuda/``): a header they name exactly (``cuda/pipeline``) or one of the
    library catalogue's (``cuda/std/…``, ``cutlass/…``) stays the library's, even as a
    vendored copy, whose include the search finds too. So does a name without an extension
    (``cuda/ptx``, ``cuda/cmath``, ``cuda/warp``): libcu++ names its public headers as the
    standard library does, and the tables cannot list every release's; a project's own
    headers carry one (``.cuh``, ``.h``)."""
    if header in ctx.view.table.headers or any(lib.matches_include(header) for lib in catalogue().libraries) \
            or "." not in header.rsplit("/", 1)[-1]:
        return False
    return project_include(ctx.path, header, ctx.options.include_dirs) is not None


@REGISTRY.visits_file(codes=(HeaderWithoutCounterpart,))
def _report_headers(ctx: Context) -> None:
    """After the walk, so that a line another rule already explains is left to it, and so
    is every other include of the library that line includes: the library rules report
    once per file (HP401 at the first CUTLASS include; DeepSpeed's evoformer headers then
    had one HP333 for each of their dozen other cutlass/ includes)."""
    explained = {f.line for f in ctx.findings}
    includes = ctx.state(_Unmatched).includes
    lines = [ctx.position(node.start_byte)[0] for node, _, _ in includes]
    libraries = {res.library for (_, _, res), line in zip(includes, lines) if line in explained}
    for (node, header, res), line in zip(includes, lines):
        if line not in explained and res.library not in libraries:
            ctx.report(HeaderWithoutCounterpart, node, f"`#include <{header}>`: {res.library} has "
                       f"no HIP counterpart" + (f" ({res.note})" if res.note else ""),
                       "keep this code CUDA-only (#ifndef __HIP_PLATFORM_AMD__) or port it")
