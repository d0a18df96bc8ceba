//! Approved plan releases (issue 20): a regulator approves a plan version by its SHA-256
//! under a reference, from a date and optionally until one, over the API (a regulator key) or
//! offline as a C2SP signed note over the same lines, signed with the regulator's own Ed25519
//! key; approvals are withdrawn over the API. With `serve --require-approval`, a table opens
//! and a round starts only on a plan version with an approval valid at that moment: a
//! withdrawn or expired approval refuses new tables and rounds, and lets running rounds finish.
//!
//! Everything here is decided by the writer from the logged state (`State::approvals`), so
//! the log alone says which approval let a table open.

use chrono::{DateTime, SecondsFormat, Utc};
use pitboss_audit::note::{parse_note, NoteSigner, NoteVerifier};

use crate::games::Refusal;
use crate::plan::PlanSet;
use crate::round::regulator::{status_of, Actor, ApprovalStatus};
use crate::round::{Event, State};

/// What the regulator's rules ask of a deployment (`serve` flags).
#[derive(Debug, Clone, Default)]
pub struct RegulatorOptions {
    /// Open tables and start rounds only on plan versions with a valid approval.
    pub require_approval: bool,
    /// The regulators' note verifier keys (`name+id+base64`), for offline approvals.
    pub regulator_keys: Vec<String>,
    /// Open a table only with its registration number and dealing device.
    pub require_registration: bool,
}

/// The first line of an approval note's text.
pub const NOTE_HEADER: &str = "pitboss plan approval v1";

/// What a regulator approves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// `id@version`.
    pub plan: String,
    /// SHA-256 (hex, lowercase) of the plan's canonical form.
    pub sha256: String,
    pub reference: String,
    pub valid_from: DateTime<Utc>,
    pub valid_until: Option<DateTime<Utc>>,
}

fn refuse(code: &str, message: impl Into<String>) -> Refusal {
    Refusal::new(code, message)
}

fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

impl ApprovalRequest {
    /// The note text (without signatures): a header line, then one `field value` line each.
    pub fn note_text(&self) -> String {
        let mut t = format!(
            "{NOTE_HEADER}\nplan {}\nsha256 {}\nreference {}\nvalid_from {}\n",
            self.plan,
            self.sha256,
            self.reference,
            time(self.valid_from)
        );
        if let Some(u) = self.valid_until {
            t.push_str(&format!("valid_until {}\n", time(u)));
        }
        t
    }

    /// Reads a note's text as [`ApprovalRequest::note_text`] writes it.
    pub fn parse_note_text(text: &str) -> Result<ApprovalRequest, String> {
        let mut lines = text.lines();
        if lines.next() != Some(NOTE_HEADER) {
            return Err(format!("the note's first line must be {NOTE_HEADER:?}"));
        }
        let mut fields = std::collections::BTreeMap::new();
        for l in lines {
            let (k, v) = l
                .split_once(' ')
                .ok_or_else(|| format!("line {l:?} is not `field value`"))?;
            if fields.insert(k, v).is_some() {
                return Err(format!("field {k} given twice"));
            }
        }
        let get = |k: &str| {
            fields
                .get(k)
                .map(|v| v.to_string())
                .ok_or_else(|| format!("the note has no {k}"))
        };
        let when = |k: &str, v: &str| {
            DateTime::parse_from_rfc3339(v)
                .map(|d| d.with_timezone(&Utc))
                .map_err(|e| format!("{k}: {v:?} is not an RFC 3339 time ({e})"))
        };
        for k in fields.keys() {
            if !["plan", "sha256", "reference", "valid_from", "valid_until"].contains(k) {
                return Err(format!("unknown field {k}"));
            }
        }
        Ok(ApprovalRequest {
            plan: get("plan")?,
            sha256: get("sha256")?,
            reference: get("reference")?,
            valid_from: when("valid_from", &get("valid_from")?)?,
            valid_until: fields
                .get("valid_until")
                .map(|v| when("valid_until", v))
                .transpose()?,
        })
    }

    /// Signs the approval as a note with the regulator's key (`pitboss plan approve`).
    pub fn sign(&self, signer: &NoteSigner) -> String {
        let text = self.note_text();
        // The signature line ends with its newline.
        format!("{text}\n{}", signer.sign(text.as_bytes()).line())
    }
}

/// Checks a signed approval note against the regulators' keys: the approval it states and
/// the signer (`name+key id`) whose signature verified.
pub fn verify_note(
    note: &str,
    keys: &[NoteVerifier],
) -> Result<(ApprovalRequest, String), Refusal> {
    let bad = |m: String| refuse("bad_approval_note", m);
    let (text, sigs) = parse_note(note).map_err(|e| bad(format!("not a signed note: {e}")))?;
    let req = ApprovalRequest::parse_note_text(text).map_err(bad)?;
    for sig in &sigs {
        for k in keys {
            if k.is_named_by(sig) && sig.verify(text.as_bytes(), k.key()) {
                let id: String = k.id().iter().map(|b| format!("{b:02x}")).collect();
                return Ok((req, format!("{}+{id}", k.name())));
            }
        }
    }
    Err(refuse(
        "approval_signature_unknown",
        if keys.is_empty() {
            "no regulator key is configured (serve --regulator-key VKEY): an offline approval cannot be checked".to_string()
        } else {
            "no signature of the note verifies with a configured regulator key".to_string()
        },
    ))
}

/// The approvals a database's log records, read from its `plan_approved` and
/// `plan_approval_withdrawn` entries (`pitboss plan list --database-url`).
pub fn stored(
    url: &crate::store::DatabaseUrl,
) -> Result<std::collections::BTreeMap<String, crate::round::regulator::Approval>, String> {
    use crate::store::schema::audit_entries;
    use diesel::prelude::*;
    let mut conn = crate::store::connect(url).map_err(|e| e.to_string())?;
    let rows: Vec<Vec<u8>> = audit_entries::table
        .filter(audit_entries::kind.eq_any(["plan_approved", "plan_approval_withdrawn"]))
        .order(audit_entries::seq.asc())
        .select(audit_entries::canonical)
        .load(&mut conn)
        .map_err(|e| format!("{}: {e}", url.as_str()))?;
    let mut state = State::default();
    let plans = PlanSet::default();
    for c in rows {
        let v: serde_json::Value = serde_json::from_slice(&c).map_err(|e| e.to_string())?;
        if let Some(e) = crate::round::event_of_entry(&v)? {
            state.apply(&plans, &e)?;
        }
    }
    Ok(state.approvals)
}

/// Who loads plans: the service, at its start, run by the operating system's user.
pub fn plan_loader() -> Actor {
    Actor {
        key: "serve".into(),
        role: "service".into(),
        person: std::env::var("USER")
            .ok()
            .filter(|u| !u.is_empty() && u.len() <= 64 && !u.chars().any(char::is_control)),
        signer: None,
    }
}

/// A reference: 1–128 printable ASCII characters.
fn reference_ok(r: &str) -> bool {
    !r.is_empty() && r.len() <= 128 && r.bytes().all(|b| b.is_ascii_graphic() || b == b' ')
}

/// The events of an approval, or why not.
pub fn decide_approve(
    state: &State,
    plans: &PlanSet,
    req: &ApprovalRequest,
    actor: &Actor,
    via: &str,
    note: Option<&str>,
) -> Result<Vec<Event>, Refusal> {
    let r: crate::plan::PlanRef = req
        .plan
        .parse()
        .map_err(|e: crate::plan::model::PlanRefError| refuse("bad_plan_ref", e.to_string()))?;
    if r.version.is_none() {
        return Err(refuse(
            "bad_plan_ref",
            format!("an approval names one version: {}@VERSION", req.plan),
        ));
    }
    let hex = req.sha256.len() == 64
        && req
            .sha256
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if !hex {
        return Err(refuse(
            "bad_sha256",
            "sha256 must be 64 lowercase hex digits (`pitboss plan hash PLAN`)",
        ));
    }
    if !reference_ok(&req.reference) {
        return Err(refuse(
            "bad_reference",
            "the approval reference must be 1–128 printable characters",
        ));
    }
    if req.valid_until.is_some_and(|u| u <= req.valid_from) {
        return Err(refuse(
            "bad_validity",
            "valid_until must be after valid_from",
        ));
    }
    // A version loaded here with other content is not the one approved.
    if let Some(loaded) = plans.get(&r) {
        if loaded.hash != req.sha256 {
            return Err(refuse(
                "plan_hash_mismatch",
                format!(
                    "{} is loaded here with content {}, not {}",
                    loaded.key(),
                    loaded.hash,
                    req.sha256
                ),
            ));
        }
    }
    if state.approvals.contains_key(&req.reference) {
        return Err(refuse(
            "approval_exists",
            format!(
                "an approval with reference {} is already logged",
                req.reference
            ),
        ));
    }
    Ok(vec![Event::PlanApproved {
        plan: r.to_string(),
        sha256: req.sha256.clone(),
        reference: req.reference.clone(),
        valid_from: req.valid_from,
        valid_until: req.valid_until,
        actor: actor.clone(),
        via: via.to_string(),
        note: note.map(str::to_string),
    }])
}

/// The events of a withdrawal, or why not.
pub fn decide_withdraw(
    state: &State,
    reference: &str,
    reason: &str,
    actor: &Actor,
) -> Result<Vec<Event>, Refusal> {
    let a = state.approvals.get(reference).ok_or_else(|| {
        refuse(
            "approval_not_found",
            format!("no approval with reference {reference}"),
        )
    })?;
    if a.withdrawn_by.is_some() {
        return Err(refuse(
            "approval_withdrawn",
            format!("approval {reference} is already withdrawn"),
        ));
    }
    if reason.trim().is_empty() || reason.len() > 512 {
        return Err(refuse(
            "bad_reason",
            "a withdrawal gives its reason (1–512 bytes)",
        ));
    }
    Ok(vec![Event::PlanApprovalWithdrawn {
        reference: reference.to_string(),
        sha256: a.sha256.clone(),
        reason: reason.to_string(),
        actor: actor.clone(),
    }])
}

/// Under `--require-approval`: whether the plan version `plan` (with content `sha256`) may
/// open a table or start a round at `now`.
pub fn check_approved(
    state: &State,
    plan: &str,
    sha256: &str,
    now: DateTime<Utc>,
) -> Result<(), Refusal> {
    let (status, approval) = status_of(state.approvals.values(), sha256, now);
    if status == ApprovalStatus::Approved {
        return Ok(());
    }
    let why = match (status, approval) {
        (ApprovalStatus::Pending, Some(a)) => format!(
            "its approval {} is valid from {}",
            a.reference,
            time(a.valid_from)
        ),
        (ApprovalStatus::Expired, Some(a)) => format!(
            "its approval {} ended {}",
            a.reference,
            a.valid_until.map(time).unwrap_or_default()
        ),
        (ApprovalStatus::Withdrawn, Some(a)) => {
            format!("its approval {} was withdrawn", a.reference)
        }
        _ => "no regulator has approved its content".to_string(),
    };
    let mut r = refuse(
        "plan_not_approved",
        format!("{plan} (content {sha256}) may not be played: {why}; this service requires an approval valid now (serve --require-approval)"),
    );
    r.plan = Some(plan.to_string());
    Err(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req() -> ApprovalRequest {
        ApprovalRequest {
            plan: "evolution-roulette@1".into(),
            sha256: "ab".repeat(32),
            reference: "MF-2026/123".into(),
            valid_from: "2026-01-01T00:00:00Z".parse().unwrap(),
            valid_until: Some("2027-01-01T00:00:00Z".parse().unwrap()),
        }
    }

    #[test]
    fn a_note_signed_by_a_regulator_key_verifies_and_reads_back() {
        let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
        let signer = NoteSigner::new("mf.gov.cz/approvals", key).unwrap();
        let note = req().sign(&signer);
        let keys = [signer.verifier().clone()];
        let (back, by) = verify_note(&note, &keys).unwrap();
        assert_eq!(back, req());
        assert!(by.starts_with("mf.gov.cz/approvals+"), "{by}");
        // Another key, or a changed line, does not verify.
        let other = NoteSigner::new(
            "mf.gov.cz/approvals",
            ed25519_dalek::SigningKey::from_bytes(&[8; 32]),
        )
        .unwrap();
        assert_eq!(
            verify_note(&note, &[other.verifier().clone()])
                .unwrap_err()
                .code,
            "approval_signature_unknown"
        );
        let forged = note.replace("2027-01-01", "2099-01-01");
        assert_eq!(
            verify_note(&forged, &keys).unwrap_err().code,
            "approval_signature_unknown"
        );
    }
}
