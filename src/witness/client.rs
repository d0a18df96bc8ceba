//! What a log uses to have its checkpoints cosigned by a witness (C2SP tlog-witness): it
//! submits a checkpoint with a consistency proof from the size the witness last cosigned,
//! follows a `409 Conflict` to the witness's size once or twice, and checks the cosignature it
//! gets back against the witness's key before returning it.
//!
//! Where the proofs come from is the caller's: [`ConsistencyProofs`] is implemented for any
//! `Fn(old, new) -> Result<Vec<Hash>, String>`, so the service can answer from its stored tree
//! and a test from a list of leaf hashes (`pitboss_audit::merkle::consistency_proof`).
//!
//! Blocking (ureq), every call bounded by the client's timeout: run it off the writer and off
//! the HTTP workers, so that a witness that is down delays cosigning and nothing else.

use std::time::Duration;

use pitboss_audit::cosign::CosignerVerifier;
use pitboss_audit::hash::Hash;
use pitboss_audit::note::{NoteSignature, SignedCheckpoint};
use pitboss_audit::witness::{
    format_add_checkpoint, parse_cosignature_lines, parse_size_body, SIZE_CONTENT_TYPE,
};

/// How many times one submission follows a `409` to the witness's size before giving up.
pub const MAX_ATTEMPTS: usize = 3;
/// Largest answer read from a witness.
pub const MAX_ANSWER_BYTES: u64 = 64 * 1024;

/// Consistency proofs between two sizes of the log's tree (RFC 6962 PROOF(old, D[new])).
pub trait ConsistencyProofs {
    fn consistency_proof(&self, old: u64, new: u64) -> Result<Vec<Hash>, String>;
}

impl<F: Fn(u64, u64) -> Result<Vec<Hash>, String>> ConsistencyProofs for F {
    fn consistency_proof(&self, old: u64, new: u64) -> Result<Vec<Hash>, String> {
        self(old, new)
    }
}

/// A cosignature the client checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cosignature {
    /// The signature line to append to the checkpoint note.
    pub line: NoteSignature,
    /// When the witness cosigned, seconds since the epoch.
    pub timestamp: u64,
}

/// Why no cosignature was obtained.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    #[error("witness {url} cannot be reached: {detail}")]
    Unreachable { url: String, detail: String },
    #[error("witness {url} refused the checkpoint ({status}): {detail}")]
    Refused {
        url: String,
        status: u16,
        detail: String,
    },
    #[error("witness {url} has cosigned size {witness_size}, larger than this checkpoint's {size}: submit a newer checkpoint")]
    Behind {
        url: String,
        witness_size: u64,
        size: u64,
    },
    #[error("no consistency proof from size {old} to {new}: {detail}")]
    Proof { old: u64, new: u64, detail: String },
    #[error("witness {url} answered without a valid cosignature by {witness}: {detail}")]
    BadAnswer {
        url: String,
        witness: String,
        detail: String,
    },
    #[error("witness {url} moved its size {MAX_ATTEMPTS} times during one submission")]
    TooManyConflicts { url: String },
}

/// One witness, as a log talks to it.
pub struct WitnessClient {
    url: String,
    witness: CosignerVerifier,
    agent: ureq::Agent,
    known_size: Option<u64>,
}

impl WitnessClient {
    /// `submission_prefix` is the witness's URL prefix (`http://witness.example:9000`); `timeout`
    /// bounds every request.
    pub fn new(submission_prefix: &str, witness: CosignerVerifier, timeout: Duration) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(timeout))
            .build()
            .new_agent();
        WitnessClient {
            url: format!("{}/add-checkpoint", submission_prefix.trim_end_matches('/')),
            witness,
            agent,
            known_size: None,
        }
    }

    /// The size the witness last cosigned, as far as this client knows.
    pub fn known_size(&self) -> Option<u64> {
        self.known_size
    }

    /// Remembers the size the witness last cosigned (the service stores it across restarts).
    pub fn set_known_size(&mut self, size: Option<u64>) {
        self.known_size = size;
    }

    pub fn witness(&self) -> &CosignerVerifier {
        &self.witness
    }

    /// Submits `cp`; on success the witness's cosignature line, checked against its key.
    pub fn add_checkpoint(
        &mut self,
        cp: &SignedCheckpoint,
        proofs: &dyn ConsistencyProofs,
    ) -> Result<Cosignature, ClientError> {
        let size = cp.checkpoint.size;
        for _ in 0..MAX_ATTEMPTS {
            let old = self.known_size.unwrap_or(0);
            if old > size {
                return Err(ClientError::Behind {
                    url: self.url.clone(),
                    witness_size: old,
                    size,
                });
            }
            let proof = if old == 0 || old == size {
                Vec::new()
            } else {
                proofs
                    .consistency_proof(old, size)
                    .map_err(|detail| ClientError::Proof {
                        old,
                        new: size,
                        detail,
                    })?
            };
            let body = format_add_checkpoint(old, &proof, cp);
            let (status, ctype, answer) = self.post(body)?;
            match status {
                200 => {
                    let c = self.check_answer(cp, &answer)?;
                    self.known_size = Some(size);
                    return Ok(c);
                }
                409 if ctype.starts_with(SIZE_CONTENT_TYPE) => {
                    let witness_size =
                        parse_size_body(&answer).map_err(|e| ClientError::BadAnswer {
                            url: self.url.clone(),
                            witness: self.witness.name().to_owned(),
                            detail: e.to_string(),
                        })?;
                    self.known_size = Some(witness_size);
                }
                _ => {
                    return Err(ClientError::Refused {
                        url: self.url.clone(),
                        status,
                        detail: problem_detail(&answer),
                    })
                }
            }
        }
        Err(ClientError::TooManyConflicts {
            url: self.url.clone(),
        })
    }

    fn post(&self, body: String) -> Result<(u16, String, Vec<u8>), ClientError> {
        let unreachable = |e: ureq::Error| ClientError::Unreachable {
            url: self.url.clone(),
            detail: e.to_string(),
        };
        let mut resp = self
            .agent
            .post(&self.url)
            .header("Content-Type", "text/plain; charset=utf-8")
            .send(body.as_bytes())
            .map_err(unreachable)?;
        let status = resp.status().as_u16();
        let ctype = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let answer = resp
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER_BYTES)
            .read_to_vec()
            .map_err(unreachable)?;
        Ok((status, ctype, answer))
    }

    fn check_answer(
        &self,
        cp: &SignedCheckpoint,
        answer: &[u8],
    ) -> Result<Cosignature, ClientError> {
        let bad = |detail: String| ClientError::BadAnswer {
            url: self.url.clone(),
            witness: self.witness.name().to_owned(),
            detail,
        };
        let lines = parse_cosignature_lines(answer).map_err(|e| bad(e.to_string()))?;
        // Lines by other keys are ignored, as the spec says; the witness's own must verify.
        let mut found = None;
        for line in lines.into_iter().filter(|l| self.witness.is_named_by(l)) {
            let timestamp = self
                .witness
                .verify(&cp.checkpoint, &line)
                .map_err(|e| bad(e.to_string()))?;
            found.get_or_insert(Cosignature { line, timestamp });
        }
        found.ok_or_else(|| bad("no line by this witness's key".to_owned()))
    }
}

/// The `detail` of a problem document, else the answer as text.
fn problem_detail(answer: &[u8]) -> String {
    serde_json::from_slice::<serde_json::Value>(answer)
        .ok()
        .and_then(|v| {
            let code = v.get("code")?.as_str()?.to_owned();
            let detail = v.get("detail")?.as_str()?.to_owned();
            Some(format!("{code}: {detail}"))
        })
        .unwrap_or_else(|| String::from_utf8_lossy(answer).chars().take(500).collect())
}
