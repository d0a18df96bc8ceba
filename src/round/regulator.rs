//! What the regulator's rules add to the state (issue 20): who did a thing (an [`Actor`]) and
//! the approvals of plan versions ([`Approval`]), folded from `plan_approved` and
//! `plan_approval_withdrawn` entries. Plain data: the state holds one record per approval
//! reference (a handful per plan version), never history.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Who did what an entry records: the API key that asked (its id, never its secret), its
/// role, and the person the caller named (`person`, an id of the operator's or regulator's
/// own, e.g. a staff number), when it gave one. An approval made offline also names the
/// note's signer (`signer`: the regulator key's name and id, `name+hex id`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Actor {
    pub key: String,
    pub role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
}

/// A live table's registration (Act 186/2016 §83: a transmitted live game's table carries
/// its registration number) and the id of the device that deals it (wheel, shoe, shuffler),
/// given when the table opens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Registration {
    #[schema(required = true)]
    pub registration: Option<String>,
    #[schema(required = true)]
    pub device: Option<String>,
}

/// A round paused by a reported error (`round_paused`), until resumed or finished.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Pause {
    pub reason: String,
    #[schema(required = true)]
    pub reported: Option<String>,
    #[schema(required = true)]
    pub actor: Option<Actor>,
    pub at: DateTime<Utc>,
}

/// A regulator's approval of one plan version (by its content hash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Approval {
    /// The approval's reference (the regulator's file number); unique.
    pub reference: String,
    /// `id@version` of the plan approved.
    pub plan: String,
    /// SHA-256 (hex) of the plan's canonical form: the content approved.
    pub sha256: String,
    pub valid_from: DateTime<Utc>,
    /// End of validity (exclusive); `null`: until withdrawn.
    #[schema(required = true)]
    pub valid_until: Option<DateTime<Utc>>,
    pub approved_by: Actor,
    /// `api` or `note` (an offline signed note).
    pub via: String,
    /// Withdrawn: refuses new tables and rounds; running rounds finish.
    #[schema(required = true)]
    pub withdrawn_by: Option<Actor>,
}

/// Where an approval stands at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    /// Valid now.
    Approved,
    /// Valid from a later time.
    Pending,
    Expired,
    Withdrawn,
    /// No approval names this content.
    None,
}

impl ApprovalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Approved => "approved",
            ApprovalStatus::Pending => "pending",
            ApprovalStatus::Expired => "expired",
            ApprovalStatus::Withdrawn => "withdrawn",
            ApprovalStatus::None => "none",
        }
    }
}

impl Approval {
    pub fn status_at(&self, now: DateTime<Utc>) -> ApprovalStatus {
        if self.withdrawn_by.is_some() {
            ApprovalStatus::Withdrawn
        } else if now < self.valid_from {
            ApprovalStatus::Pending
        } else if self.valid_until.is_some_and(|u| now >= u) {
            ApprovalStatus::Expired
        } else {
            ApprovalStatus::Approved
        }
    }
}

/// The best status of a plan content among its approvals (approved before pending before
/// expired before withdrawn), with the approval that gives it.
pub fn status_of<'a>(
    approvals: impl IntoIterator<Item = &'a Approval>,
    sha256: &str,
    now: DateTime<Utc>,
) -> (ApprovalStatus, Option<&'a Approval>) {
    let rank = |s: ApprovalStatus| match s {
        ApprovalStatus::Approved => 0,
        ApprovalStatus::Pending => 1,
        ApprovalStatus::Expired => 2,
        ApprovalStatus::Withdrawn => 3,
        ApprovalStatus::None => 4,
    };
    approvals
        .into_iter()
        .filter(|a| a.sha256 == sha256)
        .map(|a| (a.status_at(now), Some(a)))
        .min_by_key(|(s, _)| rank(*s))
        .unwrap_or((ApprovalStatus::None, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    fn approval(until: Option<&str>, withdrawn: bool) -> Approval {
        let actor = Actor {
            key: "k".into(),
            role: "regulator".into(),
            person: None,
            signer: None,
        };
        Approval {
            reference: "MF-1".into(),
            plan: "p@1".into(),
            sha256: "aa".into(),
            valid_from: t("2026-01-01T00:00:00Z"),
            valid_until: until.map(t),
            approved_by: actor.clone(),
            via: "api".into(),
            withdrawn_by: withdrawn.then_some(actor),
        }
    }

    #[test]
    fn an_approval_is_valid_from_its_start_to_its_end_unless_withdrawn() {
        let a = approval(Some("2027-01-01T00:00:00Z"), false);
        assert_eq!(
            a.status_at(t("2025-12-31T23:59:59Z")),
            ApprovalStatus::Pending
        );
        assert_eq!(
            a.status_at(t("2026-01-01T00:00:00Z")),
            ApprovalStatus::Approved
        );
        assert_eq!(
            a.status_at(t("2027-01-01T00:00:00Z")),
            ApprovalStatus::Expired
        );
        let w = approval(None, true);
        assert_eq!(
            w.status_at(t("2026-06-01T00:00:00Z")),
            ApprovalStatus::Withdrawn
        );
        let both = [w, a];
        assert_eq!(
            status_of(&both, "aa", t("2026-06-01T00:00:00Z")).0,
            ApprovalStatus::Approved
        );
        assert_eq!(
            status_of(&both, "bb", t("2026-06-01T00:00:00Z")).0,
            ApprovalStatus::None
        );
    }
}
