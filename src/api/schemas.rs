//! OpenAPI schemas of domain types that live outside the API's reach (the plan layer's
//! roulette layout, lint findings, plan diffs). Written by hand here rather than derived, so
//! that those modules keep no dependency on the documentation; each follows the type's serde
//! form, and `tests/it/api_openapi.rs` checks real responses against them.

use std::borrow::Cow;

use serde_json::{json, Value};
use utoipa::openapi::schema::{
    AdditionalProperties, ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, SchemaType, Type,
};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

use crate::plan::diff::Change;
use crate::plan::load::{Finding, Severity};
use crate::plan::rules::roulette::{OutsideField, Spot};

fn string(description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(description))
}

impl PartialSchema for OutsideField {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(
                "A field of the roulette layout for an outside bet: `dozen_1..3`, \
                 `column_1..3` (column 1 is 1, 4, …, 34), `red`/`black`, `even`/`odd`, \
                 `low` (1–18)/`high` (19–36).",
            ))
            .enum_values(Some(OutsideField::ALL.iter().map(|f| f.as_str())))
            .into()
    }
}

impl ToSchema for OutsideField {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("OutsideField")
    }
}

impl PartialSchema for Spot {
    fn schema() -> RefOr<Schema> {
        OneOfBuilder::new()
            .description(Some(
                "Where a placement lies: the inside numbers, ascending, or an outside field.",
            ))
            .item(
                ArrayBuilder::new()
                    .items(
                        ObjectBuilder::new()
                            .schema_type(Type::Integer)
                            .minimum(Some(0))
                            .maximum(Some(36)),
                    )
                    .min_items(Some(1)),
            )
            .item(RefOr::Ref(utoipa::openapi::Ref::from_schema_name(
                OutsideField::name(),
            )))
            .into()
    }
}

impl ToSchema for Spot {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Spot")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((OutsideField::name().into_owned(), OutsideField::schema()));
    }
}

impl PartialSchema for Severity {
    fn schema() -> RefOr<Schema> {
        string("`error` refuses the plan; `warning` is reported and kept.")
            .enum_values(Some(["warning", "error"]))
            .into()
    }
}

impl ToSchema for Severity {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Severity")
    }
}

impl PartialSchema for Finding {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .description(Some("One lint finding of a plan file, with a stable code."))
            .property(
                "severity",
                RefOr::Ref(utoipa::openapi::Ref::from_schema_name(Severity::name())),
            )
            .required("severity")
            .property(
                "code",
                string("Stable code, e.g. `unknown_bet_type`, `max_win_inconsistent`."),
            )
            .required("code")
            .property("file", string("The plan file."))
            .required("file")
            .property(
                "line",
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .minimum(Some(1))
                    .description(Some("1-based line in the file, where known.")),
            )
            .property(
                "path",
                string(
                    "Field path in the plan (`bets[straight].max_win`), empty for the whole file.",
                ),
            )
            .required("path")
            .property("message", string("A message for a person."))
            .required("message")
            .additional_properties(Some(AdditionalProperties::FreeForm(false)))
            .into()
    }
}

impl ToSchema for Finding {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Finding")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((Severity::name().into_owned(), Severity::schema()));
    }
}

impl PartialSchema for Change {
    fn schema() -> RefOr<Schema> {
        let any = |d: &str| {
            RefOr::T(Schema::Object(
                ObjectBuilder::new()
                    .schema_type(SchemaType::AnyValue)
                    .description(Some(d))
                    .build(),
            ))
        };
        ObjectBuilder::new()
            .description(Some(
                "One changed field: absent `before` means added, absent `after` removed.",
            ))
            .property(
                "path",
                string("Keyed field path, e.g. `bets[straight].max_win`."),
            )
            .required("path")
            .property("before", any("The value in `from` (any JSON value)."))
            .property("after", any("The value in `to` (any JSON value)."))
            .additional_properties(Some(AdditionalProperties::FreeForm(false)))
            .into()
    }
}

impl ToSchema for Change {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Change")
    }
}

/// A `$ref` to a component.
fn r(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

/// The bet type ids of a family's vocabulary (what `pitboss plan vocabulary` lists), less
/// those placed by a decision rather than a bet, plus those a bet request may name besides.
fn bet_ids(family: crate::plan::rules::Family, not_bets: &[&str], also: &[&str]) -> Value {
    let mut ids: Vec<&str> = family
        .bet_specs()
        .iter()
        .map(|s| s.id)
        .filter(|id| !not_bets.contains(id))
        .collect();
    ids.extend_from_slice(also);
    json!(ids)
}

/// A bet of a card game: the player, a bet type of `ids`, the stake, and `extra` fields.
fn card_bet(description: &str, ids: Value, extra: Value, example: Value) -> Value {
    let mut properties = json!({
        "player": {"type": "string", "description": "The player's id (1–64 of `a-z A-Z 0-9 _ -`)."},
        "bet": {"type": "string", "enum": ids, "description": "The bet type (the plan offers some of these)."},
        "stake_minor": {"type": "integer", "minimum": 1, "description": "The stake, in minor units."}
    });
    let mut required = vec!["player", "bet", "stake_minor"];
    for (k, v) in extra.as_object().into_iter().flatten() {
        properties[k] = v["schema"].clone();
        if v["required"] == true {
            required.push(k);
        }
    }
    json!({
        "description": description,
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
        "example": example
    })
}

super::bridge::api_json_schemas! {
    /// One bet as an operator sends it.
    BetRequest => json!({
        "description": "One bet as an operator sends it: the player, the kind of bet (`bet`), where it lies, and the stake in minor units. Which fields a bet takes depends on the table's game and on `bet`; any other field is refused (`unexpected_field`). Roulette: `InsideBet`, `OutsideBet`, `AnnouncedBet`, `NeighboursBet`, `CompleteBet`; baccarat: `BaccaratBet`; Top Card: `TopCardBet`; Casino Hold'em: `CasinoHoldemBet`; blackjack: `BlackjackBoxBet` (seated games) or `BlackjackCommonHandBet` (Infinite, All Bets, Endless). Bets of different games can have the same shape: the table's plan decides.",
        "anyOf": [
            r("InsideBet"), r("OutsideBet"), r("AnnouncedBet"), r("NeighboursBet"), r("CompleteBet"),
            r("BaccaratBet"), r("TopCardBet"), r("CasinoHoldemBet"),
            r("BlackjackBoxBet"), r("BlackjackCommonHandBet")
        ]
    });
    /// A baccarat bet.
    BaccaratBet => card_bet(
        "A baccarat bet. Egalite Extra names the tie `total` it is on (one bet per total); `total` is refused on every other bet.",
        bet_ids(crate::plan::rules::Family::Baccarat, &[], &[]),
        json!({"total": {"schema": {"type": "integer", "minimum": 0, "maximum": 9, "description": "Egalite Extra: the tie total 0–9."}}}),
        json!({"player": "p1", "bet": "banker", "stake_minor": 5000})
    );
    /// A Top Card bet.
    TopCardBet => card_bet(
        "A Top Card bet: on Home, Away or the tie.",
        bet_ids(crate::plan::rules::Family::TopCard, &[], &[]),
        json!({}),
        json!({"player": "p1", "bet": "home", "stake_minor": 1000})
    );
    /// A Casino Hold'em bet.
    CasinoHoldemBet => card_bet(
        "A Casino Hold'em bet: the Ante, a side bet of the plan, or (where the plan has it) `call_blind`, which places the Ante and the Call together. The Call itself is a decision after the flop (`POST /v1/rounds/{round}/decisions`), not a bet.",
        bet_ids(crate::plan::rules::Family::CasinoHoldem, &["call"], &[crate::games::casino_holdem::CALL_BLIND]),
        json!({}),
        json!({"player": "p1", "bet": "ante", "stake_minor": 1000})
    );
    /// A blackjack bet on a box.
    BlackjackBoxBet => card_bet(
        "A blackjack bet on box `seat` (1 … the plan's seats), in the seated games: `main`, `bet_behind` (on another player's box holding a main bet) or a side bet of the plan (with the player's main bet on the same box).",
        bet_ids(crate::plan::rules::Family::Blackjack, &["split", "double", "insurance"], &[]),
        json!({"seat": {"required": true, "schema": {"type": "integer", "minimum": 1, "description": "The box."}}}),
        json!({"player": "p1", "bet": "main", "seat": 3, "stake_minor": 1000})
    );
    /// A blackjack bet on the common hand.
    BlackjackCommonHandBet => card_bet(
        "A blackjack bet in a common-hand game (Infinite, All Bets, Endless): `main` or a side bet of the plan, without `seat` (a bet naming a box is `no_seats`).",
        bet_ids(crate::plan::rules::Family::Blackjack, &["split", "double", "insurance", "bet_behind"], &[]),
        json!({}),
        json!({"player": "p1", "bet": "main", "stake_minor": 1000})
    );
    /// What a card game's complete deal came to.
    CardGameOutcome => json!({
        "description": "The result read from a complete deal: baccarat's coup, Top Card's two cards, or Casino Hold'em's hands.",
        "oneOf": [r("BaccaratOutcome"), r("TopCardOutcome"), r("CasinoHoldemOutcome"), r("BlackjackOutcome")]
    });
    /// A blackjack round's result.
    BlackjackOutcome => json!({
        "description": "A complete blackjack round: the dealer's hand and every box's hands with their results.",
        "type": "object",
        "properties": {
            "dealer": {
                "type": "object",
                "properties": {
                    "cards": {"type": "array", "items": r("Card")},
                    "total": {"type": "integer", "minimum": 0},
                    "soft": {"type": "boolean"},
                    "blackjack": {"type": "boolean"},
                    "bust": {"type": "boolean"}
                },
                "required": ["cards", "total", "soft", "blackjack", "bust"],
                "additionalProperties": false
            },
            "positions": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "seat": {"type": ["integer", "null"], "minimum": 1, "description": "The box; `null` on a common hand."},
                    "player": {"type": "string"},
                    "hands": {"type": "array", "items": {
                        "type": "object",
                        "properties": {
                            "cards": {"type": "array", "items": r("Card")},
                            "total": {"type": "integer", "minimum": 0},
                            "result": r("BlackjackHandResult"),
                            "doubled": {"type": "boolean"},
                            "surrendered": {"type": "boolean"},
                            "from_split": {"type": "boolean"}
                        },
                        "required": ["cards", "total", "result", "doubled", "surrendered", "from_split"],
                        "additionalProperties": false
                    }}
                },
                "required": ["seat", "player", "hands"],
                "additionalProperties": false
            }}
        },
        "required": ["dealer", "positions"],
        "additionalProperties": false
    });
    /// The engine's reading behind a bet's settlement.
    SettlementDetail => json!({
        "description": "The engine's reading behind a settlement: Casino Hold'em's hands; blackjack's box (hands, results and stakes), side bet (the cards it was decided on) or Bet Behind.",
        "oneOf": [
            r("CasinoHoldemSettlement"), r("BlackjackBoxSettlement"),
            r("BlackjackSideBetSettlement"), r("BlackjackBetBehindSettlement")
        ]
    });
    /// A blackjack box's own play, settled.
    BlackjackBoxSettlement => json!({
        "type": "object",
        "properties": {
            "seat": {"type": ["integer", "null"], "minimum": 1},
            "position": {"type": "integer", "minimum": 0},
            "hands": {"type": "array", "items": r("BlackjackHand")},
            "results": {"type": "array", "items": r("BlackjackHandResult")},
            "stakes": {"type": "array", "items": r("BlackjackStakeSettlement")}
        },
        "required": ["seat", "position", "hands", "results", "stakes"],
        "additionalProperties": false
    });
    /// A blackjack side bet, settled.
    BlackjackSideBetSettlement => json!({
        "type": "object",
        "properties": {
            "seat": {"type": ["integer", "null"], "minimum": 1},
            "first_cards": {"type": "array", "items": r("Card")},
            "dealer": {"type": "array", "items": r("Card")}
        },
        "required": ["seat", "first_cards", "dealer"],
        "additionalProperties": false
    });
    /// A Bet Behind, settled.
    BlackjackBetBehindSettlement => json!({
        "type": "object",
        "properties": {
            "seat": {"type": ["integer", "null"], "minimum": 1},
            "results": {"type": "array", "items": r("BlackjackHandResult")},
            "stakes": {"type": "array", "items": r("BlackjackStakeSettlement")}
        },
        "required": ["seat", "results", "stakes"],
        "additionalProperties": false
    });
    /// A bet's request as the round holds it.
    BetRecordRequest => json!({
        "description": "The bet as the operator sent it (without `player`), or, for a stake a blackjack decision added (a split, a double, insurance), the decision's input.",
        "oneOf": [r("BetAsSent"), r("DecisionStake")]
    });
    /// A stake added by a blackjack decision.
    DecisionStake => json!({
        "type": "object",
        "properties": {"decision": r("TakenDecisionValue")},
        "required": ["decision"],
        "additionalProperties": false
    });
    /// Casino Hold'em's complete deal.
    CasinoHoldemOutcome => json!({
        "description": "The cards of a complete Casino Hold'em deal.",
        "type": "object",
        "properties": {
            "player": {"type": "array", "items": r("Card"), "description": "The player's two cards."},
            "dealer": {"type": "array", "items": r("Card"), "description": "The dealer's two cards."},
            "board": {"type": "array", "items": r("Card"), "description": "The flop, turn and river."}
        },
        "required": ["player", "dealer", "board"],
        "additionalProperties": false
    });
    /// What a blackjack round awaits.
    BlackjackExpected => json!({
        "description": "What the round awaits now (`next`) and who owes what (`due`).",
        "type": "object",
        "properties": {
            "next": r("BlackjackNext"),
            "due": {"type": "array", "items": r("BlackjackDue")}
        },
        "required": ["next", "due"],
        "additionalProperties": false
    });
    /// One player's pending decision or insurance answer.
    BlackjackDue => json!({
        "description": "A decision owed on a hand, or an insurance answer owed.",
        "oneOf": [r("BlackjackDecisionDue"), r("BlackjackInsuranceDue")]
    });
    /// A decision owed on a hand.
    BlackjackDecisionDue => json!({
        "description": "A decision owed on hand `hand` of the box at `position` (box number `seat`).",
        "type": "object",
        "properties": {
            "player": {"type": "string"},
            "seat": {"type": ["integer", "null"], "minimum": 1, "description": "The box, 1 … the plan's seats; `null` on a common hand."},
            "position": {"type": "integer", "minimum": 0, "description": "The box's place in dealing order, from 0."},
            "hand": {"type": "integer", "minimum": 0, "description": "The hand of the box, 0 before any split."},
            "cards": {"type": "array", "items": r("Card")},
            "total": {"type": "integer", "minimum": 0},
            "legal": {"type": "array", "items": r("BlackjackDecision"), "description": "The decisions the rules allow now."}
        },
        "required": ["player", "seat", "position", "hand", "cards", "total", "legal"],
        "additionalProperties": false
    });
    /// An insurance answer owed.
    BlackjackInsuranceDue => json!({
        "description": "An insurance answer owed by the box's owner, or by a Bet Behind on it (`bet_behind`).",
        "type": "object",
        "properties": {
            "player": {"type": "string"},
            "seat": {"type": ["integer", "null"], "minimum": 1},
            "position": {"type": "integer", "minimum": 0},
            "insurance": {"type": "boolean", "enum": [true]},
            "bet_behind": {"type": "boolean"}
        },
        "required": ["player", "seat", "position", "insurance", "bet_behind"],
        "additionalProperties": false
    });
    /// A player-versus-player table's state.
    PvpState => json!({
        "description": "The seats, stacks, bank or pots and the hand in play, as the game's engine keeps them.",
        "oneOf": [r("OkoBereState"), r("PokerTable")]
    });
    /// What a player-versus-player table waits for.
    PvpExpected => json!({
        "description": "What the table waits for: Oko bere (`expect`) or poker (`next`).",
        "anyOf": [r("OkoBereExpected"), r("PokerExpected")]
    });
    /// An act at a player-versus-player table, as applied.
    PvpAction => json!({
        "description": "An act of Oko bere or of the poker room, as applied (the plan's own when `automatic`).",
        "anyOf": [r("OkoBereAction"), r("PokerAction")]
    });
    /// What an act did.
    PvpEffect => json!({
        "description": "What an act did: chips moved between stacks, bank and pots, cards, hands won or voided.",
        "anyOf": [r("OkoBereEffect"), r("PokerEffect")]
    });
    /// The body of `POST /v1/tables/{table}/actions`.
    TableAction => json!({
        "description": "One act of the table's game (Oko bere or poker, each tagged by `action`), or `{\"action\": \"automatic\"}`: the plan's act for the player who has not acted in time.",
        "anyOf": [r("AutomaticAction"), r("OkoBereAction"), r("PokerAction")]
    });
    /// The plan's act for a player who has not acted in time.
    AutomaticAction => json!({
        "description": "The plan's act for the player who owes one and has not acted in time (poker: check, or fold when facing a bet).",
        "type": "object",
        "properties": {"action": {"type": "string", "enum": ["automatic"]}},
        "required": ["action"],
        "additionalProperties": false
    });
    /// A player's decision as the operator sends it.
    Decision => json!({
        "description": "Casino Hold'em: `call` or `fold`. Blackjack: `hit`, `stand`, `double`, `split`, `surrender`, `no_insurance`, or a `BlackjackDecisionRequest` object (to name the box, a split hand, an insurance stake, or the Bets Behind that cannot fund a split or a double).",
        "oneOf": [r("DecisionName"), r("BlackjackDecisionRequest")],
        "example": "call"
    });
    /// A decision by its name alone.
    DecisionName => json!({
        "description": "A decision by its name: Casino Hold'em `call` or `fold`; blackjack's on the only hand the player owes one on.",
        "type": "string",
        "enum": ["call", "fold", "hit", "stand", "double", "split", "surrender", "no_insurance"]
    });
    /// A decision as taken.
    TakenDecisionValue => json!({
        "description": "The decision taken: Casino Hold'em's `call` or `fold`, or the blackjack input it became.",
        "oneOf": [r("CasinoHoldemDecision"), r("BlackjackInput")]
    });
    /// A bet as logged, without its player.
    BetAsSent => json!({
        "description": "The bet as the operator sent it, without `player` (see `BetRequest`).",
        "type": "object",
        "properties": {
            "bet": {"type": "string"},
            "numbers": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 36}},
            "field": r("OutsideField"),
            "number": {"type": "integer", "minimum": 0, "maximum": 36},
            "neighbours": {"type": "integer", "minimum": 0},
            "seat": {"type": "integer", "minimum": 1},
            "total": {"type": "integer", "minimum": 0, "maximum": 9},
            "stake_minor": {"type": "integer"}
        },
        "required": ["bet", "stake_minor"],
        "additionalProperties": false
    });
    /// One audit-log entry.
    AuditEntry => json!({
        "description": "An audit-log entry as logged (audit/FORMAT.md §1).",
        "type": "object",
        "properties": {
            "v": {"type": "integer", "enum": [1], "description": "Format version."},
            "seq": {"type": "integer", "minimum": 0},
            "ts": {"type": "string", "description": "UTC, `YYYY-MM-DDTHH:MM:SS.ffffffZ`."},
            "kind": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$", "description": "What happened (`bet_accepted`, `round_settled`, …; FORMAT.md §1.3)."},
            "ids": {
                "type": "object",
                "properties": {
                    "bet": {"type": "string"},
                    "operator": {"type": "string"},
                    "round": {"type": "string"},
                    "table": {"type": "string"}
                },
                "additionalProperties": false
            },
            "payload": {"description": "The event's data (any JSON value; its fields depend on `kind`)."},
            "prev": {"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "The leaf hash of entry `seq − 1`."}
        },
        "required": ["v", "seq", "ts", "kind", "ids", "payload", "prev"],
        "additionalProperties": false
    });
    /// An OpenAPI document.
    OpenApiDocument => json!({
        "description": "An OpenAPI 3.1 document (this one). Its parts are described by the OpenAPI specification, not here.",
        "type": "object",
        "properties": {
            "openapi": {"type": "string"},
            "info": {"type": "object", "properties": {"title": {"type": "string"}, "version": {"type": "string"}}, "required": ["title", "version"], "additionalProperties": true},
            "servers": {"type": "array", "items": {"type": "object", "properties": {"url": {"type": "string"}}, "additionalProperties": true}},
            "paths": {"type": "object", "additionalProperties": true},
            "components": {"type": "object", "properties": {"schemas": {"type": "object", "additionalProperties": true}}, "additionalProperties": true},
            "tags": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}, "additionalProperties": true}}
        },
        "required": ["openapi", "info", "paths"],
        "additionalProperties": true
    });
    /// The body of `POST /v1/tables/{table}/rounds`.
    EmptyObject => json!({
        "description": "An empty object.",
        "type": "object",
        "properties": {},
        "additionalProperties": false
    });
}
