//! Field paths into a normalised plan: `bets[straight].max_win`, `payouts[tie/win].ratio`,
//! `policies.timing.betting_window_ms`, `rules.roulette.announced[tier].components[0]`.
//!
//! Elements of a list are named by their key rather than their position wherever they have
//! one, so that a path (in an assumption, an error or a diff) survives a reordering of the file.

use serde_json::Value;

/// The key an element of a list is known by: its `id`, `bet/outcome` for payout rows, or the
/// `field` of assumptions and inconsistencies.
pub fn element_key(element: &Value) -> Option<String> {
    let obj = element.as_object()?;
    if let Some(id) = obj.get("id").and_then(Value::as_str) {
        return Some(id.to_string());
    }
    if let (Some(bet), Some(outcome)) = (
        obj.get("bet").and_then(Value::as_str),
        obj.get("outcome").and_then(Value::as_str),
    ) {
        return Some(format!("{bet}/{outcome}"));
    }
    obj.get("field").and_then(Value::as_str).map(str::to_string)
}

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Field(String),
    Element(String),
}

/// The steps of a field path; `None` when it is malformed.
pub fn segments(path: &str) -> Option<Vec<Segment>> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            out.push(Segment::Element(after[..end].to_string()));
            rest = &after[end + 1..];
        } else {
            let rest_trim = rest.strip_prefix('.').unwrap_or(rest);
            let end = rest_trim.find(['.', '[']).unwrap_or(rest_trim.len());
            if end == 0 {
                return None;
            }
            out.push(Segment::Field(rest_trim[..end].to_string()));
            rest = &rest_trim[end..];
        }
    }
    Some(out)
}

/// Looks `path` up in `root`; `None` when any step does not exist.
pub fn resolve<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = root;
    for seg in segments(path)? {
        cur = match (seg, cur) {
            (Segment::Field(name), Value::Object(map)) => map.get(&name)?,
            (Segment::Element(key), Value::Array(items)) => items
                .iter()
                .find(|e| element_key(e).as_deref() == Some(key.as_str()))
                .or_else(|| key.parse::<usize>().ok().and_then(|i| items.get(i)))?,
            _ => return None,
        };
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_name_list_elements_by_their_key() {
        let v = json!({
            "bets": [{"id": "straight", "max_win": 35}],
            "payouts": [{"bet": "tie", "outcome": "win", "ratio": 8}],
            "rules": {"roulette": {"announced": [{"id": "tier", "components": [{"numbers": [5, 8]}]}]}}
        });
        assert_eq!(resolve(&v, "bets[straight].max_win"), Some(&json!(35)));
        assert_eq!(resolve(&v, "payouts[tie/win].ratio"), Some(&json!(8)));
        assert_eq!(
            resolve(
                &v,
                "rules.roulette.announced[tier].components[0].numbers[1]"
            ),
            Some(&json!(8))
        );
        assert_eq!(resolve(&v, "bets[split].max_win"), None);
        assert_eq!(resolve(&v, "bets[straight].min_win"), None);
        assert_eq!(resolve(&v, "bets..x"), None);
    }
}
