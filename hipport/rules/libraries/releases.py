"""HP410, HP412–HP414 — API uses whose risk depends on the ROCm release or differs from
CUDA's: hipCUB removals, hipBLAS V2, hipSOLVER lwork units, hipSPARSE SpSM_solve.

Pages only: the catalogue (``mappings/libraries.toml``) says what names each library,
and ``matching`` reports it."""

from __future__ import annotations

from hipport.findings import Effort, Severity
from hipport.rules import REGISTRY, SaysWhatItIs


@REGISTRY.rule
class HipcubRemoved(SaysWhatItIs):
    """hipCUB APIs removed in ROCm 7.x

    ## Why
    hipCUB 4.0 (ROCm 7.0) removed `AsmThreadLoad`/`AsmThreadStore` and
    `BlockAdjacentDifference::FlagHeads/FlagTails/FlagHeadsAndTails` (as CCCL did);
    hipCUB 4.1 (ROCm 7.1) removed `TexRefInputIterator`.

    ## Example
    ```cuda
    // before
    BlockAdjDiff(temp).FlagHeads(flags, items, cub::Inequality());
    // after
    BlockDiscontinuity(temp).FlagHeads(flags, items, cub::Inequality());
    ```

    ## Fix
    Use `BlockDiscontinuity` for head/tail flags, plain loads and stores instead of
    `AsmThreadLoad`/`AsmThreadStore`, and a texture object or a pointer iterator instead of
    `TexRefInputIterator`.
    """

    code = "HP410"
    slug = "hipcub-removed-api"
    severity = Severity.HIGH
    effort = Effort.SMALL
    rocm_min = (7, 0, 0)


@REGISTRY.rule
class HipblasV2(SaysWhatItIs):
    """hipBLAS V2 types need `-DHIPBLAS_V2` before ROCm 7.0

    ## Why
    cuBLAS code uses `cudaDataType` and `cublasComputeType_t`; hipport writes the hipBLAS
    V2 names (`hipDataType`, `hipblasComputeType_t`). They are the only API from hipBLAS
    3.0 (ROCm 7.0); on 6.x they are used by the `*Ex` functions only when `HIPBLAS_V2` is
    defined.

    ## Example
    ```cuda
    // before (targeting 6.3)
    cublasGemmEx(h, ta, tb, m, n, k, &a, A, CUDA_R_16F, lda, ...);
    // after: same call, built with -DHIPBLAS_V2
    ```

    ## Fix
    On ROCm 6.x add `-DHIPBLAS_V2` to the build (or define it before including hipBLAS);
    from ROCm 7.0 nothing is needed.
    """

    code = "HP412"
    slug = "hipblas-v2-define"
    severity = Severity.MEDIUM
    effort = Effort.SMALL
    rocm_max = (7, 0, 0)


@REGISTRY.rule
class HipsolverLwork(SaysWhatItIs):
    """hipSOLVER `*_bufferSize` units before ROCm 7.0

    ## Why
    Before hipSOLVER 3.0 (ROCm 7.0) the `*_bufferSize` functions listed in the release
    notes returned `lwork` in bytes; cuSOLVER (and hipSOLVER 3.0) return elements. CUDA
    code that allocates `sizeof(T) * lwork` over-allocates on 6.x (safe, wasteful).

    ## Example
    ```cuda
    // before
    cusolverDnSgesvd_bufferSize(h, m, n, &lwork); cudaMalloc(&work, sizeof(float) * lwork);
    // after (6.x only, if memory matters)
    hipsolverSgesvd_bufferSize(h, m, n, &lwork); hipMalloc(&work, lwork);
    ```

    ## Fix
    Nothing is required for correctness. On 6.x, allocate `lwork` bytes rather than
    `sizeof(T) * lwork` if the memory matters; from ROCm 7.0 the CUDA code is right as is.
    """

    code = "HP413"
    slug = "hipsolver-lwork-units"
    severity = Severity.INFO
    effort = Effort.SMALL
    rocm_max = (7, 0, 0)


@REGISTRY.rule
class HipsparseSpSM(SaysWhatItIs):
    """`hipsparseSpSM_solve` takes an extra buffer argument

    ## Why
    hipSPARSE's `hipsparseSpSM_solve` has a trailing external-buffer parameter that
    cuSPARSE's `cusparseSpSM_solve` does not (to be removed in a later release).

    ## Example
    ```cuda
    // before
    cusparseSpSM_solve(h, opA, opB, &alpha, A, B, C, type, alg, descr);
    // after
    hipsparseSpSM_solve(h, opA, opB, &alpha, A, B, C, type, alg, descr, nullptr);
    ```

    ## Fix
    Pass `nullptr` (or the buffer from `hipsparseSpSM_bufferSize`) as the last argument of
    `hipsparseSpSM_solve`.
    """

    code = "HP414"
    slug = "hipsparse-spsm-solve"
    severity = Severity.LOW
    effort = Effort.SMALL
