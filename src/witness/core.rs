//! What a witness decides about one `add-checkpoint` request (C2SP tlog-witness), with the
//! store's transaction around the check and the write.

use std::collections::BTreeMap;

use pitboss_audit::cosign::Cosigner;
use pitboss_audit::hash::{sha256, Hash};
use pitboss_audit::merkle::verify_consistency;
use pitboss_audit::note::{NoteSignature, NoteVerifier, SignedCheckpoint};
use pitboss_audit::witness::parse_add_checkpoint;

use super::store::{Cosigned, NewEvidence, Store, StoreError};

/// The logs a witness witnesses: each origin with the keys it trusts for it (several during a
/// key rotation).
#[derive(Debug, Clone, Default)]
pub struct Logs(BTreeMap<String, Vec<NoteVerifier>>);

impl Logs {
    /// From log verifier key strings (`<origin>+<id>+<base64(0x01 ‖ key)>`): the key's name is
    /// the log's origin, as pitboss names its keys.
    pub fn from_vkeys<'a>(vkeys: impl IntoIterator<Item = &'a str>) -> Result<Logs, String> {
        let mut map: BTreeMap<String, Vec<NoteVerifier>> = BTreeMap::new();
        for s in vkeys {
            let v = NoteVerifier::from_vkey(s.trim()).map_err(|e| format!("log key {s:?}: {e}"))?;
            let keys = map.entry(v.name().to_owned()).or_default();
            if !keys.contains(&v) {
                keys.push(v);
            }
        }
        Ok(Logs(map))
    }

    pub fn origins(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The answer to an `add-checkpoint`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// 200: the cosignature line(s).
    Cosigned(Vec<NoteSignature>),
    /// 409 with the size of the last cosigned checkpoint (`text/x.tlog.size`).
    SizeMismatch(u64),
    /// Another refusal: the status, a stable code and why.
    Refused {
        status: u16,
        code: &'static str,
        detail: String,
    },
}

fn refused(status: u16, code: &'static str, detail: impl Into<String>) -> Outcome {
    Outcome::Refused {
        status,
        code,
        detail: detail.into(),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum WitnessError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("witness store: {0}")]
    Query(#[from] diesel::result::Error),
}

/// A witness: its key, the logs it witnesses and its store.
pub struct Witness {
    pub cosigner: Cosigner,
    pub logs: Logs,
    pub store: Store,
}

impl Witness {
    /// Handles one request body. `now` is the time to cosign at (seconds since the epoch) and
    /// `now_text` the same instant for the records.
    pub fn add_checkpoint(
        &self,
        body: &[u8],
        now: u64,
        now_text: &str,
    ) -> Result<Outcome, WitnessError> {
        let req = match parse_add_checkpoint(body) {
            Ok(r) => r,
            Err(e) => return Ok(refused(400, "malformed", e.to_string())),
        };
        let cp = &req.checkpoint;
        let origin = cp.checkpoint.origin.as_str();
        let Some(keys) = self.logs.0.get(origin) else {
            return Ok(refused(
                404,
                "unknown_log",
                format!("this witness does not witness {origin:?}"),
            ));
        };
        if let Err(why) = signed_by_log(cp, keys) {
            return Ok(refused(403, "bad_log_signature", why));
        }
        if i64::try_from(cp.checkpoint.size).is_err() {
            return Ok(refused(400, "malformed", "tree size above 2^63 − 1"));
        }
        self.store.immediate(|tx| {
            let latest = tx.latest(origin)?;
            let (last_size, last_root) = latest
                .as_ref()
                .map_or((0, sha256(b"")), |l| (l.size, Hash(l.root)));
            let size = cp.checkpoint.size;
            let evidence = |kind: &'static str, detail: String, witnessed: Option<Cosigned>| {
                NewEvidence {
                    origin: origin.to_owned(),
                    kind,
                    detail,
                    witnessed,
                    submitted_old_size: req.old_size,
                    submitted_proof: req
                        .proof
                        .iter()
                        .map(|h| {
                            use base64::Engine;
                            base64::engine::general_purpose::STANDARD.encode(h.0)
                        })
                        .collect(),
                    submitted_note: cp.to_text(),
                }
            };
            // A signed checkpoint no larger than the last cosigned one: another root at a size
            // it cosigned is a fork; a smaller tree it never cosigned, a rollback. Both are
            // refused and kept as evidence. The very checkpoints it cosigned are no conflict.
            if latest.is_some() && size <= last_size {
                match tx.at_size(origin, size)? {
                    Some(s) if s.root == cp.checkpoint.root.0 => {
                        if size == last_size && req.old_size == last_size {
                            // The checkpoint it cosigned last, again: a fresh cosignature.
                            return Ok(Outcome::Cosigned(vec![self
                                .cosigner
                                .cosign(&cp.checkpoint, now)]));
                        }
                        if size < last_size {
                            return Ok(if req.old_size > size {
                                refused(400, "old_size_above_size", format!(
                                    "old size {} is above the checkpoint's size {size}",
                                    req.old_size
                                ))
                            } else {
                                Outcome::SizeMismatch(last_size)
                            });
                        }
                    }
                    Some(s) => {
                        let detail = format!(
                            "a checkpoint of size {size} with root {} was cosigned before; this one has root {}",
                            Hash(s.root),
                            cp.checkpoint.root
                        );
                        tx.insert_evidence(&evidence("fork", detail.clone(), Some(s)), now_text)?;
                        return Ok(refused(409, "conflicting_root", detail));
                    }
                    None if size < last_size => {
                        let detail = format!(
                            "a signed checkpoint of size {size}, smaller than {last_size}, the size last cosigned"
                        );
                        tx.insert_evidence(
                            &evidence("rollback", detail.clone(), latest),
                            now_text,
                        )?;
                        return Ok(if req.old_size > size {
                            refused(400, "old_size_above_size", detail)
                        } else {
                            Outcome::SizeMismatch(last_size)
                        });
                    }
                    None => {}
                }
            }
            if req.old_size > size {
                return Ok(refused(
                    400,
                    "old_size_above_size",
                    format!("old size {} is above the checkpoint's size {size}", req.old_size),
                ));
            }
            if req.old_size != last_size {
                return Ok(Outcome::SizeMismatch(last_size));
            }
            if let Err(e) =
                verify_consistency(last_size, size, &last_root, &cp.checkpoint.root, &req.proof)
            {
                let detail = format!(
                    "the consistency proof from size {last_size} to {size} does not verify: {e}"
                );
                tx.insert_evidence(&evidence("inconsistent", detail.clone(), latest), now_text)?;
                return Ok(refused(422, "inconsistent", detail));
            }
            let line = self.cosigner.cosign(&cp.checkpoint, now);
            let mut note = cp.clone();
            note.add_signatures([line.clone()]);
            tx.insert_cosigned(&Cosigned {
                origin: origin.to_owned(),
                size,
                root: cp.checkpoint.root.0,
                note: note.to_text(),
                cosigned_at: now_text.to_owned(),
            })?;
            Ok(Outcome::Cosigned(vec![line]))
        })
    }

    /// The last checkpoint cosigned for `origin`, with the witness's cosignature.
    pub fn latest(&self, origin: &str) -> Result<Option<Cosigned>, StoreError> {
        self.store.latest(origin)
    }
}

/// Whether a line by a key the witness trusts for the origin verifies, and none fails.
fn signed_by_log(cp: &SignedCheckpoint, keys: &[NoteVerifier]) -> Result<(), String> {
    let text = cp.checkpoint.text();
    let mut any = false;
    for sig in &cp.signatures {
        for k in keys.iter().filter(|k| k.is_named_by(sig)) {
            if !sig.verify(text.as_bytes(), k.key()) {
                return Err(format!(
                    "the signature by {}+{} does not verify",
                    sig.name,
                    pitboss_audit::keys::hex4(sig.key_id)
                ));
            }
            any = true;
        }
    }
    if any {
        Ok(())
    } else {
        Err("no signature by a key this witness trusts for the log".to_owned())
    }
}
