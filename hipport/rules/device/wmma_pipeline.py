"""HP304, HP305 — NVIDIA-only C++ device APIs: warp matrices (``nvcuda::wmma``) and
libcu++'s asynchronous copies and pipelines. Noted once per name (wmma: per function)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hipport import facts
from hipport.findings import Effort, Severity
from hipport.parse import Node, qualified_parts, text
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.rules.device.common import func_key, once

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class Wmma(SaysWhatItIs):
    """Warp matrix functions (`nvcuda::wmma`, `<mma.h>`)

    ## Why
    HIP has no warp-matrix API. The fragments also assume a 32-lane warp; AMD matrix cores
    (MFMA on CDNA, WMMA on RDNA3/4) are programmed through rocWMMA.

    ## Example
    ```cuda
    // before
    #include <mma.h>
    nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, half, nvcuda::wmma::row_major> a;
    // after
    #include <rocwmma/rocwmma.hpp>
    rocwmma::fragment<rocwmma::matrix_a, 16, 16, 16, rocwmma::float16_t, rocwmma::row_major> a;
    ```

    ## Fix
    Port to rocWMMA (same structure: fragment, load_matrix_sync, mma_sync,
    store_matrix_sync); check the supported tile shapes per GPU.
    """

    code = "HP304"
    slug = "wmma-rocwmma"
    severity = Severity.HIGH
    effort = Effort.LARGE


@REGISTRY.rule
class AsyncCopy(SaysWhatItIs):
    """Asynchronous copies and pipelines (`cuda::memcpy_async`, `cuda::pipeline`, `cuda::barrier`)

    ## Why
    libcu++'s asynchronous-copy pipeline, `cuda::barrier` and the `__pipeline_*`
    primitives have no HIP implementation; they compile only with NVIDIA's headers.

    ## Example
    ```cuda
    // before
    cuda::memcpy_async(block, smem, gmem, sizeof(float) * n, pipe);
    pipe.consumer_wait();
    // after
    for (int i = threadIdx.x; i < n; i += blockDim.x) smem[i] = gmem[i];
    __syncthreads();
    ```

    ## Fix
    Synchronous global→shared loads followed by `__syncthreads()`; double-buffer by
    hand if the overlap matters.
    """

    code = "HP305"
    slug = "async-copy-pipeline"
    severity = Severity.HIGH
    effort = Effort.MEDIUM


_PIPELINE_NAMES = frozenset({"__pipeline_memcpy_async", "__pipeline_commit", "__pipeline_wait_prior",
                             "__pipeline_arrive_on"})
_CUDA_ASYNC = {"memcpy_async", "pipeline", "make_pipeline", "pipeline_shared_state", "barrier",
               "pipeline_consumer_wait_prior", "pipeline_producer_commit"}
_NVCUDA = re.compile(r"\bnvcuda\b")
_INCLUDES = {
    "mma.h": (Wmma, "wmma-inc", "HIP has no warp-matrix (wmma) API", "include <rocwmma/rocwmma.hpp> and port to rocWMMA"),
    "cuda/pipeline": (AsyncCopy, "async-inc", "libcu++ pipelines have no HIP implementation", "synchronous copies + __syncthreads()"),
    "cuda/barrier": (AsyncCopy, "async-inc", "cuda::barrier has no HIP implementation", "__syncthreads() or a hand-written barrier"),
    "cuda_pipeline.h": (AsyncCopy, "async-inc", "the __pipeline_* primitives have no HIP implementation", "synchronous copies + __syncthreads()"),
    "cuda_pipeline_primitives.h": (AsyncCopy, "async-inc", "the __pipeline_* primitives have no HIP implementation", "synchronous copies + __syncthreads()"),
    "cuda_awbarrier.h": (AsyncCopy, "async-inc", "arrive/wait barriers have no HIP implementation", "__syncthreads()"),
}


@REGISTRY.visits("identifier", "type_identifier", "field_identifier", names=_PIPELINE_NAMES.__contains__,
                 codes=(AsyncCopy,))
def _pipeline_name(node: Node, ctx: "Context") -> None:
    name = text(ctx.src, node)
    if name in _PIPELINE_NAMES:
        once(ctx, f"pipe:{name}", AsyncCopy, node, f"`{name}` (asynchronous copy pipeline) has no HIP API",
             "copy global→shared synchronously and __syncthreads()")


@REGISTRY.visits("qualified_identifier", codes=(Wmma, AsyncCopy))
def _qualified(node: Node, ctx: "Context") -> None:
    if not facts.outermost_qualified(ctx, node):
        return
    parts = qualified_parts(ctx.src, node)
    if parts[0] in ("nvcuda", "wmma") and len(parts) > 1 \
            and not (parts[0] == "wmma" and _wmma_is_rocwmma(ctx)):  # once per function that uses it
        once(ctx, f"wmma:{func_key(ctx, node)}", Wmma, node, f"`{'::'.join(parts)}`: HIP has no warp-matrix (wmma) API",
             "port to rocWMMA (rocwmma::fragment, load_matrix_sync, mma_sync, store_matrix_sync)")
    elif parts[0] == "cuda" and len(parts) == 2 and parts[1] in _CUDA_ASYNC:
        once(ctx, f"async:{parts[1]}", AsyncCopy, node, f"`cuda::{parts[1]}` has no HIP implementation",
             "copy global→shared synchronously and __syncthreads(); double-buffer by hand")


_ROCWMMA_ALIAS = re.compile(rb"\bnamespace\s+wmma\s*=\s*(?:::)?rocwmma\s*;")


@dataclass
class _WmmaAlias:
    """Per file: whether ``wmma`` names rocWMMA where the HIP build compiles it."""

    rocwmma: bool | None = None


def _wmma_is_rocwmma(ctx: "Context") -> bool:
    """``namespace wmma = rocwmma;`` outside the branches a HIP build never compiles
    (llama.cpp's fattn-wmma-f16.cu: nvcuda::wmma for CUDA, rocwmma for HIP, one body):
    then ``wmma::fragment`` is rocWMMA's, not CUDA's."""
    state = ctx.state(_WmmaAlias)
    if state.rocwmma is None:
        state.rocwmma = any(not ctx.in_cuda_only_branch(m.start()) for m in _ROCWMMA_ALIAS.finditer(ctx.src))
    return state.rocwmma


@REGISTRY.visits("using_declaration", codes=(Wmma,))
def _using(node: Node, ctx: "Context") -> None:
    if _NVCUDA.search(text(ctx.src, node)):
        once(ctx, "wmma-ns", Wmma, node, f"`{text(ctx.src, node)}`: HIP has no warp-matrix (wmma) API",
             "port to rocWMMA")


@REGISTRY.visits("preproc_include", codes=(Wmma, AsyncCopy))
def _include(node: Node, ctx: "Context") -> None:
    path = node.child_by_field_name("path")
    if path is None:
        return
    header = text(ctx.src, path).strip('<>"')
    entry = _INCLUDES.get(header)
    if entry is not None:
        rule, key, why, fix = entry
        once(ctx, key, rule, node, f"`#include <{header}>`: {why}", fix)
