//! README.md as a new user reads it: its quick start runs as written on a clone, and every
//! JSON body it shows is one the API's schemas accept.
//!
//! The quick start's shell blocks run in order in one `bash`, as typed into one terminal, from
//! a directory laid out like a clone's root (`game_plans/` there). Two substitutions make it a
//! test rather than a second service on the developer's machine: the built binary for
//! `cargo run --release --`, and a free port for 8080. Nothing else of the text is touched.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn readme() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    std::fs::read_to_string(&path).expect("README.md")
}

/// The text of the section headed `heading`, up to the next heading of its level.
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("README.md has no section {heading}"));
    let body = &text[start + heading.len() + 2..];
    let end = body.find("\n## ").unwrap_or(body.len());
    &body[..end]
}

/// The fenced blocks of `lang` in `text`, in order.
fn blocks(text: &str, lang: &str) -> Vec<String> {
    let fence = format!("```{lang}\n");
    text.split(&fence)
        .skip(1)
        .map(|rest| rest.split("\n```").next().unwrap_or(rest).to_string())
        .collect()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

#[test]
fn the_quick_start_runs_as_written() {
    let text = readme();
    let quick = section(&text, "## Quick start");
    let shell = blocks(quick, "sh");
    assert!(
        shell.len() >= 4,
        "the quick start's shell blocks: {shell:?}"
    );
    let script = shell.join("\n");
    for needed in [
        "cargo run --release -- serve",
        "localhost:8080",
        "POST localhost:8080/v1/admin/keys",
        r#"'{"role": "operator", "operator": "op1"}'"#,
        "kill %1",
    ] {
        assert!(
            script.contains(needed),
            "the quick start no longer has {needed:?}"
        );
    }
    let port = free_port();
    let bin = env!("CARGO_BIN_EXE_pitboss");
    let script = script
        .replace(
            "cargo run --release -- serve",
            &format!("'{bin}' serve --bind 127.0.0.1:{port}"),
        )
        .replace("localhost:8080", &format!("localhost:{port}"));

    // A clone's root: the plans where the README's commands look for them.
    let root = tempfile::tempdir().expect("temp dir");
    let plans = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("game_plans");
    std::os::unix::fs::symlink(&plans, root.path().join("game_plans")).expect("symlink");

    let mut child = {
        use std::os::unix::process::CommandExt;
        Command::new("bash")
            .args(["-e", "-c", &script])
            .current_dir(root.path())
            .env_remove("PITBOSS_PLANS")
            .env_remove("PITBOSS_DATA_DIR")
            .env_remove("PITBOSS_ADMIN_KEY")
            .env_remove("PITBOSS_BIND")
            .env_remove("DATABASE_URL")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group: whatever the script leaves running is stopped with it.
            .process_group(0)
            .spawn()
            .expect("bash")
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for bash") {
            break Some(status);
        }
        if Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let group = child.id();
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{group}")])
        .stderr(Stdio::null())
        .status();
    let mut out = String::new();
    let mut err = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_string(&mut out);
    }
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    let log = std::fs::read_to_string(root.path().join("serve.log")).unwrap_or_default();
    let status = status.unwrap_or_else(|| {
        panic!("the quick start did not finish in time\nstdout:\n{out}\nstderr:\n{err}\nserve.log:\n{log}")
    });
    assert!(
        status.success(),
        "the quick start failed ({status})\nstdout:\n{out}\nstderr:\n{err}\nserve.log:\n{log}"
    );
    // Every reply is a success: no problem document anywhere.
    assert!(
        !out.contains("urn:pitboss:problem"),
        "a command of the quick start was refused:\n{out}"
    );
    // What the README says the last reply holds.
    // curl prints each reply without a line break after it: the output is a stream of JSON.
    let replies: Vec<Value> = serde_json::Deserializer::from_str(&out)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("the replies are not JSON ({e}):\n{out}"));
    assert_eq!(
        replies.len(),
        5,
        "five commands (the key went into $OP):\n{out}"
    );
    assert_eq!(
        replies[0]["table"], "op1:t1",
        "the operator key works: {}",
        replies[0]
    );
    let last = &replies[replies.len() - 1];
    assert_eq!(last["phase"], "settled", "{last}");
    let paid: Vec<(String, i64)> = last["settlements"]
        .as_array()
        .expect("settlements")
        .iter()
        .map(|s| {
            (
                s["player"].as_str().unwrap_or_default().to_string(),
                s["total_minor"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    assert_eq!(
        paid,
        [("p1".to_string(), 18000), ("p2".to_string(), 0)],
        "{last}"
    );
    assert!(
        quick.contains("\"total_minor\": 18000"),
        "the README's words"
    );
    // The service ran on the clone's plans and data directory, as the README says.
    assert!(log.contains("listening on"), "{log}");
    assert!(
        root.path().join("data").is_dir(),
        "./data is where the data goes"
    );
}

/// The JSON texts of `text`: inline code that is a JSON object (a code span may run over a
/// line break) and the bodies of `curl -d '…'`.
fn json_bodies(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    // Fenced blocks are not inline code: take them apart first.
    let mut prose = String::new();
    let mut fenced = Vec::new();
    for (i, part) in text.split("```").enumerate() {
        if i % 2 == 0 {
            prose.push_str(part);
            prose.push(' ');
        } else {
            fenced.push(part);
        }
    }
    for (i, span) in prose.split('`').enumerate() {
        if i % 2 == 1 && span.trim_start().starts_with('{') {
            out.push(span.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    for block in fenced {
        for (i, part) in block.split("-d '").enumerate() {
            if i > 0 {
                let body = part.split('\'').next().unwrap_or(part);
                out.push(body.split_whitespace().collect::<Vec<_>>().join(" "));
            }
        }
    }
    out
}

/// The request schema a body is for, by the fields it has.
fn schema_of(v: &Value) -> Option<&'static str> {
    let has = |k: &str| v.get(k).is_some();
    Some(if v.as_object().is_some_and(|m| m.is_empty()) {
        "EmptyObject"
    } else if has("bets") {
        "BetsRequest"
    } else if has("decisions") {
        "DecisionsRequest"
    } else if has("type") {
        "DealerEvent"
    } else if has("role") {
        "NewKey"
    } else if has("overlap_s") {
        "RotateKey"
    } else if has("stage") {
        "RotateSigningKey"
    } else if has("table") && has("plan") {
        "OpenTable"
    } else if v["action"] == "shuffle" || v["action"] == "change" {
        "ShoeAction"
    } else if has("action") {
        "TableAction"
    } else if has("player") && has("bet") {
        "BetRequest"
    } else if has("sha256") && has("reference") {
        "ApprovePlan"
    } else if has("reference") && has("reason") {
        "WithdrawApproval"
    } else if has("reported") {
        "PauseRequest"
    } else if has("source") {
        "ExcludeRequest"
    } else if has("day") || has("month") {
        "UsageRequest"
    } else if v
        .as_object()
        .is_some_and(|m| m.keys().any(|k| k.contains("_per_")))
    {
        "LimitsRequest"
    } else if has("reason") {
        "Reason"
    } else {
        return None;
    })
}

#[test]
fn every_json_body_the_readme_shows_is_one_the_api_accepts() {
    let text = readme();
    let bodies = json_bodies(&text);
    let mut checked = 0;
    for body in &bodies {
        let v: Value = serde_json::from_str(body)
            .unwrap_or_else(|e| panic!("README.md shows {body}, which is not JSON: {e}"));
        let schema = schema_of(&v)
            .unwrap_or_else(|| panic!("README.md shows {body}: a body of which request?"));
        let errors = crate::spec::errors_at(&format!("/components/schemas/{schema}"), &v);
        assert!(
            errors.is_empty(),
            "README.md shows {body} as a {schema}, which the API refuses:\n  {}",
            errors.join("\n  ")
        );
        checked += 1;
    }
    assert!(checked >= 25, "{checked} bodies: {bodies:#?}");
}
