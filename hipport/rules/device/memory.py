"""HP316, HP317 — memory that behaves differently: managed memory without HMM (noted
once per file), and ``cudaMemoryType`` compared with or built from a number (at every
site; the variables declared ``cudaPointerAttributes`` are recorded for it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hipport.findings import Effort, Severity
from hipport.parse import Node, call_arguments, text
from hipport.registry import any_bytes_of, any_word_of
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.rules.device.common import ARITH_OPS, once, operand_name, operator_text, plain_callee
from hipport.rules.device.declarations import Declaration, declared_names, recorder

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class ManagedMemory(SaysWhatItIs):
    """Managed (unified) memory without HMM

    ## Why
    `cudaMallocManaged` memory migrates on demand only when the GPU and kernel support HMM
    with XNACK (`HSA_XNACK=1`, gfx90a/gfx942); otherwise it is host memory accessed over the
    bus, and `cudaMemAdvise`/`cudaMemPrefetchAsync` are hints with little effect.

    ## Example
    ```cuda
    // before
    cudaMallocManaged(&p, n); kernel<<<g, b>>>(p);
    // after (performance-critical data)
    hipMalloc(&d, n); hipMemcpy(d, h, n, hipMemcpyHostToDevice); kernel<<<g, b>>>(d);
    ```

    ## Fix
    Use explicit device allocations for hot data, or document `HSA_XNACK=1` and a
    supported GPU.
    """

    code = "HP316"
    slug = "managed-memory"
    severity = Severity.MEDIUM
    effort = Effort.MEDIUM


@REGISTRY.rule
class MemoryTypeNumeric(SaysWhatItIs):
    """`cudaMemoryType` compared as a number

    ## Why
    The numbering of `hipMemoryType` has changed across HIP releases and includes AMD-only
    members (`hipMemoryTypeArray`, `hipMemoryTypeUnified`); a literal `2` does not mean
    "device" everywhere.

    ## Example
    ```cuda
    // before
    if (attr.type == 2) { ... }
    // after
    if (attr.type == cudaMemoryTypeDevice) { ... }
    ```

    ## Fix
    Compare against the named enumerators, which hipport rewrites.
    """

    code = "HP317"
    slug = "memory-type-numeric"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


_MANAGED = frozenset({"cudaMallocManaged", "cudaMemAdvise", "cudaMemAdvise_v2", "cudaMemPrefetchAsync",
                      "cudaMemPrefetchAsync_v2", "cudaStreamAttachMemAsync"})


def _note_managed(ctx: "Context", where: Node, name: str) -> None:
    once(ctx, "managed", ManagedMemory, where,
         f"managed memory (`{name}`): without HMM/XNACK it is host memory accessed over the bus, "
         "and advice/prefetch have little effect",
         "use explicit device allocations for hot data, or require HSA_XNACK=1 on gfx90a/gfx942")


@recorder(b"__managed__", codes=(ManagedMemory,))
def _managed_decl(decl: Declaration) -> None:
    if "__managed__" in decl.qualifiers:
        _note_managed(decl.ctx, decl.node, "__managed__")


@REGISTRY.visits("identifier", "type_identifier", names=_MANAGED.__contains__, codes=(ManagedMemory,))
def _managed_name(node: Node, ctx: "Context") -> None:
    name = text(ctx.src, node)
    if name in _MANAGED:
        _note_managed(ctx, node, name)


@dataclass
class PointerAttributes:
    """Per file: variables declared ``cudaPointerAttributes``, whose ``.type`` is a memory type."""

    names: set[str] = field(default_factory=set)
    _mentions: bool | None = None

    def mentions_memory_type(self, ctx: "Context") -> bool:
        """Whether the file says ``memoryType`` at all (asked once per file)."""
        if self._mentions is None:
            self._mentions = ctx.may_contain(b"memoryType")
        return self._mentions


@recorder(b"cudaPointerAttributes", codes=(MemoryTypeNumeric,))
def _pointer_attributes(decl: Declaration) -> None:
    if "cudaPointerAttributes" in decl.type_text:
        decl.ctx.state(PointerAttributes).names.update(text(decl.ctx.src, n) for n in declared_names(decl.node))


def _report_memtype(ctx: "Context", node: Node) -> None:
    ctx.report(MemoryTypeNumeric, node, f"`{ctx.text(node)}` compares or builds a cudaMemoryType from a "
               "number; hipMemoryType numbering differs across HIP releases",
               "use the named enumerators (cudaMemoryTypeDevice, …)")


@REGISTRY.visits("binary_expression", source=any_bytes_of(b"memoryType", b"cudaPointerAttributes"),
                 codes=(MemoryTypeNumeric,))
def _compared(node: Node, ctx: "Context") -> None:
    st = ctx.state(PointerAttributes)
    if not st.names and not st.mentions_memory_type(ctx):
        return
    if operator_text(ctx, node) not in ARITH_OPS:
        return
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    for a, b in ((left, right), (right, left)):
        a = _uncast(ctx, a) if a is not None else None
        if a is not None and a.type == "field_expression" and b is not None and b.type == "number_literal":
            field_ = text(ctx.src, a.child_by_field_name("field"))
            obj = operand_name(ctx.src, a.child_by_field_name("argument"))
            if field_ == "memoryType" or (field_ == "type" and obj in st.names):
                _report_memtype(ctx, node)
                return


def _uncast(ctx: "Context", node: Node) -> Node:
    """The operand under parentheses and integer casts: ``static_cast<int>(attr.type) == 3``
    and ``(int)attr.type == 3`` compare the memory type with a number as ``attr.type == 3`` does."""
    while True:
        if node.type == "parenthesized_expression" and node.named_child_count == 1:
            node = node.named_children[0]
        elif node.type == "cast_expression" and (value := node.child_by_field_name("value")) is not None:
            node = value
        elif node.type == "call_expression" and (plain := plain_callee(ctx, node)) is not None \
                and plain[1] == "static_cast" and len(args := call_arguments(node)) == 1:
            node = args[0]
        else:
            return node


@REGISTRY.visits("cast_expression", source=any_bytes_of(b"cudaMemoryType"), codes=(MemoryTypeNumeric,))
def _cast(node: Node, ctx: "Context") -> None:
    type_node = node.child_by_field_name("type")
    value = node.child_by_field_name("value")
    if type_node is not None and value is not None and value.type == "number_literal" \
            and text(ctx.src, type_node).strip() == "cudaMemoryType":
        _report_memtype(ctx, node)


@REGISTRY.visits("call_expression", names=any_word_of({"static_cast", "reinterpret_cast"}), codes=(MemoryTypeNumeric,))
def _cpp_cast(node: Node, ctx: "Context") -> None:
    plain = plain_callee(ctx, node)
    if plain is None or plain[1] not in ("static_cast", "reinterpret_cast"):
        return
    args = call_arguments(node)
    if args and args[0].type == "number_literal":
        targs = node.child_by_field_name("function").child_by_field_name("arguments")
        if targs is not None and text(ctx.src, targs).strip("<> ") == "cudaMemoryType":
            _report_memtype(ctx, node)
