//! The set of loaded plans: immutable, content-addressed, versions ordered per id.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::canonical::content_hash;
use super::lint::lint;
use super::load::{self, Finding, Severity};
use super::model::{Plan, PlanId, PlanRef};

/// A plan admitted into a set: its content hash and the warnings lint reported.
#[derive(Debug, Clone)]
pub struct LoadedPlan {
    pub plan: Plan,
    /// SHA-256 of the canonical form, lower-case hex.
    pub hash: String,
    pub file: PathBuf,
    pub warnings: Vec<Finding>,
}

impl LoadedPlan {
    pub fn key(&self) -> String {
        self.plan.key()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("{key} is already loaded with content {existing}; this content is {offered}: a change needs a new version")]
    VersionReused {
        key: String,
        existing: String,
        offered: String,
    },
}

/// Loaded plans by id, then version.
#[derive(Debug, Default, Clone)]
pub struct PlanSet {
    plans: BTreeMap<PlanId, BTreeMap<u32, LoadedPlan>>,
}

/// What loading a directory found.
#[derive(Debug, Default)]
pub struct LoadReport {
    pub findings: Vec<Finding>,
}

impl LoadReport {
    pub fn errors(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
    }
    pub fn warnings(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
    }
    pub fn has_errors(&self) -> bool {
        self.errors().next().is_some()
    }
}

impl PlanSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Admits a plan. The same `id@version` with the same content is accepted again (a no-op);
    /// with other content it is refused.
    pub fn insert(&mut self, loaded: LoadedPlan) -> Result<(), RegistryError> {
        let versions = self.plans.entry(loaded.plan.plan.id.clone()).or_default();
        match versions.get(&loaded.plan.plan.version) {
            Some(existing) if existing.hash != loaded.hash => Err(RegistryError::VersionReused {
                key: loaded.key(),
                existing: existing.hash.clone(),
                offered: loaded.hash,
            }),
            Some(_) => Ok(()),
            None => {
                versions.insert(loaded.plan.plan.version, loaded);
                Ok(())
            }
        }
    }

    /// The plan a reference names; without a version, the latest.
    pub fn get(&self, r: &PlanRef) -> Option<&LoadedPlan> {
        let versions = self.plans.get(&r.id)?;
        match r.version {
            Some(v) => versions.get(&v),
            None => versions.values().next_back(),
        }
    }

    /// All versions of one id, oldest first.
    pub fn versions(&self, id: &PlanId) -> impl Iterator<Item = &LoadedPlan> {
        self.plans.get(id).into_iter().flat_map(|v| v.values())
    }

    /// Every loaded plan, by id then version.
    pub fn iter(&self) -> impl Iterator<Item = &LoadedPlan> {
        self.plans.values().flat_map(|v| v.values())
    }

    pub fn len(&self) -> usize {
        self.plans.values().map(BTreeMap::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Loads every `*.toml` plan under `dir` (not recursing into `sources/`), checking each
    /// against the documents in `dir/sources/`. Every problem of every file is reported;
    /// only plans without errors are admitted.
    pub fn load_dir(dir: &Path) -> (PlanSet, LoadReport) {
        let mut set = PlanSet::new();
        let mut report = LoadReport::default();
        let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
            Ok(rd) => rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml") && p.is_file())
                .collect(),
            Err(e) => {
                report.findings.push(Finding {
                    severity: Severity::Error,
                    code: "unreadable",
                    file: dir.to_path_buf(),
                    line: None,
                    path: String::new(),
                    message: e.to_string(),
                });
                return (set, report);
            }
        };
        files.sort();
        let sources = dir.join("sources");
        for file in files {
            match load_file(&file, Some(&sources)) {
                Ok(loaded) => {
                    let key = loaded.key();
                    report.findings.extend(loaded.warnings.iter().cloned());
                    if let Err(e) = set.insert(loaded) {
                        report.findings.push(Finding {
                            severity: Severity::Error,
                            code: "version_reused",
                            file: file.clone(),
                            line: None,
                            path: "plan.version".into(),
                            message: format!("{e} (loading {key})"),
                        });
                    }
                }
                Err(findings) => report.findings.extend(findings),
            }
        }
        (set, report)
    }
}

/// Parses and lints one file; `Err` holds every finding when any is an error.
pub fn load_file(file: &Path, sources_dir: Option<&Path>) -> Result<LoadedPlan, Vec<Finding>> {
    let plan = load::read(file).map_err(|f| vec![f])?;
    let mut findings = lint(&plan, file, sources_dir);
    let expected_name = format!("{}@{}.toml", plan.plan.id, plan.plan.version);
    if file.file_name().and_then(|n| n.to_str()) != Some(expected_name.as_str()) {
        findings.push(Finding {
            severity: Severity::Error,
            code: "file_name_mismatch",
            file: file.to_path_buf(),
            line: None,
            path: "plan.id".into(),
            message: format!("a plan with this identity lives in {expected_name}"),
        });
    }
    if findings.iter().any(|f| f.severity == Severity::Error) {
        return Err(findings);
    }
    let hash = content_hash(&plan);
    Ok(LoadedPlan {
        plan,
        hash,
        file: file.to_path_buf(),
        warnings: findings,
    })
}
