"""Caches are data, never code: the mapping cache and check's cache refuse pickles,
links, FIFOs, devices, oversized, foreign and tampered entries, each as a miss."""

from __future__ import annotations

import json
import os
import pickle
import sys
import time
from pathlib import Path

import pytest

from hipport import cachefile
from hipport.check import Cache, prune
from hipport.mapping import MappingTable
from hipport.options import Options
from hipport.pipeline import FileResult

REPO = Path(__file__).resolve().parent.parent
API, DATA = REPO / "mappings" / "api", REPO / "mappings"


class Boom:
    """Unpickling this runs code: it must never happen."""

    def __reduce__(self):
        return (os.system, ("touch " + str(Path(os.environ["BOOM"])),))


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
    assert cachefile.decode("mappings-1", entry.read_bytes()) is not None


def test_a_well_formed_but_wrong_mapping_entry_is_a_miss(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    entry = _mapping_entry(cache)
    raw = cachefile.decode("mappings-1", entry.read_bytes())
    raw["families.toml"] = {"families": {"runtime": {"nonsense": 1}}}  # checksummed, but not a table
    entry.write_bytes(cachefile.encode("mappings-1", raw))
    os.chmod(entry, 0o600)
    table = MappingTable.from_dir(API, DATA, cache_dir=cache)
    assert table.lookup("cudaMalloc") is not None
    assert cachefile.decode("mappings-1", entry.read_bytes()) != raw  # rewritten from the sources


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
        outside.write_bytes(cachefile.encode("k", {"a": 1}))
        entry.symlink_to(outside)
    elif kind == "nested":
        body = b"[" * 100_000
        import hashlib

        entry.write_bytes(b"hipport-cache k " + hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
        os.chmod(entry, 0o600)
    elif kind == "foreign-mode":
        entry.write_bytes(cachefile.encode("k", {"a": 1}))
        os.chmod(entry, 0o666)
    elif kind == "huge":
        entry.write_bytes(cachefile.encode("k", {"a": "x" * 5000}))
        os.chmod(entry, 0o600)
    started = time.monotonic()
    blob = cachefile.read_entry(entry, root, limit=4096)
    value = cachefile.decode("k", blob) if blob is not None else None
    assert value is None
    assert time.monotonic() - started < 5


def test_a_sound_entry_round_trips_and_a_tampered_one_does_not(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    assert cachefile.write_entry(root / "e.json", "k", {"findings": [1, 2]})
    assert (root / "e.json").stat().st_mode & 0o777 == 0o600
    blob = cachefile.read_entry(root / "e.json", root, 4096)
    assert cachefile.decode("k", blob) == {"findings": [1, 2]}
    assert cachefile.decode("other-kind", blob) is None
    assert cachefile.decode("k", blob.replace(b"[1,2]", b"[]")) is None


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
    path.write_bytes(head + b"\n" + json.dumps(entry).encode())  # the old checksum
    assert cache.get(key, "k.cu", "k.cu") is None
    path.write_bytes(json.dumps(entry).encode())  # the entry format of earlier hipport
    assert cache.get(key, "k.cu", "k.cu") is None


def test_a_check_entry_of_the_wrong_shape_is_a_miss(tmp_path: Path) -> None:
    cache, key = _check_cache(tmp_path)
    path = cache._file(key)
    for bad in ({"key": key}, {"key": key, "status": "unchanged", "rewrites": 0, "note": "",
                               "findings": [{"code": "HP201"}]},
                {"key": key, "status": "passed", "rewrites": 0, "note": "", "findings": []}):
        cachefile.write_entry(path, "check-2", bad)
        assert cache.get(key, "k.cu", "k.cu") is None, bad


def test_prune_removes_old_entries_and_keeps_the_newest_within_the_bound(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    cache = Cache(root, Options())
    now = time.time()
    for i in range(6):
        path = cache._file(f"{i:02d}" + "0" * 62)
        cachefile.write_entry(path, "check-2", {"i": i})
        age = (40 * 86400) if i == 0 else i
        os.utime(path, (now - age, now - age))
    fifo = root / "check-2" / "zz" / "f.json"
    fifo.parent.mkdir(parents=True)
    if hasattr(os, "mkfifo"):
        os.mkfifo(fifo)
    removed = prune(root, max_entries=3, max_age_days=30, now=now)
    left = sorted(p.parent.name for p in (root / "check-2").glob("*/*.json") if p.is_file())
    assert left == ["01", "02", "03"]  # the month-old one, then the oldest beyond three
    assert removed == 3
