//! Plans as a reviewer reads them: the document's tables as tables, rules and policies as
//! labelled sections, amounts as the document writes them (`120 000 Kč`), ratios as `3:2`.

use std::fmt::Write;

use serde_json::Value;

use crate::money::{format_amount, format_minor, Currency};
use crate::plan::amounts::SchemaNode;
use crate::plan::canonical;
use crate::plan::diff::Change;
use crate::plan::path::element_key;
use crate::plan::LoadedPlan;

/// A ratio as the normalised plan holds it, `{"numerator", "denominator"}`.
fn ratio(v: &Value) -> Option<String> {
    let m = v.as_object()?;
    if m.len() != 2 {
        return None;
    }
    Some(format!(
        "{}:{}",
        m.get("numerator")?.as_u64()?,
        m.get("denominator")?.as_u64()?
    ))
}

/// A field name as words: `max_win_plus_stake` → `max win plus stake`.
fn words(name: &str) -> String {
    name.replace('_', " ")
}

/// A field's label: its name as words, without the unit its value now carries (`_ms`).
fn label(name: &str) -> String {
    words(name.strip_suffix("_ms").unwrap_or(name))
}

/// One value on one line: amounts in the currency, ratios, yes/no, identifiers as words,
/// milliseconds as seconds where whole, lists joined.
fn scalar(v: &Value, node: Option<SchemaNode>, name: &str, currency: Currency) -> String {
    if node.is_some_and(SchemaNode::is_amount) {
        if let Some(n) = v.as_i64() {
            return format_amount(n, currency);
        }
    }
    if let Some(r) = ratio(v) {
        return r;
    }
    match v {
        Value::Null => "none".into(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
        Value::Number(n) if name.ends_with("_ms") => match n.as_u64() {
            Some(ms) if ms % 1000 == 0 => format!("{} s", ms / 1000),
            _ => format!("{n} ms"),
        },
        Value::Number(n) => n.to_string(),
        // Identifiers of the format (`one_or_eleven`) read as words; prose stays as written.
        Value::String(s)
            if s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') =>
        {
            words(s)
        }
        Value::String(s) => s.clone(),
        Value::Array(items) if items.is_empty() => "none".into(),
        Value::Array(items) => items
            .iter()
            .map(|x| scalar(x, node.and_then(SchemaNode::items), "", currency))
            .collect::<Vec<_>>()
            .join(", "),
        Value::Object(m) => m
            .iter()
            .map(|(k, x)| {
                format!(
                    "{} {}",
                    words(k),
                    scalar(x, node.and_then(|n| n.field(k)), k, currency)
                )
            })
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Whether a value prints on one line: not an object (ratios aside) and not a list holding one.
fn is_flat(v: &Value) -> bool {
    match v {
        Value::Object(_) => ratio(v).is_some(),
        Value::Array(items) => items.iter().all(|x| !x.is_object() || ratio(x).is_some()),
        _ => true,
    }
}

/// Whether an object prints on one line: every field flat and no `clause` of its own.
fn is_row(v: &Value) -> bool {
    v.as_object()
        .is_some_and(|m| !m.contains_key("clause") && m.values().all(is_flat))
}

struct Section<'a> {
    plan: &'a LoadedPlan,
    currency: Currency,
    out: String,
}

impl Section<'_> {
    /// An assumed value is marked as in the limits table.
    fn mark(&self, path: &str) -> &'static str {
        if self.plan.plan.assumption(path).is_some() {
            "*"
        } else {
            ""
        }
    }

    /// The fields of `obj`: flat ones aligned first, then nested ones as sub-sections.
    fn fields(
        &mut self,
        obj: &serde_json::Map<String, Value>,
        node: Option<SchemaNode>,
        path: &str,
        indent: usize,
    ) {
        let pad = " ".repeat(indent);
        let flat: Vec<(&String, &Value)> = obj
            .iter()
            .filter(|(k, v)| *k != "clause" && is_flat(v))
            .collect();
        let width = flat
            .iter()
            .map(|(k, _)| label(k).chars().count())
            .max()
            .unwrap_or(0);
        for (k, v) in flat {
            let field_path = format!("{path}.{k}");
            let shown = scalar(v, node.and_then(|n| n.field(k)), k, self.currency);
            let name = label(k);
            let _ = writeln!(
                self.out,
                "{pad}{name:<width$}  {shown}{}",
                self.mark(&field_path)
            );
        }
        for (k, v) in obj.iter().filter(|(k, v)| *k != "clause" && !is_flat(v)) {
            let field_path = format!("{path}.{k}");
            let child = node.and_then(|n| n.field(k));
            match v {
                Value::Object(m) => {
                    let title = format!("{}{}", label(k), self.mark(&field_path));
                    self.heading(&title, m.get("clause"), indent);
                    self.fields(m, child, &field_path, indent + 2);
                }
                Value::Array(items) => {
                    let _ = writeln!(self.out, "{pad}{}{}", label(k), self.mark(&field_path));
                    let item_node = child.and_then(SchemaNode::items);
                    for (i, item) in items.iter().enumerate() {
                        self.element(item, item_node, &field_path, i, indent + 2);
                    }
                }
                _ => {}
            }
        }
    }

    fn heading(&mut self, title: &str, clause: Option<&Value>, indent: usize) {
        let pad = " ".repeat(indent);
        match clause.and_then(Value::as_str) {
            Some(c) => {
                let _ = writeln!(self.out, "{pad}{title}  (§ {c})");
            }
            None => {
                let _ = writeln!(self.out, "{pad}{title}");
            }
        }
    }

    /// One element of a list: a one-line row, or a sub-section named by its key.
    fn element(
        &mut self,
        item: &Value,
        node: Option<SchemaNode>,
        list_path: &str,
        index: usize,
        indent: usize,
    ) {
        let pad = " ".repeat(indent);
        let key = element_key(item);
        let path = match &key {
            Some(k) => format!("{list_path}[{k}]"),
            None => format!("{list_path}[{index}]"),
        };
        let Some(m) = item.as_object() else {
            let _ = writeln!(self.out, "{pad}- {}", scalar(item, node, "", self.currency));
            return;
        };
        if is_row(item) {
            let row = m
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{} {}",
                        words(k),
                        scalar(v, node.and_then(|n| n.field(k)), k, self.currency)
                    )
                })
                .collect::<Vec<_>>()
                .join(" · ");
            let _ = writeln!(self.out, "{pad}- {row}");
            return;
        }
        let mark = self.mark(&path);
        let title = match (&key, m.get("label").and_then(Value::as_str)) {
            (Some(k), Some(label)) => format!("- {k}{mark} — {label}"),
            (Some(k), None) => format!("- {k}{mark}"),
            (None, _) => format!("- #{}{mark}", index + 1),
        };
        self.heading(&title, m.get("clause"), indent);
        let rest: serde_json::Map<String, Value> = m
            .iter()
            .filter(|(k, _)| !(*k == "id" || (*k == "label" && key.is_some())))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        self.fields(&rest, node, &path, indent + 2);
    }
}

/// The rules and policies of a plan as labelled sections, each headed with its clause.
fn rules_and_policies(p: &LoadedPlan) -> String {
    let v = canonical::normalised(&p.plan);
    let mut s = Section {
        plan: p,
        currency: p.plan.plan.currency,
        out: String::new(),
    };
    let plan_node = SchemaNode::plan();
    // `rules` holds one family's table: `{"roulette": {…}}`.
    for (family, rules) in v["rules"].as_object().into_iter().flatten() {
        let Some(m) = rules.as_object() else { continue };
        s.heading(&format!("\nRules ({})", words(family)), m.get("clause"), 0);
        let node = plan_node.field("rules").and_then(|n| n.field(family));
        s.fields(m, node, &format!("rules.{family}"), 2);
    }
    let _ = writeln!(s.out, "\nPolicies");
    if let Some(m) = v["policies"].as_object() {
        let node = plan_node.field("policies");
        for (name, policy) in m {
            let child = node.and_then(|n| n.field(name));
            match policy.as_object() {
                Some(pm) => {
                    let title = format!("{}{}", label(name), s.mark(&format!("policies.{name}")));
                    s.heading(&title, pm.get("clause"), 2);
                    s.fields(pm, child, &format!("policies.{name}"), 4);
                }
                None => {
                    let shown = scalar(policy, child, name, s.currency);
                    let _ = writeln!(s.out, "  {}  {shown}", label(name));
                }
            }
        }
    }
    s.out
}

/// A plan as a reviewer reads it: the document's tables as tables, then rules, policies,
/// assumptions and the document's inconsistencies.
pub fn plan_text(p: &LoadedPlan) -> String {
    let plan = &p.plan;
    let exp = plan.plan.currency.exponent();
    let cur = plan.plan.currency.code();
    let mut s = String::new();
    let id = &plan.plan;
    let _ = writeln!(s, "{} — {}", p.key(), id.title);
    let _ = writeln!(s, "  operator   {}", id.operator);
    let _ = writeln!(s, "  studio     {}", id.studio);
    let _ = writeln!(s, "  family     {}", id.family);
    let _ = writeln!(s, "  currency   {cur} (amounts below in {cur})");
    let _ = writeln!(s, "  effective  {}", id.effective_from);
    // The names as the plan file writes them (`half_up`, `live`).
    let name = |v: Value| v.as_str().map(words).unwrap_or_default();
    let _ = writeln!(s, "  rounding   {}", name(serde_json::json!(id.rounding)));
    let modes: Vec<String> = id
        .modes
        .iter()
        .map(|m| name(serde_json::json!(m)))
        .collect();
    match &id.modes_clause {
        Some(c) => {
            let _ = writeln!(s, "  modes      {} ({c})", modes.join(", "));
        }
        None => {
            let _ = writeln!(s, "  modes      {}", modes.join(", "));
        }
    }
    let _ = writeln!(
        s,
        "  source     {} § {}",
        plan.source.document, plan.source.section
    );
    let _ = writeln!(s, "  sha-256    {}", p.hash);
    if !plan.bets.is_empty() {
        let _ = writeln!(
            s,
            "\nLimits (\"Tabulka nejvyšších sázek a odvislých nejvyšších výher\")"
        );
        let _ = writeln!(
            s,
            "  {:<24} {:>16} {:>16} {:>18} {:>20}  label",
            "bet", "min bet", "max bet", "max win", "max win + stake"
        );
        for b in &plan.bets {
            let assumed = if plan
                .assumption(&format!("bets[{}].min_bet", b.id))
                .is_some()
            {
                "*"
            } else {
                " "
            };
            let _ = writeln!(
                s,
                "  {:<24} {:>15}{assumed} {:>16} {:>18} {:>20}  {}",
                b.id,
                format_minor(b.min_bet, exp),
                format_minor(b.max_bet, exp),
                format_minor(b.max_win, exp),
                format_minor(b.max_win_plus_stake, exp),
                b.label
            );
        }
        let _ = writeln!(s, "\nPayouts");
        let _ = writeln!(s, "  {:<24} {:<24} {:>10}  label", "bet", "outcome", "pays");
        for pay in &plan.payouts {
            let pays = match (pay.ratio, pay.refund) {
                (Some(r), _) => format!("{}:{}", r.numerator(), r.denominator()),
                (None, Some(r)) => format!("back {}/{}", r.numerator(), r.denominator()),
                (None, None) => "-".into(),
            };
            let _ = writeln!(
                s,
                "  {:<24} {:<24} {:>10}  {}",
                pay.bet,
                pay.outcome,
                pays,
                pay.label.as_deref().unwrap_or("")
            );
        }
    }
    s.push_str(&rules_and_policies(p));
    if !plan.assumptions.is_empty() {
        let _ = writeln!(
            s,
            "\nAssumptions (values the document does not give; marked * above)"
        );
        for a in &plan.assumptions {
            let _ = writeln!(s, "  {}\n      {}", a.field, a.reason);
        }
    }
    if !plan.document_inconsistencies.is_empty() {
        let _ = writeln!(
            s,
            "\nDocument inconsistencies (kept as the document states them)"
        );
        for n in &plan.document_inconsistencies {
            let _ = writeln!(s, "  {}\n      {}", n.field, n.note);
        }
    }
    s
}

/// A changed value for a reader: amounts in the plan's currency, ratios as `a:b`; anything
/// else as JSON (strings quoted, so that `"17"` and `17` stay apart). Amounts inside an added
/// or removed object are written the same way.
pub fn change_value(v: &Value, node: Option<SchemaNode>, currency: Currency) -> Value {
    if node.is_some_and(SchemaNode::is_amount) {
        if let Some(n) = v.as_i64() {
            return Value::String(format_amount(n, currency));
        }
    }
    if let Some(r) = ratio(v) {
        return Value::String(r);
    }
    match v {
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|x| change_value(x, node.and_then(SchemaNode::items), currency))
                .collect(),
        ),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    (
                        k.clone(),
                        change_value(x, node.and_then(|n| n.field(k)), currency),
                    )
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Whether a changed value is shown as text (an amount or a ratio) rather than as JSON.
fn is_text(original: &Value, shown: &Value) -> bool {
    shown.is_string() && !original.is_string()
}

/// One change of `plan diff`, with the amounts of each side in that side's currency.
pub fn change_line(c: &Change, from: Currency, to: Currency) -> String {
    let node = SchemaNode::at(&c.path);
    let show = |v: &Value, currency: Currency| {
        let shown = change_value(v, node, currency);
        match &shown {
            Value::String(s) if is_text(v, &shown) => s.clone(),
            other => other.to_string(),
        }
    };
    match (&c.before, &c.after) {
        (Some(b), Some(a)) => format!("~ {}: {} → {}", c.path, show(b, from), show(a, to)),
        (None, Some(a)) => format!("+ {}: {}", c.path, show(a, to)),
        (Some(b), None) => format!("- {}: {}", c.path, show(b, from)),
        (None, None) => format!("  {}", c.path),
    }
}

/// One change of `plan diff --json`: `before`/`after` as the normalised plans hold them
/// (amounts in minor units), and for an amount also `before_text`/`after_text` as written.
pub fn change_json(c: &Change, from: Currency, to: Currency) -> Value {
    let mut v = serde_json::to_value(c).expect("a change is JSON");
    if SchemaNode::at(&c.path).is_some_and(SchemaNode::is_amount) {
        if let Some(b) = c.before.as_ref().and_then(Value::as_i64) {
            v["before_text"] = Value::String(format_amount(b, from));
        }
        if let Some(a) = c.after.as_ref().and_then(Value::as_i64) {
            v["after_text"] = Value::String(format_amount(a, to));
        }
    }
    v
}
