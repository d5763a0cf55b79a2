"""HP303 — thread-block clusters, distributed shared memory and TMA (Hopper-only).

Names are noted once per name per file; cluster barriers (``cluster.sync()``) are
reported at every site by ``cooperative_groups``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hipport.findings import Effort, Severity
from hipport.parse import Node, text
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.rules.device.common import once

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class HopperOnly(SaysWhatItIs):
    """Thread-block clusters, distributed shared memory or TMA (Hopper-only)

    ## Why
    Clusters (`__cluster_dims__`, `cg::this_cluster()`, `cluster.sync()`,
    `map_shared_rank`, the cluster launch attributes) and the Tensor Memory Accelerator
    (`CUtensorMap`, `cuTensorMapEncode*`) exist only on sm_90+. AMD GPUs have no cluster
    level between the block and the grid and no TMA unit.

    ## Example
    ```cuda
    // before
    __global__ void __cluster_dims__(2, 1, 1) k(float* x) {
      auto cluster = cg::this_cluster(); cluster.sync(); }
    // after: one block per tile; exchange through global memory between kernels
    __global__ void k(float* x) { __syncthreads(); }
    ```

    ## Fix
    Redesign the kernel for one block per tile; share data through global memory or
    larger blocks; replace TMA copies with ordinary vectorised loads.
    """

    code = "HP303"
    slug = "hopper-cluster-tma"
    severity = Severity.BLOCKER
    effort = Effort.LARGE


_HOPPER_NAMES = frozenset({
    "__cluster_dims__", "this_cluster", "cluster_group", "map_shared_rank",
    "cudaLaunchAttributeClusterDimension", "cudaFuncAttributeRequiredClusterWidth",
    "cudaFuncAttributeRequiredClusterHeight", "cudaFuncAttributeRequiredClusterDepth",
    "cudaFuncAttributeNonPortableClusterSizeAllowed", "cudaOccupancyMaxActiveClusters",
    "cudaOccupancyMaxPotentialClusterSize", "CUtensorMap", "cuTensorMapEncodeTiled",
    "cuTensorMapEncodeIm2col", "cuTensorMapEncodeIm2colWide", "cuTensorMapReplaceAddress",
})


@REGISTRY.visits("identifier", "type_identifier", "field_identifier", names=_HOPPER_NAMES.__contains__,
                 codes=(HopperOnly,))
def _name(node: Node, ctx: "Context") -> None:
    name = text(ctx.src, node)
    if name in _HOPPER_NAMES:
        once(ctx, f"hopper:{name}", HopperOnly, node,
             f"`{name}`: thread-block clusters / TMA are Hopper-only; AMD GPUs have neither",
             "redesign for one block per tile; use ordinary vectorised loads instead of TMA")
