"""What the repository's Python code uses: imports, JIT-built CUDA extensions, CUDA-only strings.

Parsed with ``ast`` (never imported or run). Relative imports and the repository's own
modules are not dependencies; everything else is reported as a ``Requirement`` of kind
"import" so that ``verdict`` can say "imported but declared nowhere". An import inside
``try: … except ImportError`` (or ModuleNotFoundError, Exception, a bare except) is
optional: the code has a path without the package, so it is never a blocker.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from hipport.deps.codes import dep_finding
from hipport.deps.extensions import Extension
from hipport.deps.model import ParseIssue, Requirement
from hipport.deps.walk import parse_python
from hipport.findings import Finding

#: torch.utils.cpp_extension entry points that compile CUDA at import time.
JIT_LOADERS = frozenset({"load", "load_inline"})
SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c")
#: String constants in Python that only mean something on NVIDIA.
CUDA_ONLY_STRINGS = {
    "CUDAExecutionProvider": "onnxruntime's CUDA execution provider; use MIGraphXExecutionProvider",
    "TensorrtExecutionProvider": "onnxruntime's TensorRT execution provider; use MIGraphXExecutionProvider",
    "ROCMExecutionProvider": "onnxruntime's ROCm execution provider was removed in ORT 1.23; use MIGraphXExecutionProvider",
    "nvidia-smi": "NVIDIA's management tool; use amd-smi (or rocm-smi) on ROCm",
}


def local_modules(python_files: list[Path], root: Path) -> set[str]:
    """Top-level module names the repository itself provides (its packages and scripts)."""
    names: set[str] = set()
    for path in python_files:
        parts = path.relative_to(root).parts
        names.add(Path(parts[-1]).stem)
        names.update(p for p in parts[:-1] if p.isidentifier())
    return names


def read_python(path: Path, rel: str) -> tuple[list[Requirement], list[Finding], list[ParseIssue], list[Extension]]:
    """Imports (as kind="import" requirements), HP513 findings, parse problems, JIT extensions."""
    try:
        tree = parse_python(path, rel)
    except (OSError, UnicodeDecodeError, ValueError, SyntaxError) as e:
        return [], [], [ParseIssue(rel, getattr(e, "lineno", 0) or 0, f"cannot parse Python: {e}")], []
    extensions: list[Extension] = []
    reqs: list[Requirement] = []
    findings: list[Finding] = []
    seen_strings: set[str] = set()
    guarded = _guarded_imports(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            reqs += [_imported(a.name, rel, node.lineno, node in guarded) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            optional = node in guarded
            reqs.append(_imported(node.module, rel, node.lineno, optional))
            reqs += [_imported(f"{node.module}.{a.name}", rel, node.lineno, optional)
                     for a in node.names if a.name != "*"]
        elif isinstance(node, ast.Call) and _jit_cuda(node):
            extensions.append(_jit_extension(node, rel))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            for needle, why in CUDA_ONLY_STRINGS.items():
                if needle in node.value and needle not in seen_strings:
                    seen_strings.add(needle)
                    findings.append(dep_finding("HP513", rel, node.lineno, f"uses {needle!r}: {why}"))
    return [r for r in reqs if r.name.split(".")[0] not in sys.stdlib_module_names], findings, [], extensions


def _imported(dotted: str, rel: str, line: int, optional: bool = False) -> Requirement:
    return Requirement(name=dotted, source=rel, line=line, raw=f"import {dotted}", kind="import",
                       optional=optional)


#: Exceptions whose handler means "this import may fail and the code copes".
_IMPORT_FAILURES = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError"})


def _guarded_imports(tree: ast.AST) -> set[ast.stmt]:
    """Import statements in the body of a ``try`` whose handlers catch a failed import."""
    out: set[ast.stmt] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(_catches_import(h) for h in node.handlers):
            out |= {n for stmt in node.body for n in ast.walk(stmt) if isinstance(n, (ast.Import, ast.ImportFrom))}
    return out


def _catches_import(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any((n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else "")
               in _IMPORT_FAILURES for n in names)


def _jit_extension(call: ast.Call, rel: str) -> Extension:
    """``load(name="k", sources=[os.path.join(here, "csrc", "k.cu")])``: the file names in it."""
    name = next((kw.value.value for kw in call.keywords if kw.arg == "name" and isinstance(kw.value, ast.Constant)),
                call.args[0].value if call.args and isinstance(call.args[0], ast.Constant) else "?")
    sources = [kw.value for kw in call.keywords if kw.arg == "sources"] + list(call.args[1:2])
    files = tuple(c.value for s in sources for c in ast.walk(s)
                  if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value.endswith(SOURCE_SUFFIXES))
    return Extension(rel, call.lineno, str(name), files, "JIT-builds")


def _jit_cuda(call: ast.Call) -> bool:
    """``load(..., sources=[..."x.cu"])`` or ``load_inline(..., cuda_sources=...)``."""
    f = call.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    if name not in JIT_LOADERS:
        return False
    if name == "load_inline":
        return any(kw.arg == "cuda_sources" for kw in call.keywords)
    sources = [kw.value for kw in call.keywords if kw.arg == "sources"] + list(call.args[1:2])
    return any(isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value.endswith((".cu", ".cuh"))
               for s in sources for c in ast.walk(s))
