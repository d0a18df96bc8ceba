"""Plays a roulette round and a blackjack round through a client generated from
openapi/openapi.json by openapi-python-client, against a running pitboss.

    python play_rounds.py --client-dir DIR --base-url URL --admin-key KEY

DIR holds the generated package `pitboss_client`. Every reply is read through the generated
models: a reply the generator's types cannot read fails here, as it would fail an operator.
Exits non-zero on the first thing that is not as the plan says. Run by tests/it/clients.rs.
"""

import argparse
import sys
import uuid


def fail(message):
    print(f"FAIL {message}")
    sys.exit(1)


def expect(cond, message):
    if not cond:
        fail(message)


def parsed(resp, model, what):
    """The reply's parsed body, which must be of `model` (a 2xx the generator could read)."""
    expect(
        200 <= resp.status_code < 300,
        f"{what}: HTTP {resp.status_code}: {resp.content[:500]!r}",
    )
    expect(
        isinstance(resp.parsed, model),
        f"{what}: parsed as {type(resp.parsed).__name__}, not {model.__name__}: {resp.content[:500]!r}",
    )
    return resp.parsed


def idem():
    return str(uuid.uuid4())


def main():
    args = argparse.ArgumentParser()
    args.add_argument("--client-dir", required=True)
    args.add_argument("--base-url", required=True)
    args.add_argument("--admin-key", required=True)
    a = args.parse_args()
    sys.path.insert(0, a.client_dir)

    from pitboss_client import AuthenticatedClient
    from pitboss_client.api.admin import create_key
    from pitboss_client.api.rounds import (
        get_settlement,
        open_round,
        place_bets,
        post_decisions,
        post_event,
    )
    from pitboss_client.api.tables import open_table
    from pitboss_client.models import (
        AcceptedBet,
        BetsReply,
        BetsRequest,
        BlackjackAction,
        BlackjackBoxBet,
        BlackjackBoxBetBet,
        BlackjackDecisionRequest,
        DealerEventCards,
        DealerEventCardsType,
        DealerEventCloseBetting,
        DealerEventCloseBettingType,
        DealerEventSpin,
        DealerEventSpinType,
        DecisionsRequest,
        InsideBet,
        InsideBetBet,
        Mode,
        NewKey,
        NewKeyReply,
        OpenTable,
        OutsideBet,
        OutsideBetBet,
        OutsideField,
        PlayerDecision,
        Problem,
        ReportedCard,
        Role,
        RoundOpenedReply,
        RoundOutcome,
        SettledRound,
        TableOpenedReply,
        TakenDecision,
    )

    admin = AuthenticatedClient(base_url=a.base_url, token=a.admin_key)
    key = parsed(
        create_key.sync_detailed(client=admin, body=NewKey(role=Role.OPERATOR, operator="op-gen")),
        NewKeyReply,
        "create an operator key",
    )
    op = AuthenticatedClient(base_url=a.base_url, token=key.key)

    # An error reads as a typed problem document.
    dup = open_table.sync_detailed(
        client=op,
        body=OpenTable(table="r1", plan="no-such-plan@1", mode=Mode.LIVE),
        idempotency_key=idem(),
    )
    expect(dup.status_code == 404, f"unknown plan: HTTP {dup.status_code}")
    expect(isinstance(dup.parsed, Problem), f"unknown plan: {type(dup.parsed).__name__}")
    expect(dup.parsed.code == "plan_not_found", f"unknown plan: {dup.parsed.code}")

    # ----- roulette: README's session -----
    t = parsed(
        open_table.sync_detailed(
            client=op,
            body=OpenTable(table="r1", plan="evolution-roulette@1", mode=Mode.LIVE),
            idempotency_key=idem(),
        ),
        TableOpenedReply,
        "open a roulette table",
    )
    expect(t.plan == "evolution-roulette@1", f"table plan {t.plan}")
    r = parsed(
        open_round.sync_detailed("r1", client=op, idempotency_key=idem()),
        RoundOpenedReply,
        "open a roulette round without a body",
    )
    bets = parsed(
        place_bets.sync_detailed(
            r.round_,
            client=op,
            body=BetsRequest(
                bets=[
                    InsideBet(player="p1", bet=InsideBetBet.SPLIT, numbers=[17, 20], stake_minor=1000),
                    OutsideBet(player="p2", bet=OutsideBetBet.RED_BLACK, field=OutsideField.RED, stake_minor=2000),
                ]
            ),
            idempotency_key=idem(),
        ),
        BetsReply,
        "place roulette bets",
    )
    expect(bets.accepted == 2 and bets.refused == 0, f"roulette bets: {bets.to_dict()}")
    expect(all(isinstance(b, AcceptedBet) for b in bets.results), f"bet results: {bets.results}")
    parsed(
        post_event.sync_detailed(
            r.round_,
            client=op,
            body=DealerEventCloseBetting(type_=DealerEventCloseBettingType.CLOSE_BETTING),
            idempotency_key=idem(),
        ),
        RoundOutcome,
        "close betting",
    )
    spun = parsed(
        post_event.sync_detailed(
            r.round_,
            client=op,
            body=DealerEventSpin(
                type_=DealerEventSpinType.SPIN,
                number=17,
                ball_against_rotation=True,
                ball_revolutions=4,
            ),
            idempotency_key=idem(),
        ),
        RoundOutcome,
        "spin 17",
    )
    expect(str(spun.phase) == "settled", f"after the spin: {spun.to_dict()}")
    paid = {s.player: s.total_minor for s in spun.settlements}
    # A split on 17-20 pays 17:1 with the stake back; 17 is black, so red loses.
    expect(paid == {"p1": 18000, "p2": 0}, f"roulette paid {paid}")
    settlement = parsed(
        get_settlement.sync_detailed(r.round_, client=op),
        SettledRound,
        "read the roulette settlement",
    )
    expect(settlement.paid_minor == 18000, f"settlement {settlement.to_dict()}")
    print(f"OK roulette {r.round_}: split 17-20 paid 18000, red lost")

    # ----- blackjack: a double followed by a Bet Behind (Evolution Blackjack, live) -----
    parsed(
        open_table.sync_detailed(
            client=op,
            body=OpenTable(table="b1", plan="evolution-blackjack@1", mode=Mode.LIVE),
            idempotency_key=idem(),
        ),
        TableOpenedReply,
        "open a blackjack table",
    )
    r = parsed(
        open_round.sync_detailed("b1", client=op, idempotency_key=idem()),
        RoundOpenedReply,
        "open a blackjack round",
    )
    bets = parsed(
        place_bets.sync_detailed(
            r.round_,
            client=op,
            body=BetsRequest(
                bets=[
                    BlackjackBoxBet(player="p1", bet=BlackjackBoxBetBet.MAIN, seat=1, stake_minor=1000),
                    BlackjackBoxBet(player="p2", bet=BlackjackBoxBetBet.BET_BEHIND, seat=1, stake_minor=200),
                ]
            ),
            idempotency_key=idem(),
        ),
        BetsReply,
        "place blackjack bets",
    )
    expect(bets.accepted == 2, f"blackjack bets: {bets.to_dict()}")
    parsed(
        post_event.sync_detailed(
            r.round_,
            client=op,
            body=DealerEventCloseBetting(type_=DealerEventCloseBettingType.CLOSE_BETTING),
            idempotency_key=idem(),
        ),
        RoundOutcome,
        "close betting",
    )

    def cards(*names):
        return parsed(
            post_event.sync_detailed(
                r.round_,
                client=op,
                body=DealerEventCards(
                    type_=DealerEventCardsType.CARDS,
                    cards=[ReportedCard(card=c) for c in names],
                ),
                idempotency_key=idem(),
            ),
            RoundOutcome,
            f"cards {names}",
        )

    # Box 1, the dealer's up card, box 1, the dealer's hole card: p1 holds 11 against a 9.
    dealt = cards("5H", "9S", "6C", "8D")
    expect(str(dealt.phase) == "decisions", f"after the deal: {dealt.to_dict()}")
    due = dealt.expected.due
    expect(len(due) == 1 and due[0].player == "p1", f"who decides: {dealt.expected.to_dict()}")
    expect("double" in [str(d) for d in due[0].legal], f"legal: {due[0].legal}")
    decided = parsed(
        post_decisions.sync_detailed(
            r.round_,
            client=op,
            body=DecisionsRequest(
                decisions=[
                    PlayerDecision(
                        player="p1",
                        decision=BlackjackDecisionRequest(action=BlackjackAction.DOUBLE, seat=1),
                    )
                ]
            ),
            idempotency_key=idem(),
        ),
        RoundOutcome,
        "double",
    )
    taken = [d for d in decided.decisions if isinstance(d, TakenDecision)]
    expect(len(taken) == 1 and taken[0].stake_minor == 1000, f"the double: {decided.to_dict()}")
    added = {b.player: b.placement.stake_minor for i in decided.inputs for b in i.bets}
    expect(added == {"p1": 1000, "p2": 200}, f"stakes the double added: {added}")
    # The double's card: 21 against the dealer's 17.
    settled = cards("TD")
    expect(str(settled.phase) == "settled", f"after the double's card: {settled.to_dict()}")
    credited = {}
    for s in settled.settlements:
        credited[s.player] = credited.get(s.player, 0) + s.total_minor
    expect(credited == {"p1": 4000, "p2": 800}, f"blackjack credited {credited}")
    outcome = settled.outcome
    expect(outcome.dealer.total == 17, f"dealer: {outcome.to_dict()}")
    settlement = parsed(
        get_settlement.sync_detailed(r.round_, client=op),
        SettledRound,
        "read the blackjack settlement",
    )
    expect(settlement.paid_minor == 4800, f"settlement {settlement.to_dict()}")
    print(f"OK blackjack {r.round_}: the double and the Bet Behind's paid 4000 and 800")


if __name__ == "__main__":
    main()
