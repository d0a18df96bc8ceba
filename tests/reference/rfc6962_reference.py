#!/usr/bin/env python3
"""An independent RFC 6962 / RFC 9162 Merkle tree, for cross-checking pitboss-audit.

Written from the RFCs alone (no code shared with the Rust crate), with the standard library
only, so that the tests compare two implementations:

  MTH({})       = SHA-256()
  MTH({d0})     = SHA-256(0x00 || d0)
  MTH(D[n])     = SHA-256(0x01 || MTH(D[0:k]) || MTH(D[k:n])),  k the largest power of 2 < n
  PROOF(m, D[n]) = SUBPROOF(m, D[n], true)                        (RFC 6962 section 2.1.2)
  verification: RFC 9162 section 2.1.4.2

Usage (JSON on standard input, JSON on standard output):

  rfc6962_reference.py prove     {"leaves": ["<line>", ...]}
      -> {"roots": ["<hex of MTH of the first s leaves>" for s in 0..n],
          "proofs": {"<m> <n>": ["<hex>", ...] for 1 <= m <= n <= len}}
      Each leaf is the UTF-8 text of an export's entry line; its leaf hash is
      SHA-256(0x00 || bytes).

  rfc6962_reference.py verify    [{"old_size": m, "new_size": n, "old_root": hex,
                                   "new_root": hex, "proof": [hex, ...]}, ...]
      -> [true | false, ...]
"""

import hashlib
import json
import sys


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def split(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def mth(hashes):
    n = len(hashes)
    if n == 0:
        return hashlib.sha256(b"").digest()
    if n == 1:
        return hashes[0]
    k = split(n)
    return node_hash(mth(hashes[:k]), mth(hashes[k:]))


def subproof(m, hashes, b):
    n = len(hashes)
    if m == n:
        return [] if b else [mth(hashes)]
    k = split(n)
    if m <= k:
        return subproof(m, hashes[:k], b) + [mth(hashes[k:])]
    return subproof(m - k, hashes[k:], False) + [mth(hashes[:k])]


def proof(m, hashes):
    if m == 0 or m == len(hashes):
        return []
    return subproof(m, hashes, True)


def verify(first, second, first_hash, second_hash, consistency_path):
    """RFC 9162 section 2.1.4.2, step by step."""
    if first > second:
        return False
    if first == second:
        return consistency_path == [] and first_hash == second_hash
    if first == 0:
        return consistency_path == []
    if not consistency_path:
        return False
    path = list(consistency_path)
    # 1. If first is an exact power of 2, prepend first_hash to the path.
    if first & (first - 1) == 0:
        path = [first_hash] + path
    # 2. fn = first - 1, sn = second - 1.
    fn, sn = first - 1, second - 1
    # 3. If LSB(fn) is set, right-shift both until it is not.
    while fn & 1:
        fn >>= 1
        sn >>= 1
    # 4. fr = sr = the first value in the path.
    fr = sr = path[0]
    # 5. For each subsequent value c in the path:
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    # 6. fr equals first_hash, sr equals second_hash, and sn is 0.
    return fr == first_hash and sr == second_hash and sn == 0


def main():
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    data = json.load(sys.stdin)
    if command == "prove":
        hashes = [leaf_hash(line.encode("utf-8")) for line in data["leaves"]]
        n = len(hashes)
        roots = [mth(hashes[:s]).hex() for s in range(n + 1)]
        proofs = {}
        for new in range(1, n + 1):
            for old in range(1, new + 1):
                proofs[f"{old} {new}"] = [h.hex() for h in proof(old, hashes[:new])]
        json.dump({"roots": roots, "proofs": proofs}, sys.stdout)
    elif command == "verify":
        out = []
        for case in data:
            out.append(
                verify(
                    case["old_size"],
                    case["new_size"],
                    bytes.fromhex(case["old_root"]),
                    bytes.fromhex(case["new_root"]),
                    [bytes.fromhex(h) for h in case["proof"]],
                )
            )
        json.dump(out, sys.stdout)
    else:
        sys.exit("usage: rfc6962_reference.py prove|verify < input.json")


if __name__ == "__main__":
    main()
