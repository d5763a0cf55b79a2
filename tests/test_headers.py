"""Header sets built from (fake) Triton wheels, and which compiler/header set verify picks.

No network: ``fetch`` is given local wheels; the real download is exercised by .ci/run."""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
import zipfile
from pathlib import Path

import pytest

from hipport import compilers as C
from hipport import header_manifest
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


@pytest.fixture(autouse=True)
def own_key(tmp_path, monkeypatch):
    """The manifests' key lives in a temporary state directory, never the user's."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


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
    built = (root / "7.1.25424").stat().st_ino
    lines = []
    H.fetch(root=root, wheels={}, echo=lines.append)  # nothing to download: both are there
    assert all("already in" in line for line in lines) and len(lines) == 2
    assert (root / "7.1.25424").stat().st_ino == built
    H.fetch(root=root, wheels=wheels, force=True)
    assert (root / "7.1.25424").stat().st_ino != built


def test_a_set_is_used_only_as_its_manifest_lists_it(tmp_path, wheels):
    """A planted, edited, added, removed or linked file, a set copied under another
    version's name or signed under another key: named, and the set is not used (verify
    exits 2 with the message); --fetch-headers builds it again."""
    root = tmp_path / "sets"
    H.fetch(root=root, wheels=wheels)
    clang = script(tmp_path / "bin/clang++-19", "echo 'clang version 19.1.7'\n")
    env = {"PATH": str(clang.parent)}
    seven = H.installed(root)[1]
    assert (seven.root / "share/hip/hipport-manifest").is_file() and H.problem(seven, root) is None
    assert C.select((7, 2, 1), header_root=root, env=env).headers == seven
    runtime = seven.root / "include/hip/hip_runtime.h"
    runtime.write_text("// 7.1 runtime, edited\n")
    with pytest.raises(C.NoCompiler, match=r"HIP 7.1.25424 header set in .* is not used: 1 file\(s\) "
                                           r"differ from its manifest: include/hip/hip_runtime.h; "
                                           r"`hipport verify --fetch-headers` builds it again"):
        C.select((7, 2, 1), header_root=root, env=env)
    lines = []
    H.fetch(root=root, wheels=wheels, echo=lines.append)
    assert "are not used (1 file(s) differ" in lines[1] and "built in" in lines[2]
    assert runtime.read_text() == "// 7.1 runtime\n" and H.problem(seven, root) is None
    planted = {
        "added": lambda r: (r / "include/hip/extra.h").write_text("x"),
        "removed": lambda r: (r / "include/hip/hip_fp16.h").unlink(),
        "same size": lambda r: runtime.write_text("// 7.1 runtime\t"),
        "a link": lambda r: ((r / "include/hip/hip_runtime.h").unlink(),
                             (r / "include/hip/hip_runtime.h").symlink_to(tmp_path / "evil.h")),
        "group-writable": lambda r: (r / "include/hip").chmod(0o775),
        "a FIFO": lambda r: os.mkfifo(r / "include/hip/fifo.h"),
        "no manifest": lambda r: (r / "share/hip/hipport-manifest").unlink(),
        "another key": lambda r: os.environ.__setitem__("XDG_STATE_HOME", str(tmp_path / "other")),
    }
    expect = {"added": "differ from its manifest: include/hip/extra.h",
              "removed": "differ from its manifest: include/hip/hip_fp16.h",
              "same size": "differ from its manifest: include/hip/hip_runtime.h",
              "a link": "include/hip/hip_runtime.h is a symbolic link",
              "group-writable": "include/hip is another user's or writable by others",
              "a FIFO": "include/hip/fifo.h is not a regular file",
              "no manifest": "is missing or was not written by this user's hipport",
              "another key": "is missing or was not written by this user's hipport"}
    state = os.environ["XDG_STATE_HOME"]
    for what, plant in planted.items():
        H.fetch(root=root, wheels=wheels, force=True)
        os.environ["XDG_STATE_HOME"] = state
        plant(seven.root)
        why = H.problem(seven, root)
        assert why is not None and expect[what] in why, (what, why)
    os.environ["XDG_STATE_HOME"] = state
    H.fetch(root=root, wheels=wheels, force=True)
    shutil.copytree(seven.root, root / "7.3.0")  # a genuine set under another version's name
    (root / "7.3.0/share/hip/version").write_text("HIP_VERSION_MAJOR=7\nHIP_VERSION_MINOR=3\n")
    copied = next(s for s in H.installed(root) if s.version == (7, 3, 0))
    assert "was not written by this user's hipport" in H.problem(copied, root)


def test_a_set_built_before_manifests_is_adopted_only_when_the_catalogue_pins_its_content(
        tmp_path, wheels, monkeypatch):
    """An existing cache goes on working without a download (its content is the pinned
    one: the manifest is written); a set with other content is built again."""
    root = tmp_path / "sets"
    H.fetch(root=root, wheels=wheels)
    for s in H.installed(root):
        (s.root / "share/hip/hipport-manifest").unlink()
    six, seven = H.installed(root)
    pinned = {s.version: header_manifest.digest(header_manifest.scan(s.root)) for s in (six, seven)}
    pinned[(7, 1, 25424)] = "0" * 64  # 7.1's content is not the catalogue's
    real = H.catalogue()
    monkeypatch.setattr(H, "catalogue", lambda: dataclasses.replace(real, sets=tuple(
        dataclasses.replace(s, digest=pinned[s.version]) for s in real.sets)))
    lines = []
    H.fetch(root=root, wheels=wheels, echo=lines.append)
    assert "HIP 6.2.41134 headers: already in" in lines[0]
    assert (six.root / "share/hip/hipport-manifest").is_file()  # adopted
    assert "HIP 7.1.25424 headers in" in lines[1] and "are not used (its manifest" in lines[1]
    assert "built in" in lines[2] and H.problem(seven, root) is None
    assert header_manifest.digest(header_manifest.scan(six.root)) == pinned[(6, 2, 41134)]


def test_the_catalogue_pins_a_digest_for_every_set():
    assert all(s.digest and len(s.digest) == 64 for s in H.catalogue().sets)


def test_fetch_removes_the_temporaries_of_a_killed_build(tmp_path, wheels):
    root = tmp_path / "sets"
    for name, age in ((".7.1.25424-abc123", 7200), (".6.2.41134-old-x_y", 7200), (".7.1.25424-new", 10)):
        (root / name / "include").mkdir(parents=True)
        os.utime(root / name, (time.time() - age, time.time() - age))
    (root / ".7.1.25424-link").symlink_to(tmp_path, target_is_directory=True)
    os.utime(root / ".7.1.25424-link", (1, 1), follow_symlinks=False)
    H.fetch(root=root, wheels=wheels)
    assert sorted(p.name for p in root.iterdir()) == [".7.1.25424-new", "6.2.41134", "7.1.25424"]
    assert tmp_path.is_dir()


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
