"""PyTorch extension scripts: findings (HP7xx) for what breaks a ROCm build, never rewrites."""

from __future__ import annotations

import textwrap

from hipport.options import Options
from hipport.rewrite.buildfiles import transform

SETUP = textwrap.dedent('''\
    import os
    import torch
    from setuptools import setup
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME

    if CUDA_HOME is None or torch.version.cuda is None:
        raise RuntimeError("needs the CUDA toolkit")
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "8.0;8.6")
    archs = ["sm_80", "sm_86"]

    setup(
        name="ops",
        ext_modules=[CUDAExtension(
            "ops._C", ["ops/ext.cpp", "ops/kernel.cu"],
            extra_compile_args={
                "cxx": ["-O3"],
                "nvcc": ["-O3", "--use_fast_math", "-lineinfo", "-gencode", "arch=compute_80,code=sm_80",
                         "-Xptxas=-v", "-std=c++17"],
            })],
        cmdclass={"build_ext": BuildExtension},
    )
''')


def findings(src: str, path: str = "setup.py"):
    new, found, rewrites = transform(src.encode(), path, Options(apply_fixes=True))
    assert new == src.encode() and rewrites == 0, "extension scripts are reported, not rewritten"
    return [(f.line, f.code) for f in found], found


def test_setup_py_findings_each_at_its_line() -> None:
    got, found = findings(SETUP)
    assert got == [
        (6, "HP703"), (6, "HP703"),            # CUDA_HOME, torch.version.cuda
        (8, "HP704"),                          # TORCH_CUDA_ARCH_LIST
        (9, "HP704"), (9, "HP704"),            # "sm_80", "sm_86"
        (13, "HP705"),                         # CUDAExtension: torch hipifies it
        (17, "HP702"), (17, "HP702"), (17, "HP701"),  # --use_fast_math, -lineinfo, -gencode …
        (18, "HP702"),                         # -Xptxas=-v
    ]
    fast = next(f for f in found if "--use_fast_math" in f.message)
    assert "'-ffast-math'" in fast.suggestion and "torch.version.hip" in fast.suggestion
    gencode = next(f for f in found if f.code == "HP701")
    assert "arch=compute_80,code=sm_80" in gencode.message and "PYTORCH_ROCM_ARCH" in gencode.suggestion
    hipify = next(f for f in found if f.code == "HP705")
    assert "2026" in hipify.suggestion  # which torch hipify: it keeps CUDA class names from then on


def test_load_with_extra_cuda_cflags() -> None:
    src = ('from torch.utils import cpp_extension\n'
           'm = cpp_extension.load("k", ["k.cu"], extra_cuda_cflags=["--expt-relaxed-constexpr", "-O2"])\n')
    got, _ = findings(src, "build_ext.py")
    assert got == [(2, "HP705"), (2, "HP702")]


def test_plain_python_and_unparsable_files_are_left_alone() -> None:
    assert findings("print('hello')\n")[0] == []
    assert findings("print 'CUDA_HOME'  # python 2\n")[0] == []


def test_cuda_home_outside_an_extension_build_is_not_reported() -> None:
    src = 'import os\nhome = os.environ.get("CUDA_HOME")\nif CUDA_HOME is None:\n    pass\n'
    assert findings(src, "tests/test_setup.py")[0] == []


def test_a_script_that_handles_a_missing_cuda_toolkit_is_not_reported() -> None:
    """DeepSpeed's op builders: ``if CUDA_HOME is None: ldflags = ['-laio']  # the ROCM case``
    and ``if CUDA_HOME is None: return False`` before using it, ``if not op.is_rocm_pytorch():``
    around it. A None case that raises is
    still reported (SETUP above)."""
    src = textwrap.dedent('''\
        import os
        import torch.utils.cpp_extension
        def ldflags():
            CUDA_HOME = torch.utils.cpp_extension.CUDA_HOME
            if CUDA_HOME is None:
                return ['-laio']
            return [f'-L{CUDA_HOME}']
        def flags():
            home = torch.utils.cpp_extension.CUDA_HOME
            if CUDA_HOME is not None:
                return [os.path.join(CUDA_HOME, "lib64")]
            return []
        def hip_or_cuda():
            if torch.version.hip:
                return "hip"
            return torch.version.cuda
        def strict():
            if not CUDA_HOME:
                raise RuntimeError("CUDA only")
        def loose():
            return os.path.join(CUDA_HOME, "bin")
        def checked(op):
            if not op.is_rocm_pytorch():
                return torch.version.cuda.split('.')
            else:
                raise RuntimeError("HIP version mismatch")
        ''')
    got, _ = findings(src, "op_builder.py")
    assert [line for line, code in got if code == "HP703"] == [18, 21]
