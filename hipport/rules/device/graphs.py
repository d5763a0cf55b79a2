"""HP314, HP315 — CUDA graphs: conditional nodes HIP lacks, and the beta status of HIP
graphs before ROCm 7.0. Noted once per file."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hipport.findings import Effort, Severity
from hipport.parse import Node, text
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.rules.device.common import once
from hipport.versions import short_version

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class GraphConditional(SaysWhatItIs):
    """CUDA graph conditional nodes (IF / WHILE / SWITCH)

    ## Why
    Conditional graph nodes (`cudaGraphConditionalHandle`, `cudaGraphCondType*`,
    `cudaConditionalNodeParams`) are not implemented in HIP graphs in 6.3 or 7.2.1.

    ## Example
    ```cuda
    // before
    cudaGraphConditionalHandleCreate(&h, graph, 1, cudaGraphCondAssignDefault);
    // after: decide on the host, launch one of two instantiated graphs
    hipGraphLaunch(done ? exec_tail : exec_loop, stream);
    ```

    ## Fix
    Move the control flow to the host (several graphs), or into a persistent kernel.
    """

    code = "HP314"
    slug = "graph-conditional-node"
    severity = Severity.MEDIUM
    effort = Effort.MEDIUM


@REGISTRY.rule
class GraphBeta(SaysWhatItIs):
    """HIP graphs are a beta API before ROCm 7.0

    ## Why
    On ROCm 6.x hipGraph prints beta warnings and has known capture gaps; 7.0 removed the
    beta status and aligned stream-capture errors with CUDA.

    ## Example
    ```cuda
    // before (targeting 6.3)
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    // after: keep a non-graph fallback path, or target ROCm >= 7.0
    ```

    ## Fix
    Test graph capture on the target release; keep a stream-only fallback.
    """

    code = "HP315"
    slug = "graph-beta"
    severity = Severity.LOW
    effort = Effort.SMALL
    rocm_max = (7, 0, 0)


_GRAPH_CONDITIONAL_RE = re.compile(
    r"^(?:cudaGraphConditional\w*|cudaGraphCond\w+|cudaConditionalNodeParams|cudaGraphSetConditional"
    r"|cudaGraphNodeTypeConditional|CUgraphConditional\w*|cuGraphConditional\w*|CU_GRAPH_NODE_TYPE_CONDITIONAL"
    r"|CUDA_CONDITIONAL_NODE_PARAMS)$"
)
_GRAPH_RE = re.compile(r"^(?:cudaGraph\w+|cudaStreamBeginCapture\w*)$")


def _maybe_graph_name(name: str) -> bool:
    return bool(_GRAPH_CONDITIONAL_RE.match(name) or _GRAPH_RE.match(name))


@REGISTRY.visits("identifier", "type_identifier", names=_maybe_graph_name,
                 codes=(GraphConditional, GraphBeta))
def _name(node: Node, ctx: "Context") -> None:
    name = text(ctx.src, node)
    if node.type != "field_identifier" and _GRAPH_CONDITIONAL_RE.match(name):
        once(ctx, "graph-cond", GraphConditional, node, f"`{name}`: conditional graph nodes are not "
             f"implemented in HIP graphs (ROCm {short_version(ctx.rocm)})",
             "move the control flow to the host or into a persistent kernel")
    if node.type == "identifier" and _GRAPH_RE.match(name):
        once(ctx, "graph-beta", GraphBeta, node, f"`{name}`: HIP graphs are a beta API before ROCm 7.0",
             "test capture on the target release and keep a stream-only fallback")
