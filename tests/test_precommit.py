"""The real ``pre-commit`` running this checkout's ``.pre-commit-hooks.yaml`` in throwaway repos.

pre-commit clones a hook repository at a revision and ``pip install``s it into its own
environment. So that the tests exercise the files on disk (not the last commit), the
checkout's tracked and untracked files are copied into a temporary repository and
committed once per session; one PRE_COMMIT_HOME is shared so that the environment is
built once (that first build downloads hipport's dependencies from PyPI).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pre_commit")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "mixed-codebase"

WARP_BUG = """\
__global__ void vote(int *out, int v) {
    unsigned mask = __ballot_sync(0xffffffff, v > 0);
    out[threadIdx.x] = mask;
}
"""

CLEAN = """\
__global__ void add(float *a, const float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += b[i];
}
"""

GUARDED = """\
__device__ unsigned long long vote(int v) {
#if defined(__HIP_PLATFORM_AMD__)
    return __ballot(v);
#else
    return __ballot_sync(0xffffffff, v);
#endif
}
"""


def git(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True)


@pytest.fixture(scope="session")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Isolated pre-commit store, hipport cache and git identity."""
    base = tmp_path_factory.mktemp("precommit-env")
    e = dict(os.environ)
    e.update({
        "PRE_COMMIT_HOME": str(base / "pre-commit-home"),
        "HIPPORT_CACHE_DIR": str(base / "hipport-cache"),
        "GIT_CONFIG_GLOBAL": str(base / "gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
    })
    (base / "gitconfig").write_text("[init]\n\tdefaultBranch = main\n")
    e.pop("VIRTUAL_ENV", None)
    return e


@pytest.fixture(scope="session")
def hooks_repo(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> tuple[Path, str]:
    """A committed snapshot of the working tree: (path, rev) for ``repo:`` and ``rev:``."""
    dest = tmp_path_factory.mktemp("hipport-hooks")
    listed = git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").stdout
    for rel in filter(None, listed.split("\0")):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    git(dest, "init", "-q", env=env)
    git(dest, "add", "-A", env=env)
    git(dest, "commit", "-q", "-m", "snapshot", env=env)
    return dest, git(dest, "rev-parse", "HEAD", env=env).stdout.strip()


def pre_commit(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=900)


def new_repo(path: Path, env: dict[str, str], files: dict[str, str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", env=env)
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    git(path, "add", "-A", env=env)
    return path


def config(hooks: tuple[Path, str], *hooks_yaml: str) -> str:
    repo, rev = hooks
    return "repos:\n" f"  - repo: {repo}\n" f"    rev: {rev}\n" "    hooks:\n" + "".join(
        f"      - {h}\n" for h in hooks_yaml)


def commit(repo: Path, env: dict[str, str], *paths: str) -> subprocess.CompletedProcess:
    """``git commit`` through the installed pre-commit hook (what a developer runs)."""
    git(repo, "add", *paths, env=env)
    return subprocess.run(["git", "commit", "-m", "change"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=900)


def test_try_repo_stops_a_warp_size_bug(tmp_path: Path, env, hooks_repo) -> None:
    repo = new_repo(tmp_path / "r", env, {"kernels/vote.cu": WARP_BUG})
    path, rev = hooks_repo
    result = pre_commit(repo, env, "try-repo", str(path), "hipport-check", "--ref", rev)
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "kernels/vote.cu:2:35: HP201 high:" in out and "[warp-mask-32bit]" in out


@pytest.fixture
def gated_repo(tmp_path: Path, env, hooks_repo) -> Path:
    """A repository whose commits go through hipport-check (installed as the git hook)."""
    repo = new_repo(tmp_path / "r", env, {
        ".pre-commit-config.yaml": config(hooks_repo, "id: hipport-check"),
        "README": "x\n",
    })
    pre_commit(repo, env, "install").check_returncode()
    assert commit(repo, env, "-A").returncode == 0
    return repo


def test_commit_with_warp_bug_fails_clean_and_guarded_pass(gated_repo: Path, env) -> None:
    (gated_repo / "bad.cu").write_text(WARP_BUG)
    bad = commit(gated_repo, env, "bad.cu")
    assert bad.returncode != 0
    assert "bad.cu:2:35: HP201 high:" in bad.stdout + bad.stderr
    git(gated_repo, "rm", "-q", "--cached", "bad.cu", env=env)

    (gated_repo / "clean.cu").write_text(CLEAN)
    (gated_repo / "guarded.cuh").write_text(GUARDED)
    ok = commit(gated_repo, env, "clean.cu", "guarded.cuh")
    assert ok.returncode == 0, ok.stdout + ok.stderr


def test_suppression_comment_lets_the_commit_through(gated_repo: Path, env) -> None:
    src = WARP_BUG.replace("    unsigned mask",
                           "    // Only launched on 32-lane hardware. hipport: ignore[HP201, HP202]\n"
                           "    unsigned mask")
    (gated_repo / "ok.cu").write_text(src)
    result = commit(gated_repo, env, "ok.cu")
    assert result.returncode == 0, result.stdout + result.stderr


def test_baseline_lets_old_findings_through_and_stops_new_ones(tmp_path: Path, env,
                                                              hooks_repo) -> None:
    repo = new_repo(tmp_path / "r", env, {"legacy.cu": WARP_BUG})
    subprocess.run([sys.executable, "-m", "hipport", "check", "--write-baseline",
                    ".hipport-baseline.json", "legacy.cu"], cwd=repo, env=env, check=True)
    (repo / ".pre-commit-config.yaml").write_text(config(
        hooks_repo, "id: hipport-check\n        args: [--baseline, .hipport-baseline.json]"))
    pre_commit(repo, env, "install").check_returncode()
    first = commit(repo, env, "-A")
    assert first.returncode == 0, first.stdout + first.stderr

    # Old code moves down a few lines: still baselined.
    (repo / "legacy.cu").write_text("// moved\n\n" + WARP_BUG)
    moved = commit(repo, env, "legacy.cu")
    assert moved.returncode == 0, moved.stdout + moved.stderr

    # A new copy of the same bug in the same file is new.
    (repo / "legacy.cu").write_text("// moved\n\n" + WARP_BUG + WARP_BUG.replace("vote", "vote2"))
    new = commit(repo, env, "legacy.cu")
    out = new.stdout + new.stderr
    assert new.returncode != 0
    assert "legacy.cu:8:35: HP201 high:" in out
    assert "legacy.cu:4:" not in out  # the baselined one is not shown


def test_example_project_and_hipport_sync(tmp_path: Path, env, hooks_repo) -> None:
    """The example's own .pre-commit-config.yaml, pointed at this checkout."""
    repo = tmp_path / "example"
    shutil.copytree(EXAMPLE, repo)
    cfg = repo / ".pre-commit-config.yaml"
    path, rev = hooks_repo
    text, n_repo = re.subn(r"(repo:\s*)\S+", rf"\g<1>{path}", cfg.read_text())
    text, n_rev = re.subn(r"(rev:\s*)\S+", rf"\g<1>{rev}", text)
    assert (n_repo, n_rev) == (1, 1), "the example config should name hipport's repo and rev once"
    cfg.write_text(text)
    new_repo(repo, env, {})
    everything = pre_commit(repo, env, "run", "--all-files")
    assert everything.returncode == 0, everything.stdout + everything.stderr

    pre_commit(repo, env, "install").check_returncode()
    assert commit(repo, env, "-A").returncode == 0
    source = repo / "src" / "cuda" / "vector_add.cu"
    source.write_text(source.read_text() + "\nvoid sync_all() { cudaDeviceSynchronize(); }\n")
    stale = commit(repo, env, "src/cuda/vector_add.cu")
    out = stale.stdout + stale.stderr
    assert stale.returncode != 0
    assert "regenerated src/hip/vector_add.hip from src/cuda/vector_add.cu" in out
    assert "hipDeviceSynchronize" in (repo / "src" / "hip" / "vector_add.hip").read_text()

    fixed = commit(repo, env, "src/cuda/vector_add.cu", "src/hip/vector_add.hip")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr


def test_a_staged_header_is_judged_by_its_includers_not_staged(tmp_path: Path, env, hooks_repo) -> None:
    """A commit of w.cuh (now with a 32-lane index) and cuda.cu, which includes it only for
    CUDA (``#ifndef USE_ROCM``): hip.cu, not staged, compiles it for HIP, so the hook must
    fail as scan of the repository does (check reads the header's includers there)."""
    repo = new_repo(tmp_path / "r", env, {
        ".pre-commit-config.yaml": config(hooks_repo, "id: hipport-check"),
        "pyproject.toml": '[tool.hipport]\nhip-guards = ["USE_ROCM"]\n',
        "w.cuh": "#pragma once\n__device__ int lane_of() { return threadIdx.x % warpSize; }\n",
        "cuda.cu": '#ifndef USE_ROCM\n#include "w.cuh"\n#endif\n__global__ void c(int *p) { p[0] = 1; }\n',
        "hip.cu": '#include "w.cuh"\n__global__ void h(int *p) { p[0] = lane_of(); }\n',
    })
    pre_commit(repo, env, "install").check_returncode()
    assert commit(repo, env, "-A").returncode == 0
    (repo / "w.cuh").write_text("#pragma once\n__device__ int lane_of() { return threadIdx.x & 31; }\n")
    (repo / "cuda.cu").write_text((repo / "cuda.cu").read_text() + "// touched\n")
    bad = commit(repo, env, "w.cuh", "cuda.cu")
    assert bad.returncode != 0
    assert "w.cuh:2:35: HP204 high:" in bad.stdout + bad.stderr
