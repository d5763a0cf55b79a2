"""HP337: an operator on CUDA vector types that HIP's vector types already define.

CUDA's ``float2``… are plain structs, so projects define their arithmetic themselves (the
CUDA samples' ``helper_math.h``, copied into many trees). HIP's are ``HIP_vector_type``
classes that define it already; where HIP's operator is not a template (the compound
assignments and the friend ``*`` and ``/``: ``mappings/released_headers.toml``
``[vector_operators]``), the project's becomes an equal candidate and every use is "use of
overloaded operator '*=' is ambiguous".
"""

from __future__ import annotations

import re

from hipport.context import Context
from hipport.findings import Effort, Severity
from hipport.parse import Node
from hipport.registry import any_bytes_of
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.rules.released_headers.common import cuda_only, raw_data


@REGISTRY.rule
class VectorOperatorRedefined(SaysWhatItIs):
    """An operator on CUDA vector types that HIP's vector types already define

    ## Why
    HIP's `float2`, `int4`… (`HIP_vector_type`) define `+=`, `-=`, `*=`, `/=` (and the
    other compound assignments) as members and `*` and `/` as friends, component-wise. A
    project's own `operator*=(float2&, float2)` is then an equally good candidate: each use
    fails with "use of overloaded operator '*=' is ambiguous", in the 6.2 and 7.1 headers
    alike. HIP's `+` and `-`, and its operators with a scalar, are templates, which the
    project's overloads beat: those stay.

    ## Example

    ```cuda
    inline __host__ __device__ void operator+=(float4 &a, float4 b)
    {
        a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w;
    }
    ```
    becomes
    ```cuda
    #ifndef __HIP_PLATFORM_AMD__
    inline __host__ __device__ void operator+=(float4 &a, float4 b)
    {
        a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w;
    }
    #endif
    ```

    ## Fix
    `hipport convert` keeps a definition that computes component by component what HIP's
    does for CUDA only (`#ifndef __HIP_PLATFORM_AMD__`; HIP on NVIDIA uses CUDA's structs
    and still needs it). One that computes something else (a dot product as `*`) is
    reported: rename it or give it another signature. A definition that shares its lines
    with other code is reported, not changed.
    """

    code = "HP337"
    slug = "vector-operator-redefined"
    severity = Severity.HIGH
    effort = Effort.NONE


_COMPONENTS = "xyzw"
_SPACE = re.compile(rb"\s+|//[^\n]*|/\*.*?\*/", re.S)


def _facts() -> tuple[frozenset[str], frozenset[str], re.Pattern[str]]:
    raw = raw_data()["vector_operators"]
    types = re.compile(r"(?:%s)([1-4])" % "|".join(raw["types"]))
    return frozenset(raw["members"]), frozenset(raw["friends"]), types


_MEMBERS, _FRIENDS, _VECTOR = _facts()


@REGISTRY.visits("function_definition", source=any_bytes_of(b"operator"),
                 codes=(VectorOperatorRedefined,))
def _definition(node: Node, ctx: Context) -> None:
    func = node.child_by_field_name("declarator")
    if func is None or func.type != "function_declarator":
        return
    name = func.child_by_field_name("declarator")
    if name is None or name.type != "operator_name":
        return
    op = ctx.text(name)[len("operator"):].strip()
    if op not in _MEMBERS and op not in _FRIENDS:
        return
    params = _parameters(ctx, func)
    if params is None:
        return
    (type_a, ref_a, a), (type_b, _, b) = params
    vector = _VECTOR.fullmatch(type_a)
    if vector is None or type_b != type_a or (op in _MEMBERS and not ref_a):
        return
    comps = _COMPONENTS[:int(vector[1])]
    if op in _MEMBERS:
        expected = "{" + "".join(f"{a}.{c}{op}{b}.{c};" for c in comps) + "}"
    else:
        expected = "{returnmake_%s(%s);}" % (type_a, ",".join(f"{a}.{c}{op}{b}.{c}" for c in comps))
    body = node.child_by_field_name("body")
    # whitespace and comments removed on both sides ("return make_…" reads "returnmake_…")
    same = body is not None and _SPACE.sub(b"", ctx.src[body.start_byte:body.end_byte]) == expected.encode()
    signature = f"operator{op}({type_a}{'&' if ref_a else ''}, {type_b})"
    if same:
        ctx.report(VectorOperatorRedefined, name,
                   f"`{signature}`: HIP's {type_a} defines it (component-wise, as this does), so "
                   "every use would be ambiguous", "kept for CUDA only (#ifndef __HIP_PLATFORM_AMD__)",
                   fix=[] if ctx.in_macro_body else cuda_only(ctx, node))
    else:
        ctx.report(VectorOperatorRedefined, name,
                   f"`{signature}`: HIP's {type_a} defines it component-wise and this computes "
                   "something else; every use would be ambiguous",
                   "rename it, or keep it for CUDA only if HIP's component-wise one is meant")


def _parameters(ctx: Context, func: Node) -> tuple[tuple[str, bool, str], ...] | None:
    """((type, by non-const reference, name), …) of a two-parameter declarator, else None."""
    params = func.child_by_field_name("parameters")
    if params is None:
        return None
    found = []
    for p in params.named_children:
        if p.type != "parameter_declaration":
            return None
        type_node, declarator = p.child_by_field_name("type"), p.child_by_field_name("declarator")
        if type_node is None or declarator is None:
            return None
        const = any(c.type == "type_qualifier" and ctx.text(c) == "const" for c in p.named_children)
        ref = declarator.type == "reference_declarator"
        ident = declarator.named_children[0] if ref and declarator.named_children else declarator
        if ident.type != "identifier":
            return None
        found.append((ctx.text(type_node), ref and not const, ctx.text(ident)))
    return tuple(found) if len(found) == 2 else None
