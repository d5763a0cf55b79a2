"""Manifest and source readers on ordinary, malformed and hostile inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from hipport.deps import assess
from hipport.deps.conda import read_environment
from hipport.deps.docker import read_dockerfile
from hipport.deps.imports import read_python
from hipport.deps.pyproject import poetry_to_pep440, read_pyproject
from hipport.deps.requirements import read_requirements
from hipport.deps.setuppy import read_setup_cfg, read_setup_py
from hipport.deps.versioning import _admits
from hipport.options import Options
from packaging.specifiers import SpecifierSet


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_requirements_includes_markers_hashes_and_urls(tmp_path):
    write(tmp_path, "base.txt", "numpy\n-r requirements.txt\n")  # a cycle back
    write(tmp_path, "constraints.txt", "flash-attn==2.5.8\n")
    req = write(tmp_path, "requirements.txt", "\n".join([
        "-r base.txt", "-c constraints.txt",
        "torch==2.1.0+cu121 \\", "    --hash=sha256:00",
        "pywin32 ; sys_platform == 'win32'",
        "flash-attn  # comment",
        "git+https://github.com/x/knn.git#egg=simple_knn",
        "--extra-index-url https://download.pytorch.org/whl/cu118",
    ]))
    reqs, issues, findings = read_requirements(req, tmp_path)
    by = {(r.name, r.kind) for r in reqs}
    assert ("numpy", "declared") in by and ("flash-attn", "constraint") in by
    assert ("pywin32", "declared") not in by  # excluded by its marker on Linux
    torch = next(r for r in reqs if r.name == "torch")
    assert torch.local == "cu121" and torch.line == 3
    assert torch.index_urls == ("https://download.pytorch.org/whl/cu118",)  # pip: file-wide
    assert any(r.name == "simple-knn" for r in reqs)
    assert [f.code for f in findings] == ["HP501"] and findings[0].line == 8
    assert not issues


def test_requirements_refuses_includes_outside_the_repository(tmp_path):
    repo = tmp_path / "repo"
    write(tmp_path, "secret.txt", "leaked-package\n")
    req = write(repo, "requirements.txt", "-r ../secret.txt\n-r /etc/passwd\nnot a requirement ((\n")
    reqs, issues, _ = read_requirements(req, repo)
    assert reqs == []
    assert [i.line for i in issues] == [1, 2, 3]
    assert "outside the repository" in issues[0].message


def test_a_malformed_file_is_named_and_scoring_goes_on(tmp_path):
    write(tmp_path, "pyproject.toml", "[project\ndependencies = [")
    write(tmp_path, "setup.py", "def broken(:\n")
    write(tmp_path, "environment.yml", "dependencies: [unclosed\n")
    write(tmp_path, "requirements.txt", "tensorrt==10.0\n")
    a = assess(tmp_path, Options(), scan_own_sources=False)
    named = {i.path for i in a.issues}
    assert {"pyproject.toml", "setup.py", "environment.yml"} <= named
    assert any(v.key == "tensorrt" and v.blocker for v in a.verdicts)
    assert a.score < 100


def test_setup_py_is_read_statically(tmp_path):
    path = write(tmp_path, "setup.py", "\n".join([
        "import os",
        "os.remove('/definitely/not/here')",
        "BASE = ['numpy', 'torch>=2']",
        "setup(install_requires=BASE + ['xformers'],",
        "      extras_require={'trt': ['tensorrt'], 'dyn': compute()},",
        "      ext_modules=[CUDAExtension('pkg._C', ['a.cu', 'b.cpp']), Extension('plain', ['c.c'])])",
    ]))
    reqs, extensions, issues, modules, _ = read_setup_py(path, "setup.py")
    assert [r.name for r in reqs] == ["numpy", "torch", "xformers", "tensorrt"]
    assert [r.group for r in reqs][-1] == "trt" and reqs[-1].optional and not reqs[0].optional
    assert [(e.name, e.sources, e.hip_path) for e in extensions] == [("pkg._C", ("a.cu", "b.cpp"), False)]
    assert modules == {"pkg"}
    assert [(i.line, "computed at run time" in i.message) for i in issues] == [(5, True)]  # 'dyn' extra


def test_setup_py_with_computed_requirements_says_so(tmp_path):
    path = write(tmp_path, "setup.py", "setup(install_requires=open('r.txt').read().splitlines())\n")
    reqs, _, issues, _, _ = read_setup_py(path, "setup.py")
    assert reqs == [] and "computed at run time" in issues[0].message


def test_setup_cfg(tmp_path):
    path = write(tmp_path, "setup.cfg", "[options]\ninstall_requires =\n    torch\n    pycuda>=2022\n"
                                        "[options.extras_require]\ngpu = cupy-cuda12x\n")
    reqs, issues, _ = read_setup_cfg(path, "setup.cfg")
    assert [(r.name, r.group) for r in reqs] == [("torch", ""), ("pycuda", ""), ("cupy-cuda12x", "gpu")]
    assert not issues


def test_pyproject_poetry_pdm_uv_and_groups(tmp_path):
    path = write(tmp_path, "pyproject.toml", """
[project]
dependencies = ["torch"]
[project.optional-dependencies]
fast = ["flash-attn>=2.6.2"]
[tool.poetry.dependencies]
python = "^3.10"
bitsandbytes = "^0.43"
[tool.poetry.group.trt.dependencies]
tensorrt = { version = "8.6.1" }
[tool.pdm.dev-dependencies]
lint = ["ruff"]
[tool.uv]
dev-dependencies = ["pytest"]
[[tool.uv.index]]
url = "https://download.pytorch.org/whl/cu124"
""")
    reqs, issues, indexes, _ = read_pyproject(path, "pyproject.toml")
    got = {r.name: (r.specifier, r.group) for r in reqs}
    assert got["flash-attn"] == (">=2.6.2", "fast")
    assert got["bitsandbytes"] == (">=0.43,<0.44", "")
    assert got["tensorrt"] == ("==8.6.1", "trt")
    assert {"ruff", "pytest", "torch"} <= set(got) and "python" not in got
    assert indexes and indexes[0][0].endswith("/cu124") and indexes[0][1] > 0
    assert not issues


@pytest.mark.parametrize("poetry, pep440", [
    ("^2.5.8", ">=2.5.8,<3"), ("^0.43", ">=0.43,<0.44"), ("~2.5.8", ">=2.5.8,<2.6"),
    ("2.1.0", "==2.1.0"), ("*", ""), (">=1.0,<2", "<2,>=1.0"),
])
def test_poetry_constraints(poetry, pep440):
    assert SpecifierSet(poetry_to_pep440(poetry)) == SpecifierSet(pep440)


@pytest.mark.parametrize("declared, band, expected", [
    ("==2.5.8", "<2.6.2", True), ("==2.5.8", ">=2.6.2", False), (">=2.3", ">=2.6.2", True),
    ("<2.6", ">=2.6.2", False), ("~=2.6.0", ">=2.6.2", True), ("!=2.6.2,<2.6.3", ">=2.6.2", True),
    ("<=2.6.1", ">=2.6.2", False),
    ("", ">=0.50", True), ("==2.1.0+cu121", "<2.6.2", True),
])
def test_specifier_admits_band(declared, band, expected):
    assert _admits(SpecifierSet(declared), SpecifierSet(band)) is expected


def test_environment_yml_with_pip_section_and_hostile_tags(tmp_path):
    env = write(tmp_path, "environment.yml", """
channels: [pytorch, nvidia]
dependencies:
  - python=3.10
  - pytorch::pytorch=2.1.0=py3.10_cuda12.1_cudnn8_0
  - cudatoolkit=11.8
  - pip:
    - --extra-index-url https://download.pytorch.org/whl/cu121
    - flash-attn==2.5.8
""")
    reqs, findings, issues = read_environment(env, "environment.yml")
    got = {r.name: r for r in reqs}
    assert set(got) == {"pytorch", "cudatoolkit", "flash-attn"}
    assert got["pytorch"].specifier == "==2.1.0" and got["pytorch"].local.startswith("cuda12")
    assert [f.code for f in findings] == ["HP501", "HP501"]
    assert not issues
    hostile = write(tmp_path, "environment-evil.yml",
                    "dependencies: !!python/object/apply:os.system ['touch /tmp/hipport-pwned']\n")
    reqs, _, issues = read_environment(hostile, "environment-evil.yml")
    assert reqs == [] and issues and not Path("/tmp/hipport-pwned").exists()


def test_dockerfile(tmp_path):
    path = write(tmp_path, "Dockerfile", "\n".join([
        "FROM --platform=linux/amd64 nvcr.io/nvidia/pytorch:24.01-py3",
        "RUN apt-get update && pip3 install --no-cache-dir 'xformers==0.0.23' pycuda \\",
        "    --extra-index-url https://download.pytorch.org/whl/cu121 && python -m pip install -e .",
        "RUN pip install $EXTRA",
    ]))
    reqs, findings, issues = read_dockerfile(path, "Dockerfile")
    assert [r.name for r in reqs] == ["xformers", "pycuda"]
    assert [f.code for f in findings] == ["HP504", "HP501"]
    assert not issues


def test_python_imports_and_cuda_strings(tmp_path):
    path = write(tmp_path, "m.py", "\n".join([
        "import os, flash_attn_interface",
        "from numba import cuda",
        "from . import sibling",
        "from torch.utils.cpp_extension import load",
        "ext = load(name='k', sources=['k.cu'])",
        "providers = ['ROCMExecutionProvider']",
    ]))
    reqs, findings, issues, extensions = read_python(path, "m.py")
    names = {r.name for r in reqs}
    assert {"flash_attn_interface", "numba.cuda", "torch.utils.cpp_extension"} <= names
    assert "os" not in names and not any(n.startswith("sibling") for n in names)
    assert [f.code for f in findings] == ["HP513"]
    assert [(e.name, e.sources, e.how) for e in extensions] == [("k", ("k.cu",), "JIT-builds")]
    bad = write(tmp_path, "bad.py", "def f(:\n")
    assert read_python(bad, "bad.py")[2][0].path == "bad.py"


def test_unknown_packages_fine_unless_they_look_like_gpu_code(tmp_path):
    write(tmp_path, "requirements.txt", "\n".join([
        "rich", "fused-attention-kernels==0.3", "my-ops==1.0+cu118", "mmcv-full",
        "https://example.org/whl/thing-1.0-cp310-cp310-linux_x86_64.whl",
    ]))
    write(tmp_path, "train.py", "import my_cuda_helpers\nimport somepurelib\n")
    a = assess(tmp_path, Options(), scan_own_sources=False)
    levels = {v.key: v.level for v in a.verdicts}
    assert levels["rich"] == "fine" and levels["thing"] == "fine"
    assert levels["fused-attention-kernels"] == "unknown_gpu"
    assert levels["my-ops"] == "unknown_gpu"
    assert levels["my-cuda-helpers"] == "unknown_gpu"  # imported, declared nowhere
    assert "somepurelib" not in levels
    assert all(d.points > 0 for d in a.deductions if d.target.startswith("dependency:my-"))


def test_version_facts_flip_verdicts(tmp_path):
    def level(spec: str, key: str) -> str:
        write(tmp_path, "requirements.txt", spec + "\n")
        return next(v.level for v in assess(tmp_path, Options(), scan_own_sources=False).verdicts if v.key == key)

    assert level("flash-attn==2.6.1", "flash-attn") == "native_source_build"  # after raising the pin
    assert level("flash-attn==2.6.2", "flash-attn") == "native_source_build"
    assert level("flash-attn", "flash-attn") == "native_source_build"
    assert level("bitsandbytes==0.47.0", "bitsandbytes") == "native"  # raise to 0.50
    assert level("bitsandbytes==0.49.0", "bitsandbytes") == "native"
    assert level("bitsandbytes>=0.50", "bitsandbytes") == "native"


def test_symlink_out_of_the_repository_is_not_followed(tmp_path):
    outside = tmp_path / "outside"
    write(outside, "requirements.txt", "tensorrt\n")
    repo = tmp_path / "repo"
    write(repo, "requirements.txt", "numpy\n")
    (repo / "vendor").symlink_to(outside, target_is_directory=True)
    (repo / "requirements-extra.txt").symlink_to(outside / "requirements.txt")
    a = assess(repo, Options(), scan_own_sources=False)
    assert "tensorrt" not in {v.key for v in a.verdicts}
