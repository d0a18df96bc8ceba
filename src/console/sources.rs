//! The committed source documents, served read-only: each plan links to its section.
//!
//! Only the documents the loaded plans name are served, read once at start from the plan
//! directory's `sources/` and checked against the SHA-256 each plan pins (lint has checked it
//! already; a document changed since is not served rather than served wrong).

use std::collections::BTreeMap;
use std::path::Path;

use actix_web::{get, web, HttpResponse};
use maud::html;
use sha2::{Digest, Sha256};

use super::auth::Viewer;
use super::layout::{page, Section};
use super::ConsoleError;
use crate::api::startup::AppState;
use crate::plan::canonical::hex;
use crate::plan::PlanSet;

/// One source document, by lines.
#[derive(Debug, Clone)]
pub struct SourceDoc {
    pub name: String,
    pub title: String,
    pub sha256: String,
    pub lines: Vec<String>,
}

impl SourceDoc {
    /// The line (0-based) of a section's heading: the first line that is exactly the section's
    /// name (the table of contents writes it with a page number), else the first containing it.
    pub fn section_line(&self, section: &str) -> Option<usize> {
        let s = section.trim();
        self.lines
            .iter()
            .position(|l| l.trim() == s)
            .or_else(|| self.lines.iter().position(|l| l.contains(s)))
    }

    /// The line of a clause within a section: its last part (`A › B` names B) or its first
    /// (`A; B` names A) starting a line after the section's heading.
    pub fn clause_line(&self, section_line: usize, clause: &str) -> Option<usize> {
        let first = clause.split(';').next()?.trim();
        let name = first.rsplit('›').next()?.trim();
        if name.len() < 4 {
            return None;
        }
        self.lines
            .iter()
            .enumerate()
            .skip(section_line)
            .take(600)
            .find(|(_, l)| l.trim_start().starts_with(name))
            .map(|(i, _)| i)
    }
}

/// The documents the loaded plans name.
#[derive(Debug, Default)]
pub struct Sources {
    docs: BTreeMap<String, SourceDoc>,
}

impl Sources {
    pub fn load(plans_dir: &Path, plans: &PlanSet) -> Sources {
        let mut docs = BTreeMap::new();
        for p in plans.iter() {
            let src = &p.plan.source;
            if docs.contains_key(&src.document) {
                continue;
            }
            let path = plans_dir.join("sources").join(&src.document);
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            if hex(&Sha256::digest(text.as_bytes())) != src.document_sha256 {
                continue;
            }
            docs.insert(
                src.document.clone(),
                SourceDoc {
                    name: src.document.clone(),
                    title: src.title.clone(),
                    sha256: src.document_sha256.clone(),
                    lines: text.lines().map(str::to_string).collect(),
                },
            );
        }
        Sources { docs }
    }

    pub fn get(&self, name: &str) -> Option<&SourceDoc> {
        self.docs.get(name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &SourceDoc> {
        self.docs.values()
    }
}

/// The link to a section of a document, if the document is served and the section found.
pub fn section_link(state: &AppState, doc_name: &str, section: &str) -> Option<String> {
    let doc = state.console.sources.get(doc_name)?;
    let line = doc.section_line(section)?;
    Some(format!("/console/sources/{doc_name}#L{}", line + 1))
}

/// A source document as it is committed, plain text.
#[get("/sources/{doc}/text")]
pub async fn plain_text(
    state: web::Data<AppState>,
    _viewer: Viewer,
    path: web::Path<String>,
) -> Result<HttpResponse, ConsoleError> {
    let name = path.into_inner();
    let doc = state
        .console
        .sources
        .get(&name)
        .ok_or_else(|| ConsoleError::NotFound(format!("no source document {name}")))?;
    let mut body = doc.lines.join("\n");
    body.push('\n');
    Ok(HttpResponse::Ok()
        .content_type("text/plain; charset=utf-8")
        .body(body))
}

/// A source document as numbered lines, each with an anchor (`#L141`).
#[get("/sources/{doc}")]
pub async fn document(
    state: web::Data<AppState>,
    viewer: Viewer,
    path: web::Path<String>,
) -> Result<HttpResponse, ConsoleError> {
    let name = path.into_inner();
    let doc = state
        .console
        .sources
        .get(&name)
        .ok_or_else(|| ConsoleError::NotFound(format!("no source document {name}")))?;
    let headings: Vec<usize> = state
        .plans
        .iter()
        .filter(|p| p.plan.source.document == doc.name)
        .filter_map(|p| doc.section_line(&p.plan.source.section))
        .collect();
    let body = html! {
        h1 lang="cs" { (doc.title) }
        p.lead {
            "Source document " code { (doc.name) } ", as committed and pinned by the plans (SHA-256 "
            code.hash { (doc.sha256) } "). Read-only. "
            a href=(format!("/console/sources/{}/text", doc.name)) { "Plain text" } "."
        }
        ol.source lang="cs" {
            @for (i, line) in doc.lines.iter().enumerate() {
                li #(format!("L{}", i + 1)) .heading[headings.contains(&i)] { (line) }
            }
        }
    };
    Ok(super::respond(page(
        &doc.name,
        Some(&viewer),
        Section::Plans,
        body,
    )))
}
