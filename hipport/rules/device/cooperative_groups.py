"""HP312, HP313 — cooperative groups: the algorithms HIP lacks, and grid-wide barriers,
which need a cooperative launch. Cluster barriers are HP303 (Hopper-only).

Group variables (``auto g = cg::this_grid();``, ``cg::grid_group g``, copies of those)
are recorded per function, so that ``g.sync()`` is known to be a grid barrier;
``namespace foo = cooperative_groups;`` adds ``foo`` to the namespaces recognised.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hipport.findings import Effort, Severity
from hipport.parse import Node, call_arguments, call_name, qualified_parts, text
from hipport import facts
from hipport.registry import any_bytes_of, any_word_of
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.rules.device.common import callee, func_key
from hipport.rules.device.declarations import Declaration, recorder
from hipport.rules.device.hopper import HopperOnly
from hipport.versions import short_version

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class CooperativeGroupsGap(SaysWhatItIs):
    """Cooperative-groups algorithms and group members HIP lacks (`cg::reduce`, scans, `cg::memcpy_async`, `tile.ballot`)

    ## Why
    HIP's cooperative groups are a subset: `cooperative_groups::reduce` arrives in 7.13,
    `inclusive_scan`/`exclusive_scan` in 10.0, and `memcpy_async`/`wait` not at all, so
    none of them exist in ROCm 6.3 or 7.2.1. Nor does `cooperative_groups::experimental`
    (`block_tile_memory`, tiles larger than a warp): neither the 6.2 nor the 7.1 headers
    have the namespace. The group types lack CUDA's vote and match members (`ballot`,
    `any`, `all`, `match_any`, `match_all`), `num_threads`/`dim_threads` and the grid's
    block queries (`block_rank`, `num_blocks`, `block_index`, `dim_blocks`).

    ## Example
    ```cuda
    // before
    int s = cg::reduce(tile, v, cg::plus<int>());
    // after
    int s = v;
    for (int o = tile.size() / 2; o > 0; o /= 2) s += tile.shfl_down(s, o);
    ```

    ## Fix
    A shuffle loop over the tile, or hipCUB `WarpReduce`/`WarpScan`/`BlockReduce`.
    """

    code = "HP312"
    slug = "cg-unsupported"
    severity = Severity.MEDIUM
    effort = Effort.MEDIUM


@REGISTRY.rule
class GridSync(SaysWhatItIs):
    """Grid-wide synchronisation (`this_grid().sync()`) needs a cooperative launch

    ## Why
    A grid barrier only works when the kernel is launched with `hipLaunchCooperativeKernel`
    and every block is resident at once; block residency differs on AMD (LDS, wave64
    registers), so a grid size chosen for an NVIDIA GPU can deadlock or fail to launch.
    Cooperative grid launches are validated from ROCm 7.0.

    ## Example
    ```cuda
    // before
    kernel<<<blocks, threads>>>(args);
    // after
    hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_cu, kernel, threads, 0);
    hipLaunchCooperativeKernel((void*)kernel, blocks, threads, argv, 0, stream);
    ```

    ## Fix
    Size the grid from the occupancy query and launch cooperatively.
    """

    code = "HP313"
    slug = "cg-grid-sync"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


#: Cooperative grid launches are validated from this release on.
_GRID_LAUNCH_VALIDATED = (7, 0, 0)
# The reduce and scan headers also bring the operator functors (cg::plus…), absent with them.
_CG_MISSING = frozenset({
    "reduce", "inclusive_scan", "exclusive_scan", "memcpy_async", "wait", "wait_prior",
    "plus", "less", "greater", "bit_and", "bit_or", "bit_xor",
    # not in HIP 6.2's amd_hip_cooperative_groups.h (which 7.1's set shares)
    "binary_partition", "labeled_partition", "invoke_one", "invoke_one_broadcast"})
_GROUP_TYPES = {"grid_group": "grid", "cluster_group": "cluster"}
# Members of CUDA's group types that HIP's lack (the 6.2.41134 and 7.1.25424 headers' group
# classes have thread_rank, size, sync, is_valid, cg_type, the shfl family, meta_group_rank
# and _size, group_index, thread_index, group_dim, num_grids and grid_rank only).
_MEMBERS_MISSING = frozenset({
    "ballot", "any", "all", "match_any", "match_all", "num_threads", "dim_threads",
    "block_rank", "num_blocks", "block_index", "dim_blocks"})
# The group types and the calls that make a group, for telling a group variable apart from
# any other object with an .any() or .all() (std::bitset, Eigen).
_GROUP_TYPE_NAMES = frozenset({
    "thread_block", "thread_block_tile", "coalesced_group", "thread_group", "grid_group",
    "multi_grid_group", "cluster_group"})
_GROUP_MAKERS = frozenset({
    "this_thread_block", "tiled_partition", "coalesced_threads", "this_grid", "this_multi_grid",
    "this_cluster", "labeled_partition", "binary_partition"})


@dataclass
class Groups:
    """Per file: group variables by (function start, name), and the names of the
    cooperative-groups namespace."""

    kinds: dict[tuple[int, str], str] = field(default_factory=dict)  # → "grid" | "cluster"
    groups: set[tuple[int, str]] = field(default_factory=set)  # every group variable
    namespaces: set[str] = field(default_factory=lambda: {"cg", "cooperative_groups"})


def _group_kind(node: Node | None, ctx: "Context") -> str | None:
    """"grid"/"cluster" when ``node`` is ``cg::this_grid()``/``this_cluster()`` or a variable holding one."""
    if node is None:
        return None
    if node.type == "call_expression":
        name = call_name(ctx.src, node) or ""
        last = name.rsplit("::", 1)[-1]
        return {"this_grid": "grid", "this_cluster": "cluster"}.get(last)
    if node.type == "identifier":
        kinds = ctx.state(Groups).kinds
        return kinds.get((func_key(ctx, node), text(ctx.src, node))) if kinds else None
    return None


def _has_groups(ctx: "Context") -> bool:
    return bool(ctx.state(Groups).kinds)


@recorder(b"_group", b"this_grid", b"this_cluster", codes=(GridSync, HopperOnly), always=_has_groups)
def _group_decl(decl: Declaration) -> None:
    ctx = decl.ctx
    group = _GROUP_TYPES.get(decl.last_type_part)
    for d in decl.node.children_by_field_name("declarator"):
        value = d.child_by_field_name("value") if d.type == "init_declarator" else None
        kind = group or _group_kind(value, ctx)
        ident = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
        if kind and ident is not None and ident.type == "identifier":
            ctx.state(Groups).kinds[(decl.function_key, text(ctx.src, ident))] = kind


def _makes_group(ctx: "Context", node: Node | None) -> bool:
    """``cg::tiled_partition<32>(block)``, ``coalesced_threads()`` and the like: a call of a
    group maker, qualified by the cooperative-groups namespace or not (``using namespace``)."""
    if node is None or node.type != "call_expression":
        return False
    fn = callee(node)
    if fn is None:
        return False
    if fn.type == "qualified_identifier":
        parts = qualified_parts(ctx.src, fn)
        return (len(parts) >= 2 and parts[0] in ctx.state(Groups).namespaces
                and parts[-1] in _GROUP_MAKERS)
    return fn.type == "identifier" and text(ctx.src, fn) in _GROUP_MAKERS


@recorder(b"thread_block", b"_group", b"tiled_partition", b"coalesced_threads", b"this_grid",
          b"this_cluster", b"_partition", codes=(CooperativeGroupsGap,))
def _any_group_decl(decl: Declaration) -> None:
    """Every variable or parameter holding a group: declared with a group type (template
    arguments, references and the namespace dropped) or initialised by a group maker."""
    ctx = decl.ctx
    typed = decl.last_type_part.split("<", 1)[0].strip() in _GROUP_TYPE_NAMES
    for ident, value in _declared(decl):
        if typed or _makes_group(ctx, value):
            ctx.state(Groups).groups.add((decl.function_key, text(ctx.src, ident)))


def _declared(decl: Declaration) -> list[tuple[Node, Node | None]]:
    """(identifier, initial value) of each name the declaration declares directly or by
    reference (``cg::thread_block_tile<32> &tile``)."""
    out = []
    for d in decl.node.children_by_field_name("declarator"):
        value = d.child_by_field_name("value") if d.type == "init_declarator" else None
        ident = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
        while ident is not None and ident.type == "reference_declarator":
            ident = ident.named_children[0] if ident.named_children else None
        if ident is not None and ident.type == "identifier":
            out.append((ident, value))
    return out


@REGISTRY.visits("assignment_expression", source=any_bytes_of(b"_partition", b"this_thread_block",
                                                          b"coalesced_threads", b"this_grid"),
                 codes=(CooperativeGroupsGap,))
def _group_assignment(node: Node, ctx: "Context") -> None:
    """``tile = cg::tiled_partition<32>(cta)``: also what tree-sitter makes of the statement
    ``cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);`` in a function body
    (an expression ``cg::thread_block_tile < 32 > tile = …``), the samples' usual spelling."""
    left = node.child_by_field_name("left")
    if left is not None and left.type == "identifier" and _makes_group(ctx, node.child_by_field_name("right")):
        ctx.state(Groups).groups.add((func_key(ctx, node), text(ctx.src, left)))


@REGISTRY.visits("call_expression", names=any_word_of(_MEMBERS_MISSING), codes=(CooperativeGroupsGap,))
def _member_call(node: Node, ctx: "Context") -> None:
    """``tile.ballot(p)``, ``grid.num_blocks()``: a member CUDA's group types have and HIP's
    do not, called on a group variable or straight on a maker's result."""
    fn = callee(node)
    if fn is None or fn.type != "field_expression":
        return
    member = fn.child_by_field_name("field")
    obj = fn.child_by_field_name("argument")
    if member is None or obj is None or text(ctx.src, member) not in _MEMBERS_MISSING:
        return
    if obj.type == "identifier":
        if (func_key(ctx, node), text(ctx.src, obj)) not in ctx.state(Groups).groups:
            return
    elif not _makes_group(ctx, obj):
        return
    name = text(ctx.src, member)
    hint = ("size()" if name == "num_threads" else
            "__ballot/__any/__all/__match_any over the lanes (HIP's wave functions, 64-bit masks), "
            "or a shuffle loop over the tile")
    ctx.report(CooperativeGroupsGap, node, f"`{ctx.text(fn)}`: HIP's cooperative groups have no "
               f"member `{name}` in ROCm {short_version(ctx.rocm)}", f"use {hint}")


def _report_group_sync(ctx: "Context", call: Node, kind: str | None) -> None:
    if kind == "grid":
        note = (f"; cooperative grid launches are only validated from ROCm 7.0 (target "
                f"{short_version(ctx.rocm)})") if ctx.rocm < _GRID_LAUNCH_VALIDATED else ""
        ctx.report(GridSync, call, f"grid-wide sync `{ctx.text(call)}` requires a cooperative launch "
                   f"with every block resident{note}",
                   "launch with hipLaunchCooperativeKernel and size the grid from "
                   "hipOccupancyMaxActiveBlocksPerMultiprocessor")
    elif kind == "cluster":
        ctx.report(HopperOnly, call, f"cluster barrier `{ctx.text(call)}`: thread-block clusters are "
                   "Hopper-only", "restructure to one block per tile; exchange data via global memory")


@REGISTRY.visits("call_expression", names=any_word_of(_CG_MISSING | {"sync"}),
                 codes=(CooperativeGroupsGap, GridSync, HopperOnly))
def _call(node: Node, ctx: "Context") -> None:
    fn = callee(node)
    if fn is None:
        return
    src = ctx.src
    if fn.type == "field_expression":  # g.sync()
        field_ = fn.child_by_field_name("field")
        if field_ is not None and text(src, field_) == "sync":
            _report_group_sync(ctx, node, _group_kind(fn.child_by_field_name("argument"), ctx))
        return
    if fn.type != "qualified_identifier":
        return
    parts = qualified_parts(src, fn)
    if len(parts) < 2 or parts[0] not in ctx.state(Groups).namespaces:
        return
    name = parts[-1]
    if name in _CG_MISSING:
        ctx.report(CooperativeGroupsGap, node, f"`{'::'.join(parts)}` is not in HIP's cooperative "
                   f"groups in ROCm {short_version(ctx.rocm)}",
                   "use a shuffle loop over the tile or hipCUB WarpReduce/WarpScan/BlockLoad")
    elif name == "sync":  # cg::sync(g)
        args = call_arguments(node)
        if args:
            _report_group_sync(ctx, node, _group_kind(args[0], ctx))


@REGISTRY.visits("qualified_identifier", source=any_bytes_of(b"experimental"),
                 codes=(CooperativeGroupsGap,))
def _experimental(node: Node, ctx: "Context") -> None:
    """``cg::experimental::…`` (types and calls alike), once per outermost name."""
    if not facts.outermost_qualified(ctx, node):
        return
    parts = qualified_parts(ctx.src, node)
    if len(parts) >= 3 and parts[0] in ctx.state(Groups).namespaces and parts[1] == "experimental":
        ctx.report(CooperativeGroupsGap, node, f"`{'::'.join(parts)}`: HIP's cooperative groups "
                   "have no experimental namespace", "tiles of at most a wavefront "
                   "(cg::tiled_partition<N>), or shared memory and __syncthreads() for larger ones")


@REGISTRY.visits("namespace_alias_definition")
def _namespace_alias(node: Node, ctx: "Context") -> None:
    names = [text(ctx.src, c) for c in node.named_children]
    if len(names) == 2 and names[1] == "cooperative_groups":
        ctx.state(Groups).namespaces.add(names[0])
