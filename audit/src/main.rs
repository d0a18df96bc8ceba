//! `pitboss-audit`: verify an export, make and check inclusion proofs, generate keys.

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use pitboss_audit::note::{public_key_from_pem, public_key_to_pem, NoteSigner};
use pitboss_audit::{
    check_consistency, check_proof, prove_consistency_from_export, prove_from_export,
    verify_export, ConsistencyProofFile, CosignerVerifier, InclusionProofFile, SignedCheckpoint,
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
/// Exit code of `prove` and `prove-consistency` when no proof can be made from the export.
const EXIT_PROVE_FAILED: u8 = 31;
/// Exit code of `consistency` when the newer checkpoint is not shown to extend the older one.
const EXIT_NOT_CONSISTENT: u8 = 32;

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
    /// 23 header mismatch; 24 not witnessed.
    Verify {
        /// The JSONL export.
        export: PathBuf,
        /// Public key(s) you trust, SubjectPublicKeyInfo PEM. The log's initial key is enough
        /// (later keys are learned from authorised rotations in the log); passing every key
        /// the log has published works too.
        #[arg(long = "public-key", required = true)]
        public_key: Vec<PathBuf>,
        /// A signed checkpoint you already hold: the export must extend it.
        #[arg(long)]
        trusted_checkpoint: Option<PathBuf>,
        /// Also check that each entry is byte-for-byte RFC 8785 canonical (slower).
        #[arg(long)]
        canonical: bool,
        #[command(flatten)]
        witnesses: WitnessArgs,
    },
    /// Check that a newer checkpoint extends an older one: with a consistency proof file
    /// (`--new` and `--proof`), or by verifying an export against the older one (`--export`).
    ///
    /// Exit codes: 0 consistent; 5 bad key/argument file; 32 not shown consistent (with
    /// `--export`: the exit codes of `verify`).
    Consistency {
        /// The older signed checkpoint (note text), e.g. one you kept or a witness cosigned.
        #[arg(long)]
        old: PathBuf,
        /// The newer signed checkpoint.
        #[arg(long, requires = "proof", conflicts_with = "export")]
        new: Option<PathBuf>,
        /// A consistency proof file (`prove-consistency`, `GET /v1/audit/consistency`).
        #[arg(long, requires = "new")]
        proof: Option<PathBuf>,
        /// An export that must extend the older checkpoint (verified in full).
        #[arg(long, required_unless_present = "new")]
        export: Option<PathBuf>,
        #[arg(long = "public-key", required = true)]
        public_key: Vec<PathBuf>,
        #[command(flatten)]
        witnesses: WitnessArgs,
    },
    /// Write a consistency proof between two sizes of an export's tree (RFC 6962 PROOF).
    ProveConsistency {
        export: PathBuf,
        /// The older tree size.
        #[arg(long)]
        from: u64,
        /// The newer tree size (default: the export's last checkpoint).
        #[arg(long)]
        to: Option<u64>,
        /// Output file (default: standard output).
        #[arg(long, short)]
        out: Option<PathBuf>,
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
    /// Check an inclusion proof file with the public key alone; with witness keys, the proof's
    /// checkpoint must also carry the quorum of their cosignatures (a bet's receipt against a
    /// witnessed checkpoint).
    CheckProof {
        proof: PathBuf,
        #[arg(long = "public-key", required = true)]
        public_key: Vec<PathBuf>,
        #[command(flatten)]
        witnesses: WitnessArgs,
    },
    /// Print the verifier key string (`<name>+<key id>+<base64(0x01 ‖ key)>`) of a public key
    /// under a name: for a pitboss log, the name is its origin. This is what a witness is
    /// configured with (`pitboss witness serve --log-key`).
    Vkey {
        #[arg(long = "public-key")]
        public_key: PathBuf,
        /// The key's name: the log's origin (first line of its checkpoints).
        #[arg(long)]
        name: String,
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

/// Witness keys an auditor trusts and how many of them must have cosigned.
#[derive(clap::Args)]
struct WitnessArgs {
    /// A witness's verifier key string (`<name>+<8 hex>+<base64(0x04 ‖ key)>`, C2SP
    /// tlog-cosignature), or a file holding one. Repeat for several witnesses.
    #[arg(long = "witness-key")]
    witness_key: Vec<String>,
    /// How many distinct given witnesses must have cosigned the checkpoint relied on (default:
    /// all given).
    #[arg(long = "witness-quorum", requires = "witness_key")]
    witness_quorum: Option<usize>,
}

impl WitnessArgs {
    fn read(&self) -> Result<(Vec<CosignerVerifier>, usize), String> {
        let mut keys = Vec::with_capacity(self.witness_key.len());
        for arg in &self.witness_key {
            let k = match CosignerVerifier::from_vkey(arg.trim()) {
                Ok(k) => k,
                Err(direct) => {
                    let text = std::fs::read_to_string(arg)
                        .map_err(|e| format!("--witness-key {arg}: not a witness key ({direct}) nor a readable file ({e})"))?;
                    CosignerVerifier::from_vkey(text.trim())
                        .map_err(|e| format!("--witness-key {arg}: {e}"))?
                }
            };
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        let quorum = self.witness_quorum.unwrap_or(keys.len());
        if quorum > keys.len() {
            return Err(format!(
                "--witness-quorum {quorum} is more than the {} witness key(s) given",
                keys.len()
            ));
        }
        Ok((keys, quorum))
    }
}

fn read_checkpoint(p: &Path) -> Result<SignedCheckpoint, String> {
    let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
    SignedCheckpoint::parse(&text).map_err(|e| format!("{}: {e}", p.display()))
}

fn write_out(out: Option<&Path>, json: &str) -> Result<(), String> {
    match out {
        Some(path) => std::fs::write(path, json).map_err(|e| format!("{}: {e}", path.display())),
        None => io::stdout()
            .write_all(json.as_bytes())
            .map_err(|e| e.to_string()),
    }
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
            witnesses,
        } => {
            let anchors = read_keys(&public_key)?;
            let trusted = trusted_checkpoint
                .as_deref()
                .map(read_checkpoint)
                .transpose()?;
            let (witnesses, witness_quorum) = witnesses.read()?;
            verify(
                &export,
                anchors,
                trusted,
                canonical,
                witnesses,
                witness_quorum,
            )
        }
        Command::Consistency {
            old,
            new,
            proof,
            export,
            public_key,
            witnesses,
        } => {
            let keys = read_keys(&public_key)?;
            let old_cp = read_checkpoint(&old)?;
            let (witnesses, quorum) = witnesses.read()?;
            if let Some(export) = export {
                return verify(&export, keys, Some(old_cp), false, witnesses, quorum);
            }
            let (Some(new), Some(proof)) = (new, proof) else {
                return Err("give --new and --proof, or --export".to_owned());
            };
            let new_cp = read_checkpoint(&new)?;
            let text =
                std::fs::read_to_string(&proof).map_err(|e| format!("{}: {e}", proof.display()))?;
            let p: ConsistencyProofFile = match serde_json::from_str(&text) {
                Ok(p) => p,
                Err(e) => {
                    println!("FAIL proof file is malformed: {e}");
                    return Ok(ExitCode::from(EXIT_NOT_CONSISTENT));
                }
            };
            match check_consistency(&old_cp, &new_cp, &p, &keys, &witnesses, quorum) {
                Ok(c) => {
                    println!(
                        "OK {}: the tree of size {} extends the tree of size {}, root {}{}",
                        c.origin,
                        c.new_size,
                        c.old_size,
                        c.new_root,
                        witnessed_suffix(&c.witnessed_by)
                    );
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    println!("FAIL {e}");
                    Ok(ExitCode::from(EXIT_NOT_CONSISTENT))
                }
            }
        }
        Command::ProveConsistency {
            export,
            from,
            to,
            out,
        } => {
            let file = open(&export)?;
            match prove_consistency_from_export(BufReader::with_capacity(1 << 16, file), from, to) {
                Ok(p) => {
                    let mut json =
                        serde_json::to_string_pretty(&p.file).map_err(|e| e.to_string())?;
                    json.push('\n');
                    write_out(out.as_deref(), &json)?;
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    println!("FAIL {e}");
                    Ok(ExitCode::from(EXIT_PROVE_FAILED))
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
                    write_out(out.as_deref(), &json)?;
                    match out {
                        Some(path) => println!(
                            "OK wrote {what} to {}; check it with `pitboss-audit check-proof {} \
                             --public-key KEY.pem`",
                            path.display(),
                            path.display()
                        ),
                        // Standard output is the proof itself: the note goes beside it.
                        None => eprintln!("OK wrote {what} to standard output"),
                    }
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    println!("FAIL {e}");
                    Ok(ExitCode::from(EXIT_PROVE_FAILED))
                }
            }
        }
        Command::CheckProof {
            proof,
            public_key,
            witnesses,
        } => {
            let (witnesses, quorum) = witnesses.read()?;
            check_proof_cmd(&proof, &public_key, &witnesses, quorum)
        }
        Command::Vkey { public_key, name } => {
            let key = read_keys(std::slice::from_ref(&public_key))?;
            let v =
                pitboss_audit::note::NoteVerifier::new(&name, key[0]).map_err(|e| e.to_string())?;
            println!("{}", v.to_vkey());
            Ok(ExitCode::SUCCESS)
        }
        Command::Keygen {
            private_key,
            public_key,
            name,
        } => keygen(&private_key, &public_key, name.as_deref()),
    }
}

fn witnessed_suffix(by: &[pitboss_audit::WitnessedBy]) -> String {
    if by.is_empty() {
        String::new()
    } else {
        format!(
            ", cosigned by {}",
            by.iter()
                .map(|w| format!("{} at {}", w.witness, w.timestamp))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

fn verify(
    export: &Path,
    anchors: Vec<VerifyingKey>,
    trusted: Option<SignedCheckpoint>,
    canonical: bool,
    witnesses: Vec<CosignerVerifier>,
    witness_quorum: usize,
) -> Result<ExitCode, String> {
    let file = open(export)?;
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
        witnesses,
        witness_quorum,
    };
    let result = verify_export(BufReader::with_capacity(1 << 16, file), opts, |n| {
        bar.set_position(n)
    });
    bar.finish_and_clear();
    match result {
        Ok(s) => {
            println!(
                "OK {}: {} entries, {} checkpoints, root {}{}{}",
                s.origin,
                s.entries,
                s.checkpoints,
                s.root,
                if s.extends_trusted {
                    ", extends the trusted checkpoint"
                } else {
                    ""
                },
                witnessed_suffix(&s.witnessed_by)
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(f) => {
            println!("{f}");
            Ok(ExitCode::from(f.reason.exit_code()))
        }
    }
}

fn check_proof_cmd(
    proof: &Path,
    public_key: &[PathBuf],
    witnesses: &[CosignerVerifier],
    quorum: usize,
) -> Result<ExitCode, String> {
    let keys = read_keys(public_key)?;
    let text = std::fs::read_to_string(proof).map_err(|e| format!("{}: {e}", proof.display()))?;
    let p: InclusionProofFile = match serde_json::from_str(&text) {
        Ok(p) => p,
        Err(e) => {
            println!("FAIL proof file is malformed: {e}");
            return Ok(ExitCode::from(EXIT_PROOF_INVALID));
        }
    };
    match check_proof(&p, &keys) {
        Ok(c) => {
            let mut by = Vec::new();
            if !witnesses.is_empty() {
                // check_proof parsed this note already.
                let cp = SignedCheckpoint::parse(&p.checkpoint).map_err(|e| e.to_string())?;
                by = match pitboss_audit::cosigned_by(&cp, witnesses) {
                    Ok(by) => by,
                    Err(e) => {
                        println!("FAIL the checkpoint's cosignature does not verify: {e}");
                        return Ok(ExitCode::from(EXIT_PROOF_INVALID));
                    }
                };
                if by.len() < quorum {
                    println!(
                        "FAIL the checkpoint of size {} carries valid cosignatures by {} of the given witnesses, {quorum} required",
                        c.tree_size,
                        by.len()
                    );
                    return Ok(ExitCode::from(EXIT_PROOF_INVALID));
                }
            }
            println!(
                "OK {}: entry {} ({}) is in the tree of size {}, leaf hash {}{}",
                c.origin,
                c.seq,
                c.kind,
                c.tree_size,
                c.leaf_hash,
                witnessed_suffix(&by)
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            println!("FAIL {e}");
            Ok(ExitCode::from(EXIT_PROOF_INVALID))
        }
    }
}

fn keygen(private_key: &Path, public_key: &Path, name: Option<&str>) -> Result<ExitCode, String> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| format!("no randomness: {e}"))?;
    let sk = SigningKey::from_bytes(&seed);
    let signer = NoteSigner::new(name.unwrap_or("key"), sk.clone()).map_err(|e| e.to_string())?;
    let private_pem = signer.to_pkcs8_pem().map_err(|e| e.to_string())?;
    let public_pem = public_key_to_pem(&sk.verifying_key()).map_err(|e| e.to_string())?;
    write_new(private_key, private_pem.as_bytes())?;
    std::fs::write(public_key, public_pem).map_err(|e| format!("{}: {e}", public_key.display()))?;
    if name.is_some() {
        println!("{}", signer.verifier().to_vkey());
    }
    Ok(ExitCode::SUCCESS)
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
