"""What the repository's Python code uses: imports, JIT-built CUDA extensions, CUDA-only strings.

Parsed with ``ast`` (never imported or run). Relative imports and the repository's own
modules are not dependencies; everything else is reported as a ``Requirement`` of kind
"import" so that ``verdict`` can say "imported but declared nowhere".
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from hipport.deps.codes import dep_finding
from hipport.deps.model import ParseIssue, Requirement
from hipport.deps.walk import parse_python
from hipport.findings import Finding

#: torch.utils.cpp_extension entry points that compile CUDA at import time.
JIT_LOADERS = frozenset({"load", "load_inline"})
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


def read_python(path: Path, rel: str) -> tuple[list[Requirement], list[Finding], list[ParseIssue]]:
    """Imports (as kind="import" requirements), HP511/HP513 findings and parse problems."""
    try:
        tree = parse_python(path, rel)
    except (OSError, UnicodeDecodeError, ValueError, SyntaxError) as e:
        return [], [], [ParseIssue(rel, getattr(e, "lineno", 0) or 0, f"cannot parse Python: {e}")]
    reqs: list[Requirement] = []
    findings: list[Finding] = []
    seen_strings: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            reqs += [_imported(a.name, rel, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            reqs.append(_imported(node.module, rel, node.lineno))
            reqs += [_imported(f"{node.module}.{a.name}", rel, node.lineno) for a in node.names if a.name != "*"]
        elif isinstance(node, ast.Call) and _jit_cuda(node):
            findings.append(dep_finding(
                "HP511", rel, node.lineno,
                "torch.utils.cpp_extension JIT-builds CUDA sources at run time",
                "On ROCm PyTorch these sources are hipified when loaded; scan them with `hipport scan`."))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            for needle, why in CUDA_ONLY_STRINGS.items():
                if needle in node.value and needle not in seen_strings:
                    seen_strings.add(needle)
                    findings.append(dep_finding("HP513", rel, node.lineno, f"uses {needle!r}: {why}"))
    return [r for r in reqs if r.name.split(".")[0] not in sys.stdlib_module_names], findings, []


def _imported(dotted: str, rel: str, line: int) -> Requirement:
    return Requirement(name=dotted, source=rel, line=line, raw=f"import {dotted}", kind="import")


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
