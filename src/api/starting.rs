//! While the service starts (migrations, the replay of the audit log, keys), its port is
//! already bound and answers: `/healthz` `200` (the process is alive: do not restart it),
//! `/readyz` `503 not_ready` (do not send it traffic yet), anything else `503 unavailable`
//! with `Retry-After`. Once the service is up, the same listening socket is handed to the
//! HTTP server, so no connection is refused in between.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::dto::Health;
use super::problem::Problem;

/// The thread answering during start-up; [`Starting::stop`] ends it.
pub struct Starting {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Starting {
    /// Answers on `listener` (a clone of the one the HTTP server will take) until stopped.
    pub fn start(listener: &TcpListener, plans: usize) -> std::io::Result<Starting> {
        let listener = listener.try_clone()?;
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("pitboss-starting".into())
            .spawn(move || {
                while !flag.load(Ordering::SeqCst) {
                    match listener.accept() {
                        Ok((stream, _)) => answer(stream, plans),
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(10))
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(10)),
                    }
                }
            })?;
        Ok(Starting {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops answering; connections not yet accepted wait for the HTTP server.
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Starting {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// One request, answered and closed.
fn answer(mut stream: TcpStream, plans: usize) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    // The request line is all that is read: `GET /readyz HTTP/1.1`.
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let line = String::from_utf8_lossy(&head);
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let (status, content_type, body) = match (method, path) {
        ("GET", "/healthz") => (
            "200 OK",
            "application/json",
            serde_json::to_string(&Health {
                status: "starting".to_string(),
                plans,
                log_entries: 0,
            }),
        ),
        ("GET", "/readyz") => (
            "503 Service Unavailable",
            "application/problem+json",
            serde_json::to_string(&not_ready().document()),
        ),
        _ => (
            "503 Service Unavailable",
            "application/problem+json",
            serde_json::to_string(&super::problem::unavailable(
                "the service is starting (replaying its audit log); nothing was recorded, retry",
            )),
        ),
    };
    let body = body.unwrap_or_default();
    let retry = if status.starts_with("503") {
        "Retry-After: 1\r\n"
    } else {
        ""
    };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{retry}Connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes());
    let _ = stream.flush();
}

fn not_ready() -> Problem {
    super::problem::not_ready(
        "the service is starting: it replays its audit log before it takes commands",
    )
}
