#!/usr/bin/env python3
"""What SQLite's parse of a multi-row INSERT costs, against the same statement prepared once.

diesel caches no INSERT of a variable number of rows (nor UPDATE, nor sql_query): every
statement of the committer's transaction on SQLite is parsed and compiled again. This measures
that cost for a statement shaped like the committer's entries insert (rows of 9 columns, a
440-byte canonical payload and a 32-byte hash each), in a scratch file, one transaction per
statement, `synchronous = OFF` so that the sync does not drown it:

    python3 bench/sqlite-parse.py [ROWS]            # ROWS per statement, 25 by default

Python's sqlite3 module caches statements by their text unless `cached_statements=0`; the
difference between the two runs is the parse and compile. Python adds its own per-row cost to
the single-row run (executemany), so that line is an upper bound for prepared single rows.
"""
import os
import sqlite3
import sys
import tempfile
import time


def main(n):
    d = tempfile.mkdtemp()
    path = os.path.join(d, "parse.db")
    payload, leaf = b"x" * 440, b"y" * 32

    def connect(cached):
        c = sqlite3.connect(path, isolation_level=None, cached_statements=cached)
        c.execute("PRAGMA journal_mode = WAL")
        c.execute("PRAGMA synchronous = OFF")
        c.execute(
            "CREATE TABLE IF NOT EXISTS e (seq INTEGER PRIMARY KEY, ts TEXT, kind TEXT, "
            "op TEXT, tb TEXT, rd TEXT, bet TEXT, canonical BLOB, leaf BLOB)"
        )
        return c

    def rows(base):
        return [
            (base + i, "2026-11-29T00:00:00Z", "bet_accepted", "op", "op:t1", "op:t1.1",
             f"b{base + i}", payload, leaf)
            for i in range(n)
        ]

    multi = "INSERT INTO e VALUES " + ",".join(["(?,?,?,?,?,?,?,?,?)"] * n)
    single = "INSERT INTO e VALUES (?,?,?,?,?,?,?,?,?)"
    k = 2000
    results = []
    for label, cached, base in [
        ("multi-row, parsed every time", 0, 0),
        ("multi-row, prepared once", 128, 10**8),
    ]:
        c = connect(cached)
        t = time.perf_counter()
        for j in range(k):
            flat = [x for row in rows(base + j * n) for x in row]
            c.execute("BEGIN")
            c.execute(multi, flat)
            c.execute("COMMIT")
        results.append((label, (time.perf_counter() - t) / k))
        c.close()
    c = connect(128)
    t = time.perf_counter()
    for j in range(k):
        c.execute("BEGIN")
        c.executemany(single, rows(2 * 10**8 + j * n))
        c.execute("COMMIT")
    results.append(("single rows, prepared once", (time.perf_counter() - t) / k))
    print(f"{n} rows a statement, {k} transactions each (SQLite {sqlite3.sqlite_version})")
    for label, dt in results:
        print(f"  {label:30s} {dt * 1e6:8.1f} µs a statement")
    print(f"  parse and compile ≈ {(results[0][1] - results[1][1]) * 1e6:.1f} µs a statement")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 25)
