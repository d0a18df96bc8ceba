//! The JSONL export: a header line, then each entry's canonical bytes on its own line, with each
//! checkpoint on its own line right after the last entry it covers.

use crate::keys::KeyValidity;
use crate::note::SignedCheckpoint;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::io::{self, Write};

/// Value of the header's `format` member.
pub const EXPORT_FORMAT: &str = "pitboss-audit-export/1";
/// How an entry line starts (its first member is always `ids`).
pub const ENTRY_LINE_PREFIX: &[u8] = b"{\"ids\":";
/// How a checkpoint line starts.
pub const CHECKPOINT_LINE_PREFIX: &[u8] = b"{\"checkpoint\":";

/// The first line of an export. Informational: the verifier trusts only its own keys and what
/// the log proves, and fails if these claims disagree with that.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportHeader {
    pub format: String,
    pub origin: String,
    pub keys: Vec<KeyValidity>,
}

impl ExportHeader {
    pub fn new(origin: &str, keys: Vec<KeyValidity>) -> ExportHeader {
        ExportHeader {
            format: EXPORT_FORMAT.to_owned(),
            origin: origin.to_owned(),
            keys,
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CheckpointLine<'a> {
    #[serde(borrow)]
    pub checkpoint: Cow<'a, str>,
}

/// Writes an export. Entries must be written in seq order, each checkpoint right after the
/// entry `size − 1` (or before any entry when its size is 0); the export should end with a
/// checkpoint of the full size, or the verifier reports the uncovered tail as truncated.
pub struct ExportWriter<W: Write> {
    w: W,
    entries: u64,
}

impl<W: Write> ExportWriter<W> {
    pub fn new(mut w: W, header: &ExportHeader) -> io::Result<ExportWriter<W>> {
        let bytes = serde_json_canonicalizer::to_vec(header).map_err(io::Error::other)?;
        w.write_all(&bytes)?;
        w.write_all(b"\n")?;
        Ok(ExportWriter { w, entries: 0 })
    }

    /// Writes one entry's stored canonical bytes, verbatim.
    pub fn entry(&mut self, canonical: &[u8]) -> io::Result<()> {
        if !canonical.starts_with(ENTRY_LINE_PREFIX) || canonical.contains(&b'\n') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "not the canonical bytes of an entry",
            ));
        }
        self.w.write_all(canonical)?;
        self.w.write_all(b"\n")?;
        self.entries += 1;
        Ok(())
    }

    /// Writes a checkpoint line.
    pub fn checkpoint(&mut self, cp: &SignedCheckpoint) -> io::Result<()> {
        if cp.checkpoint.size != self.entries {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "checkpoint of size {} written after {} entries",
                    cp.checkpoint.size, self.entries
                ),
            ));
        }
        let line = CheckpointLine {
            checkpoint: Cow::Owned(cp.to_text()),
        };
        let bytes = serde_json_canonicalizer::to_vec(&line).map_err(io::Error::other)?;
        self.w.write_all(&bytes)?;
        self.w.write_all(b"\n")
    }

    /// Entries written so far.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    pub fn finish(mut self) -> io::Result<W> {
        self.w.flush()?;
        Ok(self.w)
    }
}

/// Writes a whole export from entries in seq order and checkpoints in size order, placing each
/// checkpoint after the entries it covers.
pub fn write_export<'a, W: Write>(
    w: W,
    header: &ExportHeader,
    entries: impl IntoIterator<Item = &'a [u8]>,
    checkpoints: &[SignedCheckpoint],
) -> io::Result<W> {
    let mut ew = ExportWriter::new(w, header)?;
    let mut next_cp = 0;
    let mut entries = entries.into_iter();
    loop {
        while let Some(cp) = checkpoints.get(next_cp) {
            if cp.checkpoint.size > ew.entries() {
                break;
            }
            // A checkpoint smaller than the entries written is out of order: `checkpoint` refuses it.
            ew.checkpoint(cp)?;
            next_cp += 1;
        }
        match entries.next() {
            Some(e) => ew.entry(e)?,
            None => break,
        }
    }
    if next_cp < checkpoints.len() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a checkpoint is larger than the number of entries",
        ));
    }
    ew.finish()
}
