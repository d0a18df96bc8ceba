//! What changed between two versions of a plan, field by field.

use std::collections::BTreeSet;
use std::fmt;

use serde::Serialize;
use serde_json::Value;

use super::canonical::normalised;
use super::model::Plan;
use super::path::element_key;

/// One changed field: absent `before` means added, absent `after` removed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Value>,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.before, &self.after) {
            (Some(b), Some(a)) => write!(f, "~ {}: {} → {}", self.path, b, a),
            (None, Some(a)) => write!(f, "+ {}: {}", self.path, a),
            (Some(b), None) => write!(f, "- {}: {}", self.path, b),
            (None, None) => write!(f, "  {}", self.path),
        }
    }
}

/// Every field that differs between `a` and `b`, in path order. The identity's `version`
/// is reported like any other field.
pub fn diff(a: &Plan, b: &Plan) -> Vec<Change> {
    let mut out = Vec::new();
    walk("", &normalised(a), &normalised(b), &mut out, false);
    out
}

/// One field of two plans side by side, as [`diff`] walks them: `changed` where [`diff`]
/// reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideBySide {
    pub path: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
    pub changed: bool,
}

/// Every field of `a` and `b` in path order, equal ones too (the console's side-by-side
/// page); the changed ones are exactly [`diff`]'s.
pub fn side_by_side(a: &Plan, b: &Plan) -> Vec<SideBySide> {
    let mut out = Vec::new();
    walk("", &normalised(a), &normalised(b), &mut out, true);
    out.into_iter()
        .map(|c| SideBySide {
            changed: c.before != c.after,
            path: c.path,
            before: c.before,
            after: c.after,
        })
        .collect()
}

fn join(prefix: &str, field: &str) -> String {
    if prefix.is_empty() {
        field.to_string()
    } else {
        format!("{prefix}.{field}")
    }
}

/// A ratio (`{"numerator", "denominator"}`) is one value to a reader: `17:1 → 16:1`, not two
/// changed numbers.
fn is_ratio(v: &Value) -> bool {
    v.as_object().is_some_and(|m| {
        m.len() == 2 && m.contains_key("numerator") && m.contains_key("denominator")
    })
}

fn walk(path: &str, a: &Value, b: &Value, out: &mut Vec<Change>, all: bool) {
    match (a, b) {
        (Value::Object(ma), Value::Object(mb)) if !(is_ratio(a) && is_ratio(b)) => {
            let keys: BTreeSet<&String> = ma.keys().chain(mb.keys()).collect();
            for k in keys {
                let p = join(path, k);
                match (ma.get(k), mb.get(k)) {
                    (Some(x), Some(y)) => walk(&p, x, y, out, all),
                    (x, y) => out.push(Change {
                        path: p,
                        before: x.cloned(),
                        after: y.cloned(),
                    }),
                }
            }
        }
        (Value::Array(xa), Value::Array(xb))
            if xa.iter().chain(xb.iter()).all(|e| element_key(e).is_some()) =>
        {
            let keyed = |items: &Vec<Value>| -> Vec<(String, Value)> {
                items
                    .iter()
                    .map(|e| (element_key(e).expect("checked by the guard"), e.clone()))
                    .collect()
            };
            let (ka, kb) = (keyed(xa), keyed(xb));
            let keys: BTreeSet<&String> = ka.iter().chain(kb.iter()).map(|(k, _)| k).collect();
            for k in keys {
                let p = format!("{path}[{k}]");
                let find = |list: &[(String, Value)]| {
                    list.iter().find(|(kk, _)| kk == k).map(|(_, v)| v.clone())
                };
                match (find(&ka), find(&kb)) {
                    (Some(x), Some(y)) => walk(&p, &x, &y, out, all),
                    (x, y) => out.push(Change {
                        path: p,
                        before: x,
                        after: y,
                    }),
                }
            }
        }
        _ if a == b && !all => {}
        _ => out.push(Change {
            path: path.to_string(),
            before: Some(a.clone()),
            after: Some(b.clone()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(id: &str) -> Plan {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("game_plans");
        crate::plan::registry::load_file(
            &dir.join(format!("{id}@1.toml")),
            Some(&dir.join("sources")),
        )
        .unwrap_or_else(|f| panic!("{id} loads: {f:?}"))
        .plan
    }

    #[test]
    fn side_by_side_marks_exactly_the_fields_diff_reports() {
        let (a, b) = (plan("czech-blackjack"), plan("czech-blackjack-strict"));
        let rows = side_by_side(&a, &b);
        let changed: Vec<Change> = rows
            .iter()
            .filter(|r| r.changed)
            .map(|r| Change {
                path: r.path.clone(),
                before: r.before.clone(),
                after: r.after.clone(),
            })
            .collect();
        assert_eq!(changed, diff(&a, &b));
        assert!(
            rows.len() > changed.len() * 2,
            "equal fields are listed too"
        );
        assert!(rows
            .iter()
            .any(|r| r.path == "bets[main].max_bet" && !r.changed));
        assert!(side_by_side(&a, &a).iter().all(|r| !r.changed));
    }
}
