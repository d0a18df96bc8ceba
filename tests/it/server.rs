//! Spawns the real `pitboss serve` binary on a free port and talks HTTP to it.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct TestServer {
    child: Child,
    pub base: String,
    _data: tempfile::TempDir,
}

impl TestServer {
    /// Starts the service on `plans_dir` with a fresh data directory.
    pub fn start(plans_dir: &Path) -> TestServer {
        let data = tempfile::tempdir().expect("temp dir");
        let mut child = Command::new(env!("CARGO_BIN_EXE_pitboss"))
            .arg("--plans")
            .arg(plans_dir)
            .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
            .arg(data.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn pitboss serve");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let base = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(addr) = line.strip_prefix("listening on ") {
                        break addr.trim().to_string();
                    }
                }
                _ => {
                    let _ = child.kill();
                    panic!("pitboss serve exited before listening");
                }
            }
        };
        // Keep draining stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        TestServer {
            child,
            base,
            _data: data,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// GET returning (status, content type, JSON body).
    pub fn get(&self, path: &str) -> (u16, String, serde_json::Value) {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(10)))
            .build()
            .new_agent();
        let mut resp = agent.get(&self.url(path)).call().expect("HTTP request");
        let status = resp.status().as_u16();
        let ctype = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let body: serde_json::Value = resp
            .body_mut()
            .read_json()
            .unwrap_or(serde_json::Value::Null);
        (status, ctype, body)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
