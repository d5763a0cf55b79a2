"""Header sets built from (fake) Triton wheels, and which compiler/header set verify picks.

No network: ``fetch`` is given local wheels; the real download is exercised by .ci/run."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from hipport import compilers as C
from hipport import headers as H

MEMBER = "triton/backends/amd/include/"


def version_h(major: int, minor: int, patch: int) -> str:
    return (f"#define HIP_VERSION_MAJOR {major}\n#define HIP_VERSION_MINOR {minor}\n"
            f"#define HIP_VERSION_PATCH {patch}\n")


def wheel(path: Path, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return path


@pytest.fixture
def wheels(tmp_path):
    six = wheel(tmp_path / "t35.whl", {
        MEMBER + "hip/hip_version.h": version_h(6, 2, 41134),
        MEMBER + "hip/hip_runtime.h": "// 6.2 runtime\n",
        MEMBER + "hip/hip_fp16.h": "// 6.2 fp16\n",
        "triton/other/ignored.py": "x = 1\n",
    })
    seven = wheel(tmp_path / "t36.whl", {
        MEMBER + "hip/hip_version.h": version_h(7, 1, 25424),
        MEMBER + "hip/hip_runtime.h": "// 7.1 runtime\n",
    })
    return {(6, 2, 41134): six, (7, 1, 25424): seven}


def test_fetch_builds_both_sets_with_fill_stubs_and_version_file(tmp_path, wheels):
    root = tmp_path / "sets"
    built = H.fetch(root=root, wheels=wheels)
    assert [s.version for s in built] == [(6, 2, 41134), (7, 1, 25424)]
    seven = root / "7.1.25424"
    assert (seven / "share/hip/version").read_text() == (
        "HIP_VERSION_MAJOR=7\nHIP_VERSION_MINOR=1\nHIP_VERSION_PATCH=25424\n")
    assert (seven / "include/hip/hip_runtime.h").read_text() == "// 7.1 runtime\n"
    assert (seven / "include/hip/hip_fp16.h").read_text() == "// 6.2 fp16\n"  # filled from 6.2
    assert not (root / "6.2.41134/include/../other").exists()
    stub = (seven / "include/hip/hcc_detail/amd_hip_runtime.h").read_text()
    assert stub.startswith("#error") and "HIP 7.1.25424" in stub
    sets = H.installed(root)
    assert [s.version for s in sets] == [(6, 2, 41134), (7, 1, 25424)]
    assert (sets[0].filled_from, sets[1].filled_from) == (None, (6, 2, 41134))
    assert "hip/hip_fp16.h" in sets[1].filled and "hip/hip_runtime.h" not in sets[1].filled
    assert "fp16" not in H.own_words(sets[1]) and "fp16" in H.own_words(sets[0])
    assert not [p for p in root.iterdir() if p.name.startswith(".")]  # no temporary left


def test_fetch_keeps_built_sets_and_rebuilds_on_force(tmp_path, wheels):
    root = tmp_path / "sets"
    H.fetch(root=root, wheels=wheels)
    (root / "7.1.25424/include/hip/marker.h").write_text("x")
    lines = []
    H.fetch(root=root, wheels={}, echo=lines.append)  # nothing to download: both are there
    assert all("already in" in line for line in lines) and len(lines) == 2
    H.fetch(root=root, wheels=wheels, force=True)
    assert not (root / "7.1.25424/include/hip/marker.h").exists()


def test_a_wheel_of_the_wrong_release_is_refused(tmp_path, wheels):
    wrong = {(6, 2, 41134): wheels[(7, 1, 25424)]}
    with pytest.raises(H.HeaderError, match="says HIP 7.1.25424, expected 6.2.41134"):
        H.fetch(root=tmp_path / "sets", wheels=wrong)
    assert H.installed(tmp_path / "sets") == []


@pytest.mark.parametrize("name", [MEMBER + "../../../evil.h", MEMBER + "hip/../../x/../../../e.h"])
def test_unsafe_member_names_are_refused(tmp_path, name):
    bad = wheel(tmp_path / "bad.whl", {name: "x", MEMBER + "hip/hip_version.h": version_h(6, 2, 41134)})
    with pytest.raises(H.HeaderError, match="unsafe member name"):
        H.extract_member(bad, MEMBER, tmp_path / "out")
    assert not (tmp_path / "evil.h").exists()


def test_a_broken_wheel_is_a_header_error(tmp_path):
    (tmp_path / "x.whl").write_bytes(b"not a zip")
    with pytest.raises(H.HeaderError, match="cannot read the wheel"):
        H.extract_member(tmp_path / "x.whl", MEMBER, tmp_path / "out")


@pytest.mark.parametrize("target, expected", [
    ((7, 2, 1), (7, 1, 25424)), ((6, 3, 0), (6, 2, 41134)), ((7, 0, 0), (7, 1, 25424)),
    ((6, 1, 0), (6, 2, 41134)), ((10, 0, 0), (7, 1, 25424))])
def test_nearest_set(tmp_path, target, expected):
    sets = [H.HeaderSet(tmp_path / "a", (6, 2, 41134)), H.HeaderSet(tmp_path / "b", (7, 1, 25424))]
    assert H.nearest(sets, target).version == expected


def test_nearest_prefers_the_older_on_a_tie(tmp_path):
    sets = [H.HeaderSet(tmp_path / "a", (7, 1, 0)), H.HeaderSet(tmp_path / "b", (7, 3, 0))]
    assert H.nearest(sets, (7, 2, 1)).version == (7, 1, 0)


def script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(0o755)
    return path


def test_select_prefers_a_rocm_of_the_target_release(tmp_path, wheels):
    root = tmp_path / "sets"
    H.fetch(root=root, wheels=wheels)
    hipcc = script(tmp_path / "rocm/bin/hipcc", "echo 'HIP version: 6.3.42131-x'\n")
    clang = script(tmp_path / "bin/clang++-19", "echo 'Debian clang version 19.1.7'\n")
    env = {"PATH": str(clang.parent), "ROCM_PATH": str(tmp_path / "rocm")}
    picked = C.select((6, 3, 0), header_root=root, env=env)
    assert (picked.path, picked.headers, picked.hip_version) == (hipcc, None, (6, 3, 0))
    assert "the installed ROCm" in picked.describe((6, 3, 0), "gfx942")
    # a 7.2.1 target: that ROCm is the wrong release, so clang + the nearest set
    picked = C.select((7, 2, 1), header_root=root, env=env)
    assert (picked.path, picked.headers.version, picked.clang) == (clang, (7, 1, 25424), "19.1.7")
    assert ("checked against HIP 7.1.25424 headers (" in picked.describe((7, 2, 1), "gfx942")
            and "nearest to the 7.2.1 target" in picked.describe((7, 2, 1), "gfx942"))


def test_select_newest_clang_and_explicit_compiler(tmp_path, wheels):
    root = tmp_path / "sets"
    H.fetch(root=root, wheels=wheels)
    script(tmp_path / "bin/clang++-19", "echo 'clang version 19.1.7'\n")
    new = script(tmp_path / "bin/clang++-21", "echo 'clang version 21.0.1'\n")
    old_hipcc = script(tmp_path / "bin/hipcc", "echo 'HIP version: 5.2.21153-0'\n")
    env = {"PATH": str(tmp_path / "bin")}
    assert C.select((6, 3, 0), header_root=root, env=env).path == new
    forced = C.select((6, 3, 0), compiler="hipcc", header_root=root, env=env)
    assert (forced.path, forced.hip_version, forced.origin) == (old_hipcc, (5, 2, 0), "--compiler")
    with pytest.raises(C.NoCompiler, match="is HIP 5.2, not the 6.3 target's release"):
        C.select((6, 3, 0), header_root=tmp_path / "none", env=env)


def test_select_finds_an_amdclang_rocm(tmp_path, wheels):
    rocm = tmp_path / "rocm"
    H.fetch(root=tmp_path / "sets", wheels=wheels)
    rocm.mkdir()
    (rocm / "include").symlink_to(tmp_path / "sets/7.1.25424/include")
    (rocm / "share/hip").mkdir(parents=True)
    (rocm / "share/hip/version").write_text("HIP_VERSION_MAJOR=7\nHIP_VERSION_MINOR=2\nHIP_VERSION_PATCH=53211\n")
    amd = script(rocm / "llvm/bin/amdclang++", "echo 'AMD clang version 22.0.0'\n")
    env = {"PATH": str(amd.parent), "HIPCC": str(tmp_path / "none")}
    assert C.find_hipcc(env) is None
    env = {"PATH": str(amd.parent)}
    picked = C.select((7, 2, 1), header_root=tmp_path / "none", env=env)
    assert (picked.path, picked.headers.root, picked.hip_version) == (amd, rocm, (7, 2, 53211))


@pytest.mark.parametrize("arch, size", [("gfx942", 64), ("gfx90a", 64), ("gfx1100", 32), ("gfx1201", 32)])
def test_wave_size(arch, size):
    assert C.wave_size(arch) == size
