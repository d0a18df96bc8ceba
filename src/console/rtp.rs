//! Returns to player for the console: computed once per plan content in the background,
//! stored, and read back.
//!
//! At start one thread ([`RtpReports::spawn`]) goes through the loaded plans, cheapest family
//! first; for each plan whose report for the configured method and rounds is not stored yet
//! (`console_rtp_reports`, keyed by the plan's SHA-256 and the configuration) it computes one
//! with [`crate::rtp::compute`] and stores it. So a restart, or another node on the same
//! database, computes nothing again. The thread is the only one: it never holds more than one
//! report's computation, and the reports kept in memory are one per loaded plan.
//!
//! `--rtp-rounds` sets the rounds of a simulated figure (default 10 000 000, about a minute
//! and a half of one core for the nine blackjack plans and as much for the two Casino Hold'em
//! plans, the first time only); 0 turns the computation off.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use diesel::prelude::*;

use crate::plan::rules::Family;
use crate::plan::PlanSet;
use crate::rtp::{self, RtpConfig, RtpReport};
use crate::store::{self, DatabaseUrl, DbConnection, StoreError};

diesel::table! {
    console_rtp_reports (plan_sha256, config) {
        plan_sha256 -> Text,
        config -> Text,
        plan -> Text,
        computed_at -> Text,
        report -> Text,
    }
}

/// Where a plan's report stands.
#[derive(Debug, Clone)]
pub enum Status {
    /// `--rtp-rounds 0`.
    Disabled,
    /// Waiting for the thread.
    Queued,
    Computing,
    Done(Arc<RtpReport>),
    Failed(String),
}

/// The reports of the loaded plans, by content hash.
#[derive(Debug)]
pub struct RtpReports {
    config: RtpConfig,
    status: Mutex<HashMap<String, Status>>,
}

impl RtpReports {
    pub fn new(plans: &PlanSet, rounds: u64) -> RtpReports {
        let initial = if rounds == 0 {
            Status::Disabled
        } else {
            Status::Queued
        };
        RtpReports {
            config: RtpConfig { rounds },
            status: Mutex::new(
                plans
                    .iter()
                    .map(|p| (p.hash.clone(), initial.clone()))
                    .collect(),
            ),
        }
    }

    /// The stored reports' key besides the plan: the method's version and the rounds.
    pub fn config_key(&self) -> String {
        format!("v{};rounds={}", rtp::METHOD_VERSION, self.config.rounds)
    }

    pub fn rounds(&self) -> u64 {
        self.config.rounds
    }

    pub fn status(&self, sha256: &str) -> Status {
        self.status
            .lock()
            .expect("rtp lock")
            .get(sha256)
            .cloned()
            .unwrap_or(Status::Failed("not a loaded plan".into()))
    }

    fn set(&self, sha256: &str, s: Status) {
        self.status
            .lock()
            .expect("rtp lock")
            .insert(sha256.to_string(), s);
    }

    /// Starts the thread (nothing when the computation is off).
    pub fn spawn(self: &Arc<Self>, plans: Arc<PlanSet>, url: DatabaseUrl) -> std::io::Result<()> {
        if self.config.rounds == 0 {
            return Ok(());
        }
        let me = self.clone();
        std::thread::Builder::new()
            .name("pitboss-rtp".into())
            .spawn(move || me.run(&plans, &url))
            .map(|_| ())
    }

    fn run(&self, plans: &PlanSet, url: &DatabaseUrl) {
        let mut conn = match store::connect(url) {
            Ok(c) => c,
            Err(e) => {
                for p in plans.iter() {
                    self.set(&p.hash, Status::Failed(format!("database: {e}")));
                }
                return;
            }
        };
        let mut order: Vec<_> = plans.iter().collect();
        order.sort_by_key(|p| cost(p.plan.plan.family));
        for p in order {
            match self.load(&mut conn, &p.hash) {
                Ok(Some(r)) => {
                    self.set(&p.hash, Status::Done(Arc::new(r)));
                    continue;
                }
                Ok(None) => {}
                Err(e) => {
                    self.set(&p.hash, Status::Failed(format!("database: {e}")));
                    continue;
                }
            }
            self.set(&p.hash, Status::Computing);
            let config = self.config;
            let computed = std::panic::catch_unwind(|| rtp::compute(&p.plan, &p.hash, &config));
            match computed {
                Ok(report) => {
                    if let Err(e) = self.store(&mut conn, &report) {
                        self.set(&p.hash, Status::Failed(format!("storing the report: {e}")));
                        continue;
                    }
                    self.set(&p.hash, Status::Done(Arc::new(report)));
                }
                Err(_) => self.set(
                    &p.hash,
                    Status::Failed(
                        "the computation failed (a defect: see the service's log)".into(),
                    ),
                ),
            }
        }
    }

    fn load(&self, conn: &mut DbConnection, sha256: &str) -> Result<Option<RtpReport>, StoreError> {
        let row: Option<String> = console_rtp_reports::table
            .filter(console_rtp_reports::plan_sha256.eq(sha256))
            .filter(console_rtp_reports::config.eq(self.config_key()))
            .select(console_rtp_reports::report)
            .first(conn)
            .optional()?;
        row.map(|text| {
            serde_json::from_str(&text)
                .map_err(|e| StoreError::Corrupt(format!("stored RTP report: {e}")))
        })
        .transpose()
    }

    fn store(&self, conn: &mut DbConnection, report: &RtpReport) -> Result<(), StoreError> {
        let text = serde_json::to_string(report).expect("reports serialise");
        let inserted = diesel::insert_into(console_rtp_reports::table)
            .values((
                console_rtp_reports::plan_sha256.eq(&report.sha256),
                console_rtp_reports::config.eq(self.config_key()),
                console_rtp_reports::plan.eq(&report.plan),
                console_rtp_reports::computed_at.eq(chrono::Utc::now().to_rfc3339()),
                console_rtp_reports::report.eq(&text),
            ))
            .execute(conn);
        match inserted {
            // Another node stored the same report first: the same figures.
            Err(diesel::result::Error::DatabaseError(
                diesel::result::DatabaseErrorKind::UniqueViolation,
                _,
            )) => Ok(()),
            other => other.map(|_| ()).map_err(StoreError::from),
        }
    }
}

/// Cheapest first, so the exact figures appear at once.
fn cost(f: Family) -> u8 {
    match f {
        Family::OkoBere | Family::PokerCash => 0,
        Family::Roulette | Family::TopCard => 1,
        Family::Baccarat => 2,
        Family::Blackjack => 3,
        Family::CasinoHoldem => 4,
    }
}
