//! Reading plan files: TOML text → [`Plan`], with errors that name the file, the line and the
//! field path.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::model::Plan;

/// How bad a finding is: an error refuses the plan, a warning is reported and kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Warning,
    Error,
}

/// One problem found in a plan file, with a stable machine code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    /// Stable code, e.g. `unknown_bet_type`, `max_win_inconsistent`.
    pub code: &'static str,
    pub file: PathBuf,
    /// 1-based line in the file, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// Field path in the plan (`bets[straight].max_win`), empty for the whole file.
    pub path: String,
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{sev}[{}]: {}", self.code, self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if !self.path.is_empty() {
            write!(f, ": {}", self.path)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Parses plan text. On failure the finding carries the serde field path and the line.
pub fn parse(file: &Path, text: &str) -> Result<Plan, Finding> {
    let fail = |path: String, line: Option<usize>, message: String, code: &'static str| Finding {
        severity: Severity::Error,
        code,
        file: file.to_path_buf(),
        line,
        path,
        message,
    };
    let de = toml::de::Deserializer::parse(text).map_err(|e| {
        fail(
            String::new(),
            e.span().map(|s| line_of(text, s.start)),
            e.message().to_string(),
            "toml_syntax",
        )
    })?;
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.inner();
        let line = inner.span().map(|s| line_of(text, s.start));
        let message = inner.message().to_string();
        let code = if message.starts_with("missing field") {
            "missing_field"
        } else if message.starts_with("unknown field") || message.starts_with("unknown variant") {
            "unknown_field"
        } else {
            "invalid_value"
        };
        fail(
            if path == "." { String::new() } else { path },
            line,
            message,
            code,
        )
    })
}

/// Reads and parses one file.
pub fn read(file: &Path) -> Result<Plan, Finding> {
    let text = std::fs::read_to_string(file).map_err(|e| Finding {
        severity: Severity::Error,
        code: "unreadable",
        file: file.to_path_buf(),
        line: None,
        path: String::new(),
        message: e.to_string(),
    })?;
    parse(file, &text)
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}
