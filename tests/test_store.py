"""The results store's files: records gzip'd a member each (appended, cut only at the end
by an interruption, read past), and the plain form of before, still read."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from dgdrf.bench.store import (
    RESULTS_JSONL, STALE_JSONL, TORN_LINES, RecordSink, compress, drop_unreadable, gzip_member, iter_records, read_records, record_files,
)


def rec(key: str, n: int = 0, **extra: object) -> dict:
    return {"key": key, "samples": list(range(n)), **extra}


def sink(out: Path, *records: dict) -> None:
    with RecordSink(out) as s:
        for r in records:
            s.write(r)


def test_records_are_gzip_members_one_stream_reads(tmp_path):
    """Each record its own member, flushed as written; the file is one gzip stream to
    any reader (zcat, Python's gzip), one JSON line per record."""
    sink(tmp_path, rec("a", 5), rec("b", 500))
    sink(tmp_path, rec("c"))  # a later session appends
    data = (tmp_path / RESULTS_JSONL).read_bytes()
    assert data.count(b"\x1f\x8b\x08") >= 3 and data[:3] == b"\x1f\x8b\x08"
    lines = gzip.decompress(data).decode().splitlines()
    assert [json.loads(x)["key"] for x in lines] == ["a", "b", "c"]
    if shutil.which("zcat"):
        assert subprocess.run(["zcat", str(tmp_path / RESULTS_JSONL)], capture_output=True, check=True).stdout.decode().splitlines() == lines
    records, bad = read_records(tmp_path)
    assert bad == 0 and [r["key"] for r in records] == ["a", "b", "c"] and records[1]["samples"] == list(range(500))
    assert gzip_member("x") == gzip_member("x")  # no timestamp: the same line, the same bytes


@pytest.mark.parametrize("cut", [1, 8, 40, "header"])
def test_a_member_cut_at_the_end_is_one_unreadable_record_and_set_aside(tmp_path, cut):
    """An interruption during a write leaves the last member cut (in its trailer, its
    data or its header): it is one unreadable record, the records before it stay, a
    sink appends after it without losing any, and drop_unreadable moves it aside (its
    text so far in torn-lines.txt), leaving a file every gzip reader takes whole."""
    sink(tmp_path, rec("a", 200), rec("b", 300))
    member = gzip_member(json.dumps(rec("c", 3000)))
    cut_at = 5 if cut == "header" else len(member) - int(cut)
    with (tmp_path / RESULTS_JSONL).open("ab") as fh:
        fh.write(member[:cut_at])
    records, bad = read_records(tmp_path)
    assert bad == 1 and [r["key"] for r in records] == ["a", "b"]
    sink(tmp_path, rec("d", 10), rec("b", 1))  # a resumed sweep: its records follow the cut one
    records, bad = read_records(tmp_path)
    assert bad == 1 and [(r["key"], len(r["samples"])) for r in records] == [("a", 200), ("b", 1), ("d", 10)]
    assert drop_unreadable(tmp_path) == 1
    assert read_records(tmp_path) == (records, 0)
    (torn,) = (tmp_path / TORN_LINES).read_text().split("\n")[:-1]
    assert json.dumps(rec("c", 3000)).startswith(torn)
    assert [json.loads(x)["key"] for x in gzip.decompress((tmp_path / RESULTS_JSONL).read_bytes()).decode().splitlines()] == ["a", "b", "d", "b"]
    assert drop_unreadable(tmp_path) == 0


def test_a_member_that_is_not_json_is_unreadable_too(tmp_path):
    sink(tmp_path, rec("a"))
    with (tmp_path / RESULTS_JSONL).open("ab") as fh:
        fh.write(gzip_member('{"no key": 1}') + gzip_member("not json"))
    sink(tmp_path, rec("b"))
    records, bad = read_records(tmp_path)
    assert bad == 2 and [r["key"] for r in records] == ["a", "b"]


def test_plain_records_of_before_are_read_first_then_the_gzipped(tmp_path):
    """An old directory's results.jsonl (torn line and all) is read as it was; records
    a sweep appended since (results.jsonl.gz) come after it, a key's last winning."""
    (tmp_path / "results.jsonl").write_text("\n".join(json.dumps(r) for r in (rec("a", 1), rec("b", 1))) + '\n\n{"key": "cut mid-wri')
    assert record_files(tmp_path) == [tmp_path / "results.jsonl"]
    assert read_records(tmp_path) == ([rec("a", 1), rec("b", 1)], 1)
    sink(tmp_path, rec("b", 2), rec("c", 2))
    assert record_files(tmp_path) == [tmp_path / "results.jsonl", tmp_path / RESULTS_JSONL]
    assert read_records(tmp_path) == ([rec("a", 1), rec("b", 2), rec("c", 2)], 1)
    assert [r["key"] for r in iter_records(tmp_path)] == ["a", "b", "b", "c"]  # every record, superseded ones too
    (tmp_path / "stale.jsonl").write_text(json.dumps(rec("s", 1)) + "\n")
    (tmp_path / STALE_JSONL).write_bytes(gzip_member(json.dumps(rec("t", 1))))
    assert [r["key"] for r in iter_records(tmp_path, STALE_JSONL)] == ["s", "t"]
    assert drop_unreadable(tmp_path) == 1  # rewritten gzip'd, the plain file gone
    assert record_files(tmp_path) == [tmp_path / RESULTS_JSONL] and read_records(tmp_path) == ([rec("a", 1), rec("b", 2), rec("c", 2)], 0)
    assert [r["key"] for r in iter_records(tmp_path)] == ["a", "b", "b", "c"]


def test_compress_keeps_every_line_byte_for_byte(tmp_path):
    """compress (python -m dgdrf.bench.store DIR): an old directory's plain files become
    gzip'd, every line as it was (an unreadable one stays unreadable), before what the
    .gz held; the plain files go; nothing is left to do a second time."""
    plain = "".join(json.dumps(r) + "\n" for r in (rec("a", 3), rec("b", 3))) + '{"key": "cut\n'
    (tmp_path / "results.jsonl").write_text(plain)
    (tmp_path / "stale.jsonl").write_text(json.dumps(rec("s")) + "\n")
    sink(tmp_path, rec("c"))
    before = read_records(tmp_path), list(iter_records(tmp_path, STALE_JSONL))
    assert compress(tmp_path) == [tmp_path / RESULTS_JSONL, tmp_path / STALE_JSONL]
    assert not (tmp_path / "results.jsonl").exists() and not (tmp_path / "stale.jsonl").exists()
    assert gzip.decompress((tmp_path / RESULTS_JSONL).read_bytes()).decode() == plain + json.dumps(rec("c")) + "\n"
    assert (read_records(tmp_path), list(iter_records(tmp_path, STALE_JSONL))) == before
    assert compress(tmp_path) == []


def test_an_empty_or_missing_store_has_no_records(tmp_path):
    assert read_records(tmp_path) == ([], 0) and drop_unreadable(tmp_path) == 0 and compress(tmp_path) == []
    (tmp_path / RESULTS_JSONL).write_bytes(b"")
    assert read_records(tmp_path) == ([], 0)
