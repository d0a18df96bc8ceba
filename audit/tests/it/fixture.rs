//! Deterministic logs for the tests: fixed keys, fixed timestamps.

use pitboss_audit::{
    rotation_begin_entry, rotation_end_entry, write_export, Appender, EntryKind, ExportHeader,
    Kind, NewEntry, NoteSigner, SealedEntry, SignedCheckpoint, SigningKey, Timestamp,
};
use serde_json::json;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

pub const ORIGIN: &str = "pitboss.test/audit/demo";

/// A fixed test key: seed = SHA-256("pitboss-audit test key " ‖ label).
pub fn signer(label: &str) -> NoteSigner {
    use sha2::{Digest, Sha256};
    let seed: [u8; 32] = Sha256::digest(format!("pitboss-audit test key {label}")).into();
    NoteSigner::new(ORIGIN, SigningKey::from_bytes(&seed)).expect("origin is a valid key name")
}

pub fn ts(i: u64) -> Timestamp {
    // 2025-01-01T12:00:00Z plus i seconds and i milliseconds.
    Timestamp::from_unix_micros(1_735_732_800_000_000 + i as i64 * 1_001_000).expect("in range")
}

/// A plausible event for position `i` of a round-robin of kinds.
pub fn event(i: u64, tweak: &str) -> NewEntry {
    let round = format!("r-{}", i / 8);
    match i % 8 {
        0 => NewEntry::new(ts(i), EntryKind::RoundOpened, json!({"plan": "roulette-eu@3"}))
            .operator("op-7")
            .table("t-1")
            .round(round),
        1 => NewEntry::new(ts(i), EntryKind::RngSeedCommitted, json!({"commitment": "9f2c1e"}))
            .table("t-1")
            .round(round),
        2..=4 => NewEntry::new(
            ts(i),
            EntryKind::BetAccepted,
            json!({"bet_type": "straight", "numbers": [17], "stake_minor": 5000 + i, "seat": 3, "note": tweak}),
        )
        .operator("op-7")
        .table("t-1")
        .round(round)
        .bet(format!("b-{i}")),
        5 => NewEntry::new(
            ts(i),
            EntryKind::BetRefused,
            json!({"code": "limit.max_stake", "clause": "4.2", "stake_minor": 999_999_999}),
        )
        .table("t-1")
        .round(round)
        .bet(format!("b-{i}")),
        6 => NewEntry::new(ts(i), EntryKind::ResultRecorded, json!({"number": 17}))
            .table("t-1")
            .round(round),
        _ => NewEntry::new(
            ts(i),
            EntryKind::RoundSettled,
            json!({"payouts": [{"bet": "b-2", "win_minor": 175_000}]}),
        )
        .table("t-1")
        .round(round),
    }
}

pub struct Log {
    pub entries: Vec<SealedEntry>,
    pub checkpoints: Vec<SignedCheckpoint>,
    pub appender: Appender,
}

impl Log {
    pub fn export(&self) -> Vec<u8> {
        let header = ExportHeader::new(ORIGIN, self.appender.state().keys);
        write_export(
            Vec::new(),
            &header,
            self.entries.iter().map(|e| e.canonical.as_slice()),
            &self.checkpoints,
        )
        .expect("writing to memory")
    }
}

/// `n` entries, a checkpoint signed by key A every `every` entries and at the end; the entry at
/// `tweak_at` carries a different note (to make a fork of the same log).
pub fn simple_log(n: u64, every: u64, tweak_at: Option<u64>) -> Log {
    let a = signer("A");
    let mut app = Appender::new(ORIGIN, &[a.verifier().clone()]).expect("valid origin");
    let mut entries = Vec::new();
    let mut checkpoints = Vec::new();
    for i in 0..n {
        let tweak = if tweak_at == Some(i) { "forked" } else { "" };
        entries.extend(app.seal(vec![event(i, tweak)]).expect("seals"));
        if (i + 1) % every == 0 || i + 1 == n {
            checkpoints.push(app.checkpoint(std::slice::from_ref(&a)).expect("signs"));
        }
    }
    Log {
        entries,
        checkpoints,
        appender: app,
    }
}

/// The log of `testdata/`: 14 entries, rotation from key A to key B, four checkpoints.
pub fn rotation_log() -> Log {
    let (a, b) = (signer("A"), signer("B"));
    let mut app = Appender::new(ORIGIN, &[a.verifier().clone()]).expect("valid origin");
    let mut entries = Vec::new();
    let mut checkpoints = Vec::new();
    let mut seal = |app: &mut Appender, batch: Vec<NewEntry>| {
        entries.extend(app.seal(batch).expect("seals"));
    };
    seal(
        &mut app,
        vec![
            NewEntry::new(ts(0), EntryKind::PlanLoaded, json!({"plan": "roulette-eu", "version": 3, "sha256": "5d2a0b"})).operator("op-7"),
            NewEntry::new(ts(1), EntryKind::TableOpened, json!({"plan": "roulette-eu@3"})).operator("op-7").table("t-1"),
            NewEntry::new(ts(2), EntryKind::RoundOpened, json!({})).table("t-1").round("r-1"),
            NewEntry::new(ts(3), EntryKind::RngSeedCommitted, json!({"commitment": "c0ffee"})).table("t-1").round("r-1"),
            NewEntry::new(ts(4), EntryKind::BetAccepted, json!({"bet_type": "red", "stake_minor": 10000})).operator("op-7").table("t-1").round("r-1").bet("b-1"),
            NewEntry::new(ts(5), EntryKind::BetRefused, json!({"code": "limit.max_stake", "clause": "4.2", "message": "stake above the table maximum"})).operator("op-7").table("t-1").round("r-1").bet("b-2"),
            NewEntry::new(ts(6), EntryKind::BettingClosed, json!({})).table("t-1").round("r-1"),
        ],
    );
    checkpoints.push(app.checkpoint(std::slice::from_ref(&a)).expect("A signs"));
    seal(
        &mut app,
        vec![
            rotation_begin_entry(ts(7), a.verifier(), b.verifier()),
            NewEntry::new(
                ts(8),
                EntryKind::ResultRecorded,
                json!({"number": 32, "colour": "red"}),
            )
            .table("t-1")
            .round("r-1"),
        ],
    );
    checkpoints.push(
        app.checkpoint(&[a.clone(), b.clone()])
            .expect("A and B sign"),
    );
    seal(
        &mut app,
        vec![
            NewEntry::new(
                ts(9),
                EntryKind::RoundSettled,
                json!({"payouts": [{"bet": "b-1", "win_minor": 20000}]}),
            )
            .table("t-1")
            .round("r-1"),
            rotation_end_entry(ts(10), a.verifier(), b.verifier()),
        ],
    );
    checkpoints.push(
        app.checkpoint(&[a.clone(), b.clone()])
            .expect("A and B sign"),
    );
    seal(
        &mut app,
        vec![
            NewEntry::new(
                ts(11),
                EntryKind::RngSeedRevealed,
                json!({"seed": "00112233445566778899aabbccddeeff"}),
            )
            .table("t-1")
            .round("r-1"),
            NewEntry::new(
                ts(12),
                EntryKind::TableClosed,
                json!({"reason": "end of session"}),
            )
            .operator("op-7")
            .table("t-1"),
            NewEntry::new(
                ts(13),
                Kind::parse("dealer_note").expect("snake_case"),
                json!({"text": "Ž\u{e1}dn\u{e9} pozn\u{e1}mky \"quoted\"\n"}),
            )
            .table("t-1"),
        ],
    );
    checkpoints.push(app.checkpoint(std::slice::from_ref(&b)).expect("B signs"));
    Log {
        entries,
        checkpoints,
        appender: app,
    }
}

/// A fresh directory under Cargo's per-target temporary directory.
pub fn temp_dir(label: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "{label}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}
