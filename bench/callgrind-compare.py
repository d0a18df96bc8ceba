#!/usr/bin/env python3
"""Inclusive instructions a bet of the functions named, in two callgrind profiles.

    bench/callgrind-compare.py OLD.out OLD_BETS NEW.out NEW_BETS REGEX [REGEX ...]

Each REGEX is matched against the function names `callgrind_annotate --inclusive=yes` prints
(file prefix and binary suffix removed); the three largest matches of each are shown, in
thousands of instructions a bet accepted, old then new. `PROGRAM TOTALS` names the whole.
"""
import re
import subprocess
import sys


def load(path):
    out = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)", line)
        if not m:
            continue
        ir = int(m.group(1).replace(",", ""))
        name = m.group(2)
        name = name.split(":", 1)[1] if ":" in name and not name.startswith("PROGRAM") else name
        name = re.sub(r" \[.*\]$", "", name).strip()
        found[name] = max(found.get(name, 0), ir)
    return found


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    old, old_bets = load(sys.argv[1]), float(sys.argv[2])
    new, new_bets = load(sys.argv[3]), float(sys.argv[4])
    print(f"{'old':>9} {'new':>9}  k instructions a bet")
    for pattern in sys.argv[5:]:
        names = {n for n in old if re.search(pattern, n)} | {n for n in new if re.search(pattern, n)}
        for n in sorted(names, key=lambda n: -old.get(n, 0))[:3]:
            a, b = old.get(n, 0) / old_bets, new.get(n, 0) / new_bets
            change = f"{(b / a - 1) * 100:+6.1f} %" if a else "    new"
            print(f"{a / 1000:9.1f} {b / 1000:9.1f}  {change}  {n[:110]}")


main()
