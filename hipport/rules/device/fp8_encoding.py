"""Rules whose answer depends on the GPU (``--offload-arch``): fp8 code whose meaning
depends on the encoding.

CUDA's `__nv_fp8_*` types are OCP fp8. gfx942's are FNUZ: another exponent bias, one NaN
(0x80) instead of 0x7F/0xFF, no negative zero and no infinity. A value converted through
the types keeps its meaning; code that looks at the bytes does not. Such code is reported
where it looks, for every target list that has a GPU whose fp8 is not OCP.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hipport import gpus
from hipport.context import Context
from hipport.findings import Effort, Severity
from hipport.parse import Node, text
from hipport.registry import any_bytes_of
from hipport.rules import REGISTRY, SaysWhatItIs

#: A CUDA type that holds fp8 bytes or values (``__nv_fp8_e4m3``, ``__nv_fp8_storage_t``).
#: HIP's own types (``__hip_fp8_e4m3_fnuz``) name their encoding: code using them chose it.
_FP8_TYPE_RE = re.compile(r"\b__nv_fp8\w*")
_COMPARE_OPS = frozenset({"==", "!=", "<", ">", "<=", ">=", "&", "^", "|"})


@REGISTRY.rule
class Fp8EncodingDependent(SaysWhatItIs):
    """fp8 bytes read or tested as bits: the meaning depends on the GPU's encoding

    ## Why
    CUDA's fp8 types (`__nv_fp8_e4m3`, `__nv_fp8_e5m2`) use the OCP encoding; gfx942
    (MI300) uses FNUZ, where the exponent bias differs by one, 0x80 is the only NaN, and
    there is neither negative zero nor infinity. gfx950 and gfx12 use OCP. Conversions
    through the fp8 types keep their meaning on both; a test of the stored bits
    (`x.__x != 0x7F`), or bytes reinterpreted as fp8, silently changes meaning.

    ## Example
    ```cuda
    const __nv_fp8_storage_t b = q.__x;
    if (b != 0x7F && b != 0xFF) { ... }   // "not NaN" in OCP e4m3; FNUZ's NaN is 0x80
    ```

    ## Fix
    Test values, not bits (`isnan(float(q))`), or keep one bit-level branch per encoding
    (`#if defined(__gfx942__)`); convert bytes through the fp8 type of the encoding they hold.
    """

    code = "HP321"
    run_time_only = True  # judged by the GPU passes (Rule.run_time_only)
    slug = "fp8-encoding-dependent"
    severity = Severity.HIGH
    effort = Effort.SMALL


def _encodings_differ(ctx: Context) -> bool:
    """Whether some target's fp8 is not CUDA's OCP (a GPU without fp8 gets HIP's FNUZ types)."""
    return any(g.fp8 != "ocp" for g in gpus.gpus(gpus.archs_of(ctx.options)))


@dataclass
class _Fp8Names:
    """Per file: the names declared with an fp8 type (None until asked)."""

    names: set[str] | None = None


#: ``bits = q.__x`` / ``uint8_t b = q[i].__x;``: an integer that holds an fp8 value's bytes.
_BITS_COPY_RE = re.compile(rb"\b([A-Za-z_]\w*)\s*=\s*([A-Za-z_]\w*)\s*(?:\[[^\]\n]*\]\s*)?\.\s*__x\b")


def _fp8_names(ctx: Context) -> set[str]:
    """Variables and parameters of the file declared with an fp8 type, found once, and the
    integers initialised or assigned from such a variable's bytes (``uint8_t b = v.__x``):
    a test of those is a test of the fp8 bits as much as ``v.__x == 0x7F`` is."""
    state = ctx.state(_Fp8Names)
    found = state.names
    if found is None:
        found = state.names = set()
        for m in re.finditer(rb"\b__nv_fp8\w*\s*[*&]?\s*(?:const\s+)?([A-Za-z_]\w*)\s*[=;,)\[(]", ctx.src):
            found.add(m.group(1).decode("latin-1"))
        for m in _BITS_COPY_RE.finditer(ctx.src):
            if m.group(2).decode("latin-1") in found:
                found.add(m.group(1).decode("latin-1"))
    return found


def _holds_fp8_bits(ctx: Context, node: Node) -> bool:
    """``q.__x``, a variable of an fp8 type (or its storage type), or a cast to one."""
    while node.type in ("parenthesized_expression", "subscript_expression") and node.named_child_count:
        node = node.named_children[0]  # (x), q[i]: the fp8 variable itself
    if node.type == "field_expression":
        field = node.child_by_field_name("field")
        arg = node.child_by_field_name("argument")
        return field is not None and text(ctx.src, field) == "__x" and arg is not None \
            and _holds_fp8_bits(ctx, arg)
    if node.type == "identifier":
        return text(ctx.src, node) in _fp8_names(ctx)
    if node.type == "cast_expression":
        t = node.child_by_field_name("type")
        return t is not None and _FP8_TYPE_RE.search(text(ctx.src, t)) is not None
    return False


@REGISTRY.visits("binary_expression", source=any_bytes_of(b"fp8"), codes=(Fp8EncodingDependent,))
def _bit_test(node: Node, ctx: Context) -> None:
    op = node.child_by_field_name("operator")
    if op is None or text(ctx.src, op) not in _COMPARE_OPS or not _encodings_differ(ctx):
        return
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    for bits, other in ((left, right), (right, left)):
        if bits is not None and other is not None and other.type == "number_literal" \
                and _holds_fp8_bits(ctx, bits):
            ctx.report(Fp8EncodingDependent, node,
                       f"`{ctx.text(node)}` tests fp8 bits against `{ctx.text(other)}`: OCP (CUDA, "
                       f"gfx950) and FNUZ ({_fnuz_targets(ctx)}) encode NaN, zero and the exponent "
                       "differently", "test the value (`isnan(float(x))`), or branch per encoding")
            return


@REGISTRY.visits("cast_expression", "template_function", source=any_bytes_of(b"fp8"),
                 codes=(Fp8EncodingDependent,))
def _reinterpret(node: Node, ctx: Context) -> None:
    if not _encodings_differ(ctx):
        return
    if node.type == "template_function":
        name = node.child_by_field_name("name")
        args = node.child_by_field_name("arguments")
        if name is None or args is None or text(ctx.src, name) != "reinterpret_cast":
            return
        target = text(ctx.src, args)
    else:
        t = node.child_by_field_name("type")
        if t is None or "*" not in text(ctx.src, t):
            return  # a value conversion keeps its meaning; a pointer cast reads the bytes
        target = text(ctx.src, t)
    if _FP8_TYPE_RE.search(target) and "storage_t" not in target:
        ctx.report(Fp8EncodingDependent, node,
                   f"`{ctx.text(node)}` reads bytes as fp8 values: bytes written in CUDA's OCP "
                   f"encoding mean other numbers in FNUZ ({_fnuz_targets(ctx)})",
                   "convert through the fp8 type of the encoding the bytes hold")


def _fnuz_targets(ctx: Context) -> str:
    names = [g.arch for g in gpus.gpus(gpus.archs_of(ctx.options)) if g.fp8 != "ocp"]
    return ", ".join(names)


@REGISTRY.visits("assignment_expression", source=any_bytes_of(b"__x"), codes=(Fp8EncodingDependent,))
def _bytes_stored(node: Node, ctx: Context) -> None:
    """``e.__x = raw[i]``: bytes stored into an fp8 value are read in the target's encoding."""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None or right is None or left.type != "field_expression" or not _encodings_differ(ctx):
        return
    if not _holds_fp8_bits(ctx, left) or _holds_fp8_bits(ctx, right):
        return  # not an fp8 value's bytes, or bytes copied from another fp8 value
    ctx.report(Fp8EncodingDependent, node,
               f"`{ctx.text(node)}` stores bytes into an fp8 value: bytes written in CUDA's OCP "
               f"encoding mean other numbers in FNUZ ({_fnuz_targets(ctx)})",
               "convert through the fp8 type of the encoding the bytes hold")
