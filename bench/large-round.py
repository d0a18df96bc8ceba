#!/usr/bin/env python3
"""One live roulette round of N straight bets, spun and settled (or voided when the spin is
refused), against a running pitboss: how large a round settles. Standard library only.

    python3 bench/large-round.py http://127.0.0.1:8080 pb_<admin key> 6000

Prints how long placing the bets took (requests of 500), and the spin's answer (and the void's, if the spin was refused). The table and player ids
are long (46 and 47 characters), as every settlement carries them.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request

base, admin, n = sys.argv[1].rstrip("/"), sys.argv[2], int(sys.argv[3])


def req(method, path, body=None, key=admin):
    r = urllib.request.Request(
        base + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={
            "Authorization": "Bearer " + key,
            "Content-Type": "application/json",
            "Idempotency-Key": os.urandom(8).hex(),
        },
    )
    try:
        with urllib.request.urlopen(r) as f:
            return f.status, json.loads(f.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


_, k = req("POST", "/v1/admin/keys", {"role": "operator", "operator": "large-round"})
op = k["key"]
table = "table-" + "x" * 40 + os.urandom(3).hex()[:5]
s, t = req("POST", "/v1/tables", {"table": table, "plan": "alg-roulette@1", "mode": "live"}, op)
assert s == 201, t
s, r = req("POST", f"/v1/tables/{table}/rounds", {}, op)
assert s == 201, r
rnd = r["round"]
done = accepted = 0
started = time.monotonic()
while done < n:
    k = min(500, n - done)
    bets = [
        {"player": "player-%040d" % (done + i), "bet": "straight",
         "numbers": [(done + i) % 37], "stake_minor": 100}
        for i in range(k)
    ]
    s, r = req("POST", f"/v1/rounds/{rnd}/bets", {"bets": bets}, op)
    assert s == 200, str(r)[:300]
    accepted += sum(1 for x in r["results"] if x["status"] == "accepted")
    done += k
print(f"sent {done} bets in {time.monotonic() - started:.2f} s, {accepted} accepted "
      "(the rest arrived after the plan's betting window)")
# Betting may have closed by itself meanwhile (the plan's betting window): 409 then.
s, r = req("POST", f"/v1/rounds/{rnd}/events", {"type": "close_betting"}, op)
assert s == 200 or r.get("code") == "out_of_order", r
spin = {"type": "spin", "number": 7, "ball_against_rotation": True, "ball_revolutions": 5}
s, r = req("POST", f"/v1/rounds/{rnd}/events", spin, op)
print("spin", s, str(r)[:300])
if s != 200:
    s, r = req("POST", f"/v1/rounds/{rnd}/void", {"reason": "too large"}, op)
    print("void", s, str(r)[:300])
