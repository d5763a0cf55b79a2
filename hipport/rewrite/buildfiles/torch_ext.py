"""PyTorch extensions (``setup.py`` with ``CUDAExtension``, ``cpp_extension.load(...)``).

ROCm PyTorch builds a ``CUDAExtension`` itself: it hipifies the sources and compiles them
with hipcc. What breaks that build is what the script says to nvcc and about CUDA:
nvcc-only flags in ``extra_compile_args["nvcc"]`` / ``extra_cuda_cflags``, architecture
lists (``-gencode``, ``sm_80``, ``TORCH_CUDA_ARCH_LIST``), and tests of ``CUDA_HOME`` or
``torch.version.cuda``, which are None on ROCm. Each is a finding with its fix (HP7xx).
With ``--rename`` its ``.cu`` source names become ``.hip`` (ROCm PyTorch compiles ``.hip``
sources as HIP; CUDA PyTorch then no longer builds it, which is what renaming means).
Nothing else is rewritten: the same script usually still has to build on CUDA, so the fix is
a ROCm branch (``if torch.version.hip:``), which is a person's choice of shape.

Read with Python's own ``ast`` (no dependency); a script that does not parse is left
alone, with no finding (it may be Python 2, or a template).
"""

from __future__ import annotations

import ast
import re

from hipport.rewrite.buildfiles import BuildContext
from hipport.rewrite.buildfiles.maps import arch_list, load
from hipport.rewrite.buildfiles.rename import CU_NAME, extension_word, outside_extension_build, rename_range

#: A script is an extension build only if it uses torch's cpp_extension; a CUDA_HOME
#: elsewhere (a test, a runtime probe) is not this family's business.
_HINTS = (b"cpp_extension", b"CUDAExtension")
_ARCH_RE = re.compile(r"\b(?:sm|compute)_[0-9]{2,3}[af]?\b")
_FLAG_KEYS = frozenset({"nvcc"})
_FLAG_KWARGS = frozenset({"extra_cuda_cflags"})


def convert(ctx: BuildContext) -> None:
    builds = any(h in ctx.src for h in _HINTS)
    renaming = ctx.options.rename and CU_NAME.search(ctx.src) is not None
    if not builds and not renaming:
        return
    try:
        tree = ast.parse(ctx.src)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    if renaming:
        _rename(ctx, tree, builds)
    if not builds:
        return
    seen_lists: set[int] = set()
    builds = False
    handled = _handled_none_tests(tree)
    for node in ast.walk(tree):
        if id(node) in handled:
            continue
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value in _FLAG_KEYS:
                    _flag_list(ctx, value, seen_lists)
        elif isinstance(node, ast.keyword) and node.arg in _FLAG_KWARGS:
            _flag_list(ctx, node.value, seen_lists)
        elif isinstance(node, ast.Call):
            name = _callee(node)
            if name in ("CUDAExtension", "load", "load_inline"):
                builds = builds or name == "CUDAExtension" or _has_cuda_sources(node)
        elif isinstance(node, ast.Attribute) and _dotted(node) == "torch.version.cuda":
            _report(ctx, "HP703", node, "torch.version.cuda is None on ROCm PyTorch",
                    "test torch.version.hip too (or torch.cuda.is_available(), true on ROCm)")
        elif isinstance(node, ast.Name) and node.id in load().raw["torch"]["cuda_home_names"] \
                and isinstance(node.ctx, ast.Load):
            _report(ctx, "HP703", node, f"{node.id} is None on ROCm PyTorch (no CUDA toolkit)",
                    "use ROCM_HOME from torch.utils.cpp_extension when torch.version.hip is set")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in seen_lists:
                continue
            if node.value in load().raw["torch"]["arch_env"]:
                _report(ctx, "HP704", node, f"{node.value}: CUDA architectures for the extension",
                        f"on ROCm set PYTORCH_ROCM_ARCH (e.g. {';'.join(arch_list(ctx.options))})")
            elif _ARCH_RE.search(node.value) and not node.value.startswith(("http", "/")):
                _report(ctx, "HP704", node, f"{node.value!r}: a hard-coded CUDA architecture",
                        f"on ROCm give AMD GPUs ({','.join(arch_list(ctx.options))}) or leave it to PYTORCH_ROCM_ARCH")
    if builds:
        at = next((n for n in ast.walk(tree) if isinstance(n, ast.Call) and _callee(n) in
                   ("CUDAExtension", "load", "load_inline")), None)
        if at is not None:
            _report(ctx, "HP705", at, "ROCm PyTorch hipifies this extension's CUDA sources at build time",
                    load().raw["torch"]["hipify_note"])


def _name_of(node: ast.AST) -> str | None:
    """``CUDA_HOME`` or ``torch.version.cuda``: the names HP703 is about, as written."""
    if isinstance(node, ast.Name):
        return node.id
    return _dotted(node) if isinstance(node, ast.Attribute) else None


def _tested(test: ast.AST) -> tuple[set[str], bool | None]:
    """The names an ``if`` tests for None or truth (``X is None``, ``not X``, ``X is not
    None``, ``X``, ``and``/``or`` of those) and whether its body is their None case (True),
    its ``else`` (False), or it cannot say (None, mixed tests)."""
    if isinstance(test, ast.BoolOp):
        parts = [_tested(v) for v in test.values]
        sides = {side for _, side in parts}
        return set().union(*(names for names, _ in parts)), sides.pop() if len(sides) == 1 else None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        names, side = _tested(test.operand)
        return names, None if side is None else not side
    none_body = False
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        test, none_body = test.left, isinstance(test.ops[0], ast.Is)
    name = _name_of(test)
    return ({name}, none_body) if name is not None else (set(), None)


def _asks_rocm(test: ast.AST) -> bool:
    """A test that names ROCm or HIP itself (``OpBuilder.is_rocm_pytorch()``, ``torch.version.hip``,
    ``IS_ROCM``): the script tells the two platforms apart there."""
    for node in ast.walk(test):
        name = _name_of(node)
        if name is not None and any(part.lower() == "hip" or "rocm" in part.lower()
                                    for part in re.split(r"[._]", name)):
            return True
    return False


def _gives_up(branch: list[ast.stmt]) -> bool:
    """A branch that raises or exits: the script's "no CUDA" case is a failure, not a port."""
    for node in (n for stmt in branch for n in ast.walk(stmt)):
        if isinstance(node, (ast.Raise, ast.Assert)):
            return True
        if isinstance(node, ast.Call) and _callee(node) in ("exit", "quit", "_exit", "abort"):
            return True
    return False


def _handled_none_tests(tree: ast.AST) -> set[int]:
    """Nodes of ``CUDA_HOME`` / ``torch.version.cuda`` inside an ``if`` that tests that name
    for None and whose None case carries on (DeepSpeed's ``if CUDA_HOME is None: ldflags =
    ['-laio']  # the ROCM case``), or that tests ``torch.version.hip``: the script already
    has its ROCm case. A None case that raises or exits (``raise RuntimeError("needs the CUDA
    toolkit")``) is what breaks on ROCm, and stays a finding."""
    handled: set[int] = set()
    for block in (getattr(n, f, None) for n in ast.walk(tree) for f in ("body", "orelse")):
        if not isinstance(block, list):
            continue
        for i, node in enumerate(block):
            if not isinstance(node, ast.If):
                continue
            names, none_body = _tested(node.test)
            rocm_body = "torch.version.hip" in names  # the body is the ROCm case
            platform = rocm_body or _asks_rocm(node.test)  # both cases are written knowingly
            if platform:
                names, none_body = names | {"torch.version.cuda", *load().raw["torch"]["cuda_home_names"]}, False
            if not names or none_body is None \
                    or (not platform and _gives_up(node.body if none_body else node.orelse)):
                continue
            guarded: list[ast.AST] = [node]
            if (none_body or rocm_body) and node.body \
                    and isinstance(node.body[-1], (ast.Return, ast.Continue, ast.Break)):
                guarded += block[i + 1:]  # ``if X is None: return False`` guards what follows
            for inner in (n for g in guarded for n in ast.walk(g)):
                if _name_of(inner) in names:
                    handled.add(id(inner))
    return handled


def _flag_list(ctx: BuildContext, value: ast.AST, seen: set[int]) -> None:
    """The nvcc flags of an ``extra_compile_args["nvcc"]`` (or ``extra_cuda_cflags``) list."""
    if not isinstance(value, (ast.List, ast.Tuple)):
        return
    maps = load()
    elts = value.elts
    i = 0
    while i < len(elts):
        e = elts[i]
        i += 1
        if not (isinstance(e, ast.Constant) and isinstance(e.value, str)):
            continue
        seen.add(id(e))
        hit = maps.flag(e.value.split(" ", 1)[0])
        if hit is None:
            if _ARCH_RE.search(e.value):
                _report(ctx, "HP701", e, f"{e.value!r}: a CUDA architecture among the nvcc flags",
                        "on ROCm drop it: PYTORCH_ROCM_ARCH chooses the GPUs")
            continue
        row, glued = hit
        shown = e.value
        if row.takes and glued is None and " " not in e.value and i < len(elts):
            nxt = elts[i]
            if isinstance(nxt, ast.Constant) and isinstance(nxt.value, str):
                seen.add(id(nxt))
                shown += " " + nxt.value
                i += 1
        if row.value and not shown.endswith(row.value):
            continue
        if row.action == "arch":
            _report(ctx, "HP701", e, f"{shown!r}: nvcc's GPU architecture flag; hipcc rejects it",
                    "on ROCm drop it (if torch.version.hip: …): PYTORCH_ROCM_ARCH chooses the GPUs")
            continue
        fix = {"drop": "on ROCm drop it", "replace": f"on ROCm write {row.with_!r}",
               "unwrap": "on ROCm pass the host flags directly"}.get(row.action, "")
        _report(ctx, "HP702", e, f"{shown!r}: an nvcc flag hipcc does not take ({row.note})",
                f"{fix} (if torch.version.hip: …)" if fix else row.note)


def _rename(ctx: BuildContext, tree: ast.AST, builds: bool) -> None:
    """``--rename``: the ``.cu`` names in an extension script's strings (sources lists,
    globs, ``name + ".cu"``) → ``.hip``; in any other script, a finding each (HP610)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr):  # a docstring or a bare string names nothing
            skip.add(id(node.value))
        elif isinstance(node, ast.JoinedStr):  # its parts' positions are the f-string's own
            skip.update(id(v) for v in node.values)
        if id(node) in skip or not (isinstance(node, ast.JoinedStr) or
                                    isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        start = _offset(ctx, node.lineno, node.col_offset)
        end = _offset(ctx, node.end_lineno or node.lineno, node.end_col_offset or node.col_offset)
        if not builds:
            if CU_NAME.search(ctx.src, start, end):
                outside_extension_build(ctx, start, end, ctx.src[start:end].decode("utf-8", "replace"))
            continue
        rename_range(ctx, start, end)
        if isinstance(node, ast.Constant):
            extension_word(ctx, node.value, "", start, end)


def _callee(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _has_cuda_sources(call: ast.Call) -> bool:
    for n in ast.walk(call):
        if isinstance(n, ast.keyword) and n.arg == "cuda_sources":
            return True
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.endswith(".cu"):
            return True
    return False


def _report(ctx: BuildContext, code: str, node: ast.AST, message: str, suggestion: str) -> None:
    start = _offset(ctx, node.lineno, node.col_offset)
    end = _offset(ctx, node.end_lineno or node.lineno, node.end_col_offset or node.col_offset)
    ctx.report(code, start, end, message, suggestion)


def _offset(ctx: BuildContext, line: int, col: int) -> int:
    """A byte offset from ast's 1-based line and UTF-8 byte column."""
    return ctx.line_start(line) + col
