"""setup.py (read with ``ast``, never run) and setup.cfg (read with configparser).

A setup.py can do anything when executed, so hipport only looks at its syntax tree: the
literal arguments of ``setup(...)``, module-level names bound to literals, and every call
to a CUDA extension class. Values computed at run time are reported as unknown, not guessed.
"""

from __future__ import annotations

import ast
import configparser
from pathlib import Path

from hipport.deps.extensions import Extension, hip_build_line
from hipport.deps.model import ParseIssue, Requirement
from hipport.deps.pep508 import parse_requirement
from hipport.deps.walk import parse_python, read_text

#: Calls that build a CUDA extension (torch's, and the common CMake/pybind wrappers).
CUDA_EXTENSION_CALLS = frozenset({"CUDAExtension", "CUDAExtensionWithSources"})
CUDA_SUFFIXES = (".cu", ".cuh")


def read_setup_py(path: Path, rel: str) -> tuple[list[Requirement], list[Extension], list[ParseIssue], set[str], str]:
    """Requirements, CUDA extensions, problems, the extension module names and the project's name."""
    try:
        text = read_text(path)
        tree = parse_python(path, rel, text)
    except (OSError, UnicodeDecodeError, ValueError, SyntaxError) as e:
        return [], [], [ParseIssue(rel, getattr(e, "lineno", 0) or 0, f"cannot parse setup.py: {e}")], set(), ""
    names = _module_literals(tree)
    reqs: list[Requirement] = []
    issues: list[ParseIssue] = []
    project = ""
    for call in _calls(tree, {"setup"}):
        for kw in call.keywords:
            if kw.arg == "name" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                project = kw.value.value
            elif kw.arg == "install_requires":
                _add_all(reqs, issues, _strings(kw.value, names), rel, "", kw.value)
            elif kw.arg == "extras_require":
                value = names.get(kw.value.id) if isinstance(kw.value, ast.Name) else kw.value
                if isinstance(value, ast.Dict):
                    for k, v in zip(value.keys, value.values):
                        group = k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else "extra"
                        _add_all(reqs, issues, _strings(v, names), rel, group, v)
                else:
                    issues.append(ParseIssue(rel, kw.value.lineno, "extras_require is computed at run time; not read"))
    extensions, modules = cuda_extensions(tree, rel, names, hip_path=bool(hip_build_line(text)))
    return reqs, extensions, issues, modules, project


def cuda_extensions(tree: ast.AST, rel: str, names: dict[str, ast.expr], *,
                    hip_path: bool = False) -> tuple[list[Extension], set[str]]:
    """An Extension per ``CUDAExtension(...)`` call (or extension with .cu sources)."""
    found: list[Extension] = []
    modules: set[str] = set()
    for call in _calls(tree, CUDA_EXTENSION_CALLS | {"CppExtension", "Extension"}):
        name = _arg(call, 0, "name")
        sources = _strings(_arg(call, 1, "sources"), names) if _arg(call, 1, "sources") is not None else None
        cu = [s for s in sources or () if s.endswith(CUDA_SUFFIXES)]
        if _callee(call) not in CUDA_EXTENSION_CALLS and not cu:
            continue
        mod = name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else "?"
        modules.add(mod.split(".")[0])
        found.append(Extension(rel, call.lineno, mod, tuple(sources or ()), "builds", hip_path))
    return found, modules


def read_setup_cfg(path: Path, rel: str) -> tuple[list[Requirement], list[ParseIssue], str]:
    """``[options] install_requires``, ``[options.extras_require]`` and ``[metadata] name``."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(read_text(path), source=rel)
    except (OSError, UnicodeDecodeError, ValueError, configparser.Error) as e:
        return [], [ParseIssue(rel, 0, f"cannot parse setup.cfg: {str(e).splitlines()[0]}")], ""
    reqs: list[Requirement] = []
    issues: list[ParseIssue] = []
    if parser.has_option("options", "install_requires"):
        _add_all(reqs, issues, _cfg_list(parser.get("options", "install_requires")), rel, "", None)
    if parser.has_section("options.extras_require"):
        for group, value in parser.items("options.extras_require"):
            _add_all(reqs, issues, _cfg_list(value), rel, group, None)
    return reqs, issues, parser.get("metadata", "name", fallback="").strip()


def _cfg_list(value: str) -> list[str]:
    return [v.strip() for v in value.splitlines() if v.strip() and not v.strip().startswith("#")]


def _add_all(reqs: list[Requirement], issues: list[ParseIssue], specs: list[str] | None, rel: str,
             group: str, node: ast.expr | None) -> None:
    line = getattr(node, "lineno", 0)
    if specs is None:
        issues.append(ParseIssue(rel, line, "requirements are computed at run time; not read"))
        return
    for spec in specs:
        try:
            req = parse_requirement(spec, rel, line, group=group, optional=bool(group))
        except ValueError as e:
            issues.append(ParseIssue(rel, line, str(e)))
            continue
        if req is not None:
            reqs.append(req)


def _module_literals(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level ``NAME = <expr>`` bindings, so ``install_requires=REQS`` can be followed."""
    out: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = node.value
    return out


def _strings(node: ast.expr | None, names: dict[str, ast.expr], depth: int = 0) -> list[str] | None:
    """The string literals of a list/tuple (following names and ``+``), or None if computed."""
    if node is None or depth > 20:
        return None
    if isinstance(node, ast.Name) and node.id in names:
        return _strings(names[node.id], names, depth + 1)
    if isinstance(node, (ast.List, ast.Tuple)):
        out: list[str] = []
        for elt in node.elts:
            if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                out.append(elt.value)
            else:
                return None
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _strings(node.left, names, depth + 1), _strings(node.right, names, depth + 1)
        return None if left is None or right is None else left + right
    return None


def _calls(tree: ast.AST, callees: set[str] | frozenset[str]) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _callee(n) in callees]


def _callee(call: ast.Call) -> str:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def _arg(call: ast.Call, pos: int, name: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return call.args[pos] if len(call.args) > pos else None
