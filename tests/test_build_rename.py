"""``--rename``: ``.cu`` files written as ``.hip`` and every name of them updated.

Construct by construct for each build-file language (each output converted again must not
change), then whole trees: mirrored, in place (with backups), and a name clash.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hipport.options import Options
from hipport.rewrite.buildfiles import hip_name, transform

RENAME = Options(apply_fixes=True, rename=True)


def convert(src: str, path: str, options: Options = RENAME) -> tuple[str, list[str]]:
    new, findings, _ = transform(textwrap.dedent(src).encode(), path, options)
    again, _, _ = transform(new, path, options)
    assert again == new, "not a fixed point"
    return new.decode(), [f.code for f in findings]


CASES = [
    pytest.param(
        "CMakeLists.txt",
        """\
        project(p LANGUAGES CXX CUDA)
        # a.cu stays in a comment
        add_executable(app main.cpp src/a.cu "${CMAKE_CURRENT_SOURCE_DIR}/b.cu" ${n}.cu)
        target_sources(app PRIVATE c.cu [=[d.cu]=])
        set_source_files_properties(src/a.cu PROPERTIES LANGUAGE CUDA)
        file(GLOB K CONFIGURE_DEPENDS src/*.cu src/*.cpp)
        list(FILTER K INCLUDE REGEX "\\\\.cu$")
        set(H kernels.cuh kernels.cu.in)
        """,
        """\
        project(p LANGUAGES CXX HIP)
        # a.cu stays in a comment
        add_executable(app main.cpp src/a.hip "${CMAKE_CURRENT_SOURCE_DIR}/b.hip" ${n}.hip)
        target_sources(app PRIVATE c.hip [=[d.cu]=])
        set_source_files_properties(src/a.hip PROPERTIES LANGUAGE HIP)
        file(GLOB K CONFIGURE_DEPENDS src/*.hip src/*.cpp)
        list(FILTER K INCLUDE REGEX "\\\\.hip$")
        set(H kernels.cuh kernels.cu.in)
        """,
        [], id="cmake-sources-globs-regex-no-language-property"),
    pytest.param(
        "CMakeLists.txt",
        "set(KERNEL_EXT cu)\nadd_library(k ${NAME}.${KERNEL_EXT})\n",
        "set(KERNEL_EXT cu)\nadd_library(k ${NAME}.${KERNEL_EXT})\n",
        ["HP610"], id="cmake-extension-held-apart"),
    pytest.param(
        "Makefile",
        """\
        # build a.cu
        EXT := cu
        SRCS = a.cu b.cu
        OBJS = $(SRCS:.cu=.o) $(patsubst %.cu,%.o,$(wildcard src/*.cu))
        %.o: %.cu
        \tnvcc -x cu -c $< -o $@
        app: $(OBJS) main.cu
        \tnvcc -o $@ $^ extra.cu
        """,
        """\
        # build a.cu
        EXT := cu
        SRCS = a.hip b.hip
        OBJS = $(SRCS:.hip=.o) $(patsubst %.hip,%.o,$(wildcard src/*.hip))
        %.o: %.hip
        \thipcc -x hip -c $< -o $@
        app: $(OBJS) main.hip
        \thipcc -o $@ $^ extra.hip
        """,
        ["HP610"], id="make-variables-patterns-recipes"),
    pytest.param(
        "build.sh",
        "# compiles k.cu\nfor f in src/*.cu; do\n  nvcc -c \"$f\"\ndone\nnvcc -o app k.cu\n",
        "# compiles k.cu\nfor f in src/*.hip; do\n  hipcc -c \"$f\"\ndone\nhipcc -o app k.hip\n",
        [], id="shell-lines"),
    pytest.param(
        "setup.py",
        '''\
        """Builds kernel.cu."""
        import glob
        from torch.utils.cpp_extension import CUDAExtension
        ext = "cu"
        srcs = ["ops.cpp", "kernel.cu"] + glob.glob("extra/*.cu") + [f"{n}.cu" for n in "ab"]
        m = CUDAExtension("k", srcs)
        ''',
        '''\
        """Builds kernel.cu."""
        import glob
        from torch.utils.cpp_extension import CUDAExtension
        ext = "cu"
        srcs = ["ops.cpp", "kernel.hip"] + glob.glob("extra/*.hip") + [f"{n}.hip" for n in "ab"]
        m = CUDAExtension("k", srcs)
        ''',
        ["HP610", "HP705"], id="setup-py-sources"),
    pytest.param(
        "jit.py",
        'from torch.utils.cpp_extension import load\nm = load(name="m", sources=["m.cpp", "m_kernel.cu"])\n',
        'from torch.utils.cpp_extension import load\nm = load(name="m", sources=["m.cpp", "m_kernel.hip"])\n',
        ["HP705"], id="load-sources"),
    pytest.param(
        "tool.py",
        'import sys\nprint([p for p in sys.argv if p.endswith(".cu")])\n',
        'import sys\nprint([p for p in sys.argv if p.endswith(".cu")])\n',
        ["HP610"], id="python-without-extension-reported-not-changed"),
]


@pytest.mark.parametrize("path,src,expected,want", CASES)
def test_rename_construct(path: str, src: str, expected: str, want: list[str]) -> None:
    new, found = convert(src, path)
    assert new == textwrap.dedent(expected)
    assert sorted(found) == sorted(want)


def test_without_rename_nothing_is_renamed_and_cu_gets_language_hip() -> None:
    new, found = convert("project(p CUDA)\nadd_executable(app a.cu)\n", "CMakeLists.txt",
                         Options(apply_fixes=True))
    assert new == "project(p HIP)\nadd_executable(app a.cu)\nset_source_files_properties(a.cu PROPERTIES LANGUAGE HIP)\n"
    new, found = convert("import sys\nx = 'a.cu'\n", "tool.py", Options(apply_fixes=True))
    assert found == []


def test_hip_name() -> None:
    assert hip_name("src/a.cu") == "src/a.hip"
    assert [hip_name(n) for n in ("a.cuh", "a.cu.in", "cu", "a.cpp")] == ["a.cuh", "a.cu.in", "cu", "a.cpp"]


def hipport(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hipport", *args], capture_output=True, text=True,
                          check=False)


def _tree(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "CMakeLists.txt").write_text("project(p CXX CUDA)\nadd_executable(app src/main.cu)\n")
    (root / "src" / "main.cu").write_text('#include "body.cu"\nint main() { k<<<1, 1>>>(); }\n')
    (root / "src" / "body.cu").write_text("__global__ void k() {}\n")
    return root


def test_tree_is_mirrored_with_hip_names(tmp_path: Path) -> None:
    src = _tree(tmp_path / "in")
    r = hipport("convert", str(src), "-o", str(tmp_path / "out"), "--rename", "-q", "--no-report")
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "CMakeLists.txt", "src/body.hip", "src/main.hip"]
    assert (out / "CMakeLists.txt").read_text() == "project(p CXX HIP)\nadd_executable(app src/main.hip)\n"
    assert (out / "src" / "main.hip").read_text().startswith(
        '#include <hip/hip_runtime.h>\n#include "body.hip"\n')


def test_in_place_replaces_each_cu_file_keeping_a_backup(tmp_path: Path) -> None:
    src = _tree(tmp_path / "in")
    r = hipport("convert", str(src), "--in-place", "--rename", "-q", "--no-report")
    assert r.returncode == 0, r.stderr
    names = sorted(p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file())
    assert names == ["CMakeLists.txt", "CMakeLists.txt.prehip", "src/body.cu.prehip", "src/body.hip",
                     "src/main.cu.prehip", "src/main.hip"]
    assert (src / "src" / "body.cu.prehip").read_text() == "__global__ void k() {}\n"


def test_a_hip_file_of_the_same_name_is_an_error_naming_both(tmp_path: Path) -> None:
    src = _tree(tmp_path / "in")
    (src / "src" / "body.hip").write_text("// already here\n")
    r = hipport("convert", str(src), "-o", str(tmp_path / "out"), "--rename", "-q", "--no-report")
    assert r.returncode == 2
    assert "body.cu" in r.stderr and "body.hip" in r.stderr
    assert (tmp_path / "out" / "src" / "main.hip").is_file()  # the rest is still written
    assert (tmp_path / "out" / "src" / "body.hip").read_text() == "// already here\n"


def test_rename_from_the_project_config(tmp_path: Path) -> None:
    src = _tree(tmp_path / "in")
    (src / "pyproject.toml").write_text("[tool.hipport]\nrename = true\n")
    r = hipport("convert", str(src), "-o", str(tmp_path / "out"), "-q", "--no-report")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / "src" / "main.hip").is_file()
    assert not (tmp_path / "out" / "src" / "main.cu").exists()
