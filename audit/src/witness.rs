//! The wire format of C2SP `tlog-witness`: the body of `POST <prefix>/add-checkpoint`, the
//! `409 Conflict` size body, and the cosignature lines of a `200` answer. Pure text handling;
//! the HTTP server and client live with the service.
//!
//! ```text
//! old <size the witness last cosigned, decimal>\n
//! <base64 of one consistency proof hash>\n        (0 to 63 lines, RFC 6962 PROOF(old, new))
//! \n
//! <the checkpoint, a signed note>
//! ```

use crate::hash::Hash;
use crate::note::{NoteError, NoteSignature, SignedCheckpoint, MAX_NOTE_BYTES};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;

/// Most consistency proof lines a request may carry (the spec's limit: a proof between two
/// trees of at most 2^63 leaves is shorter).
pub const MAX_PROOF_LINES: usize = 63;
/// Largest `add-checkpoint` body: the old size line, 63 proof lines, the blank line and the
/// largest note accepted.
pub const MAX_BODY_BYTES: usize = 32 + MAX_PROOF_LINES * 45 + 1 + MAX_NOTE_BYTES;
/// Content type of the `409 Conflict` answer that carries the witness's size.
pub const SIZE_CONTENT_TYPE: &str = "text/x.tlog.size";

/// A parsed `add-checkpoint` request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddCheckpoint {
    /// The size of the checkpoint the client believes the witness last cosigned.
    pub old_size: u64,
    /// Consistency proof from `old_size` to the checkpoint's size.
    pub proof: Vec<Hash>,
    pub checkpoint: SignedCheckpoint,
}

/// Why an `add-checkpoint` body (or a witness's answer) cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("body is larger than {MAX_BODY_BYTES} bytes")]
    TooLarge,
    #[error("body is not UTF-8")]
    NotUtf8,
    #[error("the first line must be `old <size>` with a decimal size without leading zeros")]
    OldLine,
    #[error("consistency proof line {0} is not the canonical base64 of 32 bytes")]
    ProofLine(usize),
    #[error("more than {MAX_PROOF_LINES} consistency proof lines")]
    TooManyProofLines,
    #[error("no empty line between the proof and the checkpoint")]
    NoBlankLine,
    #[error("checkpoint: {0}")]
    Checkpoint(NoteError),
    #[error("size body must be a decimal size and a newline")]
    SizeBody,
    #[error("cosignature line: {0}")]
    Cosignature(NoteError),
}

/// A tree size in decimal: digits only, no leading zero unless the size is 0.
pub fn parse_decimal(s: &str) -> Option<u64> {
    let canonical =
        !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    if canonical {
        s.parse().ok()
    } else {
        None
    }
}

/// Reads an `add-checkpoint` body.
pub fn parse_add_checkpoint(body: &[u8]) -> Result<AddCheckpoint, WireError> {
    if body.len() > MAX_BODY_BYTES {
        return Err(WireError::TooLarge);
    }
    let text = std::str::from_utf8(body).map_err(|_| WireError::NotUtf8)?;
    let (first, mut rest) = text.split_once('\n').ok_or(WireError::OldLine)?;
    let old_size = first
        .strip_prefix("old ")
        .and_then(parse_decimal)
        .ok_or(WireError::OldLine)?;
    let mut proof = Vec::new();
    loop {
        let (line, after) = rest.split_once('\n').ok_or(WireError::NoBlankLine)?;
        rest = after;
        if line.is_empty() {
            break;
        }
        if proof.len() == MAX_PROOF_LINES {
            return Err(WireError::TooManyProofLines);
        }
        let bytes = B64
            .decode(line)
            .map_err(|_| WireError::ProofLine(proof.len() + 1))?;
        let h: [u8; 32] = bytes
            .try_into()
            .map_err(|_| WireError::ProofLine(proof.len() + 1))?;
        proof.push(Hash(h));
    }
    let checkpoint = SignedCheckpoint::parse(rest).map_err(WireError::Checkpoint)?;
    Ok(AddCheckpoint {
        old_size,
        proof,
        checkpoint,
    })
}

/// Writes an `add-checkpoint` body.
pub fn format_add_checkpoint(
    old_size: u64,
    proof: &[Hash],
    checkpoint: &SignedCheckpoint,
) -> String {
    let mut s = format!("old {old_size}\n");
    for h in proof {
        s.push_str(&B64.encode(h.0));
        s.push('\n');
    }
    s.push('\n');
    s.push_str(&checkpoint.to_text());
    s
}

/// The `409 Conflict` body: the witness's latest cosigned size and a newline.
pub fn format_size_body(size: u64) -> String {
    format!("{size}\n")
}

/// Reads a `409 Conflict` size body.
pub fn parse_size_body(body: &[u8]) -> Result<u64, WireError> {
    std::str::from_utf8(body)
        .ok()
        .and_then(|s| s.strip_suffix('\n'))
        .and_then(parse_decimal)
        .ok_or(WireError::SizeBody)
}

/// Reads the signature lines of a `200` answer: one or more lines, each ending in a newline.
pub fn parse_cosignature_lines(body: &[u8]) -> Result<Vec<NoteSignature>, WireError> {
    if body.len() > MAX_NOTE_BYTES {
        return Err(WireError::TooLarge);
    }
    let text = std::str::from_utf8(body).map_err(|_| WireError::NotUtf8)?;
    let lines = text
        .strip_suffix('\n')
        .ok_or(WireError::Cosignature(NoteError::Malformed(
            "signature lines must end with a newline",
        )))?;
    lines
        .split('\n')
        .take(crate::note::MAX_SIGNATURES + 1)
        .enumerate()
        .map(|(i, l)| {
            if i == crate::note::MAX_SIGNATURES {
                return Err(WireError::Cosignature(NoteError::Malformed(
                    "too many signatures",
                )));
            }
            NoteSignature::parse_line(l).map_err(WireError::Cosignature)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::note::{Checkpoint, NoteSigner};
    use ed25519_dalek::SigningKey;

    fn signed(size: u64) -> SignedCheckpoint {
        let s = NoteSigner::new("example.com/log", SigningKey::from_bytes(&[4; 32])).expect("name");
        SignedCheckpoint::sign(
            Checkpoint::new("example.com/log", size, Hash([size as u8; 32])),
            &[s],
        )
    }

    #[test]
    fn body_round_trips_with_and_without_proof_lines() {
        for proof in [vec![], vec![Hash([1; 32]), Hash([2; 32])]] {
            let cp = signed(20);
            let body = format_add_checkpoint(7, &proof, &cp);
            let back = parse_add_checkpoint(body.as_bytes()).expect("own body parses");
            assert_eq!(back.old_size, 7);
            assert_eq!(back.proof, proof);
            assert_eq!(back.checkpoint, cp);
        }
    }

    #[test]
    fn body_refuses_leading_zeros_bad_proof_lines_and_too_many_lines() {
        let cp = signed(3).to_text();
        let good_line = B64.encode([9u8; 32]);
        for bad in [
            format!("old 07\n\n{cp}"),
            format!("old\n\n{cp}"),
            format!("old -1\n\n{cp}"),
            format!("new 1\n\n{cp}"),
            format!("old 1\nAAAA\n\n{cp}"),
            format!("old 1\n{good_line} \n\n{cp}"),
            format!("old 1\n{good_line}\n{cp}"),
            format!("old 1\n{}\n{cp}", format!("{good_line}\n").repeat(64)),
            "old 1\n".to_owned(),
        ] {
            assert!(parse_add_checkpoint(bad.as_bytes()).is_err(), "{bad:?}");
        }
        let ok = format!("old 1\n{}\n{cp}", format!("{good_line}\n").repeat(63));
        assert_eq!(
            parse_add_checkpoint(ok.as_bytes())
                .expect("63 lines")
                .proof
                .len(),
            63
        );
    }

    #[test]
    fn size_body_is_decimal_and_newline() {
        assert_eq!(parse_size_body(b"20852014\n"), Ok(20852014));
        assert_eq!(parse_size_body(b"0\n"), Ok(0));
        for bad in [&b"20"[..], b"020\n", b"\n", b"1 \n", b"x\n"] {
            assert!(parse_size_body(bad).is_err());
        }
        assert_eq!(format_size_body(5), "5\n");
    }
}
