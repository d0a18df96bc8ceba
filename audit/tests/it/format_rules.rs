//! One test (or vector) per rule of FORMAT.md that an independent verifier could read two ways.
//! Exports are built by hand here, byte by byte, so that a rule is tested even where the
//! producer never writes what the rule refuses.

use crate::fixture::{self, rotation_log, signer, ORIGIN};
use pitboss_audit::note::{parse_vkey, NoteVerifier};
use pitboss_audit::scan::scan_entry;
use pitboss_audit::{
    leaf_hash, verify_export, Checkpoint, ExportHeader, Frontier, Hash, KeyValidity, NoteSigner,
    Reason, SignedCheckpoint, SigningKey, VerifyOptions,
};
use serde_json::json;

/// An entry written by hand: everything but `prev` and `seq`, which the builder chains.
struct Raw {
    ids: &'static str,
    kind: String,
    payload: String,
    ts: String,
}

fn raw(kind: &str, payload: &str) -> Raw {
    Raw {
        ids: "{}",
        kind: kind.to_owned(),
        payload: payload.to_owned(),
        ts: "2025-01-01T12:00:00.000000Z".to_owned(),
    }
}

/// Chains the entries (prev, seq), signs a checkpoint with `signers` after each size in
/// `checkpoints_at` (each signer list names which keys sign it), and writes the export.
fn export_of(
    origin: &str,
    keys: Vec<KeyValidity>,
    entries: &[Raw],
    checkpoints_at: &[(u64, Vec<NoteSigner>)],
) -> Vec<u8> {
    let header = ExportHeader::new(origin, keys);
    let mut out = serde_json_canonicalizer::to_vec(&header).expect("header");
    out.push(b'\n');
    let mut head = Hash::ZERO;
    let mut frontier = Frontier::new();
    let write_checkpoints = |out: &mut Vec<u8>, frontier: &Frontier| {
        for (size, signers) in checkpoints_at {
            if *size == frontier.size() {
                let cp = SignedCheckpoint::sign(
                    Checkpoint::new(origin, *size, frontier.root()),
                    signers,
                );
                out.extend(
                    serde_json_canonicalizer::to_vec(&json!({"checkpoint": cp.to_text()}))
                        .expect("line"),
                );
                out.push(b'\n');
            }
        }
    };
    write_checkpoints(&mut out, &frontier);
    for (seq, e) in entries.iter().enumerate() {
        let line = format!(
            "{{\"ids\":{},\"kind\":\"{}\",\"payload\":{},\"prev\":\"{}\",\"seq\":{seq},\"ts\":\"{}\",\"v\":1}}",
            e.ids,
            e.kind,
            e.payload,
            head.to_hex(),
            e.ts
        );
        head = leaf_hash(line.as_bytes());
        frontier.push(head);
        out.extend(line.as_bytes());
        out.push(b'\n');
        write_checkpoints(&mut out, &frontier);
    }
    out
}

fn key_a() -> KeyValidity {
    KeyValidity {
        vkey: signer("A").verifier().to_vkey(),
        from_size: 0,
        until_size: None,
        announced_seq: None,
        authorised: true,
    }
}

/// One entry with `payload`, one checkpoint by key A.
fn single(payload: &str) -> Vec<u8> {
    export_of(
        ORIGIN,
        vec![key_a()],
        &[raw("x", payload)],
        &[(1, vec![signer("A")])],
    )
}

fn opts(keys: &[&str]) -> VerifyOptions {
    VerifyOptions {
        anchors: keys.iter().map(|k| *signer(k).verifier().key()).collect(),
        ..VerifyOptions::default()
    }
}

fn verify(export: &[u8]) -> Result<pitboss_audit::Summary, pitboss_audit::Failure> {
    verify_export(export, opts(&["A"]), |_| {})
}

fn fails(export: &[u8], seq: Option<u64>, reason: Reason) -> pitboss_audit::Failure {
    let f = verify(export).expect_err("must fail");
    assert_eq!((f.seq, f.reason), (seq, reason), "{f}");
    f
}

fn lines(export: &[u8]) -> Vec<String> {
    String::from_utf8(export.to_vec())
        .expect("utf8")
        .lines()
        .map(str::to_owned)
        .collect()
}

fn join(lines: &[String]) -> Vec<u8> {
    (lines.join("\n") + "\n").into_bytes()
}

// ---- keys ---------------------------------------------------------------------------------

#[test]
fn a_pem_key_takes_the_origin_as_its_name_so_a_line_under_another_name_is_an_unknown_key() {
    let a_other = NoteSigner::new(
        "someone.else/log",
        SigningKey::from_bytes(&fixture_seed("A")),
    )
    .expect("name");
    let export = export_of(
        ORIGIN,
        vec![key_a()],
        &[raw("x", "{}")],
        &[(1, vec![a_other])],
    );
    fails(&export, Some(0), Reason::UnknownKey);
    verify(&single("{}")).expect("under the origin it verifies");
}

fn fixture_seed(label: &str) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(format!("pitboss-audit test key {label}")).into()
}

#[test]
fn a_verifier_key_string_splits_at_its_first_two_plus_signs() {
    // Find a key whose base64 holds a '+': it must stay part of the key.
    let v = (0u8..=255)
        .map(|i| NoteVerifier::new(ORIGIN, SigningKey::from_bytes(&[i; 32]).verifying_key()))
        .map(|v| v.expect("name"))
        .find(|v| v.to_vkey().matches('+').count() > 2)
        .expect("some key's base64 holds a '+'");
    let s = v.to_vkey();
    let parts = parse_vkey(&s).expect("parses");
    assert_eq!(parts.name, ORIGIN);
    assert_eq!(NoteVerifier::from_vkey(&s).expect("round trip"), v);
    // A '+' in the name cannot be written: the name ends at the first '+'.
    assert!(NoteVerifier::new("a+b", *v.key()).is_err());
    let shifted = format!("x+{s}");
    assert!(NoteVerifier::from_vkey(&shifted).is_err());
}

#[test]
fn every_published_key_may_be_passed_across_a_rotation_and_unrelated_ones_are_ignored() {
    let export = rotation_log().export();
    for keys in [&["A"][..], &["A", "B"], &["B", "A"], &["A", "B", "Z"]] {
        let s = verify_export(export.as_slice(), opts(keys), |_| {})
            .unwrap_or_else(|f| panic!("{keys:?}: {f}"));
        let b = s
            .keys
            .iter()
            .find(|k| k.vkey == signer("B").verifier().to_vkey())
            .expect("B scheduled");
        // B keeps the schedule the log gives it, whether or not the auditor trusts it directly.
        assert_eq!(
            (b.from_size, b.announced_seq, b.authorised),
            (8, Some(7), true)
        );
    }
    // Only the new key: the checkpoints before the rotation are not by a key it trusts.
    let f = verify_export(export.as_slice(), opts(&["B"]), |_| {}).expect_err("A signed those");
    assert_eq!((f.seq, f.reason), (Some(6), Reason::UnknownKey), "{f}");
}

#[test]
fn a_trusted_key_that_signed_before_the_log_announced_it_is_a_bad_rotation() {
    let (a, b) = (signer("A"), signer("B"));
    let export = export_of(
        ORIGIN,
        vec![key_a()],
        &[raw("x", "{}"), rotation("begin", "A", "B"), raw("x", "{}")],
        &[(1, vec![b.clone()]), (3, vec![a, b])],
    );
    let f = verify_export(export.as_slice(), opts(&["A", "B"]), |_| {}).expect_err("B early");
    assert_eq!((f.seq, f.reason), (Some(1), Reason::BadRotation), "{f}");
}

fn rotation(stage: &str, old: &str, new: &str) -> Raw {
    raw(
        "key_rotated",
        &format!(
            "{{\"new_key\":\"{}\",\"old_key\":\"{}\",\"stage\":\"{stage}\"}}",
            signer(new).verifier().to_vkey(),
            signer(old).verifier().to_vkey()
        ),
    )
}

fn validity(label: &str, from: u64, until: Option<u64>, announced: Option<u64>) -> KeyValidity {
    KeyValidity {
        vkey: signer(label).verifier().to_vkey(),
        from_size: from,
        until_size: until,
        announced_seq: announced,
        authorised: true,
    }
}

#[test]
fn rotations_pair_one_begin_with_one_end_of_the_same_keys() {
    let (a, b, c) = (signer("A"), signer("B"), signer("C"));
    // A second begin while one is open.
    let export = export_of(
        ORIGIN,
        vec![key_a()],
        &[rotation("begin", "A", "B"), rotation("begin", "A", "C")],
        &[(2, vec![a.clone(), b.clone(), c.clone()])],
    );
    let f = fails(&export, Some(1), Reason::BadRotation);
    assert!(f.detail.contains("still open"), "{f}");
    // An end naming other keys than the begin.
    let export = export_of(
        ORIGIN,
        vec![key_a()],
        &[rotation("begin", "A", "B"), rotation("end", "A", "C")],
        &[
            (1, vec![a.clone(), b.clone()]),
            (2, vec![a.clone(), b.clone()]),
        ],
    );
    let f = fails(&export, Some(1), Reason::BadRotation);
    assert!(f.detail.contains("other keys"), "{f}");
    // An end without a begin.
    let export = export_of(
        ORIGIN,
        vec![key_a()],
        &[rotation("end", "A", "B")],
        &[(1, vec![a.clone()])],
    );
    fails(&export, Some(0), Reason::BadRotation);
    // begin, end, then a new rotation: fine.
    let export = export_of(
        ORIGIN,
        vec![
            validity("A", 0, Some(2), None),
            validity("B", 1, Some(4), Some(0)),
            validity("C", 4, None, Some(3)),
        ],
        &[
            rotation("begin", "A", "B"),
            raw("x", "{}"),
            rotation("end", "A", "B"),
            rotation("begin", "B", "C"),
            rotation("end", "B", "C"),
        ],
        &[
            (1, vec![a.clone(), b.clone()]),
            (2, vec![a.clone(), b.clone()]),
            (4, vec![b.clone(), c.clone()]),
            (5, vec![b, c]),
        ],
    );
    verify(&export).expect("two rotations in turn");
}

#[test]
fn the_header_must_list_every_key_the_log_schedules_once() {
    let log = rotation_log();
    let mut keys = log.appender.state().keys;
    assert_eq!(keys.len(), 2);
    let write = |keys: Vec<KeyValidity>| {
        pitboss_audit::write_export(
            Vec::new(),
            &ExportHeader::new(ORIGIN, keys),
            log.entries.iter().map(|e| e.canonical.as_slice()),
            &log.checkpoints,
        )
        .expect("writes")
    };
    let f = fails(&write(vec![keys[0].clone()]), None, Reason::HeaderMismatch);
    assert!(f.detail.contains("omits"), "{f}");
    let f = fails(&write(vec![keys[1].clone()]), None, Reason::HeaderMismatch);
    assert!(f.detail.contains("omits"), "{f}");
    keys.push(keys[0].clone());
    let f = fails(&write(keys), None, Reason::HeaderMismatch);
    assert!(f.detail.contains("twice"), "{f}");
}

// ---- which seq a failure names ---------------------------------------------------------------

fn sixty() -> Vec<String> {
    lines(&fixture::simple_log(60, 20, None).export())
}

fn index_of_entry(lines: &[String], seq: u64) -> usize {
    lines
        .iter()
        .position(|l| l.starts_with("{\"ids\":") && l.contains(&format!("\"seq\":{seq},")))
        .expect("entry")
}

fn index_of_checkpoint(lines: &[String], size: u64) -> usize {
    lines
        .iter()
        .position(|l| l.starts_with("{\"checkpoint\":") && l.contains(&format!("\\n{size}\\n")))
        .expect("checkpoint")
}

#[test]
fn a_forged_checkpoint_size_is_a_bad_signature_naming_the_entry_it_follows() {
    let mut l = sixty();
    let i = index_of_checkpoint(&l, 20);
    l[i] = l[i].replace("\\n20\\n", "\\n19\\n");
    fails(&join(&l), Some(19), Reason::BadSignature);
}

#[test]
fn a_signed_checkpoint_in_the_wrong_place_names_the_entry_it_follows_or_the_first_missing() {
    let l = sixty();
    let i = index_of_checkpoint(&l, 20);
    // One entry later: out of order, after entry 20.
    let mut later = l.clone();
    later.swap(i, i + 1);
    fails(&join(&later), Some(20), Reason::OutOfOrder);
    // One entry earlier: entry 19 is not there yet.
    let mut earlier = l.clone();
    earlier.swap(i, i - 1);
    fails(&join(&earlier), Some(19), Reason::Gap);
}

#[test]
fn a_root_mismatch_names_the_last_entry_before_the_checkpoint_when_the_next_entry_shows_it_altered()
{
    let mut l = sixty();
    let i = index_of_entry(&l, 39);
    l[i] = l[i].replace("T12:00:39", "T12:00:38");
    assert_ne!(l[i], sixty()[i]);
    let f = fails(&join(&l), Some(39), Reason::RootMismatch);
    assert!(f.detail.contains("entry 39 was altered"), "{f}");
}

#[test]
fn a_root_mismatch_at_the_end_names_the_first_entry_no_earlier_checkpoint_covers() {
    let mut l = sixty();
    let i = index_of_entry(&l, 59);
    l[i] = l[i].replace("T12:00:59", "T12:00:58");
    assert_ne!(l[i], sixty()[i]);
    fails(&join(&l), Some(40), Reason::RootMismatch);
}

#[test]
fn checkpoint_lines_read_during_a_look_ahead_are_passed_over_and_the_entry_is_named() {
    let mut l = sixty();
    let i = index_of_entry(&l, 19);
    // Entry 19's prev altered: the checkpoint of size 20 follows before entry 20 decides.
    let at = l[i].find("\"prev\":\"").expect("prev") + 8;
    let c = if &l[i][at..at + 1] == "0" { "1" } else { "0" };
    l[i].replace_range(at..at + 1, c);
    let f = fails(&join(&l), Some(19), Reason::BrokenLink);
    assert!(
        f.detail
            .contains("prev_hash does not match hash of entry 18"),
        "{f}"
    );
}

// ---- entries ---------------------------------------------------------------------------------

#[test]
fn ts_must_be_a_real_instant_but_need_not_increase() {
    for bad in [
        "2025-02-29T00:00:00.000000Z",
        "2025-04-31T00:00:00.000000Z",
        "2025-01-01T24:00:00.000000Z",
        "2025-01-01T00:60:00.000000Z",
        "2025-12-31T23:59:60.000000Z",
        "2025-00-10T00:00:00.000000Z",
    ] {
        let mut e = raw("x", "{}");
        e.ts = bad.to_owned();
        let export = export_of(ORIGIN, vec![key_a()], &[e], &[(1, vec![signer("A")])]);
        fails(&export, Some(0), Reason::Malformed);
    }
    let mut first = raw("x", "{}");
    first.ts = "2024-02-29T23:59:59.999999Z".to_owned();
    let mut second = raw("x", "{}");
    second.ts = "2024-02-29T08:00:00.000000Z".to_owned();
    let export = export_of(
        ORIGIN,
        vec![key_a()],
        &[first, second],
        &[(2, vec![signer("A")])],
    );
    verify(&export).expect("a leap day, and a clock that went back");
}

#[test]
fn payload_numbers_are_safe_integers_even_without_canonical() {
    for bad in [
        "{\"a\":9007199254740992}",
        "{\"a\":-9007199254740992}",
        "{\"a\":12345678901234567890}",
        "{\"a\":1.5}",
        "{\"a\":1.0}",
        "{\"a\":1e3}",
        "{\"a\":-0}",
        "[0.1]",
    ] {
        let f = fails(&single(bad), Some(0), Reason::Malformed);
        assert!(f.detail.contains("payload"), "{bad}: {f}");
    }
    verify(&single("{\"a\":[9007199254740991,-9007199254740991,0]}")).expect("safe integers");
}

#[test]
fn payload_has_no_whitespace_and_its_members_are_sorted_and_unique() {
    for bad in [
        "{ \"a\":1}",
        "{\"a\": 1}",
        "[1, 2]",
        "{\"a\":1,\"a\":2}",
        "{\"b\":1,\"a\":2}",
        "{\"a\":{\"d\":1,\"c\":2}}",
        "{\"\u{e000}\":1,\"\u{10000}\":2}",
        "{\"\\u0061\":1,\"a\":2}",
    ] {
        fails(&single(bad), Some(0), Reason::Malformed);
    }
    // UTF-16 order puts U+10000 (D800 DC00) before U+E000, unlike code point order.
    verify(&single("{\"\u{10000}\":1,\"\u{e000}\":2}")).expect("sorted by UTF-16 units");
    verify(&single("{\"A\":1,\"B\":[],\"a\":{\"x\":1,\"y\":2}}")).expect("sorted");
}

#[test]
fn an_id_is_limited_to_256_bytes_of_its_unescaped_utf8() {
    // 128 × "é" is 256 bytes unescaped; the line holds it as 256 bytes too. 128 × "\"" is 128
    // bytes unescaped but 256 on the line.
    let cases = [
        ("\u{e9}".repeat(128), true),
        ("\u{e9}".repeat(128) + "x", false),
        ("\\\"".repeat(200), true),
        ("\\\"".repeat(256) + "x", false),
        ("\\u0041".repeat(256), true),
        ("x".repeat(257), false),
    ];
    for (id, ok) in cases {
        let mut e = raw("x", "{}");
        let ids: &'static str = Box::leak(format!("{{\"bet\":\"{id}\"}}").into_boxed_str());
        e.ids = ids;
        let export = export_of(ORIGIN, vec![key_a()], &[e], &[(1, vec![signer("A")])]);
        assert_eq!(
            verify(&export).is_ok(),
            ok,
            "{} bytes on the line",
            id.len()
        );
    }
}

#[test]
fn an_unsupported_entry_version_is_named() {
    let line = String::from_utf8(single("{}")).expect("utf8");
    let entry = line
        .lines()
        .nth(1)
        .expect("entry")
        .replace("\"v\":1}", "\"v\":2}");
    let err = scan_entry(entry.as_bytes()).expect_err("v 2");
    assert_eq!(err.to_string(), "unsupported entry version 2");
    let entry = entry.replace("\"v\":2}", "\"v\":17}");
    assert_eq!(
        scan_entry(entry.as_bytes()).expect_err("v 17").to_string(),
        "unsupported entry version 17"
    );
    assert!(scan_entry(entry.replace("\"v\":17}", "\"v\":01}").as_bytes()).is_err());
}

// ---- lines -----------------------------------------------------------------------------------

#[test]
fn header_and_checkpoint_lines_must_be_canonical() {
    let l = lines(&single("{}"));
    let mut spaced = l.clone();
    spaced[0] = spaced[0].replacen("{\"format\":", "{\"format\": ", 1);
    fails(&join(&spaced), None, Reason::Malformed);
    let mut escaped = l.clone();
    escaped[2] = escaped[2].replace('\u{2014}', "\\u2014");
    let cp: serde_json::Value = serde_json::from_str(&escaped[2]).expect("still JSON");
    assert!(cp["checkpoint"]
        .as_str()
        .expect("note")
        .contains('\u{2014}'));
    fails(&join(&escaped), Some(0), Reason::Malformed);
    let mut reordered = l;
    let without = reordered[0].replace(&format!(",\"origin\":\"{ORIGIN}\""), "");
    reordered[0] = format!("{{\"origin\":\"{ORIGIN}\",{}", &without[1..]);
    assert_ne!(reordered[0], lines(&single("{}"))[0]);
    fails(&join(&reordered), None, Reason::Malformed);
}

#[test]
fn repeated_signature_lines_are_each_checked_and_base64_must_be_canonical() {
    let l = lines(&single("{}"));
    let cp_line: serde_json::Value = serde_json::from_str(&l[2]).expect("json");
    let note = cp_line["checkpoint"].as_str().expect("note").to_owned();
    let sig_line = note.lines().last().expect("signature line").to_owned();
    let with_note = |note: &str| {
        let mut l = l.clone();
        l[2] = String::from_utf8(
            serde_json_canonicalizer::to_vec(&json!({"checkpoint": note})).expect("json"),
        )
        .expect("utf8");
        join(&l)
    };
    // The same line twice: verifies, the key counts once.
    verify(&with_note(&format!("{note}{sig_line}\n"))).expect("repeat of a good line");
    // A second line by the same key with another signature: a bad signature fails the note.
    let b64_start = sig_line.rfind(' ').expect("space") + 1;
    let mut bad = sig_line.clone();
    let flip = b64_start + 20;
    let c = if &bad[flip..flip + 1] == "A" {
        "B"
    } else {
        "A"
    };
    bad.replace_range(flip..flip + 1, c);
    fails(
        &with_note(&format!("{note}{bad}\n")),
        Some(0),
        Reason::BadSignature,
    );
    // Non-canonical base64 (stray bits in the last character before the padding).
    let mut stray = sig_line.clone();
    let last = stray.trim_end_matches('=').len() - 1;
    let ch = stray.as_bytes()[last];
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let v = ALPHABET.iter().position(|&x| x == ch).expect("base64 char");
    let stray_char = ALPHABET[v ^ 1] as char;
    stray.replace_range(last..last + 1, &stray_char.to_string());
    let stray_note = note.replace(&sig_line, &stray);
    fails(&with_note(&stray_note), Some(0), Reason::Malformed);
}

#[test]
fn a_cut_last_line_and_a_header_only_export_are_truncated_and_an_empty_log_verifies() {
    let whole = single("{}");
    let cut = &whole[..whole.len() - 1];
    fails(cut, Some(1), Reason::Truncated);
    let header_only = lines(&whole)[0].clone() + "\n";
    let f = fails(header_only.as_bytes(), Some(0), Reason::Truncated);
    assert!(f.detail.contains("no checkpoint"), "{f}");
    let f = fails(b"", None, Reason::Truncated);
    assert!(f.detail.contains("empty"), "{f}");
    let empty_log = export_of(ORIGIN, vec![key_a()], &[], &[(0, vec![signer("A")])]);
    assert_eq!(verify(&empty_log).expect("empty log").entries, 0);
}

#[test]
fn the_origin_is_printable_without_whitespace_or_plus_and_may_be_non_ascii() {
    for bad in [
        "",
        "a b",
        "a+b",
        "a\u{a0}b",
        "a\u{2028}b",
        "a\tb",
        "a\u{7f}b",
    ] {
        assert!(!pitboss_audit::note::name_ok(bad), "{bad:?}");
    }
    assert!(!pitboss_audit::note::name_ok(&"x".repeat(257)));
    let origin = "kasino.example.cz/pitboss/\u{17e}eton";
    assert!(pitboss_audit::note::name_ok(origin));
    let a = NoteSigner::new(origin, SigningKey::from_bytes(&fixture_seed("A"))).expect("name");
    let keys = vec![KeyValidity {
        vkey: a.verifier().to_vkey(),
        ..key_a()
    }];
    let export = export_of(origin, keys, &[raw("x", "{}")], &[(1, vec![a])]);
    verify(&export).expect("a non-ASCII origin");
    let mut l = lines(&single("{}"));
    l[0] = l[0].replace(ORIGIN, "pitboss.test/audit demo");
    fails(&join(&l), None, Reason::Malformed);
}
