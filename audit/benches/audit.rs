//! Append and verify throughput, against the raw cost of RFC 8785 canonicalisation + SHA-256.
//!
//! Run: `cargo bench -p pitboss-audit --bench audit`. Everything here is single-threaded.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use pitboss_audit::{
    verify_export, write_export, Appender, EntryKind, ExportHeader, NewEntry, NoteSigner,
    SigningKey, Timestamp, VerifyOptions,
};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::hint::black_box;

const ORIGIN: &str = "bench.pitboss/audit";

/// A realistic mix: mostly accepted bets, some dealer events and settlements.
fn entry(i: u64) -> NewEntry {
    let ts =
        Timestamp::from_unix_micros(1_735_732_800_000_000 + i as i64 * 1000).expect("in range");
    let round = format!("r-{}", i / 16);
    match i % 16 {
        0 => NewEntry::new(ts, EntryKind::RoundOpened, json!({"plan": "roulette-eu@3"}))
            .operator("op-7")
            .table("t-12")
            .round(round),
        14 => NewEntry::new(ts, EntryKind::ResultRecorded, json!({"number": i % 37}))
            .table("t-12")
            .round(round),
        15 => NewEntry::new(
            ts,
            EntryKind::RoundSettled,
            json!({"payouts": [{"bet": format!("b-{}", i - 3), "win_minor": 175_000, "stake_back_minor": 5000}]}),
        )
        .table("t-12")
        .round(round),
        _ => NewEntry::new(
            ts,
            EntryKind::BetAccepted,
            json!({"bet_type": "straight", "numbers": [i % 37], "stake_minor": 5000 + i % 100, "seat": i % 7, "player": format!("p-{}", i % 500)}),
        )
        .operator("op-7")
        .table("t-12")
        .round(round)
        .bet(format!("b-{i}")),
    }
}

fn signer() -> NoteSigner {
    NoteSigner::new(ORIGIN, SigningKey::from_bytes(&[7; 32])).expect("name")
}

/// CPU time (user + system) consumed by this process so far, from /proc/self/stat, in seconds.
/// Unlike wall time it does not grow while other processes hold the core, so it measures the
/// cost on one core even on a busy machine. Linux only; None elsewhere.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0) // USER_HZ is 100 on Linux
}

fn cpu_time_report(label: &str, items_per_run: u64, runs: u32, mut f: impl FnMut()) {
    let (Some(c0), w0) = (cpu_seconds(), std::time::Instant::now()) else {
        return;
    };
    for _ in 0..runs {
        f();
    }
    let (Some(c1), wall) = (cpu_seconds(), w0.elapsed().as_secs_f64()) else {
        return;
    };
    let items = items_per_run as f64 * f64::from(runs);
    eprintln!(
        "{label}: {:.0} items/s by CPU time ({:.2} s CPU), {:.0} items/s by wall time ({:.2} s)",
        items / (c1 - c0),
        c1 - c0,
        items / wall,
        wall
    );
}

fn bench_append(c: &mut Criterion) {
    const BATCH: u64 = 1000;
    let entries: Vec<NewEntry> = (0..BATCH).map(entry).collect();
    // The same entries as whole JSON objects, as a naive producer would canonicalise them.
    let prev_hex = "ab".repeat(32);
    let whole: Vec<serde_json::Value> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            json!({"v": 1, "seq": i, "ts": e.ts.to_string(), "kind": e.kind.as_str(),
                   "ids": serde_json::to_value(&e.ids).expect("ids"), "payload": e.payload, "prev": prev_hex})
        })
        .collect();
    cpu_time_report(
        "baseline canonicalise+SHA-256 (CPU time)",
        BATCH,
        500,
        || {
            for v in &whole {
                let bytes = serde_json_canonicalizer::to_vec(v).expect("canonical");
                let mut h = Sha256::new();
                h.update([0u8]);
                h.update(&bytes);
                black_box(h.finalize());
            }
        },
    );
    let a0 = signer();
    let app0 = Appender::new(ORIGIN, &[a0.verifier().clone()]).expect("new");
    cpu_time_report(
        "seal (CPU time, includes cloning the input batch)",
        BATCH,
        500,
        || {
            let mut app = app0.clone();
            black_box(app.seal(entries.clone()).expect("seals"));
        },
    );
    let mut g = c.benchmark_group("append");
    g.throughput(Throughput::Elements(BATCH));
    g.bench_function("baseline_canonicalise_sha256_per_entry", |b| {
        b.iter(|| {
            for v in &whole {
                let bytes = serde_json_canonicalizer::to_vec(v).expect("canonical");
                let mut h = Sha256::new();
                h.update([0u8]);
                h.update(&bytes);
                black_box(h.finalize());
            }
        })
    });
    let a = signer();
    let app = Appender::new(ORIGIN, &[a.verifier().clone()]).expect("new");
    g.bench_function("seal_batch_of_1000", |b| {
        b.iter_batched(
            || (app.clone(), entries.clone()),
            |(mut app, batch)| black_box(app.seal(batch).expect("seals")),
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

fn bench_verify(c: &mut Criterion) {
    const N: u64 = 200_000;
    let a = signer();
    let mut app = Appender::new(ORIGIN, &[a.verifier().clone()]).expect("new");
    let mut canon: Vec<Vec<u8>> = Vec::with_capacity(N as usize);
    let mut cps = Vec::new();
    for start in (0..N).step_by(10_000) {
        let sealed = app
            .seal((start..start + 10_000).map(entry).collect())
            .expect("seals");
        canon.extend(sealed.into_iter().map(|e| e.canonical));
        cps.push(app.checkpoint(std::slice::from_ref(&a)).expect("signs"));
    }
    let header = ExportHeader::new(ORIGIN, app.state().keys);
    let export =
        write_export(Vec::new(), &header, canon.iter().map(Vec::as_slice), &cps).expect("writes");
    let opts = VerifyOptions {
        anchors: vec![*a.verifier().key()],
        ..VerifyOptions::default()
    };
    eprintln!(
        "verify input: {N} entries, {} checkpoints, {} bytes ({} bytes/entry)",
        cps.len(),
        export.len(),
        export.len() as u64 / N
    );
    cpu_time_report("verify (CPU time of this thread)", N, 10, || {
        let s = verify_export(export.as_slice(), opts.clone(), |_| {}).expect("verifies");
        assert_eq!(s.entries, N);
    });
    let mut g = c.benchmark_group("verify");
    g.throughput(Throughput::Elements(N));
    g.sample_size(10);
    g.bench_function("stream_export_200k_entries", |b| {
        b.iter(|| {
            let s = verify_export(export.as_slice(), opts.clone(), |_| {}).expect("verifies");
            assert_eq!(s.entries, N);
        })
    });
    // Where the time goes: the same entry lines parsed only, and hashed only.
    let lines: Vec<&[u8]> = export
        .split(|b| *b == b'\n')
        .filter(|l| l.starts_with(b"{\"ids\":"))
        .collect();
    g.bench_function("part_scan_only_200k", |b| {
        b.iter(|| {
            for l in &lines {
                black_box(pitboss_audit::scan::scan_entry(l).expect("scans"));
            }
        })
    });
    g.bench_function("part_serde_parse_only_200k", |b| {
        b.iter(|| {
            for l in &lines {
                black_box(pitboss_audit::WireEntry::parse(l).expect("parses"));
            }
        })
    });
    g.bench_function("part_leaf_hash_only_200k", |b| {
        b.iter(|| {
            for l in &lines {
                black_box(pitboss_audit::leaf_hash(l));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench_append, bench_verify);
criterion_main!(benches);
