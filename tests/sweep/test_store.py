import json
import sqlite3

import pytest

from commcomp.sweep.store import JobRecord, ResultStore, StoreError


def rec(point, status="ok", result=None, seed=1, **kw):
    return JobRecord("s", "selftest", json.dumps(point, sort_keys=True, separators=(",", ":")), seed, status,
                     result if status == "ok" else None, error=None if status == "ok" else "ValueError: bad",
                     wall_seconds=0.5, version="0.1.0", git_revision="abc", **kw)


def test_round_trip_and_promoted_columns(tmp_path):
    db = str(tmp_path / "r.sqlite")
    with ResultStore(db) as store:
        store.record(rec({"arch": "lstm", "n": 4}, result={"correct": True, "bits": 12, "x": [1, 0]}))
        store.record(rec({"arch": "gru", "n": 8}, status="error", seed=2))
        rows = store.rows()
    assert [(r.params, r.status, r.result, r.error) for r in rows] == [
        ({"arch": "gru", "n": 8}, "error", {}, "ValueError: bad"),
        ({"arch": "lstm", "n": 4}, "ok", {"correct": True, "bits": 12, "x": [1, 0]}, None)]
    raw = sqlite3.connect(db)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    got = raw.execute("SELECT p_arch, p_n, r_correct, r_bits, r_x, status, version, git_revision "
                      "FROM results ORDER BY p_n").fetchall()
    assert got == [("lstm", 4, 1, 12, None, "ok", "0.1.0", "abc"), ("gru", 8, None, None, None, "error", "0.1.0", "abc")]


def test_same_point_replaces_its_row_and_done_points(tmp_path):
    with ResultStore(str(tmp_path / "r.sqlite")) as store:
        store.record(rec({"n": 1}, status="error"))
        store.record(rec({"n": 2}, result={"v": 1}))
        assert store.done_points("s", "selftest") == {('{"n":1}', 1), ('{"n":2}', 1)}
        assert store.done_points("s", "selftest", include_errors=False) == {('{"n":2}', 1)}
        assert store.done_points("other", "selftest") == set()
        store.record(rec({"n": 1}, result={"v": 2}))
        assert [(r.params["n"], r.status, r.result) for r in store.rows()] == [(1, "ok", {"v": 2}), (2, "ok", {"v": 1})]


class _FailingInsert:
    """A connection that fails on the INSERT: the point is to fail inside the transaction, after an ALTER."""

    def __init__(self, db):
        self._db = db

    def execute(self, sql, *args):
        if sql.startswith("INSERT INTO results"):
            raise sqlite3.OperationalError("disk I/O error (simulated)")
        return self._db.execute(sql, *args)


def test_a_failed_write_leaves_nothing_and_the_store_stays_usable(tmp_path):
    db = str(tmp_path / "r.sqlite")
    with ResultStore(db) as store:
        store.record(rec({"n": 1}, result={"v": 1}))
        real = store._db
        store._db = _FailingInsert(real)
        with pytest.raises(sqlite3.OperationalError):
            store.record(rec({"n": 1, "new_axis": 3}, result={"brand_new_field": 1}))
        store._db = real
        assert [r.params for r in store.rows()] == [{"n": 1}]
        columns = {row[1] for row in real.execute("PRAGMA table_info(results)")}
        assert "p_new_axis" not in columns and "r_brand_new_field" not in columns  # the ALTERs rolled back
        store.record(rec({"n": 1, "new_axis": 3}, result={"brand_new_field": 1}))
        assert len(store.rows()) == 2 and store.integrity_ok()


def test_readonly_and_bad_files(tmp_path):
    with pytest.raises(StoreError, match="not found"):
        ResultStore(str(tmp_path / "missing.sqlite"), readonly=True)
    junk = tmp_path / "junk.sqlite"
    junk.write_text("this is not a database" * 100)
    with pytest.raises(StoreError):
        ResultStore(str(junk))
    other = tmp_path / "other.sqlite"
    sqlite3.connect(str(other)).execute("CREATE TABLE t (x)")
    with pytest.raises(StoreError, match="no results table"):
        ResultStore(str(other), readonly=True)
    with pytest.raises(StoreError, match="does not exist"):
        ResultStore(str(tmp_path / "no" / "dir.sqlite"))
