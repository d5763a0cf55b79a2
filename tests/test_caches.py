"""Caches are data, never code: the mapping cache and check's cache refuse pickles,
links, FIFOs, devices, oversized, foreign, tampered, forged and copied entries, each as a
miss; their HMAC key lives outside the cache folder, private, made once."""

from __future__ import annotations

import json
import os
import pickle
import sys
import time
from pathlib import Path

import pytest

from hipport import cachefile
from hipport.check import CACHE_FORMAT, Cache, prune
from hipport.mapping import MappingTable
from hipport.options import Options
from hipport.pipeline import FileResult

REPO = Path(__file__).resolve().parent.parent
API, DATA = REPO / "mappings" / "api", REPO / "mappings"


class Boom:
    """Unpickling this runs code: it must never happen."""

    def __reduce__(self):
        return (os.system, ("touch " + str(Path(os.environ["BOOM"])),))


KEY = b"k" * cachefile.KEY_BYTES


@pytest.fixture(autouse=True)
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's "user": its key file goes under here, never in the real home."""
    home = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    return home


def _secret(cache: Path) -> bytes:
    key = cachefile.secret_key(cache)
    assert key is not None
    return key


def _mapping_entry(cache: Path) -> Path:
    MappingTable.from_dir(API, DATA, cache_dir=cache)
    (entry,) = cache.glob("mappings-*.json")
    return entry


def test_a_planted_pickle_is_never_loaded_and_is_removed(tmp_path: Path, monkeypatch) -> None:
    cache = tmp_path / "cache"
    entry = _mapping_entry(cache)
    boom = tmp_path / "boom"
    monkeypatch.setenv("BOOM", str(boom))
    entry.write_bytes(pickle.dumps(Boom()))  # a pickle where the JSON entry goes
    entry.with_suffix(".pickle").write_bytes(pickle.dumps(Boom()))  # and where hipport put one
    table = MappingTable.from_dir(API, DATA, cache_dir=cache)
    assert table.lookup("cudaMalloc") is not None
    assert not boom.exists()
    assert not list(cache.glob("*.pickle"))  # deleted when the entry is written again
    assert cachefile.decode("mappings-2", entry.name, entry.read_bytes(), _secret(cache)) is not None


def test_a_well_formed_but_wrong_mapping_entry_is_a_miss(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    entry = _mapping_entry(cache)
    secret = _secret(cache)
    raw = cachefile.decode("mappings-2", entry.name, entry.read_bytes(), secret)
    raw["families.toml"] = {"families": {"runtime": {"nonsense": 1}}}  # authentic, but not a table
    entry.write_bytes(cachefile.encode("mappings-2", entry.name, raw, secret))
    os.chmod(entry, 0o600)
    table = MappingTable.from_dir(API, DATA, cache_dir=cache)
    assert table.lookup("cudaMalloc") is not None
    assert cachefile.decode("mappings-2", entry.name, entry.read_bytes(), secret) != raw  # rewritten


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "link-out", "nested", "foreign-mode", "huge"])
def test_hostile_entries_are_misses(tmp_path: Path, kind: str) -> None:
    root = tmp_path / "cache"
    root.mkdir()
    entry = root / "e.json"
    if kind == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs")
        os.mkfifo(entry)
    elif kind == "dev-zero":
        entry.symlink_to("/dev/zero")
    elif kind == "link-out":
        outside = tmp_path / "outside.json"
        outside.write_bytes(cachefile.encode("k", entry.name, {"a": 1}, KEY))
        entry.symlink_to(outside)
    elif kind == "nested":
        body = b"[" * 100_000
        mac = cachefile._mac(KEY, "k", entry.name, body)
        entry.write_bytes(b"hipport-cache k " + mac + b"\n" + body)
        os.chmod(entry, 0o600)
    elif kind == "foreign-mode":
        entry.write_bytes(cachefile.encode("k", entry.name, {"a": 1}, KEY))
        os.chmod(entry, 0o666)
    elif kind == "huge":
        entry.write_bytes(cachefile.encode("k", entry.name, {"a": "x" * 5000}, KEY))
        os.chmod(entry, 0o600)
    started = time.monotonic()
    assert cachefile.load(entry, root, "k", KEY, limit=4096) is None
    assert time.monotonic() - started < 5


def test_a_sound_entry_round_trips_and_a_tampered_one_does_not(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    assert cachefile.write_entry(root / "e.json", "k", {"findings": [1, 2]}, KEY)
    assert (root / "e.json").stat().st_mode & 0o777 == 0o600
    assert cachefile.load(root / "e.json", root, "k", KEY, 4096) == {"findings": [1, 2]}
    blob = cachefile.read_entry(root / "e.json", root, 4096)
    assert cachefile.decode("other-kind", "e.json", blob, KEY) is None
    assert cachefile.decode("k", "e.json", blob.replace(b"[1,2]", b"[]"), KEY) is None
    assert cachefile.decode("k", "f.json", blob, KEY) is None  # a genuine entry under another name
    assert cachefile.decode("k", "e.json", blob, b"o" * cachefile.KEY_BYTES) is None


WARP_BUG = b"__global__ void k(int *o, int v) { o[0] = __ballot_sync(0xffffffff, v > 0); }\n"


def _check_cache(tmp_path: Path):
    from hipport.analyze import prepare  # noqa: F401 - the registry loads before timing
    from hipport.findings import Severity

    opts = Options()
    cache = Cache(tmp_path / "cache", opts)
    key = cache.key("k.cu", WARP_BUG)
    from hipport.pipeline import process
    from hipport.files import SourceFile

    (tmp_path / "k.cu").write_bytes(WARP_BUG)
    result = process(SourceFile(tmp_path / "k.cu", Path("k.cu"), tmp_path, True), opts)
    assert any(f.severity >= Severity.HIGH for f in result.findings)
    cache.put(key, result)
    return cache, key


def test_a_check_entry_with_its_findings_removed_is_a_miss(tmp_path: Path) -> None:
    cache, key = _check_cache(tmp_path)
    assert cache.get(key, "k.cu", "k.cu").findings  # a hit, with the finding
    path = cache._file(key)
    head, _, body = path.read_bytes().partition(b"\n")
    entry = json.loads(body)
    entry["findings"] = []
    path.write_bytes(head + b"\n" + json.dumps(entry).encode())  # the old MAC
    assert cache.get(key, "k.cu", "k.cu") is None
    path.write_bytes(json.dumps(entry).encode())  # the entry format of earlier hipport
    assert cache.get(key, "k.cu", "k.cu") is None


def test_a_check_entry_of_the_wrong_shape_is_a_miss(tmp_path: Path) -> None:
    cache, key = _check_cache(tmp_path)
    path = cache._file(key)
    for bad in ({"key": key}, {"key": key, "status": "unchanged", "rewrites": 0, "note": "",
                               "findings": [{"code": "HP201"}]},
                {"key": key, "status": "passed", "rewrites": 0, "note": "", "findings": []}):
        cachefile.write_entry(path, CACHE_FORMAT, bad, _secret(cache.root))
        assert cache.get(key, "k.cu", "k.cu") is None, bad


def test_prune_removes_old_entries_and_keeps_the_newest_within_the_bound(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    cache = Cache(root, Options())
    now = time.time()
    for i in range(6):
        path = cache._file(f"{i:02d}" + "0" * 62)
        cachefile.write_entry(path, CACHE_FORMAT, {"i": i}, KEY)
        age = (40 * 86400) if i == 0 else i
        os.utime(path, (now - age, now - age))
    fifo = root / CACHE_FORMAT / "zz" / "f.json"
    fifo.parent.mkdir(parents=True)
    if hasattr(os, "mkfifo"):
        os.mkfifo(fifo)
    removed = prune(root, max_entries=3, max_age_days=30, now=now)
    left = sorted(p.parent.name for p in (root / CACHE_FORMAT).glob("*/*.json") if p.is_file())
    assert left == ["01", "02", "03"]  # the month-old one, then the oldest beyond three
    assert removed == 3


def test_prune_removes_earlier_formats_and_stale_rule_code_lists(tmp_path: Path) -> None:
    """check-1, check-2 … were never read again nor removed; nor were the rule-code lists
    of earlier hipport versions. A link named like an old format is removed, not followed."""
    root = tmp_path / "cache"
    now = time.time()
    for old in ("check-1", "check-2"):
        (root / old / "ab").mkdir(parents=True)
        (root / old / "ab" / "c.json").write_text("{}")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.json").write_text("{}")
    (root / "check-0").symlink_to(outside, target_is_directory=True)
    (root / "checkpoint-1").mkdir()  # not a cache format's name: left alone
    base = root / CACHE_FORMAT
    base.mkdir()
    for name, age in (("rule-codes-old.json", 40 * 86400), ("rule-codes-new.json", 60)):
        (base / name).write_text("[]")
        os.utime(base / name, (now - age, now - age))
    removed = prune(root, now=now)
    assert sorted(p.name for p in root.iterdir()) == sorted([CACHE_FORMAT, "checkpoint-1"])
    assert [p.name for p in base.iterdir()] == ["rule-codes-new.json"]
    assert (outside / "keep.json").is_file() and removed == 4


def test_a_cached_rule_code_list_is_marked_as_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hipport.strict import rule_codes

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    codes = rule_codes(tmp_path / "cache")
    (listed,) = (tmp_path / "cache" / CACHE_FORMAT).glob("rule-codes-*.json")
    os.utime(listed, (1, 1))
    assert rule_codes(tmp_path / "cache") == codes and listed.stat().st_mtime > 1


# -- forged and copied entries: the HMAC under a key outside the cache ---------------

def _sha256_forgery(kind: str, body: bytes) -> bytes:
    """An entry as anyone could write it: the header's digest is a plain SHA-256 of the
    body (what hipport checked before entries were keyed)."""
    import hashlib

    return b"hipport-cache %s %s\n" % (kind.encode(), hashlib.sha256(body).hexdigest().encode()) + body


def _check(args: list[str], cache: Path, state: Path, monkeypatch: pytest.MonkeyPatch):
    from click.testing import CliRunner

    from hipport.cli import main

    monkeypatch.setenv("HIPPORT_CACHE_DIR", str(cache))
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    return CliRunner().invoke(main, ["check", *args], catch_exceptions=False)


@pytest.fixture
def count_process(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every file that really goes through the pipeline (a cache miss)."""
    from hipport import pipeline

    seen: list[str] = []
    real = pipeline.process
    monkeypatch.setattr(pipeline, "process", lambda sf, options: seen.append(sf.path.name) or real(sf, options))
    return seen


def test_a_forged_check_entry_with_a_valid_plain_checksum_is_a_miss(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count_process: list[str]) -> None:
    cache, state = tmp_path / "cache", tmp_path / "state"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.cu").write_bytes(WARP_BUG)
    first = _check(["k.cu"], cache, state, monkeypatch)
    assert first.exit_code == 1 and "HP201" in first.stdout
    (entry,) = (cache / CACHE_FORMAT).glob("*/*.json")
    forged = json.loads(entry.read_bytes().partition(b"\n")[2])
    forged["findings"] = []
    entry.write_bytes(_sha256_forgery(CACHE_FORMAT, json.dumps(forged).encode()))
    os.chmod(entry, 0o600)  # as private as a genuine one
    again = _check(["k.cu"], cache, state, monkeypatch)
    assert (again.exit_code, again.stdout) == (first.exit_code, first.stdout)  # the finding is back
    assert count_process == ["k.cu", "k.cu"]  # the forgery was a miss, then replaced
    assert _check(["k.cu"], cache, state, monkeypatch).exit_code == 1
    assert count_process == ["k.cu", "k.cu"]  # and the rewritten entry is a hit


def test_a_cache_copied_to_another_user_only_misses(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count_process: list[str]) -> None:
    import shutil

    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.cu").write_bytes(WARP_BUG)
    (tmp_path / "clean.cu").write_bytes(b"__global__ void k(float *a) { a[0] = 1.0f; }\n")
    mine = _check(["k.cu", "clean.cu"], tmp_path / "cache", tmp_path / "alice", monkeypatch)
    assert mine.exit_code == 1
    # Another user restores it, after editing the entry of k.cu to hide its finding: a
    # well-formed entry under alice's MAC, which only alice's key can check.
    shutil.copytree(tmp_path / "cache", tmp_path / "restored")
    for entry in (tmp_path / "restored" / CACHE_FORMAT).glob("*/*.json"):
        head, _, body = entry.read_bytes().partition(b"\n")
        value = json.loads(body)
        value["findings"] = []
        entry.write_bytes(head + b"\n" + json.dumps(value).encode())
    theirs = _check(["k.cu", "clean.cu"], tmp_path / "restored", tmp_path / "bob", monkeypatch)
    assert (theirs.exit_code, theirs.stdout) == (mine.exit_code, mine.stdout)
    assert sorted(count_process) == ["clean.cu", "clean.cu", "k.cu", "k.cu"]  # bob: all misses
    # Unedited, alice's entries are misses for bob too, and hits for alice.
    shutil.rmtree(tmp_path / "restored")
    shutil.copytree(tmp_path / "cache", tmp_path / "restored")
    _check(["k.cu", "clean.cu"], tmp_path / "restored", tmp_path / "bob", monkeypatch)
    assert len(count_process) == 6
    _check(["k.cu", "clean.cu"], tmp_path / "cache", tmp_path / "alice", monkeypatch)
    assert len(count_process) == 6


def test_a_forged_or_copied_mapping_entry_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    entry = _mapping_entry(cache)
    body = entry.read_bytes().partition(b"\n")[2]
    assert body.count(b'"hipMalloc"') >= 1
    evil = body.replace(b'"hipMalloc"', b'"hipEvilMalloc"')

    def lookup() -> str:
        found = MappingTable.from_dir(API, DATA, cache_dir=cache).lookup("cudaMalloc")
        assert found is not None
        return found.hip

    # The control: under this user's key, the cache does decide the mapping ...
    entry.write_bytes(cachefile.encode("mappings-2", entry.name, json.loads(evil), _secret(cache)))
    assert lookup() == "hipEvilMalloc"
    # ... so a forgery with a plain checksum must not be read,
    entry.write_bytes(_sha256_forgery("mappings-2", evil))
    os.chmod(entry, 0o600)
    assert lookup() == "hipMalloc"
    # nor another user's genuine entry.
    entry.write_bytes(cachefile.encode("mappings-2", entry.name, json.loads(evil), b"b" * cachefile.KEY_BYTES))
    assert lookup() == "hipMalloc"
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "bob"))
    assert lookup() == "hipMalloc"  # bob cannot read alice's (rewritten, genuine) entry: a miss


def test_the_key_is_private_made_once_and_outside_the_cache(tmp_path: Path, state_home: Path) -> None:
    cache = tmp_path / "cache"
    key = _secret(cache)
    path = state_home / "hipport" / "cache.key"
    assert path.read_bytes() == key and len(key) == cachefile.KEY_BYTES
    assert path.stat().st_mode & 0o777 == 0o600
    assert (state_home / "hipport").stat().st_mode & 0o777 == 0o700
    assert _secret(cache) == key  # the same key next time
    assert not [p for p in (state_home / "hipport").iterdir() if p.name != "cache.key"]  # no temporary left
    assert cachefile.secret_key(state_home) is None  # a key inside the cache folder would travel with it
    assert cachefile.secret_key(state_home / "hipport") is None


@pytest.mark.parametrize("kind", ["readable-by-others", "wrong-size", "a-link", "a-fifo", "unmakeable"])
def test_without_a_safe_key_the_cache_is_not_used(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state_home: Path, kind: str,
        count_process: list[str]) -> None:
    path = state_home / "hipport" / "cache.key"
    path.parent.mkdir(parents=True)
    if kind == "readable-by-others":
        path.write_bytes(KEY)
        os.chmod(path, 0o644)  # a key others can read lets them forge
    elif kind == "wrong-size":
        path.write_bytes(b"short")
        os.chmod(path, 0o600)
    elif kind == "a-link":
        (tmp_path / "elsewhere").write_bytes(KEY)
        os.chmod(tmp_path / "elsewhere", 0o600)
        path.symlink_to(tmp_path / "elsewhere")
    elif kind == "a-fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs")
        os.mkfifo(path)
    else:
        path.parent.rmdir()
        path.parent.write_bytes(b"")  # the state folder is a file: no key can be made
    before = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    started = time.monotonic()
    assert cachefile.secret_key(tmp_path / "cache") is None
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.cu").write_bytes(WARP_BUG)
    for _ in range(2):
        result = _check(["k.cu"], tmp_path / "cache", state_home, monkeypatch)
        assert result.exit_code == 1 and "HP201" in result.stdout
    assert count_process == ["k.cu", "k.cu"]  # scanned both times: no cache
    assert not list((tmp_path / "cache").rglob("*.json"))  # and nothing written
    assert time.monotonic() - started < 30
    if before is not None:
        assert path.read_bytes() == before  # left alone, not replaced


def test_the_rule_code_list_is_a_cache_entry_too(tmp_path: Path) -> None:
    """It was read with a plain read_text: a FIFO in its place blocked ``check --select``."""
    from hipport.check import tool_fingerprint
    from hipport.rules import load
    from hipport.strict import rule_codes

    cache = tmp_path / "cache"
    path = cache / CACHE_FORMAT / f"rule-codes-{tool_fingerprint()[:32]}.json"
    path.parent.mkdir(parents=True)
    if hasattr(os, "mkfifo"):
        os.mkfifo(path)
        started = time.monotonic()
        assert rule_codes(cache) == sorted(load().rules)
        assert time.monotonic() - started < 5
        path.unlink()
    rule_codes(cache)
    path.write_bytes(_sha256_forgery("rule-codes-1", b'["HP201"]'))  # a planted short list
    os.chmod(path, 0o600)
    assert rule_codes(cache) == sorted(load().rules)
