//! The player register of each operator (002 § 6(2), (3); issue 16 point 2): exclusions (from
//! the national register of excluded persons, or a player's self-exclusion) and self-limits
//! (the stake of one bet; the stakes and the net loss of a day and of a month).
//!
//! Every change is logged, naming who made it (`player_excluded`, `player_exclusion_lifted`,
//! `player_limits_set`, `player_usage_reported`). A bet by an excluded player, or one that
//! would exceed a limit, is refused (`player_excluded`, `limit_exceeded`) with the clause.
//!
//! Nothing of it is held in memory: the register (`player_register`) and what was counted per
//! day and month (`player_usage_by_player`, one row a player: the current day and month and
//! the open stakes, [`UsageUpdate`]) are read from the store once per batch for the players the
//! batch's commands name ([`Batch::load`]), and what the batch changes is written in its
//! transaction ([`write`]). Counting, per operator and player, in Europe/Prague local time:
//!
//! * a stake counts when it is accepted (a bet; a stake a decision adds: a double, a split,
//!   insurance, a call), in the day and month it was accepted; a stake refunded later (a void,
//!   a withdrawal) still counts toward the stake limits (an assumption: the stake was wagered);
//! * the net loss (stakes minus what the settlement credits) counts when the round settles,
//!   in the day and month of the settlement; a net win lowers it;
//! * until its round settles, a stake counts as a potential loss: the net-loss limits compare
//!   the settled net loss **plus every open stake plus the new stake** with the limit (a
//!   conservative choice: a bet is refused if losing every open stake would exceed the limit);
//! * what the operator reports the player used elsewhere in the same day and month (§ 6(3):
//!   the limits are set together for the internet technical game, live game and lottery) is
//!   added to what pitboss counted.
//!
//! Assumptions (the documents give none of these values): a lowered limit (or a new one)
//! takes effect at once; a raised or removed limit after [`RAISE_DELAY_HOURS`] hours; periods
//! are the calendar day and month of Europe/Prague (CET, UTC+1; CEST, UTC+2 from the last
//! Sunday of March 01:00 UTC to the last Sunday of October 01:00 UTC, the EU rule).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Datelike, Duration, NaiveDate, TimeZone, Utc, Weekday};
use diesel::prelude::*;
use serde::{Deserialize, Serialize};

use crate::games::Refusal;
use crate::round::Event;
use crate::store::schema::{player_register, player_usage_by_player};
use crate::store::{DbConnection, StoreError};

use super::{Command, Reply};

/// § 6(2): the register of excluded persons, self-limiting measures.
pub const CLAUSE_EXCLUSION: &str = "002 § 6(2)";
/// § 6(3): self-limits set together for the technical game, the live game and the lottery.
pub const CLAUSE_LIMITS: &str = "002 § 6(3)";
/// Assumption: a raised (or removed) limit takes effect this many hours after it was set.
pub const RAISE_DELAY_HOURS: i64 = 24;
pub const TIME_ZONE: &str = "Europe/Prague";
/// Largest amount accepted (a JSON integer's exact range).
pub const MAX_MINOR: i64 = (1 << 53) - 1;
/// Longest reason, in bytes.
pub const MAX_REASON: usize = 500;
/// The period row of open stakes.
const OPEN: &str = "open";

/// The stable codes of this module's refusals.
pub mod code {
    pub const PLAYER_EXCLUDED: &str = "player_excluded";
    pub const LIMIT_EXCEEDED: &str = "limit_exceeded";
    pub const BAD_EXCLUSION: &str = "bad_exclusion";
    pub const NOT_EXCLUDED: &str = "not_excluded";
    pub const BAD_LIMITS: &str = "bad_limits";
    pub const BAD_USAGE: &str = "bad_usage";
}

/// Where an exclusion comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExclusionSource {
    /// The register of persons excluded from gambling (rejstřík fyzických osob vyloučených).
    NationalRegister,
    /// The player's own exclusion.
    SelfExclusion,
}

/// A player's exclusion: from when, until when (none: indefinitely), on what ground.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Exclusion {
    pub source: ExclusionSource,
    pub from: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Exclusion {
    pub fn active_at(&self, t: DateTime<Utc>) -> bool {
        self.from <= t && self.until.is_none_or(|u| t < u)
    }
}

/// The self-limits, in minor units; an absent limit is no limit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stake_per_bet_minor: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stakes_per_day_minor: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stakes_per_month_minor: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_loss_per_day_minor: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_loss_per_month_minor: Option<i64>,
}

/// The limits' names, as logged and answered.
pub const LIMIT_NAMES: [&str; 5] = [
    "stake_per_bet",
    "stakes_per_day",
    "stakes_per_month",
    "net_loss_per_day",
    "net_loss_per_month",
];

impl Limits {
    fn values(&self) -> [Option<i64>; 5] {
        [
            self.stake_per_bet_minor,
            self.stakes_per_day_minor,
            self.stakes_per_month_minor,
            self.net_loss_per_day_minor,
            self.net_loss_per_month_minor,
        ]
    }
}

/// A raised or removed limit waiting for its time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PendingLimit {
    /// The value it becomes (absent: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_minor: Option<i64>,
    pub effective_at: DateTime<Utc>,
}

/// One limit: its value now (absent: no limit), and a raise waiting for its time.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Limit {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_minor: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<PendingLimit>,
}

impl Limit {
    /// The limit in force at `t`.
    pub fn at(&self, t: DateTime<Utc>) -> Option<i64> {
        match &self.pending {
            Some(p) if p.effective_at <= t => p.value_minor,
            _ => self.value_minor,
        }
    }

    /// As it stands at `t` (a raise whose time came is the value).
    fn settled(&self, t: DateTime<Utc>) -> Limit {
        match &self.pending {
            Some(p) if p.effective_at <= t => Limit {
                value_minor: p.value_minor,
                pending: None,
            },
            _ => self.clone(),
        }
    }
}

/// One limit changed, as logged: from what, to what, from when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitChange {
    /// One of `stake_per_bet`, `stakes_per_day`, `stakes_per_month`, `net_loss_per_day`,
    /// `net_loss_per_month`.
    pub limit: String,
    /// The value in force before (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_minor: Option<i64>,
    /// The value set (absent: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_minor: Option<i64>,
    /// When it takes effect: at once when lowered or new; a raise or a removal after 24 h.
    pub effective_at: DateTime<Utc>,
}

/// Amounts the operator reports the player used in its other games in one period.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Amounts {
    pub staked_minor: i64,
    /// Stakes minus what was credited (negative: a net win).
    pub net_loss_minor: i64,
}

/// What was reported for one period, as logged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportedUsage {
    /// `YYYY-MM-DD` or `YYYY-MM`, Europe/Prague.
    pub period: String,
    pub staked_minor: i64,
    pub net_loss_minor: i64,
}

/// A player's register entry as stored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclusion: Option<Exclusion>,
    #[serde(default)]
    pub limits: BTreeMap<String, Limit>,
}

impl Entry {
    fn limit_at(&self, name: &str, t: DateTime<Utc>) -> Option<i64> {
        self.limits.get(name).and_then(|l| l.at(t))
    }
}

/// A register command, decided against the batch's read of the register.
#[derive(Debug, Clone)]
pub enum RegisterCommand {
    Exclude {
        player: String,
        source: ExclusionSource,
        from: Option<DateTime<Utc>>,
        until: Option<DateTime<Utc>>,
        reason: Option<String>,
    },
    Lift {
        player: String,
        reason: String,
    },
    SetLimits {
        player: String,
        limits: Limits,
    },
    ReportUsage {
        player: String,
        day: Option<Amounts>,
        month: Option<Amounts>,
    },
}

impl RegisterCommand {
    pub fn player(&self) -> &str {
        match self {
            RegisterCommand::Exclude { player, .. }
            | RegisterCommand::Lift { player, .. }
            | RegisterCommand::SetLimits { player, .. }
            | RegisterCommand::ReportUsage { player, .. } => player,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            RegisterCommand::Exclude { .. } => "exclude_player",
            RegisterCommand::Lift { .. } => "lift_exclusion",
            RegisterCommand::SetLimits { .. } => "set_limits",
            RegisterCommand::ReportUsage { .. } => "report_usage",
        }
    }
}

// ----- time ---------------------------------------------------------------------------------

fn last_sunday(year: i32, month: u32) -> NaiveDate {
    let next = if month == 12 {
        NaiveDate::from_ymd_opt(year + 1, 1, 1)
    } else {
        NaiveDate::from_ymd_opt(year, month + 1, 1)
    }
    .expect("a valid date");
    let mut d = next.pred_opt().expect("a valid date");
    while d.weekday() != Weekday::Sun {
        d = d.pred_opt().expect("a valid date");
    }
    d
}

/// Europe/Prague's offset from UTC at `t` (the EU summer-time rule).
pub fn prague_offset(t: DateTime<Utc>) -> Duration {
    let y = t.year();
    let at_one = |d: NaiveDate| {
        Utc.from_utc_datetime(&d.and_hms_opt(1, 0, 0).expect("01:00 is a valid time"))
    };
    let start = at_one(last_sunday(y, 3));
    let end = at_one(last_sunday(y, 10));
    if t >= start && t < end {
        Duration::hours(2)
    } else {
        Duration::hours(1)
    }
}

/// The day (`YYYY-MM-DD`) and month (`YYYY-MM`) of `t` in Europe/Prague.
pub fn periods(t: DateTime<Utc>) -> (String, String) {
    let local = (t + prague_offset(t)).naive_utc();
    (
        local.format("%Y-%m-%d").to_string(),
        local.format("%Y-%m").to_string(),
    )
}

// ----- one batch ----------------------------------------------------------------------------

/// Counted and reported amounts of one period.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Usage {
    staked: i64,
    net_loss: i64,
    reported_staked: i64,
    reported_net_loss: i64,
}

type PlayerKey = (String, String);
pub type PeriodKey = (String, String, String);

/// A [`PeriodKey`] read by its parts, so that the batch's maps are looked up without
/// allocating a key: counting a bet looked up three periods and checking it three more, each
/// lookup with three `String`s made and dropped (≈ 4 % of the writer's CPU). A key is made
/// only when a period is first counted.
trait PeriodKeyRef {
    fn parts(&self) -> (&str, &str, &str);
}

impl PeriodKeyRef for PeriodKey {
    fn parts(&self) -> (&str, &str, &str) {
        (&self.0, &self.1, &self.2)
    }
}

impl PeriodKeyRef for (&str, &str, &str) {
    fn parts(&self) -> (&str, &str, &str) {
        *self
    }
}

impl<'a> std::borrow::Borrow<dyn PeriodKeyRef + 'a> for PeriodKey {
    fn borrow(&self) -> &(dyn PeriodKeyRef + 'a) {
        self
    }
}

// Hashed and ordered as the owned key is: a tuple of `String`s hashes and compares as the
// tuple of their `str`s.
impl std::hash::Hash for dyn PeriodKeyRef + '_ {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.parts().hash(state)
    }
}

impl PartialEq for dyn PeriodKeyRef + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for dyn PeriodKeyRef + '_ {}

impl PartialOrd for dyn PeriodKeyRef + '_ {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for dyn PeriodKeyRef + '_ {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.parts().cmp(&other.parts())
    }
}

/// A [`PlayerKey`] read by its parts (as [`PeriodKeyRef`]).
trait PlayerKeyRef {
    fn parts(&self) -> (&str, &str);
}

impl PlayerKeyRef for PlayerKey {
    fn parts(&self) -> (&str, &str) {
        (&self.0, &self.1)
    }
}

impl PlayerKeyRef for (&str, &str) {
    fn parts(&self) -> (&str, &str) {
        *self
    }
}

impl<'a> std::borrow::Borrow<dyn PlayerKeyRef + 'a> for PlayerKey {
    fn borrow(&self) -> &(dyn PlayerKeyRef + 'a) {
        self
    }
}

impl std::hash::Hash for dyn PlayerKeyRef + '_ {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.parts().hash(state)
    }
}

impl PartialEq for dyn PlayerKeyRef + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for dyn PlayerKeyRef + '_ {}

/// The player of a period key, as a key of the maps by player.
fn player_of(k: &PeriodKey) -> (&str, &str) {
    (&k.0, &k.1)
}

/// The period of a counted amount: the batch's day or month, or the open stakes.
#[derive(Clone, Copy)]
enum Period {
    Day,
    Month,
    Open,
}

/// What a batch changes in the register, written in its transaction.
#[derive(Debug, Default, Clone)]
pub struct Writes {
    entries: BTreeMap<PlayerKey, Option<Entry>>,
    /// Counted amounts to add: `(staked, net_loss)`.
    deltas: BTreeMap<PeriodKey, (i64, i64)>,
    /// Reported amounts to set: `(staked, net_loss)`.
    reported: BTreeMap<PeriodKey, (i64, i64)>,
}

impl Writes {
    /// Counted amounts only: no player's entry changed and no amounts reported (what a
    /// batch of bets and settlements writes).
    pub fn counts_only(&self) -> bool {
        // Every field named, so that a new kind of change is weighed here (`commit_pg`).
        let Writes {
            entries,
            deltas: _,
            reported,
        } = self;
        entries.is_empty() && reported.is_empty()
    }

    /// Counted amounts `(staked, net_loss)` to add for one player and period (tests).
    #[cfg(test)]
    pub fn counted(op: &str, player: &str, period: &str, staked: i64, net_loss: i64) -> Writes {
        let mut w = Writes::default();
        w.deltas.insert(
            (op.to_string(), player.to_string(), period.to_string()),
            (staked, net_loss),
        );
        w
    }

    /// Counted amounts to add, `(staked, net_loss)` by operator, player and period.
    pub fn deltas(&self) -> &BTreeMap<PeriodKey, (i64, i64)> {
        &self.deltas
    }

    /// Adds the changes of a batch decided after this one: entries and reported amounts as
    /// the later batch left them, counted amounts summed.
    pub fn merge(&mut self, later: &Writes) {
        for (k, e) in &later.entries {
            self.entries.insert(k.clone(), e.clone());
        }
        for (k, (staked, net_loss)) in &later.deltas {
            let d = self.deltas.entry(k.clone()).or_default();
            d.0 += staked;
            d.1 += net_loss;
        }
        for (k, v) in &later.reported {
            self.reported.insert(k.clone(), *v);
        }
    }

    /// Puts these counts into `usage`, for the periods `take` accepts: counted amounts added,
    /// reported amounts set.
    fn count_into(&self, usage: &mut HashMap<PeriodKey, Usage>, take: impl Fn(&PeriodKey) -> bool) {
        for (k, (staked, net_loss)) in &self.deltas {
            if take(k) {
                let u = usage.entry(k.clone()).or_default();
                u.staked += staked;
                u.net_loss += net_loss;
            }
        }
        for (k, (staked, net_loss)) in &self.reported {
            if take(k) {
                let u = usage.entry(k.clone()).or_default();
                u.reported_staked = *staked;
                u.reported_net_loss = *net_loss;
            }
        }
    }
}

/// The register as one batch sees it: the rows of its players read at its start, with its
/// own changes on top.
pub struct Batch {
    now: DateTime<Utc>,
    day: String,
    month: String,
    entries: HashMap<PlayerKey, Option<Entry>>,
    usage: HashMap<PeriodKey, Usage>,
    writes: Writes,
}

fn refuse(code: &str, message: impl Into<String>) -> Refusal {
    Refusal::new(code, message)
}

/// The players a command's decision reads from the register.
fn players_of(command: &Command) -> Vec<&str> {
    match command {
        Command::Bets { bets, .. } => bets.iter().map(|(p, _)| p.as_str()).collect(),
        Command::Register(c) => vec![c.player()],
        _ => Vec::new(),
    }
}

/// The players whose register rows `commands` read, by operator.
pub type Players<'a> = BTreeMap<&'a str, BTreeSet<&'a str>>;

fn players_by_operator<'a>(commands: impl Iterator<Item = (&'a str, &'a Command)>) -> Players<'a> {
    let mut by_operator: Players<'a> = BTreeMap::new();
    for (op, c) in commands {
        let players = players_of(c);
        if !players.is_empty() {
            by_operator.entry(op).or_default().extend(players);
        }
    }
    by_operator
}

/// Players a writer's cache holds at most; past it the cache starts again empty.
pub const CACHE_PLAYERS: usize = 20_000;

/// The register of the players a writer's recent batches read, as its decided batches left it:
/// ahead of the store by the batches in flight, so a batch of players it holds reads nothing
/// from the store. Valid only while its writer is the log's one writer and its state is that of
/// every batch it decided: the writer empties it whenever it reads its state back from the
/// store (after a failure), and a new writer starts with an empty one. Holds the current
/// periods only (emptied when the day or the month turns) and at most [`CACHE_PLAYERS`].
#[derive(Debug, Default)]
pub struct Cache {
    day: String,
    month: String,
    entries: HashMap<PlayerKey, Option<Entry>>,
    usage: HashMap<PeriodKey, Usage>,
    /// Players batches found here, and players they read from the store, since the last
    /// [`Cache::take_counts`].
    held_count: u64,
    read_count: u64,
}

impl Cache {
    /// Players found here and players read from the store since the last call (for the
    /// service's counters).
    pub fn take_counts(&mut self) -> (u64, u64) {
        let counts = (self.held_count, self.read_count);
        (self.held_count, self.read_count) = (0, 0);
        counts
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.usage.clear();
    }

    /// Players held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The register of the players `commands` read: those held from the cache, the others from
    /// `read` (the store, with the batches in flight on top), which is not called when every
    /// player is held.
    pub fn load<'a>(
        &mut self,
        now: DateTime<Utc>,
        commands: impl Iterator<Item = (&'a str, &'a Command)>,
        read: impl FnOnce(&Players<'a>) -> Result<Batch, StoreError>,
    ) -> Result<Batch, StoreError> {
        let (day, month) = periods(now);
        if (&day, &month) != (&self.day, &self.month) {
            self.clear();
            self.day = day.clone();
            self.month = month.clone();
        }
        let mut held: Vec<PlayerKey> = Vec::new();
        let mut missing: Players<'a> = BTreeMap::new();
        for (op, players) in players_by_operator(commands) {
            for p in players {
                if self.entries.contains_key(&(op, p) as &dyn PlayerKeyRef) {
                    held.push((op.to_string(), p.to_string()));
                } else {
                    missing.entry(op).or_default().insert(p);
                }
            }
        }
        self.held_count += held.len() as u64;
        self.read_count += missing.values().map(|p| p.len() as u64).sum::<u64>();
        let mut batch = if missing.is_empty() {
            Batch::empty(now)
        } else {
            read(&missing)?
        };
        for k in held {
            for period in [day.as_str(), month.as_str(), OPEN] {
                let parts = (k.0.as_str(), k.1.as_str(), period);
                if let Some(u) = self.usage.get(&parts as &dyn PeriodKeyRef) {
                    let pk = (k.0.clone(), k.1.clone(), period.to_string());
                    batch.usage.insert(pk, *u);
                }
            }
            let e = self.entries.get(&k).cloned().flatten();
            batch.entries.insert(k, e);
        }
        Ok(batch)
    }

    /// Takes in the register as a decided batch left it: the players it read as they now
    /// stand; its counts for players it did not read (a settlement's players, a blackjack
    /// decision's) on top of what the cache holds of them.
    pub fn absorb(&mut self, batch: &Batch) {
        if self.day != batch.day || self.month != batch.month {
            // Decided on the other side of a period's turn: nothing of it is kept.
            self.clear();
            return;
        }
        let read = |k: &PeriodKey| {
            batch
                .entries
                .contains_key(&player_of(k) as &dyn PlayerKeyRef)
        };
        for (k, e) in &batch.entries {
            self.entries.insert(k.clone(), e.clone());
        }
        for (k, u) in &batch.usage {
            if read(k) {
                self.usage.insert(k.clone(), *u);
            }
        }
        batch.writes.count_into(&mut self.usage, |k| {
            !read(k)
                && self
                    .entries
                    .contains_key(&player_of(k) as &dyn PlayerKeyRef)
        });
        // An entry written for a player the batch did not read is not known whole here.
        for k in batch.writes.entries.keys() {
            if !batch.entries.contains_key(k) {
                self.entries.remove(k);
                self.usage.retain(|u, _| (&u.0, &u.1) != (&k.0, &k.1));
            }
        }
        if self.entries.len() > CACHE_PLAYERS {
            self.clear();
        }
    }
}

impl Batch {
    /// A batch that has read no player.
    fn empty(now: DateTime<Utc>) -> Batch {
        let (day, month) = periods(now);
        Batch {
            now,
            day,
            month,
            entries: HashMap::new(),
            usage: HashMap::new(),
            writes: Writes::default(),
        }
    }

    /// Reads the register and the current periods' usage of the players `commands` name
    /// (one query per table and operator).
    pub fn load<'a>(
        conn: &mut DbConnection,
        now: DateTime<Utc>,
        commands: impl Iterator<Item = (&'a str, &'a Command)>,
    ) -> Result<Batch, StoreError> {
        Batch::load_players(conn, now, &players_by_operator(commands))
    }

    /// Reads the register and the current periods' usage of `players`.
    pub fn load_players(
        conn: &mut DbConnection,
        now: DateTime<Utc>,
        by_operator: &Players<'_>,
    ) -> Result<Batch, StoreError> {
        let (day, month) = periods(now);
        let number = |p: &str| period_number(p).map_or(0, |(n, _)| n);
        let (day_n, month_n) = (number(&day), number(&month));
        let mut entries = HashMap::new();
        let mut usage = HashMap::new();
        for (&op, players) in by_operator {
            let players: Vec<&str> = players.iter().copied().collect();
            for p in &players {
                entries.insert((op.to_string(), p.to_string()), None);
            }
            let sqlite = matches!(conn, DbConnection::Sqlite(_));
            // SQLite: statements of fixed shape, one player at a time (prepared once; an `IN`
            // list's text changes with the batch). PostgreSQL: one round trip per 500 players.
            let chunk_len = if sqlite { 1 } else { 500 };
            for chunk in players.chunks(chunk_len) {
                let rows: Vec<(String, String)> = if sqlite {
                    player_register::table
                        .filter(player_register::operator_id.eq(op))
                        .filter(player_register::player.eq(chunk[0]))
                        .select((player_register::player, player_register::body))
                        .load(conn)?
                } else {
                    player_register::table
                        .filter(player_register::operator_id.eq(op))
                        .filter(player_register::player.eq_any(chunk))
                        .select((player_register::player, player_register::body))
                        .load(conn)?
                };
                for (player, body) in rows {
                    let e: Entry = serde_json::from_str(&body)
                        .map_err(|e| StoreError::Corrupt(format!("player register: {e}")))?;
                    entries.insert((op.to_string(), player), Some(e));
                }
                type Row = (
                    String,
                    i64,
                    i64,
                    i64,
                    i64,
                    i64,
                    i64,
                    i64,
                    i64,
                    i64,
                    i64,
                    i64,
                );
                use player_usage_by_player as t;
                let columns = (
                    t::player,
                    t::day_period,
                    t::day_staked_minor,
                    t::day_net_loss_minor,
                    t::day_reported_staked_minor,
                    t::day_reported_net_loss_minor,
                    t::month_period,
                    t::month_staked_minor,
                    t::month_net_loss_minor,
                    t::month_reported_staked_minor,
                    t::month_reported_net_loss_minor,
                    t::open_staked_minor,
                );
                let rows: Vec<Row> = if sqlite {
                    t::table
                        .filter(t::operator_id.eq(op))
                        .filter(t::player.eq(chunk[0]))
                        .select(columns)
                        .load(conn)?
                } else {
                    t::table
                        .filter(t::operator_id.eq(op))
                        .filter(t::player.eq_any(chunk))
                        .select(columns)
                        .load(conn)?
                };
                for (player, d, ds, dn, drs, drn, m, ms, mn, mrs, mrn, open) in rows {
                    // A period the row no longer holds counts as zero: no row for it.
                    let held = [
                        (d == day_n).then_some((day.as_str(), ds, dn, drs, drn)),
                        (m == month_n).then_some((month.as_str(), ms, mn, mrs, mrn)),
                        Some((OPEN, open, 0, 0, 0)),
                    ];
                    for (period, staked, net_loss, reported_staked, reported_net_loss) in
                        held.into_iter().flatten()
                    {
                        usage.insert(
                            (op.to_string(), player.clone(), period.to_string()),
                            Usage {
                                staked,
                                net_loss,
                                reported_staked,
                                reported_net_loss,
                            },
                        );
                    }
                }
            }
        }
        Ok(Batch {
            now,
            day,
            month,
            entries,
            usage,
            writes: Writes::default(),
        })
    }

    /// Puts the changes of the batch in flight (sealed and being written, not yet committed:
    /// see `service::committer`) on top of what this batch read, for the players it read, so
    /// that its limits count them too.
    pub fn with_in_flight(mut self, w: &Writes) -> Batch {
        for (k, e) in &w.entries {
            if self.entries.contains_key(k) {
                self.entries.insert(k.clone(), e.clone());
            }
        }
        w.count_into(&mut self.usage, |k| {
            self.entries.contains_key(&(k.0.clone(), k.1.clone()))
        });
        self
    }

    /// What the batch writes (its register changes and counts).
    pub fn into_writes(self) -> Writes {
        self.writes
    }

    fn entry(&self, op: &str, player: &str) -> Option<&Entry> {
        self.entries
            .get(&(op.to_string(), player.to_string()))
            .and_then(Option::as_ref)
    }

    fn usage(&self, op: &str, player: &str, period: &str) -> Usage {
        self.usage
            .get(&(op, player, period) as &dyn PeriodKeyRef)
            .copied()
            .unwrap_or_default()
    }

    /// Whether a bet of `stake` by `player` may be accepted now; `earlier`: the player's stakes
    /// accepted before it in the same request (not counted yet).
    pub fn check_bet(
        &self,
        op: &str,
        player: &str,
        stake: i64,
        earlier: i64,
    ) -> Result<(), Refusal> {
        let Some(e) = self.entry(op, player) else {
            return Ok(());
        };
        let now = self.now;
        if let Some(x) = e.exclusion.as_ref().filter(|x| x.active_at(now)) {
            let source = match x.source {
                ExclusionSource::NationalRegister => "in the register of excluded persons",
                ExclusionSource::SelfExclusion => "self-excluded",
            };
            let until = x
                .until
                .map_or("indefinitely".to_string(), |u| format!("until {u}"));
            return Err(refuse(
                code::PLAYER_EXCLUDED,
                format!("player {player} is excluded from the games ({source}, {until})"),
            )
            .clause(format!(
                "{CLAUSE_EXCLUSION}: rejstřík fyzických osob vyloučených z účasti na hazardních hrách, sebeomezující opatření"
            )));
        }
        let exceeded = |what: &str, message: String| {
            Err(refuse(
                code::LIMIT_EXCEEDED,
                format!("player {player}'s limit of {what}: {message}"),
            )
            .clause(format!(
                "{CLAUSE_LIMITS}: sebeomezující opatření společně pro internetovou technickou hru, živou hru a loterii"
            )))
        };
        if let Some(l) = e.limit_at("stake_per_bet", now) {
            if stake > l {
                return exceeded(
                    "the stake per bet",
                    format!("the stake {stake} is above {l}"),
                );
            }
        }
        let day = self.usage(op, player, &self.day);
        let month = self.usage(op, player, &self.month);
        let open = self.usage(op, player, OPEN).staked.max(0);
        let new = earlier.saturating_add(stake);
        let periods = [
            ("day", &self.day, day, "stakes_per_day", "net_loss_per_day"),
            (
                "month",
                &self.month,
                month,
                "stakes_per_month",
                "net_loss_per_month",
            ),
        ];
        for (name, period, u, stakes, loss) in periods {
            if let Some(l) = e.limit_at(stakes, now) {
                let total = u.staked + u.reported_staked + new;
                if total > l {
                    return exceeded(
                        &format!("stakes per {name}"),
                        format!(
                            "{} staked here in {period} + {} reported elsewhere + {new} now = {total}, above {l}",
                            u.staked, u.reported_staked
                        ),
                    );
                }
            }
            if let Some(l) = e.limit_at(loss, now) {
                let total = u.net_loss + u.reported_net_loss + open + new;
                if total > l {
                    return exceeded(
                        &format!("net loss per {name}"),
                        format!(
                            "{} net loss here in {period} + {} reported elsewhere + {open} in open rounds + {new} now = {total}, above {l}",
                            u.net_loss, u.reported_net_loss
                        ),
                    );
                }
            }
        }
        Ok(())
    }

    /// [`Batch::check_bet`] for the bets of one request, in order: each bet accepted counts
    /// toward the next ones of its player.
    pub fn guard<'a>(&'a self, op: &'a str) -> impl FnMut(&str, i64) -> Result<(), Refusal> + 'a {
        let mut earlier: HashMap<String, i64> = HashMap::new();
        move |player, stake| {
            let before = earlier.get(player).copied().unwrap_or(0);
            self.check_bet(op, player, stake, before)?;
            *earlier.entry(player.to_string()).or_default() += stake;
            Ok(())
        }
    }

    /// Decides a register command: its events, or a refusal.
    pub fn decide(&self, op: &str, c: &RegisterCommand) -> Result<Vec<Event>, Refusal> {
        let player = c.player();
        crate::round::check_id("player", player)?;
        let now = self.now;
        let entry = self.entry(op, player).cloned().unwrap_or_default();
        let reason_ok = |r: &str| !r.trim().is_empty() && r.len() <= MAX_REASON;
        match c {
            RegisterCommand::Exclude {
                source,
                from,
                until,
                reason,
                ..
            } => {
                let from = from.unwrap_or(now);
                if until.is_some_and(|u| u <= from) {
                    return Err(refuse(code::BAD_EXCLUSION, "`until` must be after `from`")
                        .clause(CLAUSE_EXCLUSION));
                }
                if reason.as_deref().is_some_and(|r| !reason_ok(r)) {
                    return Err(refuse(
                        code::BAD_EXCLUSION,
                        format!("the reason is 1–{MAX_REASON} bytes"),
                    )
                    .clause(CLAUSE_EXCLUSION));
                }
                Ok(vec![Event::PlayerExcluded {
                    player: player.to_string(),
                    exclusion: Exclusion {
                        source: *source,
                        from,
                        until: *until,
                        reason: reason.clone(),
                    },
                    replaces: entry.exclusion,
                    actor: None,
                    at: now,
                }])
            }
            RegisterCommand::Lift { reason, .. } => {
                if !reason_ok(reason) {
                    return Err(refuse(
                        "bad_reason",
                        format!("the reason is 1–{MAX_REASON} bytes"),
                    ));
                }
                let Some(lifted) = entry.exclusion else {
                    return Err(refuse(
                        code::NOT_EXCLUDED,
                        format!("player {player} has no exclusion to lift"),
                    )
                    .clause(CLAUSE_EXCLUSION));
                };
                Ok(vec![Event::PlayerExclusionLifted {
                    player: player.to_string(),
                    lifted,
                    reason: reason.clone(),
                    actor: None,
                    at: now,
                }])
            }
            RegisterCommand::SetLimits { limits, .. } => {
                let values = limits.values();
                if values
                    .iter()
                    .flatten()
                    .any(|v| !(0..=MAX_MINOR).contains(v))
                {
                    return Err(refuse(
                        code::BAD_LIMITS,
                        format!("a limit is 0–{MAX_MINOR} minor units"),
                    )
                    .clause(CLAUSE_LIMITS));
                }
                let mut changes = Vec::new();
                for (name, to) in LIMIT_NAMES.iter().zip(values) {
                    let cur = entry
                        .limits
                        .get(*name)
                        .map(|l| l.settled(now))
                        .unwrap_or_default();
                    let from = cur.value_minor;
                    // Stricter or equal: at once (and a raise waiting is dropped).
                    let stricter = match (to, from) {
                        (Some(t), Some(f)) => t <= f,
                        (Some(_), None) => true,
                        (None, None) => true,
                        (None, Some(_)) => false,
                    };
                    let effective_at = if stricter {
                        now
                    } else {
                        now + Duration::hours(RAISE_DELAY_HOURS)
                    };
                    let unchanged = if stricter {
                        to == from && cur.pending.is_none()
                    } else {
                        cur.pending.as_ref().is_some_and(|p| p.value_minor == to)
                    };
                    if unchanged {
                        continue;
                    }
                    changes.push(LimitChange {
                        limit: name.to_string(),
                        from_minor: from,
                        to_minor: to,
                        effective_at,
                    });
                }
                if changes.is_empty() {
                    return Ok(Vec::new());
                }
                Ok(vec![Event::PlayerLimitsSet {
                    player: player.to_string(),
                    changes,
                    actor: None,
                    at: now,
                }])
            }
            RegisterCommand::ReportUsage { day, month, .. } => {
                if day.is_none() && month.is_none() {
                    return Err(refuse(
                        code::BAD_USAGE,
                        "report the usage of the day, of the month, or both",
                    )
                    .clause(CLAUSE_LIMITS));
                }
                let ok = |a: &Amounts| {
                    (0..=MAX_MINOR).contains(&a.staked_minor)
                        && (-MAX_MINOR..=MAX_MINOR).contains(&a.net_loss_minor)
                        && a.net_loss_minor <= a.staked_minor
                };
                if day.iter().chain(month.iter()).any(|a| !ok(a)) {
                    return Err(refuse(
                        code::BAD_USAGE,
                        format!("staked_minor is 0–{MAX_MINOR}; net_loss_minor at most staked_minor (negative: a net win)"),
                    )
                    .clause(CLAUSE_LIMITS));
                }
                let of = |period: &str, a: &Option<Amounts>| {
                    a.map(|a| ReportedUsage {
                        period: period.to_string(),
                        staked_minor: a.staked_minor,
                        net_loss_minor: a.net_loss_minor,
                    })
                };
                Ok(vec![Event::PlayerUsageReported {
                    player: player.to_string(),
                    day: of(&self.day, day),
                    month: of(&self.month, month),
                    actor: None,
                    at: now,
                }])
            }
        }
    }

    fn add(&mut self, op: &str, player: &str, period: Period, staked: i64, net_loss: i64) {
        if staked == 0 && net_loss == 0 {
            return;
        }
        let period = match period {
            Period::Day => self.day.as_str(),
            Period::Month => self.month.as_str(),
            Period::Open => OPEN,
        };
        let k = (op, player, period);
        let owned = || (op.to_string(), player.to_string(), period.to_string());
        let u = match self.usage.get_mut(&k as &dyn PeriodKeyRef) {
            Some(u) => u,
            None => self.usage.entry(owned()).or_default(),
        };
        u.staked += staked;
        u.net_loss += net_loss;
        let d = match self.writes.deltas.get_mut(&k as &dyn PeriodKeyRef) {
            Some(d) => d,
            None => self.writes.deltas.entry(owned()).or_default(),
        };
        d.0 += staked;
        d.1 += net_loss;
    }

    fn staked(&mut self, op: &str, player: &str, stake: i64) {
        self.add(op, player, Period::Day, stake, 0);
        self.add(op, player, Period::Month, stake, 0);
        self.add(op, player, Period::Open, stake, 0);
    }

    fn report(&mut self, op: &str, player: &str, r: &ReportedUsage) {
        let k = (op.to_string(), player.to_string(), r.period.clone());
        let u = self.usage.entry(k.clone()).or_default();
        u.reported_staked = r.staked_minor;
        u.reported_net_loss = r.net_loss_minor;
        self.writes
            .reported
            .insert(k, (r.staked_minor, r.net_loss_minor));
    }

    fn set_entry(&mut self, op: &str, player: &str, f: impl FnOnce(&mut Entry)) {
        let k = (op.to_string(), player.to_string());
        let mut e = self.entries.get(&k).cloned().flatten().unwrap_or_default();
        f(&mut e);
        let stored = (e != Entry::default()).then_some(e);
        self.entries.insert(k.clone(), stored.clone());
        self.writes.entries.insert(k, stored);
    }

    /// Counts a command's logged events: stakes accepted, settlements, refunds, and the
    /// register's own changes.
    pub fn count(&mut self, op: &str, events: &[Event]) {
        for ev in events {
            match ev {
                Event::BetAccepted {
                    player,
                    stake_minor,
                    ..
                }
                | Event::DecisionTaken {
                    player,
                    stake_minor,
                    ..
                } => self.staked(op, player, *stake_minor),
                Event::BlackjackInput { bets, .. } => {
                    for b in bets {
                        self.staked(op, &b.player, b.placement.stake_minor);
                    }
                }
                Event::RoundSettled { settlements, .. } => {
                    for s in settlements {
                        let loss = s.stake_minor - s.total_minor;
                        self.add(op, &s.player, Period::Day, 0, loss);
                        self.add(op, &s.player, Period::Month, 0, loss);
                        self.add(op, &s.player, Period::Open, -s.stake_minor, 0);
                    }
                }
                Event::RoundVoided { refunds, .. } => {
                    for r in refunds {
                        self.add(op, &r.player, Period::Open, -r.refund_minor, 0);
                    }
                }
                Event::BetRefunded {
                    player,
                    refund_minor,
                    ..
                } => self.add(op, player, Period::Open, -refund_minor, 0),
                Event::PlayerExcluded {
                    player, exclusion, ..
                } => self.set_entry(op, player, |e| e.exclusion = Some(exclusion.clone())),
                Event::PlayerExclusionLifted { player, .. } => {
                    self.set_entry(op, player, |e| e.exclusion = None)
                }
                Event::PlayerLimitsSet {
                    player,
                    changes,
                    at,
                    ..
                } => {
                    let at = *at;
                    self.set_entry(op, player, |e| {
                        for c in changes {
                            let l = e.limits.entry(c.limit.clone()).or_default();
                            *l = l.settled(at);
                            if c.effective_at <= at {
                                *l = Limit {
                                    value_minor: c.to_minor,
                                    pending: None,
                                };
                            } else {
                                l.pending = Some(PendingLimit {
                                    value_minor: c.to_minor,
                                    effective_at: c.effective_at,
                                });
                            }
                            if *l == Limit::default() {
                                e.limits.remove(&c.limit);
                            }
                        }
                    })
                }
                Event::PlayerUsageReported {
                    player, day, month, ..
                } => {
                    for r in day.iter().chain(month.iter()) {
                        self.report(op, player, r);
                    }
                }
                _ => {}
            }
        }
    }

    /// A register command's answer: the player as the register now stands.
    pub fn reply(&self, op: &str, player: &str) -> Reply {
        let view = self.view(op, player);
        Reply::ok(200, &view)
    }

    fn view(&self, op: &str, player: &str) -> PlayerView {
        let entry = self.entry(op, player).cloned().unwrap_or_default();
        let period = |p: &str| {
            let u = self.usage(op, player, p);
            PeriodView::of(p, u)
        };
        PlayerView::of(
            op,
            player,
            self.now,
            &entry,
            period(&self.day),
            period(&self.month),
            self.usage(op, player, OPEN).staked.max(0),
        )
    }
}

// ----- the store ----------------------------------------------------------------------------

/// Writes a batch's register changes and counts (inside its transaction).
pub fn write(c: &mut DbConnection, w: &Writes) -> Result<(), diesel::result::Error> {
    for ((op, player), entry) in &w.entries {
        diesel::delete(
            player_register::table
                .filter(player_register::operator_id.eq(op))
                .filter(player_register::player.eq(player)),
        )
        .execute(c)?;
        if let Some(e) = entry {
            diesel::insert_into(player_register::table)
                .values((
                    player_register::operator_id.eq(op),
                    player_register::player.eq(player),
                    player_register::body.eq(serde_json::to_string(e).expect("entries serialise")),
                ))
                .execute(c)?;
        }
    }
    upsert(c, &w.deltas, true)?;
    upsert(c, &w.reported, false)?;
    Ok(())
}

/// Rows of one upsert statement.
const UPSERT_ROWS: usize = 500;

/// A SQL string literal (ids are checked `a-z A-Z 0-9 _ -`; quotes are doubled anyway).
fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A period as stored: the day `YYYY-MM-DD` as `(YYYYMMDD, true)`, the month `YYYY-MM` as
/// `(YYYYMM, false)`; `None` for the open stakes (or anything else).
fn period_number(period: &str) -> Option<(i64, bool)> {
    if period.len() != 10 && period.len() != 7 {
        return None;
    }
    let digits: String = period.chars().filter(|c| *c != '-').collect();
    digits.parse().ok().map(|n| (n, period.len() == 10))
}

/// One player's row of `player_usage_by_player` as one write changes it: the day's and the
/// month's amounts (`(period, staked, net_loss)`, period 0 when the write has none) and the
/// open stakes. Counted amounts are added to the row's; reported amounts set.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct UsageUpdate<'a> {
    pub operator: &'a str,
    pub player: &'a str,
    pub day: (i64, i64, i64),
    pub month: (i64, i64, i64),
    pub open_staked: i64,
}

impl UsageUpdate<'_> {
    /// The row's numbers in [`usage_insert!`]'s column order: the write's amounts in the
    /// counted columns (`add`) or in the reported ones, zero in the others.
    fn columns(&self, add: bool) -> [i64; 11] {
        let [d, m] = [self.day, self.month].map(|(period, x, y)| {
            if add {
                [period, x, y, 0, 0]
            } else {
                [period, 0, 0, x, y]
            }
        });
        [
            d[0],
            d[1],
            d[2],
            d[3],
            d[4],
            m[0],
            m[1],
            m[2],
            m[3],
            m[4],
            self.open_staked,
        ]
    }
}

/// A write's amounts by operator, player and period as one update a player (the row holds one
/// day and one month: of two days of one player, which a write that spans midnight has, the
/// later one's amounts are what the row keeps, since the later day replaces the earlier).
pub fn updates(rows: &BTreeMap<PeriodKey, (i64, i64)>) -> Vec<UsageUpdate<'_>> {
    let mut out: Vec<UsageUpdate> = Vec::new();
    for ((op, player, period), &(a, b)) in rows {
        if out
            .last()
            .is_none_or(|u| (u.operator, u.player) != (op.as_str(), player.as_str()))
        {
            out.push(UsageUpdate {
                operator: op,
                player,
                ..UsageUpdate::default()
            });
        }
        let u = out.last_mut().expect("pushed");
        match period_number(period) {
            // Keys are ordered: a later day (or month) of the player comes after an earlier.
            Some((n, true)) => u.day = (n, a, b),
            Some((n, false)) => u.month = (n, a, b),
            None => u.open_staked += a,
        }
    }
    out
}

/// `INSERT` of `player_usage_by_player`'s columns, in the order every statement binds them.
macro_rules! usage_insert {
    () => {
        "INSERT INTO player_usage_by_player AS u (operator_id, player, \
         day_period, day_staked_minor, day_net_loss_minor, \
         day_reported_staked_minor, day_reported_net_loss_minor, \
         month_period, month_staked_minor, month_net_loss_minor, \
         month_reported_staked_minor, month_reported_net_loss_minor, open_staked_minor) "
    };
}
pub(crate) use usage_insert;

/// Counted amounts added to a player's row: of the same period, added; of a later one, the
/// period replaced (its amounts start from these, nothing reported yet); of an earlier one
/// (a clock behind), not kept. Open stakes added.
macro_rules! usage_add_set {
    () => {
        " ON CONFLICT (operator_id, player) DO UPDATE SET \
         day_staked_minor = CASE WHEN excluded.day_period > u.day_period \
             THEN excluded.day_staked_minor WHEN excluded.day_period = u.day_period \
             THEN u.day_staked_minor + excluded.day_staked_minor ELSE u.day_staked_minor END, \
         day_net_loss_minor = CASE WHEN excluded.day_period > u.day_period \
             THEN excluded.day_net_loss_minor WHEN excluded.day_period = u.day_period \
             THEN u.day_net_loss_minor + excluded.day_net_loss_minor \
             ELSE u.day_net_loss_minor END, \
         day_reported_staked_minor = CASE WHEN excluded.day_period > u.day_period \
             THEN 0 ELSE u.day_reported_staked_minor END, \
         day_reported_net_loss_minor = CASE WHEN excluded.day_period > u.day_period \
             THEN 0 ELSE u.day_reported_net_loss_minor END, \
         day_period = CASE WHEN excluded.day_period > u.day_period \
             THEN excluded.day_period ELSE u.day_period END, \
         month_staked_minor = CASE WHEN excluded.month_period > u.month_period \
             THEN excluded.month_staked_minor WHEN excluded.month_period = u.month_period \
             THEN u.month_staked_minor + excluded.month_staked_minor \
             ELSE u.month_staked_minor END, \
         month_net_loss_minor = CASE WHEN excluded.month_period > u.month_period \
             THEN excluded.month_net_loss_minor WHEN excluded.month_period = u.month_period \
             THEN u.month_net_loss_minor + excluded.month_net_loss_minor \
             ELSE u.month_net_loss_minor END, \
         month_reported_staked_minor = CASE WHEN excluded.month_period > u.month_period \
             THEN 0 ELSE u.month_reported_staked_minor END, \
         month_reported_net_loss_minor = CASE WHEN excluded.month_period > u.month_period \
             THEN 0 ELSE u.month_reported_net_loss_minor END, \
         month_period = CASE WHEN excluded.month_period > u.month_period \
             THEN excluded.month_period ELSE u.month_period END, \
         open_staked_minor = u.open_staked_minor + excluded.open_staked_minor"
    };
}
pub(crate) use usage_add_set;

/// Reported amounts set in a player's row: of the same period (or a later one, which then
/// replaces the row's period and its counted amounts start from zero) set, of an earlier one
/// not kept; a write without a day (or month) leaves that period as it is.
macro_rules! usage_report_set {
    () => {
        " ON CONFLICT (operator_id, player) DO UPDATE SET \
         day_staked_minor = CASE WHEN excluded.day_period > u.day_period \
             THEN 0 ELSE u.day_staked_minor END, \
         day_net_loss_minor = CASE WHEN excluded.day_period > u.day_period \
             THEN 0 ELSE u.day_net_loss_minor END, \
         day_reported_staked_minor = CASE WHEN excluded.day_period > 0 \
             AND excluded.day_period >= u.day_period \
             THEN excluded.day_reported_staked_minor ELSE u.day_reported_staked_minor END, \
         day_reported_net_loss_minor = CASE WHEN excluded.day_period > 0 \
             AND excluded.day_period >= u.day_period \
             THEN excluded.day_reported_net_loss_minor ELSE u.day_reported_net_loss_minor END, \
         day_period = CASE WHEN excluded.day_period > u.day_period \
             THEN excluded.day_period ELSE u.day_period END, \
         month_staked_minor = CASE WHEN excluded.month_period > u.month_period \
             THEN 0 ELSE u.month_staked_minor END, \
         month_net_loss_minor = CASE WHEN excluded.month_period > u.month_period \
             THEN 0 ELSE u.month_net_loss_minor END, \
         month_reported_staked_minor = CASE WHEN excluded.month_period > 0 \
             AND excluded.month_period >= u.month_period \
             THEN excluded.month_reported_staked_minor ELSE u.month_reported_staked_minor END, \
         month_reported_net_loss_minor = CASE WHEN excluded.month_period > 0 \
             AND excluded.month_period >= u.month_period \
             THEN excluded.month_reported_net_loss_minor \
             ELSE u.month_reported_net_loss_minor END, \
         month_period = CASE WHEN excluded.month_period > u.month_period \
             THEN excluded.month_period ELSE u.month_period END"
    };
}

/// Counted amounts added (`add`), or reported amounts set, one row a player: on SQLite by
/// statements of fixed shapes prepared once (`store::fixed_insert`), on PostgreSQL as one
/// multi-row `INSERT … ON CONFLICT DO UPDATE` per 500 players.
fn upsert(
    c: &mut DbConnection,
    rows: &BTreeMap<PeriodKey, (i64, i64)>,
    add: bool,
) -> Result<(), diesel::result::Error> {
    let updates = updates(rows);
    if let DbConnection::Sqlite(s) = c {
        return if add {
            let rows: Vec<UsageRow<true>> = updates.iter().map(UsageRow::of).collect();
            crate::store::fixed_insert::insert(s, &rows)
        } else {
            let rows: Vec<UsageRow<false>> = updates.iter().map(UsageRow::of).collect();
            crate::store::fixed_insert::insert(s, &rows)
        };
    }
    for chunk in updates.chunks(UPSERT_ROWS) {
        let values: Vec<String> = chunk
            .iter()
            .map(|u| {
                let numbers: Vec<String> = u.columns(add).iter().map(i64::to_string).collect();
                format!(
                    "({}, {}, {})",
                    lit(u.operator),
                    lit(u.player),
                    numbers.join(", ")
                )
            })
            .collect();
        let set = if add {
            usage_add_set!()
        } else {
            usage_report_set!()
        };
        diesel::sql_query(format!(
            "{}VALUES {}{set}",
            usage_insert!(),
            values.join(", ")
        ))
        .execute(c)?;
    }
    Ok(())
}

/// A player's update as the fixed-shape upsert writes it on SQLite: counted amounts added to
/// the stored ones (`ADD`), or reported amounts set.
struct UsageRow<'a, const ADD: bool> {
    operator: &'a str,
    player: &'a str,
    columns: [i64; 11],
}

impl<'a, const ADD: bool> UsageRow<'a, ADD> {
    fn of(u: &UsageUpdate<'a>) -> Self {
        UsageRow {
            operator: u.operator,
            player: u.player,
            columns: u.columns(ADD),
        }
    }
}

/// Names the two upserts in diesel's statement cache.
struct UsageId<const ADD: bool>;

impl<const ADD: bool> crate::store::fixed_insert::Row for UsageRow<'_, ADD> {
    type Id = UsageId<ADD>;
    const INSERT: &'static str = concat!(usage_insert!(), "VALUES ");
    const SUFFIX: &'static str = if ADD {
        usage_add_set!()
    } else {
        usage_report_set!()
    };
    fn bind<'b>(
        &'b self,
        pass: &mut diesel::query_builder::AstPass<'_, 'b, diesel::sqlite::Sqlite>,
    ) -> diesel::QueryResult<()> {
        use diesel::sql_types::{BigInt, Text};
        pass.push_bind_param::<Text, _>(self.operator)?;
        pass.push_sql(", ");
        pass.push_bind_param::<Text, _>(self.player)?;
        for n in &self.columns {
            pass.push_sql(", ");
            pass.push_bind_param::<BigInt, _>(n)?;
        }
        Ok(())
    }
}

/// A player as a reader sees him: `GET /v1/players/{player}`.
pub fn read(
    conn: &mut DbConnection,
    op: &str,
    player: &str,
    now: DateTime<Utc>,
) -> Result<PlayerView, StoreError> {
    let cmd = Command::Register(RegisterCommand::Lift {
        player: player.to_string(),
        reason: String::new(),
    });
    let b = Batch::load(conn, now, std::iter::once((op, &cmd)))?;
    Ok(b.view(op, player))
}

// ----- answers ------------------------------------------------------------------------------

/// One period's amounts: counted by pitboss, reported by the operator, and their sum (what
/// the limits compare).
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PeriodView {
    /// `YYYY-MM-DD` or `YYYY-MM`, Europe/Prague.
    pub period: String,
    /// Counted by pitboss: stakes accepted, net loss of settled rounds.
    pub counted: Amounts,
    /// Reported by the operator (its other games, § 6(3)).
    pub reported: Amounts,
    pub combined: Amounts,
}

impl PeriodView {
    fn of(period: &str, u: Usage) -> PeriodView {
        PeriodView {
            period: period.to_string(),
            counted: Amounts {
                staked_minor: u.staked,
                net_loss_minor: u.net_loss,
            },
            reported: Amounts {
                staked_minor: u.reported_staked,
                net_loss_minor: u.reported_net_loss,
            },
            combined: Amounts {
                staked_minor: u.staked + u.reported_staked,
                net_loss_minor: u.net_loss + u.reported_net_loss,
            },
        }
    }
}

/// One limit: in force now, and a raise waiting for its time.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LimitView {
    pub limit: String,
    /// In force now (absent: no limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_minor: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<PendingLimit>,
}

/// A player in the operator's register, and what counts toward his limits now.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(example = json!({
    "operator": "op1", "player": "p1", "as_of": "2026-11-26T17:00:00Z",
    "time_zone": "Europe/Prague", "excluded": false,
    "limits": [{"limit": "stakes_per_day", "value_minor": 50000},
               {"limit": "net_loss_per_month", "value_minor": 100000,
                "pending": {"value_minor": 200000, "effective_at": "2026-11-27T17:00:00Z"}}],
    "day": {"period": "2026-11-26", "counted": {"staked_minor": 3000, "net_loss_minor": 1000},
            "reported": {"staked_minor": 2000, "net_loss_minor": 500},
            "combined": {"staked_minor": 5000, "net_loss_minor": 1500}},
    "month": {"period": "2026-11", "counted": {"staked_minor": 3000, "net_loss_minor": 1000},
              "reported": {"staked_minor": 0, "net_loss_minor": 0},
              "combined": {"staked_minor": 3000, "net_loss_minor": 1000}},
    "open_stakes_minor": 0,
    "clauses": ["002 § 6(2)", "002 § 6(3)"]
}))]
pub struct PlayerView {
    pub operator: String,
    pub player: String,
    pub as_of: DateTime<Utc>,
    /// The periods' time zone (`Europe/Prague`).
    pub time_zone: String,
    /// Whether an exclusion is in force now.
    pub excluded: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exclusion: Option<Exclusion>,
    /// The limits set (a limit not listed is none).
    pub limits: Vec<LimitView>,
    pub day: PeriodView,
    pub month: PeriodView,
    /// Stakes of rounds not settled yet: potential loss toward the net-loss limits.
    pub open_stakes_minor: i64,
    pub clauses: Vec<String>,
}

impl PlayerView {
    fn of(
        op: &str,
        player: &str,
        now: DateTime<Utc>,
        e: &Entry,
        day: PeriodView,
        month: PeriodView,
        open: i64,
    ) -> PlayerView {
        let limits = LIMIT_NAMES
            .iter()
            .filter_map(|n| e.limits.get(*n).map(|l| (n, l.settled(now))))
            .filter(|(_, l)| *l != Limit::default())
            .map(|(n, l)| LimitView {
                limit: n.to_string(),
                value_minor: l.value_minor,
                pending: l.pending,
            })
            .collect();
        PlayerView {
            operator: op.to_string(),
            player: player.to_string(),
            as_of: now,
            time_zone: TIME_ZONE.to_string(),
            excluded: e.exclusion.as_ref().is_some_and(|x| x.active_at(now)),
            exclusion: e.exclusion.clone(),
            limits,
            day,
            month,
            open_stakes_minor: open,
            clauses: vec![CLAUSE_EXCLUSION.to_string(), CLAUSE_LIMITS.to_string()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn prague_periods_follow_summer_time() {
        // Winter: UTC+1.
        assert_eq!(
            periods(t("2026-01-31T22:59:59Z")),
            ("2026-01-31".into(), "2026-01".into())
        );
        assert_eq!(
            periods(t("2026-01-31T23:00:00Z")),
            ("2026-02-01".into(), "2026-02".into())
        );
        // Summer (2026: 29 March – 25 October): UTC+2.
        assert_eq!(periods(t("2026-06-30T22:00:00Z")).1, "2026-07");
        assert_eq!(periods(t("2026-06-30T21:59:59Z")).1, "2026-06");
        assert_eq!(prague_offset(t("2026-03-29T00:59:59Z")), Duration::hours(1));
        assert_eq!(prague_offset(t("2026-03-29T01:00:00Z")), Duration::hours(2));
        assert_eq!(prague_offset(t("2026-10-25T00:59:59Z")), Duration::hours(2));
        assert_eq!(prague_offset(t("2026-10-25T01:00:00Z")), Duration::hours(1));
    }

    #[test]
    fn a_raise_waits_and_a_cut_is_at_once() {
        let l = Limit {
            value_minor: Some(100),
            pending: Some(PendingLimit {
                value_minor: Some(500),
                effective_at: t("2026-11-27T12:00:00Z"),
            }),
        };
        assert_eq!(l.at(t("2026-11-27T11:59:59Z")), Some(100));
        assert_eq!(l.at(t("2026-11-27T12:00:00Z")), Some(500));
        assert_eq!(l.settled(t("2026-11-28T00:00:00Z")).pending, None);
    }

    /// A key looked up by its parts finds what was stored under the owned key, in a hash map
    /// (same hash) and in an ordered map (same order), and misses what is not there.
    #[test]
    fn a_period_key_by_its_parts_finds_the_owned_one() {
        let keys = [
            ("op", "p1", "2026-11"),
            ("op", "p1", "2026-11-30"),
            ("op", "p10", OPEN),
            ("op", "p2", "2026-11"),
            ("op2", "", ""),
            ("o", "pp", "x"),
            ("op", "p", "px"),
        ];
        let owned = |k: &(&str, &str, &str)| -> PeriodKey {
            (k.0.to_string(), k.1.to_string(), k.2.to_string())
        };
        let mut hashed: HashMap<PeriodKey, usize> = HashMap::new();
        let mut ordered: BTreeMap<PeriodKey, usize> = BTreeMap::new();
        for (i, k) in keys.iter().enumerate() {
            hashed.insert(owned(k), i);
            ordered.insert(owned(k), i);
        }
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(hashed.get(k as &dyn PeriodKeyRef), Some(&i), "{k:?}");
            assert_eq!(ordered.get(k as &dyn PeriodKeyRef), Some(&i), "{k:?}");
        }
        for k in [("op", "p1", "2026-1"), ("op", "p", "1"), ("o", "p", "px")] {
            assert_eq!(hashed.get(&k as &dyn PeriodKeyRef), None, "{k:?}");
            assert_eq!(ordered.get(&k as &dyn PeriodKeyRef), None, "{k:?}");
        }
        // The parts order as the owned keys do.
        let mut by_parts = keys.to_vec();
        by_parts.sort_by(|a, b| (a as &dyn PeriodKeyRef).cmp(b as &dyn PeriodKeyRef));
        let in_map: Vec<PeriodKey> = ordered.keys().cloned().collect();
        assert_eq!(by_parts.iter().map(owned).collect::<Vec<_>>(), in_map);
        // A player's key the same way.
        let players: HashMap<PlayerKey, usize> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| ((k.0.to_string(), k.1.to_string()), i))
            .collect();
        for k in &keys {
            assert!(players.contains_key(&player_of(&owned(k)) as &dyn PlayerKeyRef));
        }
        assert!(!players.contains_key(&("op", "p3") as &dyn PlayerKeyRef));
        assert!(!players.contains_key(&("o", "p") as &dyn PlayerKeyRef));
    }
}

#[cfg(test)]
mod cache_tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn lift(player: &str) -> Command {
        Command::Register(RegisterCommand::Lift {
            player: player.into(),
            reason: String::new(),
        })
    }

    /// What the store would give for `players`: nothing registered, usage as `stored`.
    fn from_store(
        now: DateTime<Utc>,
        players: &Players<'_>,
        stored: &[(&str, i64)],
    ) -> Result<Batch, StoreError> {
        let mut b = Batch::empty(now);
        for (op, ps) in players {
            for p in ps {
                b.entries.insert((op.to_string(), p.to_string()), None);
                if let Some((_, staked)) = stored.iter().find(|(s, _)| s == p) {
                    b.usage.insert(
                        (op.to_string(), p.to_string(), b.day.clone()),
                        Usage {
                            staked: *staked,
                            ..Usage::default()
                        },
                    );
                }
            }
        }
        Ok(b)
    }

    #[test]
    fn the_cache_holds_players_as_their_batches_left_them() {
        let now = t("2026-11-29T10:00:00Z");
        let (day, _) = periods(now);
        let mut cache = Cache::default();
        let (a, b, c) = (lift("a"), lift("b"), lift("c"));

        // First batch: a and b read from the store; a stakes 100.
        let mut read = 0;
        let cmds = [("op", &a), ("op", &b)];
        let mut batch = cache
            .load(now, cmds.into_iter(), |p| {
                read += 1;
                from_store(now, p, &[("a", 1_000)])
            })
            .unwrap();
        assert_eq!(read, 1);
        batch.staked("op", "a", 100);
        cache.absorb(&batch);
        assert_eq!(cache.len(), 2);

        // Second batch: a is held (the store is not read), as the first batch left him;
        // c is not held and is read. A settlement adds a loss to b, whom it did not read.
        let mut asked: Vec<String> = Vec::new();
        let cmds = [("op", &a), ("op", &c)];
        let mut batch = cache
            .load(now, cmds.into_iter(), |p| {
                asked.extend(p.values().flatten().map(|s| s.to_string()));
                from_store(now, p, &[])
            })
            .unwrap();
        assert_eq!(asked, ["c"]);
        assert_eq!(cache.take_counts(), (1, 3), "a held; a, b and c read");
        assert_eq!(batch.usage("op", "a", &day).staked, 1_100);
        batch.add("op", "b", Period::Day, 0, 40);
        batch.add("op", "z", Period::Day, 0, 7);
        cache.absorb(&batch);

        // Third batch: b holds the loss counted while he was not read; z was never held.
        let cmds = [("op", &b)];
        let batch = cache
            .load(now, cmds.into_iter(), |_| panic!("b is held"))
            .unwrap();
        assert_eq!(batch.usage("op", "b", &day).net_loss, 40);
        assert_eq!(cache.len(), 3);

        // The next day the cache starts again: the store is read.
        let tomorrow = t("2026-11-30T10:00:00Z");
        let mut read = 0;
        let cmds = [("op", &a)];
        cache
            .load(tomorrow, cmds.into_iter(), |p| {
                read += 1;
                from_store(tomorrow, p, &[])
            })
            .unwrap();
        assert_eq!(read, 1);
        assert!(cache.is_empty());
    }

    #[test]
    fn an_entry_written_for_a_player_not_read_leaves_the_cache() {
        let now = t("2026-11-29T10:00:00Z");
        let mut cache = Cache::default();
        let a = lift("a");
        let batch = cache
            .load(now, [("op", &a)].into_iter(), |p| from_store(now, p, &[]))
            .unwrap();
        cache.absorb(&batch);
        assert_eq!(cache.len(), 1);
        // A batch that did not read a changes his entry: the cache cannot know it whole.
        let mut other = Batch::empty(now);
        other.set_entry("op", "a", |e| e.exclusion = None);
        other.entries.clear();
        cache.absorb(&other);
        assert!(cache.is_empty());
    }

    #[test]
    fn the_cache_is_bounded() {
        let now = t("2026-11-29T10:00:00Z");
        let mut cache = Cache::default();
        let players: Vec<Command> = (0..=CACHE_PLAYERS)
            .map(|i| lift(&format!("p{i}")))
            .collect();
        let batch = cache
            .load(now, players.iter().map(|c| ("op", c)), |p| {
                from_store(now, p, &[])
            })
            .unwrap();
        cache.absorb(&batch);
        assert!(
            cache.is_empty(),
            "past its bound the cache starts again empty"
        );
    }

    #[test]
    fn merged_writes_are_the_writes_one_after_the_other() {
        let now = t("2026-11-29T10:00:00Z");
        let mut first = Batch::empty(now);
        first.add("op", "a", Period::Day, 100, 5);
        first.report(
            "op",
            "a",
            &ReportedUsage {
                period: "d".into(),
                staked_minor: 1,
                net_loss_minor: 2,
            },
        );
        let mut second = Batch::empty(now);
        second.add("op", "a", Period::Day, 50, -5);
        second.add("op", "b", Period::Day, 7, 0);
        second.report(
            "op",
            "a",
            &ReportedUsage {
                period: "d".into(),
                staked_minor: 3,
                net_loss_minor: 4,
            },
        );
        let mut merged = first.into_writes();
        merged.merge(&second.into_writes());
        let day = periods(now).0;
        let k = |p: &str, period: &str| ("op".to_string(), p.to_string(), period.to_string());
        assert_eq!(merged.deltas[&k("a", &day)], (150, 0));
        assert_eq!(merged.deltas[&k("b", &day)], (7, 0));
        assert_eq!(merged.reported[&k("a", "d")], (3, 4));
    }
}

#[cfg(test)]
mod store_tests {
    use super::*;
    use crate::store::{self, DatabaseUrl};

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn write_all(c: &mut DbConnection, w: &Writes) {
        c.transaction(|t| write(t, w)).expect("written");
    }

    /// `(staked, net_loss, reported_staked, reported_net_loss)` of a player's day, month and
    /// open stakes as a batch at `now` reads them from the store.
    fn read(c: &mut DbConnection, now: DateTime<Utc>, player: &str) -> [(i64, i64, i64, i64); 3] {
        let players: Players = [("op", [player].into_iter().collect())].into();
        let b = Batch::load_players(c, now, &players).expect("read");
        [b.day.clone(), b.month.clone(), OPEN.to_string()].map(|p| {
            let u = b.usage("op", player, &p);
            (u.staked, u.net_loss, u.reported_staked, u.reported_net_loss)
        })
    }

    fn reported(period: &str, staked: i64, net_loss: i64) -> ReportedUsage {
        ReportedUsage {
            period: period.into(),
            staked_minor: staked,
            net_loss_minor: net_loss,
        }
    }

    /// One row a player holds the current day and month: counted amounts add up within a
    /// period, a later period starts from the write's amounts (reported ones too), a write of
    /// an earlier period (a clock behind) leaves the later one as it is, and open stakes carry
    /// over every period.
    fn a_players_row_holds_his_current_periods(c: &mut DbConnection) {
        let (t1, before_midnight, after_midnight) = (
            t("2026-11-30T10:00:00Z"),
            // Prague: 23:59 on the 30th of November, then 00:01 on the 1st of December.
            t("2026-11-30T22:59:00Z"),
            t("2026-11-30T23:01:00Z"),
        );
        let mut b = Batch::empty(t1);
        b.staked("op", "a", 100);
        b.staked("op", "b", 50);
        write_all(c, &b.into_writes());
        let mut b = Batch::empty(t1);
        b.add("op", "a", Period::Day, 0, 60);
        b.add("op", "a", Period::Month, 0, 60);
        b.add("op", "a", Period::Open, -100, 0);
        b.report("op", "a", &reported("2026-11-30", 7, 3));
        write_all(c, &b.into_writes());
        assert_eq!(
            read(c, t1, "a"),
            [(100, 60, 7, 3), (100, 60, 0, 0), (0, 0, 0, 0)]
        );
        assert_eq!(
            read(c, t1, "b"),
            [(50, 0, 0, 0), (50, 0, 0, 0), (50, 0, 0, 0)]
        );

        // Two batches on either side of midnight, written in one transaction.
        let mut late = Batch::empty(before_midnight);
        late.staked("op", "a", 10);
        let mut early = Batch::empty(after_midnight);
        early.staked("op", "a", 20);
        let mut w = late.into_writes();
        w.merge(&early.into_writes());
        write_all(c, &w);
        assert_eq!(
            read(c, after_midnight, "a"),
            [(20, 0, 0, 0), (20, 0, 0, 0), (30, 0, 0, 0)]
        );
        assert_eq!(
            read(c, after_midnight, "b"),
            [(0, 0, 0, 0), (0, 0, 0, 0), (50, 0, 0, 0)],
            "a period the row does not hold counts as zero"
        );

        // A batch whose clock is behind: its day and month are not kept, its open stake is.
        let mut behind = Batch::empty(t1);
        behind.staked("op", "a", 5);
        write_all(c, &behind.into_writes());
        assert_eq!(
            read(c, after_midnight, "a"),
            [(20, 0, 0, 0), (20, 0, 0, 0), (35, 0, 0, 0)]
        );

        // Reported amounts: the month alone leaves the day as it was; a later day's report
        // starts the day over.
        let mut b = Batch::empty(after_midnight);
        b.report("op", "a", &reported("2026-12", 9, -9));
        write_all(c, &b.into_writes());
        assert_eq!(
            read(c, after_midnight, "a"),
            [(20, 0, 0, 0), (20, 0, 9, -9), (35, 0, 0, 0)]
        );
        let next_day = t("2026-12-01T23:30:00Z");
        let mut b = Batch::empty(next_day);
        b.report("op", "a", &reported("2026-12-02", 4, 4));
        write_all(c, &b.into_writes());
        assert_eq!(
            read(c, next_day, "a"),
            [(0, 0, 4, 4), (20, 0, 9, -9), (35, 0, 0, 0)]
        );
        // A player read who has no row: nothing counted.
        assert_eq!(read(c, next_day, "nobody"), [(0, 0, 0, 0); 3]);
    }

    #[test]
    fn a_players_row_holds_his_current_periods_sqlite() {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = DatabaseUrl::Sqlite(dir.path().join("p.sqlite").display().to_string());
        store::migrate(&url).expect("migrate");
        a_players_row_holds_his_current_periods(&mut store::connect(&url).expect("connect"));
    }

    #[test]
    fn a_players_row_holds_his_current_periods_postgres() {
        let schema = store::scratch::PgSchema::new("pb_register");
        a_players_row_holds_his_current_periods(&mut schema.conn());
    }
}
