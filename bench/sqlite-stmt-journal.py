#!/usr/bin/env python3
"""CPU of multi-row inserts inside a transaction, with and without a statement journal.

A multi-row INSERT whose constraints resolve by ABORT (SQLite's default) opens a statement
journal inside a transaction and copies each page it changes there first; `INSERT OR FAIL`
needs none (a failure stops the statement and the caller rolls the transaction back).
The table is shaped like pitboss's idempotency records (a rowid table, a unique index on
operator and key); 16 rows a statement, 4 statements a transaction, as the committer writes.
The upsert (ON CONFLICT … DO UPDATE, like the player usage and the tiles) is measured the
same way. Python's own sqlite3 module: a ratio in one run, not pitboss's absolute cost.

    python3 bench/sqlite-stmt-journal.py
"""
import os
import random
import sqlite3
import tempfile
import time

PATH = os.path.join(tempfile.gettempdir(), "pitboss-stmt-journal.db")


def fresh(schema):
    for s in ("", "-wal", "-shm"):
        try:
            os.remove(PATH + s)
        except FileNotFoundError:
            pass
    c = sqlite3.connect(PATH, isolation_level=None)
    c.executescript(
        "PRAGMA page_size=2048; PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; " + schema
    )
    return c


def timed(c, sql, row, n=200_000):
    """CPU seconds of `n` rows by `sql` (16 rows a statement, 4 statements a transaction)."""
    rng = random.Random(1)
    began, i = time.process_time(), 0
    while i < n:
        c.execute("BEGIN")
        for _ in range(4):
            args = []
            for _ in range(16):
                args += row(rng, i)
                i += 1
            c.execute(sql, args)
        c.execute("COMMIT")
    return time.process_time() - began


def inserts(verb):
    c = fresh(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, op TEXT NOT NULL, k TEXT NOT NULL, "
        "body TEXT NOT NULL, UNIQUE (op, k));"
    )
    sql = verb + " INTO t (op, k, body) VALUES " + ",".join(["(?,?,?)"] * 16)
    return timed(c, sql, lambda rng, i: ["op", "key-%d-%d" % (rng.randrange(64), i), "x" * 300])


def upserts(verb):
    c = fresh(
        "CREATE TABLE t (op TEXT NOT NULL, k TEXT NOT NULL, v INTEGER NOT NULL, "
        "PRIMARY KEY (op, k));"
    )
    sql = (
        verb
        + " INTO t (op, k, v) VALUES "
        + ",".join(["(?,?,?)"] * 16)
        + " ON CONFLICT (op, k) DO UPDATE SET v = t.v + excluded.v"
    )
    return timed(c, sql, lambda rng, i: ["op", "key-%d" % rng.randrange(5000), 1])


for rnd in range(3):
    a, f = inserts("INSERT"), inserts("INSERT OR FAIL")
    ua, uf = upserts("INSERT"), upserts("INSERT OR FAIL")
    print(
        f"round {rnd + 1}: insert {a:.3f} s, OR FAIL {f:.3f} s ({(f / a - 1) * 100:+.1f} %); "
        f"upsert {ua:.3f} s, OR FAIL {uf:.3f} s ({(uf / ua - 1) * 100:+.1f} %)"
    )
