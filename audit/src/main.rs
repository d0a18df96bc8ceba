//! `pitboss-audit`: verify an export, make and check inclusion proofs, generate keys.

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use pitboss_audit::note::{public_key_from_pem, public_key_to_pem, NoteSigner};
use pitboss_audit::{
    check_proof, prove_from_export, verify_export, InclusionProofFile, SignedCheckpoint,
    SigningKey, VerifyOptions, VerifyingKey,
};
use std::fs::File;
use std::io::{self, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit code when the command line names a file that cannot be read or a key that cannot be
/// parsed. (Usage errors exit with 2, from clap. Verification failures have codes 3–23.)
const EXIT_BAD_INPUT: u8 = 5;
/// Exit code of `check-proof` when the proof does not check.
const EXIT_PROOF_INVALID: u8 = 30;
/// Exit code of `prove` when no proof can be made from the export.
const EXIT_PROVE_FAILED: u8 = 31;

#[derive(Parser)]
#[command(
    name = "pitboss-audit",
    version,
    about = "Verify pitboss audit-log exports and inclusion proofs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Verify an export: chain, Merkle roots, checkpoint signatures, key rotations.
    ///
    /// Exit codes: 0 verified; 3 cannot read; 4 malformed; 5 bad key/argument file;
    /// 10 broken link; 11 gap; 12 duplicate; 13 inserted; 14 out of order; 15 root mismatch;
    /// 16 bad signature; 17 unknown key; 18 key not valid; 19 truncated;
    /// 20 does not extend trusted checkpoint; 21 origin mismatch; 22 bad key rotation;
    /// 23 header mismatch.
    Verify {
        /// The JSONL export.
        export: PathBuf,
        /// Public key(s) you trust, SubjectPublicKeyInfo PEM. Give the log's initial key; later
        /// keys are learned from authorised rotations in the log.
        #[arg(long = "public-key", required = true)]
        public_key: Vec<PathBuf>,
        /// A signed checkpoint you already hold: the export must extend it.
        #[arg(long)]
        trusted_checkpoint: Option<PathBuf>,
        /// Also check that each entry is byte-for-byte RFC 8785 canonical (slower).
        #[arg(long)]
        canonical: bool,
    },
    /// Write a self-contained inclusion proof of one entry against the export's last checkpoint.
    Prove {
        export: PathBuf,
        /// Sequence number of the entry.
        #[arg(long)]
        seq: u64,
        /// Output file (default: standard output).
        #[arg(long, short)]
        out: Option<PathBuf>,
    },
    /// Check an inclusion proof file with the public key alone.
    CheckProof {
        proof: PathBuf,
        #[arg(long = "public-key", required = true)]
        public_key: Vec<PathBuf>,
    },
    /// Generate an Ed25519 key pair (PKCS#8 PEM private key, SPKI PEM public key).
    Keygen {
        #[arg(long)]
        private_key: PathBuf,
        #[arg(long)]
        public_key: PathBuf,
        /// Key name (usually the log origin); prints the verifier key string for it.
        #[arg(long)]
        name: Option<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("pitboss-audit: {msg}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

fn read_keys(paths: &[PathBuf]) -> Result<Vec<VerifyingKey>, String> {
    paths
        .iter()
        .map(|p| {
            let pem = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            public_key_from_pem(&pem).map_err(|e| format!("{}: {e}", p.display()))
        })
        .collect()
}

fn open(p: &Path) -> Result<File, String> {
    File::open(p).map_err(|e| format!("{}: {e}", p.display()))
}

fn run(cmd: Command) -> Result<ExitCode, String> {
    match cmd {
        Command::Verify {
            export,
            public_key,
            trusted_checkpoint,
            canonical,
        } => {
            let anchors = read_keys(&public_key)?;
            let trusted = match trusted_checkpoint {
                None => None,
                Some(p) => {
                    let text =
                        std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
                    Some(
                        SignedCheckpoint::parse(&text)
                            .map_err(|e| format!("{}: {e}", p.display()))?,
                    )
                }
            };
            let file = open(&export)?;
            let len = file.metadata().map(|m| m.len()).unwrap_or(0);
            // The bar goes to stderr and only to a terminal, so piped output stays clean.
            let bar = if io::stderr().is_terminal() {
                let b = ProgressBar::new(len);
                b.set_style(
                    ProgressStyle::with_template(
                        "{spinner} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
                );
                b
            } else {
                ProgressBar::hidden()
            };
            let opts = VerifyOptions {
                anchors,
                trusted,
                check_canonical: canonical,
            };
            let result = verify_export(BufReader::with_capacity(1 << 16, file), opts, |n| {
                bar.set_position(n)
            });
            bar.finish_and_clear();
            match result {
                Ok(s) => {
                    println!(
                        "OK {}: {} entries, {} checkpoints, root {}{}",
                        s.origin,
                        s.entries,
                        s.checkpoints,
                        s.root,
                        if s.extends_trusted {
                            ", extends the trusted checkpoint"
                        } else {
                            ""
                        }
                    );
                    Ok(ExitCode::SUCCESS)
                }
                Err(f) => {
                    println!("{f}");
                    Ok(ExitCode::from(f.reason.exit_code()))
                }
            }
        }
        Command::Prove { export, seq, out } => {
            let file = open(&export)?;
            match prove_from_export(BufReader::with_capacity(1 << 16, file), seq) {
                Ok(p) => {
                    let mut json = serde_json::to_string_pretty(&p).map_err(|e| e.to_string())?;
                    json.push('\n');
                    let kind = serde_json::from_str::<serde_json::Value>(&p.entry)
                        .ok()
                        .and_then(|e| e.get("kind").and_then(|k| k.as_str()).map(String::from))
                        .unwrap_or_else(|| "entry".into());
                    let what = format!(
                        "the inclusion proof of entry {} ({kind}) in the tree of size {} (with \
                         its signed checkpoint)",
                        p.leaf_index, p.tree_size
                    );
                    match out {
                        Some(path) => {
                            std::fs::write(&path, json)
                                .map_err(|e| format!("{}: {e}", path.display()))?;
                            println!(
                                "OK wrote {what} to {}; check it with `pitboss-audit check-proof {} \
                                 --public-key KEY.pem`",
                                path.display(),
                                path.display()
                            );
                        }
                        None => {
                            io::stdout()
                                .write_all(json.as_bytes())
                                .map_err(|e| e.to_string())?;
                            // Standard output is the proof itself: the note goes beside it.
                            eprintln!("OK wrote {what} to standard output");
                        }
                    }
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    println!("FAIL {e}");
                    Ok(ExitCode::from(EXIT_PROVE_FAILED))
                }
            }
        }
        Command::CheckProof { proof, public_key } => {
            let keys = read_keys(&public_key)?;
            let text =
                std::fs::read_to_string(&proof).map_err(|e| format!("{}: {e}", proof.display()))?;
            let p: InclusionProofFile = match serde_json::from_str(&text) {
                Ok(p) => p,
                Err(e) => {
                    println!("FAIL proof file is malformed: {e}");
                    return Ok(ExitCode::from(EXIT_PROOF_INVALID));
                }
            };
            match check_proof(&p, &keys) {
                Ok(c) => {
                    println!(
                        "OK {}: entry {} ({}) is in the tree of size {}, leaf hash {}",
                        c.origin, c.seq, c.kind, c.tree_size, c.leaf_hash
                    );
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    println!("FAIL {e}");
                    Ok(ExitCode::from(EXIT_PROOF_INVALID))
                }
            }
        }
        Command::Keygen {
            private_key,
            public_key,
            name,
        } => {
            let mut seed = [0u8; 32];
            getrandom::fill(&mut seed).map_err(|e| format!("no randomness: {e}"))?;
            let sk = SigningKey::from_bytes(&seed);
            let signer = NoteSigner::new(name.as_deref().unwrap_or("key"), sk.clone())
                .map_err(|e| e.to_string())?;
            let private_pem = signer.to_pkcs8_pem().map_err(|e| e.to_string())?;
            let public_pem = public_key_to_pem(&sk.verifying_key()).map_err(|e| e.to_string())?;
            write_new(&private_key, private_pem.as_bytes())?;
            std::fs::write(&public_key, public_pem)
                .map_err(|e| format!("{}: {e}", public_key.display()))?;
            if name.is_some() {
                println!("{}", signer.verifier().to_vkey());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Creates a file that must not exist yet, readable by its owner only where that is supported.
fn write_new(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    f.write_all(bytes)
        .map_err(|e| format!("{}: {e}", path.display()))
}
