//! Witnesses wired into the service (C2SP tlog-witness): every checkpoint the writer stores is
//! handed to one thread per configured witness, which submits it with a consistency proof read
//! from the stored Merkle tiles and stores the cosignature it gets back (one row per size and
//! witness, `checkpoint_cosignatures`). Served checkpoints, proofs and exports carry the stored
//! cosignature lines after the log's own signature ([`attach`]).
//!
//! The writer only replaces the latest checkpoint of each witness's slot ([`Hub::offer`]): it
//! never waits for a witness. A witness that is down, slow or refusing delays its cosignatures
//! and nothing else; its thread retries with the newest checkpoint after a backoff (at most
//! [`MAX_BACKOFF`]), and every request is bounded by the configured timeout.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use diesel::prelude::*;
use pitboss_audit::cosign::CosignerVerifier;
use pitboss_audit::note::{NoteSignature, SignedCheckpoint};

use crate::store::schema::checkpoint_cosignatures;
use crate::store::{self, DatabaseUrl, DbConnection, StoreError};
use crate::witness::client::{ClientError, WitnessClient};

/// How long a witness request may take unless configured.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The first wait before a failed submission is tried again; it doubles up to [`MAX_BACKOFF`].
pub const FIRST_BACKOFF: Duration = Duration::from_secs(1);
pub const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// One witness as `serve` is configured with it.
#[derive(Debug, Clone)]
pub struct WitnessSpec {
    /// Its URL prefix (`https://witness.example/` serves `…/add-checkpoint`).
    pub url: String,
    /// Its cosigner verifier key string (`pitboss witness key`).
    pub vkey: String,
}

/// `serve --witness-url … --witness-key … [--witness-quorum k]`.
#[derive(Debug, Clone, Default)]
pub struct WitnessOptions {
    pub witnesses: Vec<WitnessSpec>,
    /// How many distinct witnesses make a checkpoint witnessed (`None`: all of them).
    pub quorum: Option<usize>,
    /// Bounds every request to a witness (`None`: [`DEFAULT_TIMEOUT`]).
    pub timeout: Option<Duration>,
}

impl WitnessOptions {
    /// Pairs URLs and keys given in the same order.
    pub fn from_lists(
        urls: &[String],
        vkeys: &[String],
        quorum: Option<usize>,
        timeout: Option<Duration>,
    ) -> Result<WitnessOptions, String> {
        if urls.len() != vkeys.len() {
            return Err(format!(
                "{} --witness-url and {} --witness-key given: give one key per witness URL, in the same order",
                urls.len(),
                vkeys.len()
            ));
        }
        Ok(WitnessOptions {
            witnesses: urls
                .iter()
                .zip(vkeys)
                .map(|(u, k)| WitnessSpec {
                    url: u.trim().to_owned(),
                    vkey: k.trim().to_owned(),
                })
                .collect(),
            quorum,
            timeout,
        })
    }
}

/// The configured witnesses' keys and quorum, checked.
#[derive(Debug, Clone, Default)]
pub struct Witnesses {
    pub specs: Vec<(String, CosignerVerifier)>,
    pub quorum: usize,
    pub timeout: Duration,
}

impl Witnesses {
    pub fn parse(o: &WitnessOptions) -> Result<Witnesses, String> {
        let mut specs = Vec::new();
        for w in &o.witnesses {
            if !(w.url.starts_with("http://") || w.url.starts_with("https://")) {
                return Err(format!(
                    "witness URL {:?}: must start with http:// or https://",
                    w.url
                ));
            }
            let v = CosignerVerifier::from_vkey(&w.vkey)
                .map_err(|e| format!("witness key {:?}: {e}", w.vkey))?;
            if specs
                .iter()
                .any(|(_, s): &(String, CosignerVerifier)| s.name() == v.name())
            {
                return Err(format!("witness {:?} is configured twice", v.name()));
            }
            specs.push((w.url.clone(), v));
        }
        let quorum = o.quorum.unwrap_or(specs.len());
        if quorum > specs.len() {
            return Err(format!(
                "witness quorum {quorum} is more than the {} witnesses configured",
                specs.len()
            ));
        }
        if quorum == 0 && !specs.is_empty() {
            return Err("witness quorum 0: give at least 1".into());
        }
        Ok(Witnesses {
            specs,
            quorum,
            timeout: o.timeout.unwrap_or(DEFAULT_TIMEOUT),
        })
    }

    pub fn verifiers(&self) -> Vec<CosignerVerifier> {
        self.specs.iter().map(|(_, v)| v.clone()).collect()
    }

    /// Whether `cp` carries valid cosignatures by at least the quorum (never with no witness).
    pub fn witnessed(&self, cp: &SignedCheckpoint) -> bool {
        !self.specs.is_empty()
            && pitboss_audit::cosign::cosigned_by(cp, &self.verifiers())
                .is_ok_and(|by| by.len() >= self.quorum)
    }
}

/// What `/metrics` shows of one witness.
#[derive(Debug)]
pub struct WitnessStatus {
    pub name: String,
    /// The largest size it cosigned (0 before any).
    pub cosigned_size: AtomicU64,
    /// Cosignatures obtained and stored.
    pub cosignatures: AtomicU64,
    /// Submissions that failed (unreachable, refused, a bad answer, or not stored).
    pub failures: AtomicU64,
}

/// The witnesses' status, set once at start (empty without witnesses).
#[derive(Debug, Default)]
pub struct WitnessMetrics(OnceLock<Vec<Arc<WitnessStatus>>>);

impl WitnessMetrics {
    pub fn all(&self) -> &[Arc<WitnessStatus>] {
        self.0.get().map_or(&[], Vec::as_slice)
    }
}

/// The latest checkpoint not yet taken by one witness's thread.
#[derive(Default)]
struct Slot {
    latest: Mutex<Option<SignedCheckpoint>>,
    ready: Condvar,
}

/// What the writer holds: one slot per witness.
#[derive(Default)]
pub struct Hub {
    slots: Vec<Arc<Slot>>,
}

impl Hub {
    /// Hands a stored checkpoint to every witness's thread; a checkpoint not yet taken is
    /// replaced (the newest is the one worth cosigning). Never waits for a witness.
    pub fn offer(&self, cp: &SignedCheckpoint) {
        for s in &self.slots {
            *s.latest.lock().expect("slot lock") = Some(cp.clone());
            s.ready.notify_one();
        }
    }
}

/// Starts one thread per witness; each first submits the latest stored checkpoint.
pub fn start(
    url: &DatabaseUrl,
    witnesses: &Witnesses,
    metrics: &WitnessMetrics,
) -> Result<Hub, super::StartError> {
    if witnesses.specs.is_empty() {
        return Ok(Hub::default());
    }
    let mut conn = store::connect(url)?;
    let latest = super::latest_note(&mut conn).map_err(StoreError::from)?;
    let latest = latest
        .map(|t| {
            SignedCheckpoint::parse(&t).map_err(|e| StoreError::Corrupt(format!("checkpoint: {e}")))
        })
        .transpose()?;
    let mut slots = Vec::new();
    let mut statuses = Vec::new();
    for (wurl, verifier) in &witnesses.specs {
        let cosigned: Option<i64> = checkpoint_cosignatures::table
            .filter(checkpoint_cosignatures::witness.eq(verifier.name()))
            .select(diesel::dsl::max(checkpoint_cosignatures::tree_size))
            .first(&mut conn)
            .map_err(StoreError::from)?;
        let status = Arc::new(WitnessStatus {
            name: verifier.name().to_owned(),
            cosigned_size: AtomicU64::new(cosigned.unwrap_or(0) as u64),
            cosignatures: AtomicU64::new(0),
            failures: AtomicU64::new(0),
        });
        let mut client = WitnessClient::new(wurl, verifier.clone(), witnesses.timeout);
        client.set_known_size(cosigned.map(|s| s as u64));
        let slot = Arc::new(Slot {
            latest: Mutex::new(latest.clone()),
            ready: Condvar::new(),
        });
        let t = Thread {
            slot: slot.clone(),
            status: status.clone(),
            client,
            url: url.clone(),
            conn: None,
        };
        std::thread::Builder::new()
            .name(format!("pitboss-witness-{}", slots.len()))
            .spawn(move || t.run())?;
        slots.push(slot);
        statuses.push(status);
    }
    let _ = metrics.0.set(statuses);
    Ok(Hub { slots })
}

struct Thread {
    slot: Arc<Slot>,
    status: Arc<WitnessStatus>,
    client: WitnessClient,
    url: DatabaseUrl,
    conn: Option<DbConnection>,
}

impl Thread {
    fn run(mut self) {
        let mut pending: Option<SignedCheckpoint> = None;
        let mut backoff: Option<Duration> = None;
        loop {
            // Wait for a newer checkpoint, or (after a failure) for the time to retry.
            {
                let retry_at = backoff.map(|b| Instant::now() + b);
                let mut latest = self.slot.latest.lock().expect("slot lock");
                loop {
                    if let Some(cp) = latest.take() {
                        pending = Some(cp);
                        break;
                    }
                    match retry_at {
                        Some(at) => {
                            let now = Instant::now();
                            if now >= at {
                                break;
                            }
                            latest = self
                                .slot
                                .ready
                                .wait_timeout(latest, at - now)
                                .expect("slot lock")
                                .0;
                        }
                        None => latest = self.slot.ready.wait(latest).expect("slot lock"),
                    }
                }
            }
            let Some(cp) = pending.clone() else { continue };
            match self.submit(&cp) {
                Ok(()) => {
                    pending = None;
                    backoff = None;
                }
                Err((e, retry)) => {
                    self.status.failures.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(
                        witness = %self.status.name,
                        size = cp.checkpoint.size,
                        "checkpoint not cosigned: {e}"
                    );
                    if retry {
                        backoff = Some(backoff.map_or(FIRST_BACKOFF, |b| (b * 2).min(MAX_BACKOFF)));
                    } else {
                        // Only a newer checkpoint can be cosigned now.
                        pending = None;
                        backoff = None;
                    }
                }
            }
        }
    }

    /// Submits `cp` and stores the cosignature; the error says whether retrying may help.
    fn submit(&mut self, cp: &SignedCheckpoint) -> Result<(), (String, bool)> {
        let size = cp.checkpoint.size;
        if size == 0 || self.client.known_size() == Some(size) && self.stored(size)? {
            return Ok(());
        }
        let conn = match self.conn.take() {
            Some(c) => c,
            None => store::connect(&self.url).map_err(|e| (e.to_string(), true))?,
        };
        let conn = RefCell::new(conn);
        let before = self.client.known_size();
        let proofs = |old: u64, new: u64| {
            let mut c = conn.borrow_mut();
            let src = store::tiles::TileSource::over(&mut c);
            pitboss_audit::merkle::consistency_proof(&src, old, new).map_err(|e| e.to_string())
        };
        let result = self.client.add_checkpoint(cp, &proofs);
        let mut conn = conn.into_inner();
        let cosignature = match result {
            Ok(c) => c,
            Err(e) => {
                let retry = !matches!(e, ClientError::Behind { .. });
                // A proof the store could not give: a fresh connection next time.
                if !matches!(e, ClientError::Proof { .. }) {
                    self.conn = Some(conn);
                }
                return Err((e.to_string(), retry));
            }
        };
        let line = cosignature.line.line();
        let stored = diesel::insert_into(checkpoint_cosignatures::table)
            .values((
                checkpoint_cosignatures::tree_size.eq(size as i64),
                checkpoint_cosignatures::witness.eq(self.status.name.as_str()),
                checkpoint_cosignatures::line.eq(line.trim_end_matches('\n')),
                checkpoint_cosignatures::cosigned_at.eq(cosignature.timestamp as i64),
            ))
            .execute(&mut conn);
        match stored {
            // Already stored (a cosignature obtained again after a restart): the first is kept.
            Ok(_)
            | Err(diesel::result::Error::DatabaseError(
                diesel::result::DatabaseErrorKind::UniqueViolation,
                _,
            )) => {
                self.conn = Some(conn);
                self.status.cosigned_size.fetch_max(size, Ordering::Relaxed);
                self.status.cosignatures.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                // The witness holds this size now; submitted again, it cosigns it again.
                self.client.set_known_size(before);
                Err((format!("storing the cosignature: {e}"), true))
            }
        }
    }

    /// Whether this witness's cosignature of `size` is stored.
    fn stored(&mut self, size: u64) -> Result<bool, (String, bool)> {
        let mut conn = match self.conn.take() {
            Some(c) => c,
            None => store::connect(&self.url).map_err(|e| (e.to_string(), true))?,
        };
        let n: i64 = checkpoint_cosignatures::table
            .filter(checkpoint_cosignatures::tree_size.eq(size as i64))
            .filter(checkpoint_cosignatures::witness.eq(self.status.name.as_str()))
            .count()
            .get_result(&mut conn)
            .map_err(|e| (e.to_string(), true))?;
        self.conn = Some(conn);
        Ok(n > 0)
    }
}

/// Adds the stored cosignature lines to each checkpoint (of sizes `from..=to`).
pub fn attach(conn: &mut DbConnection, cps: &mut [SignedCheckpoint]) -> Result<(), StoreError> {
    let (Some(first), Some(last)) = (cps.first(), cps.last()) else {
        return Ok(());
    };
    let (lo, hi) = (first.checkpoint.size as i64, last.checkpoint.size as i64);
    let rows: Vec<(i64, String)> = checkpoint_cosignatures::table
        .filter(checkpoint_cosignatures::tree_size.between(lo.min(hi), hi.max(lo)))
        .order((
            checkpoint_cosignatures::tree_size.asc(),
            checkpoint_cosignatures::witness.asc(),
        ))
        .select((
            checkpoint_cosignatures::tree_size,
            checkpoint_cosignatures::line,
        ))
        .load(conn)?;
    let mut by_size: HashMap<i64, Vec<NoteSignature>> = HashMap::new();
    for (size, line) in rows {
        let sig = NoteSignature::parse_line(&line)
            .map_err(|e| StoreError::Corrupt(format!("cosignature of size {size}: {e}")))?;
        by_size.entry(size).or_default().push(sig);
    }
    for cp in cps {
        if let Some(lines) = by_size.remove(&(cp.checkpoint.size as i64)) {
            cp.add_signatures(lines);
        }
    }
    Ok(())
}
