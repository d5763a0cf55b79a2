"""HP401–HP403, HP405, HP408 — NVIDIA-only libraries with no HIP build: CUTLASS/CuTe,
TensorRT, libcu++, the cuDNN frontend, FlashAttention's CUDA sources.

Pages only: the catalogue (``mappings/libraries.toml``) says what names each library,
and ``matching`` reports it."""

from __future__ import annotations

from hipport.findings import Effort, Severity
from hipport.rules import REGISTRY, SaysWhatItIs


@REGISTRY.rule
class Cutlass(SaysWhatItIs):
    """CUTLASS / CuTe

    ## Why
    CUTLASS and CuTe are NVIDIA template libraries built on PTX, `mma.sync`, `wgmma` and
    TMA; nothing in them runs on AMD GPUs and there is no HIP build.

    ## Example
    ```cuda
    // before
    #include <cutlass/gemm/device/gemm.h>
    using Gemm = cutlass::gemm::device::Gemm<float, Row, float, Row, float, Row>;
    // after
    #include <hipblaslt/hipblaslt.h>   // or a Composable Kernel device op
    ```

    ## Fix
    Use hipBLASLt for plain GEMMs, Composable Kernel (CK) for fused kernels; keep the
    CUTLASS path behind `#ifndef __HIP_PLATFORM_AMD__`.
    """

    code = "HP401"
    slug = "cutlass-cute"
    severity = Severity.BLOCKER
    effort = Effort.LARGE


@REGISTRY.rule
class TensorRT(SaysWhatItIs):
    """TensorRT

    ## Why
    TensorRT (`NvInfer.h`, `nvinfer1::`, the ONNX parser) is NVIDIA-only.

    ## Example
    ```cuda
    // before
    auto builder = nvinfer1::createInferBuilder(logger);
    // after
    migraphx::program prog = migraphx::parse_onnx("model.onnx");
    ```

    ## Fix
    MIGraphX, or ONNX Runtime with the MIGraphX/ROCm execution provider; custom
    TensorRT plugins become MIGraphX custom ops or HIP kernels.
    """

    code = "HP402"
    slug = "tensorrt"
    severity = Severity.BLOCKER
    effort = Effort.LARGE


@REGISTRY.rule
class LibCudacxx(SaysWhatItIs):
    """libcu++ (`cuda::std`, `cuda::atomic`)

    ## Why
    NVIDIA's C++ standard library for device code has no HIP implementation. A name under a
    namespace alias the file defines where the HIP build compiles it (`namespace cuda {
    namespace std = ::std; }` in a ROCm branch) is the alias's, not libcu++'s.

    ## Example
    ```cuda
    // before
    #include <cuda/atomic>
    cuda::atomic_ref<int, cuda::thread_scope_device> r(*p); r.fetch_add(1);
    // after
    __hip_atomic_fetch_add(p, 1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
    ```

    ## Fix
    `std::` in host code; HIP atomics and intrinsics in device code.
    """

    code = "HP403"
    slug = "libcudacxx"
    severity = Severity.HIGH
    effort = Effort.MEDIUM


@REGISTRY.rule
class CudnnFrontend(SaysWhatItIs):
    """cuDNN frontend (graph API)

    ## Why
    `cudnn_frontend` is a header-only C++ layer over cuDNN's backend graph API; MIOpen has
    nothing that accepts its graphs.

    ## Example
    ```cuda
    // before
    namespace fe = cudnn_frontend; auto graph = std::make_shared<fe::graph::Graph>();
    // after: MIOpen fusion plans, or a Composable Kernel fused op
    ```

    ## Fix
    Rebuild the graph with MIOpen's fusion API (`miopenCreateFusionPlan`) or a Composable
    Kernel fused operator; keep an unfused MIOpen path for the operations neither covers.
    """

    code = "HP405"
    slug = "cudnn-frontend"
    severity = Severity.BLOCKER
    effort = Effort.LARGE


@REGISTRY.rule
class FlashAttention(SaysWhatItIs):
    """FlashAttention CUDA sources

    ## Why
    The flash-attn CUDA kernels (`flash.h`, `flash_fwd_kernel.h`, `namespace flash`) are
    CUTLASS/CuTe code for Ampere/Hopper. ROCm support comes from separate backends.

    ## Example
    ```cuda
    // before: vendored csrc/flash_attn/src/*.cu
    // after: depend on flash-attn >= 2.6.2 built for ROCm (CK or Triton backend)
    ```

    ## Fix
    Drop the vendored kernels and use the ROCm build of flash-attn (≥ 2.6.2, CK
    backend on MI200/MI300/MI355 and RDNA3/4) or PyTorch SDPA; FlashAttention-3 is
    Hopper-only.
    """

    code = "HP408"
    slug = "flash-attention"
    severity = Severity.HIGH
    effort = Effort.LARGE
