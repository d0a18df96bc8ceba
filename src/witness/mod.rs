//! `pitboss witness`: a C2SP tlog-witness a regulator runs on its own machine, with its own
//! Ed25519 key and its own store, for the logs it is configured with. It cosigns a checkpoint
//! only when a consistency proof shows it extends the last one it cosigned for that log, so a
//! log rewritten and re-signed with the operator's own key, or cut back, cannot get its
//! cosignature; the conflicting checkpoints are kept as evidence.
//!
//! - [`core`]: what one `add-checkpoint` decides, inside the store's transaction;
//! - [`store`]: the witness's SQLite file;
//! - [`server`]: the HTTP routes;
//! - [`client`]: what a log uses to obtain cosignatures.

pub mod client;
pub mod core;
pub mod server;
pub mod store;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use actix_web::{web, App, HttpServer};
use pitboss_audit::cosign::Cosigner;

use self::core::{Logs, Witness};
use self::store::Store;

/// How a witness is run.
#[derive(Debug, Clone)]
pub struct WitnessConfig {
    pub bind: String,
    pub data_dir: PathBuf,
    /// Its name (part of its key id). Fixed at first start; default
    /// `localhost/pitboss-witness/<key fingerprint>`.
    pub name: Option<String>,
    /// Its Ed25519 key, PKCS#8 PEM (default `DATA_DIR/witness-key.pem`, created 0600 if absent).
    pub key: Option<PathBuf>,
    /// Log verifier key strings (`<origin>+<id>+<base64(0x01 ‖ key)>`), one per key.
    pub log_keys: Vec<String>,
    /// A file of log verifier key strings, one a line (`#` starts a comment).
    pub logs_file: Option<PathBuf>,
}

impl WitnessConfig {
    fn key_path(&self) -> PathBuf {
        self.key
            .clone()
            .unwrap_or_else(|| self.data_dir.join("witness-key.pem"))
    }

    fn logs(&self) -> Result<Logs, String> {
        let mut vkeys: Vec<String> = self.log_keys.clone();
        if let Some(f) = &self.logs_file {
            let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
            vkeys.extend(
                text.lines()
                    .map(|l| l.split('#').next().unwrap_or_default().trim())
                    .filter(|l| !l.is_empty())
                    .map(str::to_owned),
            );
        }
        let logs = Logs::from_vkeys(vkeys.iter().map(String::as_str))?;
        if logs.is_empty() {
            return Err(
                "a witness needs the logs it witnesses: --log-key VKEY or --logs FILE".into(),
            );
        }
        Ok(logs)
    }
}

/// Opens the store and the key, and fixes the name: the witness as the server runs it.
pub fn open(config: &WitnessConfig, logs: Logs) -> Result<Witness, String> {
    std::fs::create_dir_all(&config.data_dir)
        .map_err(|e| format!("{}: {e}", config.data_dir.display()))?;
    let key = crate::keyfile::load_or_create(&config.key_path()).map_err(|e| e.to_string())?;
    let store = Store::open(&config.data_dir.join("witness.sqlite")).map_err(|e| e.to_string())?;
    let name = match (store.name().map_err(|e| e.to_string())?, &config.name) {
        (Some(stored), Some(given)) if &stored != given => {
            return Err(format!(
                "this witness is named {stored:?}, not {given:?}: the name is part of its key id, which every log and auditor has configured"
            ))
        }
        (Some(stored), _) => stored,
        (None, given) => {
            let name = given.clone().unwrap_or_else(|| {
                format!(
                    "localhost/pitboss-witness/{}",
                    crate::keyfile::fingerprint(&key)
                )
            });
            if !pitboss_audit::note::name_ok(&name) {
                return Err(format!("witness name {name:?}: 1–256 bytes, no whitespace, control characters or '+'"));
            }
            store.set_name(&name).map_err(|e| e.to_string())?;
            name
        }
    };
    let cosigner = Cosigner::new(&name, key).map_err(|e| e.to_string())?;
    Ok(Witness {
        cosigner,
        logs,
        store,
    })
}

/// Runs the witness until stopped; prints its verifier key string, then `listening on …`.
pub async fn serve(config: WitnessConfig) -> Result<(), String> {
    let logs = config.logs()?;
    let witness = Arc::new(open(&config, logs)?);
    println!("witness key: {}", witness.cosigner.verifier().to_vkey());
    for o in witness.logs.origins() {
        println!("witnessing: {o}");
    }
    let state = web::Data::new(server::WitnessState { witness });
    let server = HttpServer::new(move || {
        App::new()
            .wrap(actix_web::middleware::ErrorHandlers::new().default_handler(server::problemize))
            .app_data(state.clone())
            .app_data(web::PayloadConfig::new(pitboss_audit::witness::MAX_BODY_BYTES))
            .app_data(web::QueryConfig::default().error_handler(|err, _| {
                crate::api::problem::Problem::bad_request("malformed_query", err.to_string())
                    .into()
            }))
            .configure(server::configure)
            .default_service(web::to(|| async {
                Err::<actix_web::HttpResponse, _>(crate::api::problem::Problem::not_found(
                    "no_such_route",
                    "a witness serves POST /add-checkpoint, GET /latest-checkpoint, GET /evidence and GET /healthz",
                ))
            }))
    })
    // A witness serves few logs; two workers keep a slow disk from blocking every request.
    .workers(2)
    .client_request_timeout(std::time::Duration::from_secs(10))
    .bind(&config.bind)
    .map_err(|e| format!("bind {}: {e}", config.bind))?;
    for a in server.addrs() {
        println!("listening on http://{a}");
    }
    server.run().await.map_err(|e| e.to_string())
}

/// The witness's verifier key string, creating its key and fixing its name if needed.
pub fn vkey(data_dir: &Path, name: Option<&str>, key: Option<&Path>) -> Result<String, String> {
    let config = WitnessConfig {
        bind: String::new(),
        data_dir: data_dir.to_path_buf(),
        name: name.map(str::to_owned),
        key: key.map(Path::to_path_buf),
        log_keys: Vec::new(),
        logs_file: None,
    };
    Ok(open(&config, Logs::default())?
        .cosigner
        .verifier()
        .to_vkey())
}
