#!/usr/bin/env python3
"""WAL frames per commit, by table or index, of a SQLite store under load.

Usage (copy both files while the service is under load, the WAL first):

    cp DATA/pitboss.sqlite-wal /tmp/w && cp DATA/pitboss.sqlite /tmp/db
    python3 bench/wal-frames.py /tmp/db /tmp/w

The copy of the database is read without its WAL, so a page appended since the last
checkpoint shows as "new page". Each WAL frame is a 24-byte header (page number, then the
database size in pages, non-zero on a commit's last frame) and one page; the file starts with
a 32-byte header whose third word is the page size. Frames left over from before the WAL last
started over (a different salt) are not counted.
"""
import collections
import sqlite3
import struct
import sys


def main(db_path, wal_path):
    wal = open(wal_path, "rb").read()
    page_size = struct.unpack(">I", wal[8:12])[0]
    salt = wal[16:24]
    owner = {}
    con = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    for name, pageno in con.execute("SELECT name, pageno FROM dbstat"):
        owner[pageno] = name
    commits, current, off = [], collections.Counter(), 32
    while off + 24 + page_size <= len(wal):
        pageno, db_size = struct.unpack(">II", wal[off:off + 8])
        if wal[off + 8:off + 16] != salt:
            break
        current[owner.get(pageno, "new page")] += 1
        if db_size:
            commits.append(current)
            current = collections.Counter()
        off += 24 + page_size
    if not commits:
        print("no complete commit in the WAL")
        return
    total = collections.Counter()
    for c in commits:
        total.update(c)
    print(f"{len(commits)} commits, page size {page_size}")
    print("| table or index | frames | per commit |")
    print("|---|---|---|")
    for name, n in total.most_common():
        print(f"| {name} | {n} | {n / len(commits):.1f} |")
    print(f"| all | {sum(total.values())} | {sum(total.values()) / len(commits):.1f} |")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
