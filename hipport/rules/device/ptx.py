"""HP301 — inline PTX assembly: AMD GPUs do not run PTX.

``analyze`` reparses ``#define`` bodies, so an asm macro also arrives here outside any
function; there only a PTX-looking template (dotted opcodes, special registers) counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from hipport import facts
from hipport.findings import Effort, Severity
from hipport.parse import Node, find_all, text
from hipport.registry import any_bytes_of
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.rules.device.common import func_key, once

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class InlinePtx(SaysWhatItIs):
    """Inline PTX assembly

    ## Why
    AMD GPUs do not execute PTX: an `asm(...)` block written for NVIDIA fails to assemble
    (or, inside a macro, fails wherever the macro is used). HIPIFY has no automatic path
    (HIPIFY#731). hipport names the PTX instructions and special registers it found.

    ## Example
    ```cuda
    // before
    unsigned lane; asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    // after
    unsigned lane = __lane_id();
    ```

    ## Fix
    Use the HIP intrinsic (`__lane_id()`, `__smid()`, `__shfl_*`, `__syncthreads()`,
    `__threadfence()`), rocWMMA or `__builtin_amdgcn_mfma_*` for `mma.sync`, plain
    global→shared copies for `cp.async`; or keep the PTX under `#ifndef __HIP_PLATFORM_AMD__`
    and add an AMD branch. An empty `asm volatile("" ::: "memory")` barrier is portable and
    not reported. A call of libcu++'s `cuda::ptx::` wrappers (`cuda::ptx::mbarrier_arrive_expect_tx`,
    `cuda::ptx::cp_async_bulk`) is one PTX instruction each: reported at the first such call of
    each function.
    """

    code = "HP301"
    run_time_only = True  # judged by the GPU passes (Rule.run_time_only)
    slug = "inline-ptx-asm"
    severity = Severity.BLOCKER
    effort = Effort.LARGE



_SREG_RE = re.compile(
    r"%%?(laneid|warpid|nwarpid|smid|nsmid|gridid|lanemask_(?:eq|le|lt|ge|gt)|clock64|clock"
    r"|globaltimer(?:_lo|_hi)?|dynamic_smem_size|total_smem_size|cluster_\w+|ctaid|nctaid|ntid|tid)\b"
)
_TYPE_PART_RE = re.compile(
    r"^(?:[usbf]\d+|bf16x?2?|f16x2|e4m3|e5m2|tf32|pred|v\d|x\d|m\d+n\d+k\d+|aligned|row|col|sat"
    r"|rn|rz|rm|rp|ftz|approx|full|trans|num|\d+)$"
)
#: AMD GCN/CDNA/RDNA mnemonics (``v_dot2_f32_f16``, ``s_waitcnt``, ``ds_read_b128``,
#: ``buffer_load_dword``, ``global_load_dword``…): an asm block made of these is AMD's own.
_AMD_MNEMONIC_RE = re.compile(r"^(?:v|s|ds|buffer|tbuffer|global|flat|scratch|image|exp)_[a-z0-9_]+$")
_LONG_OPCODES = ("cp.async.bulk", "ld.global.nc")
#: PTX that needs sm_90 (PTX ISA 7.8-8.1): also the cluster registers (``%cluster_ctarank``),
#: mbarrier's try_wait and expect_tx, griddepcontrol and the async stores/reductions.
_HOPPER_OPCODES = ("wgmma", "cp.async.bulk", "setmaxnreg", "barrier.cluster", "fence.proxy.async",
                   "elect.sync", "stmatrix", "multimem", "mapa", "%cluster", "mbarrier.try_wait",
                   "mbarrier.expect_tx", "griddepcontrol", "st.async", "red.async")
_PTX_HINTS = {
    "%laneid": "__lane_id()", "%smid": "__smid()", "%warpid": "threadIdx-based wave id",
    "%clock": "clock64()/wall_clock64()", "%clock64": "clock64()/wall_clock64()",
    "%globaltimer": "wall_clock64()", "mma.sync": "rocWMMA or __builtin_amdgcn_mfma_*",
    "wgmma.mma_async": "rocWMMA or __builtin_amdgcn_mfma_*", "ldmatrix": "rocWMMA load_matrix_sync",
    "cp.async": "plain global→shared loads + __syncthreads()",
    "ld.global.nc": "a plain load (or __ldg)", "shfl.sync": "__shfl_*", "bar.sync": "__syncthreads()",
    "membar": "__threadfence*()", "fence": "__threadfence*()", "vote.sync": "__ballot/__any/__all",
}


def _asm_template(src: bytes, node: Node) -> str | None:
    """The assembly template of a ``gnu_asm_expression``, adjacent literals joined."""
    tmpl = node.child_by_field_name("assembly_code")
    if tmpl is None:
        tmpl = next((c for c in node.named_children if c.type in ("string_literal", "concatenated_string")), None)
    if tmpl is None:
        return None
    parts = [text(src, c) for c in (tmpl.named_children if tmpl.type == "concatenated_string" else [tmpl])]
    return "".join(p[1:-1] if p.startswith('"') else "" for p in parts)


@lru_cache(maxsize=4096)
def _ptx_items(template: str) -> tuple[str, ...]:
    """Distinct notable PTX opcodes and special registers in an asm template, in order.

    Cached: generated kernels repeat the same few asm templates thousands of times."""
    body = template.replace("\\n", "\n").replace("\\t", " ")
    items: list[str] = []
    for stmt in re.split(r"[;\n{}]", body):
        stmt = re.sub(r"^\s*(?:\w+:)?\s*(?:@!?%?\w+\s+)?", "", stmt)
        m = re.match(r"[a-z][\w.:]*", stmt)
        if not m or stmt.startswith("."):
            continue
        op = m.group(0)
        name = next((p for p in _LONG_OPCODES if op.startswith(p)), None)
        if name is None:
            keep = []
            for part in op.split(".")[:2]:
                if keep and _TYPE_PART_RE.match(part):
                    break
                keep.append(part)
            name = ".".join(keep)
        items.append(name)
    items += ["%" + m.group(1) for m in _SREG_RE.finditer(body)]
    return tuple(dict.fromkeys(items))


#: PTX instruction names (the part before the first dot) that real code puts in asm blocks.
_PTX_OPCODES = frozenset((
    "abs add addc and atom bar barrier bfe bfi bfind bmsk bra brev call clz cnot copysign cos cp "
    "cvt cvta discard div dp2a dp4a elect ex2 fence fma fns griddepcontrol isspacep ld ldmatrix "
    "ldu lg2 lop3 mad mad24 madc mapa match max mbarrier membar min mma mov movmatrix mul mul24 "
    "multimem nanosleep neg not or popc prefetch prefetchu prmt rcp red redux rem rsqrt sad selp "
    "set setmaxnreg setp shf shfl shl shr sin slct sqrt st stmatrix sub subc suld sured sust "
    "tanh testp tex tld4 txq vabsdiff vadd vmad vmax vmin vote vset vshl vshr vsub wgmma wmma xor"
).split())
#: PTX's SIMD video instructions, whose names 32-bit Arm NEON shares (``vadd.s16``).
_PTX_VIDEO = frozenset(("vabsdiff", "vadd", "vmad", "vmax", "vmin", "vset", "vshl", "vshr", "vsub"))
_PTX_TYPE_RE = re.compile(r"^[usbf](?:8|16|32|64)$")
#: Qualifiers only PTX writes after such a name: types, state spaces, orders, modes.
_PTX_QUALIFIER_RE = re.compile(
    r"^(?:[usbf](?:8|16|32|64|128)|f16x2|bf16(?:x2)?|tf32|e4m3|e5m2|pred|global|shared|local|const"
    r"|param|generic|cta|gpu|sys|cluster|sync|aligned|volatile|relaxed|acquire|release|acq_rel|nc"
    r"|ca|cg|cs|cv|lu|wb|wt|async|bulk|up|down|bfly|idx|approx|full|ftz|sat|rn|rz|rm|rp|rni|rzi"
    r"|rmi|rpi|wide|hi|lo|uni|any|all|ballot|trans|v[24]|x[124]|m\d+n\d+(?:k\d+)?)$"
)


@lru_cache(maxsize=4096)
def _looks_ptx(template: str) -> bool:
    """Whether a template is recognisably PTX wherever it stands: a PTX instruction with a
    PTX qualifier (``mov.u32``, ``cvt.rn.f16x2.f32``, ``ld.global.nc``) or a PTX special
    register. A dot alone is not enough: RISC-V (``vle8.v``, ``vadd.vv``), LoongArch
    (``ld.d``), MIPS DSP (``mul.ph``), Arm NEON (``vshr.u16``) and Arm SVE operands (``p0.b``)
    have dots too, and host assembly of those CPUs fills a tree's CPU backend."""
    body = template.replace("\\n", "\n").replace("\\t", " ")
    if _SREG_RE.search(body):
        return True
    for stmt in re.split(r"[;\n{}]", body):
        stmt = re.sub(r"^\s*(?:\w+:)?\s*(?:@!?%?\w+\s+)?", "", stmt)
        m = re.match(r"[a-z][\w.:]*", stmt)
        if m is None:
            continue
        first, *rest = m.group(0).split(".")
        if not rest or first not in _PTX_OPCODES:
            continue
        if first in _PTX_VIDEO:  # Arm NEON spells vadd.s16 with one type; PTX's take three
            if sum(bool(_PTX_TYPE_RE.match(q)) for q in rest) >= 3:
                return True
        elif any(_PTX_QUALIFIER_RE.match(q) for q in rest):
            return True
    return False


def _report_ptx(ctx: "Context", where: Node, template: str, in_device: bool | None = None) -> None:
    """Report an asm block in device code, or anywhere when its template is recognisably PTX.

    ``analyze`` reparses ``#define`` bodies, so an asm macro arrives here outside any
    function: there, only a PTX-looking template (dotted opcodes, special registers) counts.
    """
    if not template.strip():
        return  # asm volatile("" ::: "memory") is a portable compiler barrier
    items = _ptx_items(template)
    if items and all(_AMD_MNEMONIC_RE.match(i) for i in items):
        return  # AMD assembly (an AMD-only branch of a ported file), not PTX
    looks_ptx = _looks_ptx(template)
    if in_device is None and not looks_ptx:  # not given: ``where`` is the asm node itself
        in_device = facts.is_device_code(ctx, where)
    if not (in_device or looks_ptx):
        return  # host inline assembly (x86, Arm) is not a GPU porting problem
    shown = ", ".join(f"`{i}`" for i in items[:4]) or "PTX"
    hopper = [i for i in items if i.startswith(_HOPPER_OPCODES)]
    msg = f"inline PTX asm ({shown}): AMD GPUs do not run PTX"
    if hopper:
        msg += f"; `{hopper[0]}` is Hopper-only"
    hints = list(dict.fromkeys(h for i in items for k, h in _PTX_HINTS.items() if i == k or i.startswith(k + ".")))
    suggestion = "replace with " + "; ".join(hints) if hints else \
        "rewrite with HIP intrinsics, or keep the PTX under #ifndef __HIP_PLATFORM_AMD__ and add an AMD path"
    ctx.report(InlinePtx, where, msg, suggestion)


@REGISTRY.visits("gnu_asm_expression", codes=(InlinePtx,))
def _asm(node: Node, ctx: "Context") -> None:
    template = _asm_template(ctx.src, node)
    if template is not None:
        _report_ptx(ctx, node, template)


@REGISTRY.visits("call_expression", source=any_bytes_of(b"cuda::ptx"), codes=(InlinePtx,))
def _cuda_ptx_call(node: Node, ctx: "Context") -> None:
    """``cuda::ptx::mbarrier_arrive_expect_tx(…)``: libcu++ spells one PTX instruction per
    function, so the call is inline PTX under another name (the blind recall corpus's
    second batch: only the ``#include <cuda/ptx>`` was reported, as a libcu++ header).
    Through a namespace alias too (``namespace ptx = cuda::ptx;``, then ``ptx::fence_…()``)."""
    fn = node.child_by_field_name("function")
    if fn is None or fn.type != "qualified_identifier":
        return
    name = "".join(ctx.text(fn).split()).removeprefix("::")  # ::cuda::ptx::get_sreg_laneid(), as CCCL spells it
    alias = name.split("::", 1)[0]
    if alias in _ptx_aliases(ctx):
        name = "cuda::ptx::" + name.split("::", 1)[1]
    if not name.startswith("cuda::ptx::"):
        return
    once(ctx, f"cuda-ptx:{func_key(ctx, node)}", InlinePtx, node,
         f"`{name}` is a PTX instruction (libcu++'s cuda::ptx wrappers): AMD GPUs do not run PTX",
         "rewrite with HIP intrinsics, or keep it under #ifndef __HIP_PLATFORM_AMD__ and add an AMD path")


def _ptx_aliases(ctx: "Context") -> frozenset[str]:
    """The names the file gives ``cuda::ptx`` (``namespace ptx = ::cuda::ptx;``, CCCL's
    transform kernel), once per file; not a name it also gives another namespace."""
    found = ctx.state(_PtxAliases).names
    if found is None:
        targets: dict[str, set[str]] = {}
        for alias in find_all(ctx.tree.root_node, ("namespace_alias_definition",)):
            if (name := alias.child_by_field_name("name")) is not None:
                target = "".join(ctx.text(alias.named_children[-1]).split()).removeprefix("::")
                targets.setdefault(ctx.text(name), set()).add(target)
        found = ctx.state(_PtxAliases).names = frozenset(n for n, t in targets.items() if t == {"cuda::ptx"})
    return found


@dataclass
class _PtxAliases:
    names: frozenset[str] | None = None
