//! Rotating the log's signing key on a running service (audit/FORMAT.md §5), in two steps an
//! admin asks for (`POST /v1/admin/signing-key/rotate`):
//!
//! - **begin**: a new key is made and written beside the current one (`signing-key.next.pem`,
//!   0600, durable) before the `key_rotated` `begin` entry is logged; from then on every
//!   checkpoint is signed by both keys (the first one after `begin`, by the old key, authorises
//!   the new key). This is the overlap: auditors and witnesses holding the old key learn the new
//!   one from the log, and witnesses are given it (`--log-key`) before the end.
//! - **end**: the `end` entry retires the old key at its seq; checkpoints after it are signed by
//!   the new key alone. The old key file is kept as `signing-key.retired-<fingerprint>.pem`, and
//!   the new one takes the signing key's path.
//!
//! A start reads both files and takes the signers the logged schedule wants ([`resolve`]), so a
//! stop at any point of a rotation (even between the `end` entry and the file swap) goes on.

use std::path::{Path, PathBuf};

use actix_web::http::StatusCode;
use pitboss_audit::keys::{rotation_begin_entry, rotation_end_entry};
use pitboss_audit::log::Appender;
use pitboss_audit::note::NoteSigner;

use super::*;

/// Which step of a rotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Begin,
    End,
}

/// What a rotation step did.
#[derive(Debug, Clone)]
pub struct Rotated {
    pub stage: Stage,
    /// Verifier key strings (`<origin>+<id>+<base64>`).
    pub old_key: String,
    pub new_key: String,
    /// The seq of the `key_rotated` entry.
    pub seq: u64,
    /// The key that signs alone after this step: PEM (`GET /v1/audit/public-key`).
    pub public_key_pem: String,
}

/// Why a rotation step was not taken.
#[derive(Debug, Clone)]
pub struct Refused {
    pub status: u16,
    pub code: &'static str,
    pub detail: String,
}

fn refused(status: StatusCode, code: &'static str, detail: impl Into<String>) -> Refused {
    Refused {
        status: status.as_u16(),
        code,
        detail: detail.into(),
    }
}

/// `signing-key.pem` → `signing-key.next.pem`: the new key during a rotation.
pub fn next_path(key_path: &Path) -> PathBuf {
    key_path.with_extension("next.pem")
}

/// Where a retired key is kept.
fn retired_path(key_path: &Path, signer: &NoteSigner) -> PathBuf {
    let fp: String = signer.verifier().key().as_bytes()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    key_path.with_extension(format!("retired-{fp}.pem"))
}

/// The signers the logged key schedule wants at start: the key file's, and during an open
/// rotation the next key's too. Finishes a file swap an `end` left undone; removes a next-key
/// file the log never announced (a `begin` that was not logged).
pub fn resolve(
    key_path: &Path,
    primary: NoteSigner,
    appender: &Appender,
) -> Result<(NoteSigner, Option<NoteSigner>), String> {
    let next_file = next_path(key_path);
    let next = if next_file.exists() {
        let key = crate::keyfile::load_or_create(&next_file).map_err(|e| e.to_string())?;
        Some(NoteSigner::new(appender.origin(), key).map_err(|e| e.to_string())?)
    } else {
        None
    };
    let keys = appender.keys();
    match (keys.open_rotation(), next) {
        (Some(open), Some(n))
            if open.new_key == n.verifier().to_vkey()
                && open.old_key == primary.verifier().to_vkey() =>
        {
            Ok((primary, Some(n)))
        }
        (Some(open), _) => Err(format!(
            "a signing-key rotation begun at seq {} is open, but {} and {} do not hold its keys ({} and {})",
            open.begin_seq,
            key_path.display(),
            next_file.display(),
            open.old_key,
            open.new_key
        )),
        (None, Some(n)) => {
            let primary_retired = matches!(keys.validity_of(primary.verifier().key()), Some((_, Some(_), _)));
            match keys.validity_of(n.verifier().key()) {
                Some((_, None, true)) if primary_retired => {
                    swap_files(key_path, &primary)?;
                    Ok((n, None))
                }
                None => {
                    std::fs::remove_file(&next_file)
                        .map_err(|e| format!("{}: {e}", next_file.display()))?;
                    Ok((primary, None))
                }
                _ => Ok((primary, None)),
            }
        }
        (None, None) => Ok((primary, None)),
    }
}

/// Keeps the retired key's file and puts the next key at the signing key's path (a rename, so
/// the path always holds a whole key).
fn swap_files(key_path: &Path, retired: &NoteSigner) -> Result<(), String> {
    let keep = retired_path(key_path, retired);
    if !keep.exists() {
        let pem = std::fs::read(key_path).map_err(|e| format!("{}: {e}", key_path.display()))?;
        crate::keyfile::write_private(&keep, &pem)
            .map_err(|e| format!("{}: {e}", keep.display()))?;
    }
    let next = next_path(key_path);
    std::fs::rename(&next, key_path)
        .map_err(|e| format!("{} → {}: {e}", next.display(), key_path.display()))?;
    if let Some(dir) = key_path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    Ok(())
}

impl Writer {
    /// The keys that sign the next checkpoint: the current one, and the next during a rotation.
    pub(super) fn signers(&self) -> Vec<NoteSigner> {
        let mut s = vec![self.signer.clone()];
        s.extend(self.next_signer.clone());
        s
    }

    pub(super) fn rotate_signing_key(&mut self, stage: Stage) -> Result<Rotated, Refused> {
        // What is pending is signed under the schedule as it is.
        let _ = self.checkpoint_if_pending();
        let unavailable = |e: String| refused(StatusCode::SERVICE_UNAVAILABLE, "unavailable", e);
        let open = self.appender.keys().open_rotation().cloned();
        let now = Utc::now();
        match stage {
            Stage::Begin => {
                if let Some(o) = open {
                    return Err(refused(
                        StatusCode::CONFLICT,
                        "rotation_open",
                        format!(
                            "the rotation begun at seq {} is open: end it first",
                            o.begin_seq
                        ),
                    ));
                }
                let next_file = next_path(&self.key_path);
                // A file left by a begin that was not logged.
                if next_file.exists() {
                    std::fs::remove_file(&next_file)
                        .map_err(|e| unavailable(format!("{}: {e}", next_file.display())))?;
                }
                let key = crate::keyfile::load_or_create(&next_file)
                    .map_err(|e| unavailable(e.to_string()))?;
                let new = NoteSigner::new(self.appender.origin(), key)
                    .map_err(|e| unavailable(e.to_string()))?;
                let entry =
                    rotation_begin_entry(now_ts(now), self.signer.verifier(), new.verifier());
                let seq = self.append_alone(entry).map_err(|e| match e {
                    Append::Rules(e) | Append::Store(e) => unavailable(e),
                })?;
                let rotated = Rotated {
                    stage,
                    old_key: self.signer.verifier().to_vkey(),
                    new_key: new.verifier().to_vkey(),
                    seq,
                    public_key_pem: self.public_key_pem.read().expect("pem lock").clone(),
                };
                self.next_signer = Some(new);
                // The checkpoint covering `begin`, by both keys, authorises the new one.
                let _ = self.checkpoint_if_pending();
                Ok(rotated)
            }
            Stage::End => {
                let (Some(_), Some(new)) = (open, self.next_signer.clone()) else {
                    return Err(refused(
                        StatusCode::CONFLICT,
                        "no_rotation_open",
                        "no signing-key rotation is open: begin one first",
                    ));
                };
                let old = self.signer.clone();
                let entry = rotation_end_entry(now_ts(now), old.verifier(), new.verifier());
                let seq = self.append_alone(entry).map_err(|e| match e {
                    Append::Rules(e) => refused(
                        StatusCode::CONFLICT,
                        "rotation_not_ready",
                        format!("the rotation cannot end now: {e}"),
                    ),
                    Append::Store(e) => unavailable(e),
                })?;
                let pem = pitboss_audit::note::public_key_to_pem(new.verifier().key())
                    .map_err(|e| unavailable(e.to_string()))?;
                // The old key is retired in the log: from here on only the new one signs.
                self.signer = new.clone();
                self.next_signer = None;
                *self.public_key_pem.write().expect("pem lock") = pem.clone();
                if let Err(e) = swap_files(&self.key_path, &old) {
                    // The next start finishes it (`resolve`).
                    tracing::error!("signing key files not swapped after the rotation's end: {e}");
                }
                let _ = self.checkpoint_if_pending();
                Ok(Rotated {
                    stage,
                    old_key: old.verifier().to_vkey(),
                    new_key: new.verifier().to_vkey(),
                    seq,
                    public_key_pem: pem,
                })
            }
        }
    }

    /// Logs one entry in a batch of its own; returns its seq.
    fn append_alone(&mut self, entry: pitboss_audit::entry::NewEntry) -> Result<u64, Append> {
        // Nothing in flight: this entry builds on the durable log.
        if !self.settle() {
            return Err(Append::Store("an earlier batch was not written".into()));
        }
        let batch = self
            .appender
            .prepare(vec![entry])
            .map_err(|e| Append::Rules(e.to_string()))?;
        let mut tiles = self.tiles.clone();
        let tile_rows = tiles.append(batch.entries.iter().map(|e| e.leaf_hash));
        self.persist(&batch, &tile_rows, &Derived::default())
            .map_err(|e| {
                self.metrics
                    .storage_failures
                    .fetch_add(1, Ordering::Relaxed);
                Append::Store(e.to_string())
            })?;
        self.appender
            .commit(&batch)
            .expect("a batch prepared on this appender commits");
        self.tiles = tiles;
        *self.key_validity.write().expect("keys lock") = self.appender.keys().validity();
        self.metrics
            .log_entries
            .store(self.appender.size(), Ordering::Relaxed);
        Ok(batch.entries[0].seq)
    }
}

/// Why an entry was not logged: the log's rules refused it, or the store failed.
enum Append {
    Rules(String),
    Store(String),
}
