"""An xor shuffle's offset whose every value the file spells is under 32.

On CUDA, ``__shfl_xor_sync(m, v, off)`` reads lane ``lane ^ off`` of the caller's 32-lane
warp; an offset under 32 keeps bit 5 of the lane, so on a wave of 64 each 32-lane half
exchanges within itself, as a 32-lane warp does (``logical._below_32``). The offset is
followed through arithmetic, locals declared once and never assigned again, and the
kernel's parameters and template parameters. A parameter's value is what the host gives
it, which may differ with the platform (``prop.warpSize / 2`` is 16 on CUDA, 32 on a wave
of 64): the offset counts as under 32 only when the file, which is no header (whose
includers launch it), names the kernel only to launch or instantiate it (``k<…><<<…>>>(…)``,
``k<…>``), and each of those gives the parameters the offset reads integer constants that
make it 0..31 (``instances.uses``). vLLM's fused_qknorm_rope_kernel.cu::

    constexpr int numElemsPerThread = head_dim / 32;        // head_dim: a template parameter
    ...
    int pairOffset = (rotary_dim / 2) / numElemsPerThread;  // rotary_dim: a kernel argument

launches through ``launchWithPDL(fusedQKNormRopeKernel<…, 64, …>, …, rotary_dim)`` with
the tensor's ``rotary_dim``: hipport cannot tell that it keeps the offset under 32 (its host
code checks ``rotary_dim <= head_dim``), so the finding stays. Refused too: a ``__device__``
helper's parameter (its caller's value), a name of the wave or warp size (``warpSize``,
``WARP_SIZE``, ``kWarpSize``…), the thread and block indices and sizes, calls, members, a
variable assigned more than once or declared by a loop (a ladder: ``_below_32`` judges
those), a name not declared in the function or its parameter lists.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hipport.parse import Node, ancestors, enclosing_function, function_declarator, function_qualifiers, walk
from hipport.rules.warp.instances import parameter_names, uses
from hipport.rules.warp.syntax import arithmetic, int_value, strip, writes_of
from hipport.rules.warp.vocab import is_warp_size_name

if TYPE_CHECKING:
    from hipport.context import Context

#: How many local definitions are followed from the offset (``a = b / 2; b = n / c; …``).
MAX_DEPTH = 4
#: The thread hierarchy: its values differ from lane to lane, or with the launch.
_BUILTIN = frozenset({"warpSize", "threadIdx", "blockIdx", "blockDim", "gridDim"})


def spelled_below_32(ctx: Context, offset: Node, call: Node) -> bool:
    """``offset`` (of the shuffle ``call``) is in 0..31 at each launch and instantiation of
    its function the file spells (see the module's docstring); a function whose parameters
    the offset does not read needs none."""
    func = enclosing_function(call)
    if func is None:
        return False
    value = _value(ctx, offset, func, 0, None)
    if value is not _NEEDS_ARGUMENTS:
        return value is not None and 0 <= value < 32
    bindings = uses(ctx, func)
    if not bindings:
        return False  # no launch seen (a header's are its includers'), or one hipport cannot read
    for given in bindings:
        value = _value(ctx, offset, func, 0, given)
        if not (isinstance(value, int) and 0 <= value < 32):
            return False
    return True


#: ``_value``'s answer when the offset reads a parameter and no launch's arguments were given.
_NEEDS_ARGUMENTS = object()


def _value(ctx: Context, node: Node, func: Node, depth: int, given: dict[str, int | None] | None) -> object:
    """The value of ``node`` in ``func`` with its parameters bound to ``given`` (a launch's
    arguments: ``instances.uses``); None when it cannot be told; ``_NEEDS_ARGUMENTS`` when
    ``given`` is None and a parameter is read."""
    node = strip(node)
    if node.type == "number_literal":
        v = int_value(ctx.src, node)
        return v[0] if v is not None else None
    if node.type == "binary_expression":
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        a = _value(ctx, left, func, depth, given) if left is not None else None
        b = _value(ctx, right, func, depth, given) if right is not None else None
        if a is None or b is None:
            return None
        if a is _NEEDS_ARGUMENTS or b is _NEEDS_ARGUMENTS:
            return _NEEDS_ARGUMENTS
        return arithmetic(ctx.text(node.child_by_field_name("operator")), a, b)
    if node.type != "identifier":
        return None  # a call, a member, a cast, sizeof…: not followed
    name = ctx.text(node)
    if name in _BUILTIN or is_warp_size_name(name):
        return None
    if _a_parameter(ctx, func, name):
        return _NEEDS_ARGUMENTS if given is None else given.get(name)
    value = _single_definition(ctx, func, name)
    return _value(ctx, value, func, depth + 1, given) if value is not None and depth < MAX_DEPTH else None


def _a_parameter(ctx: Context, func: Node, name: str) -> bool:
    """``name`` is declared by ``func``'s template parameter list, or by its parameter list
    when ``func`` is a ``__global__`` kernel, whose arguments its launches give. A
    ``__device__`` helper's argument is its callers' (``warpSize / 2``, say): not followed."""
    lists = []
    declarator = function_declarator(func)
    if declarator is not None and (params := declarator.child_by_field_name("parameters")) is not None \
            and "__global__" in function_qualifiers(ctx.src, func):
        lists.append(params)
    for a in ancestors(func):
        if a.type == "template_declaration" and (params := a.child_by_field_name("parameters")) is not None:
            lists.append(params)
            break
    return any(name in parameter_names(ctx, params) for params in lists)


def _single_definition(ctx: Context, func: Node, name: str) -> Node | None:
    """The initial value of the one local ``name`` of ``func``, when it is declared once,
    not by a ``for`` (a loop variable), and never assigned, incremented or decremented."""
    body = func.child_by_field_name("body")
    if body is None:
        return None
    found = None
    for n in walk(body):
        if n.type != "init_declarator" or ctx.text(n.child_by_field_name("declarator")) != name:
            continue
        decl = n.parent
        if found is not None or decl is None or decl.parent is None or decl.parent.type == "for_statement":
            return None
        found = n
    value = found.child_by_field_name("value") if found is not None else None
    if value is None:
        return None
    at = [m.start() for m in writes_of(name).finditer(ctx.src, body.start_byte, body.end_byte)]
    return value if at == [found.child_by_field_name("declarator").start_byte] else None
