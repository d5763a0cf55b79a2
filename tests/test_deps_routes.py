"""Every install route `deps` reads, the version judgement, optional dependencies, extensions
counted once, ROCm-awareness, policy and SARIF — on the fixture repositories and on inputs
built here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from packaging.version import Version

from hipport.cli import main
from hipport.deps import assess
from hipport.deps.conda import conda_requirement
from hipport.deps.docker import read_dockerfile
from hipport.deps.docs import read_docs
from hipport.deps.requirements import read_requirements
from hipport.deps.versioning import price
from hipport.options import Options
from hipport.versions import parse_version

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "deps"


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def verdict(a, key: str):
    return next(v for v in a.verdicts if v.key == key)


@pytest.fixture(scope="module")
def nerf():
    return assess(FIXTURES / "nerf-tcnn", Options(), scan_own_sources=False)


def test_git_url_without_egg_is_named_and_its_imports_attached(nerf):
    tcnn = verdict(nerf, "tiny-cuda-nn")
    assert tcnn.verdict == "check" and tcnn.declared
    imported_in = {r.source for r in tcnn.evidence if r.kind == "import"}
    assert imported_in == {"train.py", "nerf/network_tcnn.py", "nerf/renderer.py"}
    assert "tiny-cuda-nn" in {v.key for v in nerf.verdicts if v.verdict != "ok"}


def test_undeclared_import_has_no_declared_version_wording(nerf):
    xf = verdict(nerf, "xformers")
    assert xf.verdict == "needs-work" and not xf.declared
    assert "declared version" not in xf.reason and "predates" not in xf.reason
    assert "imported but declared in no manifest" in xf.reason


def test_guarded_import_is_optional_never_a_blocker(nerf):
    fa3 = verdict(nerf, "flash-attn-3")
    assert fa3.optional and fa3.verdict == "needs-work" and not fa3.blocker
    full = 30 * (1 - fa3.factor)
    assert next(d.points for d in nerf.deductions if d.target == "dependency:flash-attn-3") == pytest.approx(full / 4, abs=0.1)


def test_conda_cudatoolkit_and_gputil(nerf):
    assert verdict(nerf, "conda-cuda-toolkit").verdict == "needs-work"
    assert verdict(nerf, "pynvml").blocker  # GPUtil wraps nvidia-smi: no AMD backend
    assert verdict(nerf, "torch").bump == "a major-version bump"  # conda pytorch=1.12.1


@pytest.mark.parametrize("spec, name, specifier", [
    ("cudatoolkit=11.3", "cudatoolkit", "==11.3"),
    ("cudatoolkit 11.3.*", "cudatoolkit", "==11.3.*"),
    ("nvidia::cuda-toolkit=12.1", "cuda-toolkit", "==12.1"),
    ("pytorch-cuda>=11.8", "pytorch-cuda", ">=11.8"),
    ("cuda-version=12", "cuda-version", "==12"),
])
def test_conda_cuda_pins_are_the_conda_cuda_toolkit(tmp_path, spec, name, specifier):
    req = conda_requirement(spec, "environment.yml", 3)
    assert (req.name, req.specifier) == (name, specifier)
    write(tmp_path, "environment.yml", f"dependencies:\n  - {spec}\n")
    a = assess(tmp_path, Options(), scan_own_sources=False)
    assert verdict(a, "conda-cuda-toolkit").verdict == "needs-work"
    assert any(f.code == "HP503" and f.line == 2 for f in a.findings)


def test_extension_in_setup_py_and_jit_load_counts_once_and_rocm_awareness():
    a = assess(FIXTURES / "rocm-aware-ext", Options())
    ext = [f for f in a.findings if f.code == "HP511"]
    assert len(ext) == 1 and "fused_ops/jit.py:7" in ext[0].message and "counted once" in ext[0].message
    assert str(ext[0].severity) == "medium"  # the build already has a HIP path
    assert [d.points for d in a.deductions if d.target.startswith("finding:HP511")] == [2.0]  # 6 at high
    aware = " ".join(a.rocm_aware)
    assert "setup.py:15" in aware and "README.md:14" in aware and "csrc/fused_adam.cu" in aware
    assert not any(f.code == "HP501" for f in a.findings)  # README documents the ROCm route too
    assert not [f for f in a.findings if not f.code.startswith("HP5")]  # the CUDA branch is guarded


def test_extension_dedup_needs_shared_sources(tmp_path):
    write(tmp_path, "setup.py", "setup(ext_modules=[CUDAExtension('a._C', ['csrc/a.cu'])])\n")
    write(tmp_path, "dev.py", "from torch.utils.cpp_extension import load\n"
                              "b = load(name='b', sources=['csrc/b.cu'])\nc = load(name='c', sources=['csrc/a.cu'])\n")
    a = assess(tmp_path, Options(), scan_own_sources=False)
    ext = sorted(f.message for f in a.findings if f.code == "HP511")
    assert len(ext) == 2 and any("dev.py:3" in m for m in ext) and any("'b'" in m for m in ext)


def test_dockerfile_arg_substitution_and_heredoc():
    a = assess(FIXTURES / "docker-heredoc", Options(), scan_own_sources=False)
    image = next(f for f in a.findings if f.code == "HP504")
    assert image.line == 4 and "nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04" in image.message
    flash = verdict(a, "flash-attn")
    assert [(r.source, r.line) for r in flash.evidence if r.kind != "import"] == [("Dockerfile", 14)]
    assert verdict(a, "torch").evidence[0].specifier == "==2.1.2"  # torch==${TORCH}
    assert any(f.code == "HP501" and f.path == "Dockerfile" and f.line == 12 for f in a.findings)
    assert [(r.source, r.line) for r in verdict(a, "xformers").evidence] == [("README.md", 7)]
    assert not any(v.key in ("anything", "else", "a", "cat") for v in a.verdicts)  # prose is not read


def test_dockerfile_variables_without_defaults_and_indented_heredoc(tmp_path):
    path = write(tmp_path, "Dockerfile", "\n".join([
        "ARG BASE",
        "FROM ${BASE:-nvcr.io/nvidia/pytorch:24.01-py3}",
        "ENV PKG=\"apex\"",
        "RUN <<-EOF",
        "\tpip install ${PKG} $UNSET_VAR \\",
        "\t    flash-attn==2.6.3",
        "\tEOF",
        "RUN pip install tensorrt",
    ]))
    reqs, findings, issues = read_dockerfile(path, "Dockerfile")
    assert [(r.name, r.line) for r in reqs] == [("apex", 5), ("flash-attn", 5), ("tensorrt", 8)]
    assert [(f.code, f.line) for f in findings] == [("HP504", 2)]
    assert not issues


def test_readme_reads_code_blocks_not_prose_and_skips_the_amd_section(tmp_path):
    path = write(tmp_path, "README.md", "\n".join([
        "# Project", "", "To install, pip install the requirements below.", "",
        "```bash", "$ pip install spconv-cu118 'numpy<2'", "conda install pytorch cudatoolkit=11.3 -c pytorch -c nvidia",
        "```", "", "## AMD", "", "```", "pip install torch --index-url https://download.pytorch.org/whl/rocm6.2", "```",
        "", "## Usage", "", "    pip install tensorrt  # an indented block in Markdown is not read",
    ]))
    reqs, findings, issues, amd = read_docs(path, "README.md")
    assert [(r.name, r.line) for r in reqs] == [("spconv-cu118", 6), ("numpy", 6), ("pytorch", 7), ("cudatoolkit", 7)]
    assert amd == [10, 13] and not findings  # the nvidia channel is one of two documented routes
    rst = write(tmp_path, "INSTALL.rst", "Install\n=======\n\nRun::\n\n    pip install pycuda\n\nthen pip install nothing.\n")
    reqs, _, _, amd = read_docs(rst, "INSTALL.rst")
    assert [(r.name, r.line) for r in reqs] == [("pycuda", 6)] and amd == []


@pytest.mark.parametrize("line, name, extra", [
    ("-e git+https://github.com/o/knn.git@v1#egg=simple_knn", "simple-knn", {"url": True}),
    ("git+https://github.com/NVlabs/tiny-cuda-nn/#subdirectory=bindings/torch", "tiny-cuda-nn", {"url": True}),
    ("pytorch3d @ git+https://github.com/facebookresearch/pytorch3d.git@stable", "pytorch3d", {"url": True}),
    ("https://github.com/o/repo/archive/refs/heads/main.zip", "repo", {"url": True}),
    ("https://x.org/whl/torch-2.1.0%2Bcu121-cp310-cp310-linux_x86_64.whl", "torch", {"local": "cu121"}),
    ("https://x.org/whl/torch-2.1.0+cu121-cp310-cp310-linux_x86_64.whl", "torch", {"local": "cu121"}),
    ("flash-attn==2.5.8 --hash=sha256:00 --hash=sha256:11", "flash-attn", {"specifier": "==2.5.8"}),
    ("xformers>=0.0.28; platform_machine == 'x86_64'", "xformers", {"specifier": ">=0.0.28"}),
    ("deepspeed[1bit]==0.14.0", "deepspeed", {"extras": ("1bit",)}),
])
def test_requirements_file_syntax(tmp_path, line, name, extra):
    path = write(tmp_path, "requirements.txt", line + "\n")
    reqs, issues, _ = read_requirements(path, tmp_path)
    assert [r.name for r in reqs] == [name] and not issues
    for key, value in extra.items():
        got = getattr(reqs[0], key)
        assert (bool(got) if value is True else got) == value


def test_requirements_local_paths_editables_and_options_are_not_dependencies(tmp_path):
    path = write(tmp_path, "requirements.txt", "\n".join([
        "-e .", "-e ./third_party/knn", "./wheels/ops-1.0-cp310-linux_x86_64.whl", "../sibling", "file:///opt/x",
        "-i https://pypi.org/simple", "--prefer-binary", "--only-binary=:all:", "torch",
    ]))
    reqs, issues, findings = read_requirements(path, tmp_path)
    assert [r.name for r in reqs] == ["torch"] and not issues and not findings


def test_pyproject_extras_groups_and_setup_cfg_extras_are_optional(tmp_path):
    write(tmp_path, "pyproject.toml", """
[project]
dependencies = ["torch>=2.4"]
[project.optional-dependencies]
mamba = ["causal-conv1d>=1.4", "mamba-ssm"]
[dependency-groups]
dev = ["pytest"]
[tool.poetry.group.trt]
optional = true
[tool.poetry.group.trt.dependencies]
tensorrt = "^10"
[tool.pdm.dev-dependencies]
gpu = ["pycuda"]
""")
    write(tmp_path, "setup.cfg", "[options.extras_require]\ndali = nvidia-dali-cuda120\n")
    a = assess(tmp_path, Options(), scan_own_sources=False)
    for key in ("causal-conv1d", "mamba-ssm", "tensorrt", "pycuda", "nvidia-dali"):
        v = verdict(a, key)
        assert v.optional and v.verdict != "blocker", key
    assert not verdict(a, "torch").optional
    assert a.grade in "AB"  # nothing the code needs is blocked


@pytest.mark.parametrize("rocm, spec, pin, bump", [
    ("6.3", "torch==2.1.2", "==2.2.*", "a minor bump"),
    ("7.2.1", "torch==2.1.2", "==2.7.1", "several minor releases"),
    ("7.2.1", "torch<2", "==2.7.1", "a major-version bump"),
    ("6.3", "torch==2.5.1", "==2.4.*", "a minor bump"),  # newer than the matrix: a downgrade
    ("7.2.1", "torch>=2.0", "", ""),
    ("6.3", "jax==0.4.30", "==0.4.31", "a patch bump"),
    ("7.2.1", "tensorflow==2.15.0", "==2.18.1", "several minor releases"),
])
def test_framework_pins_against_the_validated_matrix(tmp_path, rocm, spec, pin, bump):
    write(tmp_path, "requirements.txt", spec + "\n")
    v = assess(tmp_path, Options(rocm=parse_version(rocm)), scan_own_sources=False).verdicts[0]
    assert v.verdict == "needs-work"
    if pin:
        assert (v.pin, v.bump) == (pin, bump) and "validates" in v.reason
    else:
        assert not v.bump and v.pin == "" and any("admits" in n for n in v.notes)


def test_unpinned_framework_is_told_which_release_to_pin(tmp_path):
    write(tmp_path, "requirements.txt", "torch\n")
    v = assess(tmp_path, Options(), scan_own_sources=False).verdicts[0]
    assert v.pin == "==2.9.1" and not v.bump and "declared" not in v.reason
    other = assess(tmp_path, Options(rocm=parse_version("7.0")), scan_own_sources=False).verdicts[0]
    assert any("no validated torch releases for ROCm 7.0" in n for n in other.notes)


@pytest.mark.parametrize("old, new, expected", [
    ("2.1.2", "2.2", "minor"), ("2.1.2", "2.7.1", "minors"), ("1.13", "2.4", "major"),
    ("2.4.0", "2.4.1", "patch"), ("0.0.23", "0.0.28", "minors"), ("0.43.1", "0.50", "minors"),
    ("0.4.30", "0.4.31", "patch"), ("2.5.1", "2.4", "minor"),
])
def test_price_of_a_bump(old, new, expected):
    assert price(Version(old), Version(new)) == expected


def test_policy_ignore_and_severity_apply_to_deps_findings(tmp_path):
    write(tmp_path, "requirements.txt", "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch\n")
    write(tmp_path, "run.py", "import subprocess\nsubprocess.run(['nvidia-smi'])\n")
    plain = json.loads(CliRunner().invoke(main, ["deps", str(tmp_path), "-f", "json"]).stdout)
    write(tmp_path, "pyproject.toml", '[tool.hipport]\nignore = ["HP513"]\nseverity = { HP501 = "low" }\n')
    tuned = json.loads(CliRunner().invoke(main, ["deps", str(tmp_path), "-f", "json"]).stdout)
    codes = lambda d: {f["code"]: f["severity"] for f in d["findings"]}  # noqa: E731
    assert codes(plain) == {"HP501": "high", "HP513": "low"}
    assert codes(tuned) == {"HP501": "low"}
    points = {d["target"].split(":")[1]: d["points"] for d in tuned["deductions"] if d["target"].startswith("finding")}
    assert points == {"HP501": pytest.approx(4.0 * 0.1 / 1.5, abs=0.1)}
    assert tuned["score"] > plain["score"]


def test_sarif_has_a_run_per_repository_with_findings_and_verdicts():
    repos = [str(FIXTURES / "tensorrt-deploy"), str(FIXTURES / "rocm-aware-ext")]
    result = CliRunner().invoke(main, ["deps", *repos, "-f", "sarif", "--no-kernels"])
    assert result.exit_code == 0, result.output
    log = json.loads(result.stdout)
    assert log["version"] == "2.1.0" and len(log["runs"]) == 2
    trt = log["runs"][0]
    ids = [r["id"] for r in trt["tool"]["driver"]["rules"]]
    for res in trt["results"]:
        assert ids[res["ruleIndex"]] == res["ruleId"]
        assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    blockers = {r["properties"]["dependency"] for r in trt["results"] if r["ruleId"] == "deps/blocker"}
    assert blockers == {"tensorrt", "pycuda"} and trt["properties"]["grade"] == "F"
    assert {"HP503", "HP513"} <= {r["ruleId"] for r in trt["results"]}


def test_the_project_itself_is_not_its_own_dependency(tmp_path):
    write(tmp_path, "setup.py", "setup(name='torch_points_kernels', install_requires=['torch'])\n")
    write(tmp_path, "requirements.txt", "torch-points-kernels\n")
    write(tmp_path, "README.md", "```\npip install torch-points-kernels\n```\n")
    assert [v.key for v in assess(tmp_path, Options(), scan_own_sources=False).verdicts] == ["torch"]


def test_imports_inside_an_optionally_imported_module_are_optional(tmp_path):
    write(tmp_path, "pkg/__init__.py", "")
    write(tmp_path, "pkg/trt_backend.py", "import tensorrt\nimport pycuda.driver\n")
    write(tmp_path, "pkg/fast.py", "from pkg.trt_backend import run\n")  # only reached via fast
    write(tmp_path, "main.py", "try:\n    from pkg.fast import run\nexcept ImportError:\n    run = None\n")
    a = assess(tmp_path, Options(), scan_own_sources=False)
    assert {v.key: (v.optional, v.verdict) for v in a.verdicts} == {
        "tensorrt": (True, "needs-work"), "pycuda": (True, "needs-work")}
    write(tmp_path, "cli.py", "from pkg.trt_backend import run\n")  # one unguarded importer
    a = assess(tmp_path, Options(), scan_own_sources=False)
    assert sorted(v.key for v in a.verdicts if v.blocker) == ["pycuda", "tensorrt"]
