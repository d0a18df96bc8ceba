//! The service-facing API: batches, restore, rotation rules, proofs from stored leaf hashes.

use crate::fixture::{event, rotation_log, signer, simple_log, ts, ORIGIN};
use pitboss_audit::keys::RotationError;
use pitboss_audit::{
    consistency_proof, inclusion_proof, rotation_begin_entry, rotation_end_entry,
    verify_consistency, verify_export, verify_inclusion, Appender, CheckpointError, EntryKind,
    Frontier, Hash, LogState, NewEntry, Reason, SealError, SignedCheckpoint, VerifyOptions,
};
use serde_json::json;

fn opts_a() -> VerifyOptions {
    VerifyOptions {
        anchors: vec![*signer("A").verifier().key()],
        ..VerifyOptions::default()
    }
}

#[test]
fn batch_gets_consecutive_seqs_and_each_prev_is_the_previous_leaf_hash() {
    let a = signer("A");
    let mut app = Appender::new(ORIGIN, &[a.verifier().clone()]).expect("new");
    let first = app
        .seal((0..5).map(|i| event(i, "")).collect())
        .expect("seals");
    let second = app
        .seal((5..8).map(|i| event(i, "")).collect())
        .expect("seals");
    let all: Vec<_> = first.into_iter().chain(second).collect();
    assert_eq!(
        all.iter().map(|e| e.seq).collect::<Vec<_>>(),
        (0..8).collect::<Vec<_>>()
    );
    assert_eq!(all[0].prev, Hash::ZERO);
    for w in all.windows(2) {
        assert_eq!(w[1].prev, w[0].leaf_hash);
        assert_eq!(w[1].leaf_hash, pitboss_audit::leaf_hash(&w[1].canonical));
    }
    assert_eq!(app.head(), all[7].leaf_hash);
    assert_eq!(
        app.root(),
        pitboss_audit::root_of(&all.iter().map(|e| e.leaf_hash).collect::<Vec<_>>())
    );
}

#[test]
fn prepared_batch_changes_nothing_until_committed_and_a_stale_one_is_refused() {
    let a = signer("A");
    let mut app = Appender::new(ORIGIN, &[a.verifier().clone()]).expect("new");
    let b1 = app.prepare(vec![event(0, "")]).expect("prepares");
    let b2 = app.prepare(vec![event(0, "other")]).expect("prepares");
    assert_eq!(app.size(), 0);
    app.commit(&b1).expect("commits");
    assert_eq!(app.state(), *b1.state_after());
    assert!(matches!(app.commit(&b2), Err(SealError::Stale { .. })));
    assert_eq!(app.size(), 1);
}

#[test]
fn batch_with_one_bad_entry_seals_nothing_and_names_the_entry() {
    let a = signer("A");
    let mut app = Appender::new(ORIGIN, &[a.verifier().clone()]).expect("new");
    let bad = NewEntry::new(
        ts(1),
        EntryKind::BetAccepted,
        json!({"stake_minor": 9_007_199_254_740_992u64}),
    );
    let err = app
        .seal(vec![event(0, ""), bad, event(2, "")])
        .expect_err("refused");
    assert!(matches!(err, SealError::Entry { index: 1, .. }), "{err}");
    assert!(err.to_string().contains("/payload/stake_minor"), "{err}");
    assert_eq!(app.size(), 0);
}

#[test]
fn restored_state_continues_the_log_exactly_as_without_a_restart() {
    let a = signer("A");
    let reference = simple_log(30, 10, None);
    let mut app = Appender::new(ORIGIN, &[a.verifier().clone()]).expect("new");
    for i in 0..17 {
        app.seal(vec![event(i, "")]).expect("seals");
        if (i + 1) % 10 == 0 {
            app.checkpoint(std::slice::from_ref(&a)).expect("signs");
        }
    }
    let stored = serde_json::to_string(&app.state()).expect("serialises");
    let mut app = Appender::from_state(serde_json::from_str::<LogState>(&stored).expect("parses"))
        .expect("restores");
    for i in 17..30 {
        app.seal(vec![event(i, "")]).expect("seals");
    }
    assert_eq!(app.root(), reference.appender.root());
    assert_eq!(app.head(), reference.appender.head());
    // The frontier can also be rebuilt from stored leaf hashes alone.
    let leaves: Vec<Hash> = reference.entries.iter().map(|e| e.leaf_hash).collect();
    assert_eq!(
        Frontier::from_leaves(&leaves),
        reference.appender.state().frontier
    );
}

#[test]
fn inclusion_and_consistency_proofs_from_stored_leaf_hashes_check_against_signed_checkpoints() {
    let log = simple_log(45, 10, None);
    let leaves: Vec<Hash> = log.entries.iter().map(|e| e.leaf_hash).collect();
    for cp in &log.checkpoints {
        let size = cp.checkpoint.size;
        for seq in [0, size / 2, size - 1] {
            let path = inclusion_proof(leaves.as_slice(), seq, size).expect("in range");
            verify_inclusion(&leaves[seq as usize], seq, size, &path, &cp.checkpoint.root)
                .expect("verifies");
        }
    }
    for w in log.checkpoints.windows(2) {
        let (old, new) = (&w[0].checkpoint, &w[1].checkpoint);
        let p = consistency_proof(leaves.as_slice(), old.size, new.size).expect("in order");
        verify_consistency(old.size, new.size, &old.root, &new.root, &p).expect("consistent");
    }
}

#[test]
fn new_key_cannot_sign_alone_before_a_checkpoint_by_the_old_key_authorises_it() {
    let (a, b) = (signer("A"), signer("B"));
    let mut app = Appender::new(ORIGIN, &[a.verifier().clone()]).expect("new");
    app.seal(vec![
        event(0, ""),
        rotation_begin_entry(ts(1), a.verifier(), b.verifier()),
    ])
    .expect("seals");
    let err = app
        .checkpoint(std::slice::from_ref(&b))
        .expect_err("B alone is not yet valid");
    assert!(matches!(err, CheckpointError::NotAcceptable(_)), "{err}");
    app.checkpoint(&[a.clone(), b.clone()])
        .expect("A and B sign");
    app.seal(vec![event(2, "")]).expect("seals");
    app.checkpoint(std::slice::from_ref(&b))
        .expect("B alone is valid once authorised");
}

#[test]
fn rotation_cannot_end_before_the_new_key_is_authorised() {
    let (a, b) = (signer("A"), signer("B"));
    let mut app = Appender::new(ORIGIN, &[a.verifier().clone()]).expect("new");
    let err = app
        .seal(vec![
            rotation_begin_entry(ts(0), a.verifier(), b.verifier()),
            rotation_end_entry(ts(1), a.verifier(), b.verifier()),
        ])
        .expect_err("refused");
    assert!(
        matches!(
            err,
            SealError::Rotation {
                index: 1,
                source: RotationError::NewKeyNotAuthorised
            }
        ),
        "{err}"
    );
}

#[test]
fn rotation_from_an_unknown_key_is_refused_at_sealing() {
    let (a, b, z) = (signer("A"), signer("B"), signer("Z"));
    let mut app = Appender::new(ORIGIN, &[a.verifier().clone()]).expect("new");
    let err = app
        .seal(vec![rotation_begin_entry(
            ts(0),
            z.verifier(),
            b.verifier(),
        )])
        .expect_err("refused");
    assert!(
        matches!(
            err,
            SealError::Rotation {
                source: RotationError::OldKeyNotActive,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn retired_key_cannot_sign_alone_after_the_rotation_ends() {
    let log = rotation_log();
    let mut app = log.appender.clone();
    let err = app.checkpoint(&[signer("A")]).expect_err("A is retired");
    assert!(err.to_string().contains("retired"), "{err}");
}

/// Replaces the last checkpoint line of the rotation log's export by `cp`.
fn with_last_checkpoint(cp: &SignedCheckpoint) -> Vec<u8> {
    let export = String::from_utf8(rotation_log().export()).expect("utf8");
    let mut lines: Vec<String> = export.lines().map(str::to_owned).collect();
    let last = lines.len() - 1;
    lines[last] = serde_json::to_string(&json!({"checkpoint": cp.to_text()})).expect("json");
    (lines.join("\n") + "\n").into_bytes()
}

#[test]
fn verifier_refuses_a_checkpoint_signed_only_by_the_retired_key() {
    let log = rotation_log();
    let forged = SignedCheckpoint::sign(log.checkpoints[3].checkpoint.clone(), &[signer("A")]);
    let f = verify_export(with_last_checkpoint(&forged).as_slice(), opts_a(), |_| {})
        .expect_err("refused");
    assert_eq!((f.seq, f.reason), (Some(13), Reason::KeyNotValid), "{f}");
    assert!(f.detail.contains("retired after size 10"), "{f}");
}

#[test]
fn verifier_refuses_a_checkpoint_signed_by_an_unannounced_key() {
    let log = rotation_log();
    let forged = SignedCheckpoint::sign(log.checkpoints[3].checkpoint.clone(), &[signer("Z")]);
    let f = verify_export(with_last_checkpoint(&forged).as_slice(), opts_a(), |_| {})
        .expect_err("refused");
    assert_eq!((f.seq, f.reason), (Some(13), Reason::UnknownKey), "{f}");
}

#[test]
fn verifier_ignores_extra_signatures_by_unknown_keys_such_as_witness_cosignatures() {
    let log = rotation_log();
    let mut cp = log.checkpoints[3].clone();
    let witness = SignedCheckpoint::sign(
        cp.checkpoint.clone(),
        &[pitboss_audit::NoteSigner::new(
            "witness.example",
            pitboss_audit::SigningKey::from_bytes(&[9; 32]),
        )
        .expect("name")],
    );
    cp.signatures.extend(witness.signatures);
    verify_export(with_last_checkpoint(&cp).as_slice(), opts_a(), |_| {}).expect("still verifies");
}

#[test]
fn verifier_with_only_the_new_key_cannot_verify_checkpoints_from_before_the_rotation() {
    let export = rotation_log().export();
    let opts = VerifyOptions {
        anchors: vec![*signer("B").verifier().key()],
        ..VerifyOptions::default()
    };
    let f = verify_export(export.as_slice(), opts, |_| {}).expect_err("first checkpoint is A's");
    assert_eq!((f.seq, f.reason), (Some(6), Reason::UnknownKey), "{f}");
}

#[test]
fn header_claiming_a_key_the_log_does_not_authorise_fails() {
    let log = rotation_log();
    let mut keys = log.appender.state().keys;
    keys[1].until_size = Some(100);
    let header = pitboss_audit::ExportHeader::new(ORIGIN, keys);
    let export = pitboss_audit::write_export(
        Vec::new(),
        &header,
        log.entries.iter().map(|e| e.canonical.as_slice()),
        &log.checkpoints,
    )
    .expect("writes");
    let f = verify_export(export.as_slice(), opts_a(), |_| {}).expect_err("header lies");
    assert_eq!(f.reason, Reason::HeaderMismatch, "{f}");
}

#[test]
fn unknown_entry_kinds_verify_because_the_verifier_checks_structure_not_meaning() {
    let a = signer("A");
    let mut app = Appender::new(ORIGIN, &[a.verifier().clone()]).expect("new");
    let kind = pitboss_audit::Kind::parse("shoe_changed").expect("snake_case");
    let entries = app
        .seal(vec![NewEntry::new(ts(0), kind, json!({"shoe": 4}))])
        .expect("seals");
    let cp = app.checkpoint(std::slice::from_ref(&a)).expect("signs");
    let header = pitboss_audit::ExportHeader::new(ORIGIN, app.state().keys);
    let export = pitboss_audit::write_export(
        Vec::new(),
        &header,
        entries.iter().map(|e| e.canonical.as_slice()),
        &[cp],
    )
    .expect("writes");
    verify_export(export.as_slice(), opts_a(), |_| {}).expect("verifies");
}

#[test]
fn empty_log_with_a_checkpoint_of_size_zero_verifies() {
    let a = signer("A");
    let mut app = Appender::new(ORIGIN, &[a.verifier().clone()]).expect("new");
    let cp = app.checkpoint(std::slice::from_ref(&a)).expect("signs");
    let header = pitboss_audit::ExportHeader::new(ORIGIN, app.state().keys);
    let export = pitboss_audit::write_export(Vec::new(), &header, std::iter::empty(), &[cp])
        .expect("writes");
    let s = verify_export(export.as_slice(), opts_a(), |_| {}).expect("verifies");
    assert_eq!(s.entries, 0);
}

#[test]
fn builder_refuses_a_bad_entry_alone_and_rolls_back_to_a_mark() {
    let a = signer("A");
    let app = Appender::new(ORIGIN, &[a.verifier().clone()]).expect("new");
    let mut b = app.builder();
    b.push(event(0, "")).expect("seals");
    let mark = b.mark();
    b.push(event(1, "")).expect("seals");
    // A fraction in the payload does not fit the format: refused, nothing changes.
    let bad = NewEntry::new(ts(2), EntryKind::BetAccepted, json!({"stake": 0.5}));
    assert!(matches!(
        b.push(bad),
        Err(SealError::Entry { index: 2, .. })
    ));
    assert_eq!(b.len(), 2);
    b.rollback(mark);
    assert_eq!(b.len(), 1);
    b.push(event(1, "other")).expect("seals after the rollback");
    let built = b.finish();
    // The same as a batch prepared from the entries that stayed.
    let prepared = app
        .prepare(vec![event(0, ""), event(1, "other")])
        .expect("prepares");
    assert_eq!(built.entries, prepared.entries);
    assert_eq!(built.state_after(), prepared.state_after());
}

#[test]
fn builder_rollback_undoes_a_key_rotation() {
    let a = signer("A");
    let bk = signer("B");
    let app = Appender::new(ORIGIN, &[a.verifier().clone()]).expect("new");
    let mut b = app.builder();
    b.push(event(0, "")).expect("seals");
    let mark = b.mark();
    b.push(rotation_begin_entry(ts(1), a.verifier(), bk.verifier()))
        .expect("rotation seals");
    b.rollback(mark);
    let built = b.finish();
    assert_eq!(
        built.state_after(),
        app.prepare(vec![event(0, "")])
            .expect("prepares")
            .state_after()
    );
}
