//! The page shell every console page shares, and how values are written on the pages.

use maud::{html, Markup, PreEscaped, DOCTYPE};

use super::auth::Viewer;
use crate::money::{format_minor, Currency};

/// The sections of the console's navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Home,
    Plans,
    Tables,
    Log,
    Events,
    None,
}

/// A whole page: skip link, navigation (with sign-out when signed in), the content as `main`.
pub fn page(title: &str, viewer: Option<&Viewer>, section: Section, body: Markup) -> Markup {
    let nav = [
        (Section::Plans, "/console/plans", "Plans"),
        (Section::Tables, "/console/tables", "Tables and rounds"),
        (Section::Log, "/console/log", "Audit log"),
        (Section::Events, "/console/log/events", "Significant events"),
    ];
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="referrer" content="no-referrer";
                title { (title) " — pitboss console" }
                // No favicon request (it would be a failed load in the browser's console).
                link rel="icon" href="data:,";
                link rel="stylesheet" href="/console/static/console.css";
            }
            body {
                a.skip href="#main" { "Skip to the content" }
                header.site {
                    a.brand href="/console/" aria-current=[(section == Section::Home).then_some("page")] {
                        "pitboss console"
                    }
                    @if let Some(v) = viewer {
                        nav aria-label="Console sections" {
                            ul {
                                @for (s, href, label) in nav {
                                    li { a href=(href) aria-current=[(s == section).then_some("page")] { (label) } }
                                }
                            }
                        }
                        div.who {
                            span { "Signed in: " (v.role.as_str()) " key " code { (v.key_id) } }
                            form method="post" action="/console/logout" {
                                input type="hidden" name="csrf" value=(v.csrf);
                                button type="submit" { "Sign out" }
                            }
                        }
                    }
                }
                main #main tabindex="-1" {
                    (body)
                }
                footer {
                    "Read-only view of the service's plans, tables and audit log. Page generated "
                    (chrono::Utc::now().format("%Y-%m-%d %H:%M:%S UTC")) "."
                }
            }
        }
    }
}

/// An amount as the source documents write it: `10 000,00 Kč`.
pub fn money(minor: i64, currency: Currency) -> String {
    let amount = format_minor(minor, currency.exponent());
    match currency.code() {
        "CZK" => format!("{amount} Kč"),
        code => format!("{amount} {code}"),
    }
}

/// A return as a percentage with `digits` decimals: `97.30 %`.
pub fn pct(x: f64, digits: usize) -> String {
    format!("{:.*} %", digits, x * 100.0)
}

/// A count with thin groups: `10 000 000`.
pub fn count(n: u64) -> String {
    format_minor(i64::try_from(n).unwrap_or(i64::MAX), 0)
}

/// A log timestamp (`2026-11-26T11:55:24.547567Z`) as `2026-11-26 11:55:24.547567`, UTC.
pub fn ts(text: &str) -> String {
    text.trim_end_matches('Z').replacen('T', " ", 1)
}

/// Text in Czech (the documents' language), marked so that screen readers read it so.
pub fn cs(text: &str) -> Markup {
    html! { span lang="cs" { (text) } }
}

/// A JSON value pretty-printed.
pub fn json(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// A JSON value as a reader reads it: strings bare, ratios as `a:b`, the rest compact.
pub fn value(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Object(m)
            if m.len() == 2 && m.contains_key("numerator") && m.contains_key("denominator") =>
        {
            format!("{}:{}", m["numerator"], m["denominator"])
        }
        serde_json::Value::Null => "—".into(),
        other => other.to_string(),
    }
}

/// Field names as words: `betting_window_ms` → `betting window (ms)`.
pub fn words(name: &str) -> String {
    let s = name.replace('_', " ");
    match s.strip_suffix(" ms") {
        Some(rest) => format!("{rest} (ms)"),
        None => s,
    }
}

/// A link with the pager's previous/next, keeping the query `base` (already `?a=b&` or `?`).
pub fn pager(base: &str, newer: Option<u64>, older: Option<u64>, what: &str) -> Markup {
    html! {
        @if newer.is_some() || older.is_some() {
            nav.pager aria-label=(format!("Pages of {what}")) {
                @if newer.is_some() {
                    a href=(format!("{base}")) { "« Newest " (what) }
                }
                @if let Some(o) = older {
                    a href=(format!("{base}before={o}")) { "Older " (what) " »" }
                }
            }
        }
    }
}

/// Markup that is already HTML (an SVG drawn by the plot module).
pub fn raw(s: String) -> Markup {
    PreEscaped(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_written_as_the_documents_write_them() {
        assert_eq!(money(1_000_000, Currency::CZK), "10 000,00 Kč");
        assert_eq!(money(36_000_000, Currency::CZK), "360 000,00 Kč");
        assert_eq!(money(100, Currency::CZK), "1,00 Kč");
        assert_eq!(pct(36.0 / 37.0, 2), "97.30 %");
        assert_eq!(count(10_000_000), "10 000 000");
        assert_eq!(words("betting_window_ms"), "betting window (ms)");
    }
}
