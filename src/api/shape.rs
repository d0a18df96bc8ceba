//! Finishes the document utoipa builds so that code generators use it as it is: the engines'
//! schemas in place of their placeholders ([`super::bridge`]), every tagged `oneOf` made of
//! named components with a `discriminator`, the error examples of [`super::errors`],
//! `security: []` on public operations, and `servers`.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::{bridge, errors};

/// Unions whose members may overlap (a bet of one game has the shape of another's, the
/// operator picks the game by the table): `anyOf`, not `oneOf`.
const OVERLAPPING_UNIONS: &[&str] = &["Placements"];

/// The component names of the members of a tagged union that the API names itself.
const MEMBER_NAMES: &[(&str, &str, &str)] = &[
    ("BetResult", "accepted", "AcceptedBet"),
    ("BetResult", "refused", "RefusedBet"),
    ("DecisionResult", "taken", "TakenDecision"),
    ("DecisionResult", "refused", "RefusedDecision"),
];

/// The finished document.
pub fn finish(doc: &mut Value) {
    add_engine_components(doc);
    let schemas = doc["components"]["schemas"]
        .as_object_mut()
        .expect("the document has components");
    let names: Vec<String> = schemas.keys().cloned().collect();
    let mut hoisted = BTreeMap::new();
    for name in &names {
        let schema = schemas.get_mut(name).expect("listed above");
        enums_of_constants(schema);
    }
    let snapshot = schemas.clone();
    for name in &names {
        let schema = schemas.get_mut(name).expect("listed above");
        tag_unions(schema, name, &mut hoisted, &snapshot);
        if OVERLAPPING_UNIONS.contains(&name.as_str()) {
            if let Some(members) = schema.as_object_mut().and_then(|m| m.remove("oneOf")) {
                schema["anyOf"] = members;
            }
        }
    }
    for (name, schema) in hoisted {
        assert!(
            !schemas.contains_key(&name),
            "a union member would be named {name}, which is taken"
        );
        schemas.insert(name, schema);
    }
    // Request and response bodies declared inline in an operation.
    if let Some(paths) = doc["paths"].as_object_mut() {
        for item in paths.values_mut() {
            enums_of_constants(item);
        }
    }
    optional_bodies(doc);
    body_limit(doc);
    error_examples(doc);
    public_operations(doc);
    drop_unused(doc);
    doc["servers"] = json!([{
        "url": "http://127.0.0.1:8080",
        "description": "`pitboss serve` on its default address (`--bind`)"
    }]);
}

fn add_engine_components(doc: &mut Value) {
    let schemas = doc["components"]["schemas"]
        .as_object_mut()
        .expect("the document has components");
    for (name, schema) in bridge::components(schemas) {
        match schemas.get(&name) {
            // A name the API already gives a schema of its own (`Mode`) keeps it.
            Some(theirs) if theirs["description"] != bridge::PLACEHOLDER => {}
            _ => {
                schemas.insert(name, schema);
            }
        }
    }
    let left: Vec<&String> = schemas
        .iter()
        .filter(|(_, s)| s["description"] == bridge::PLACEHOLDER)
        .map(|(n, _)| n)
        .collect();
    assert!(left.is_empty(), "engine schemas without a source: {left:?}");
}

/// The single value a schema allows (`const`, or an `enum` of one).
fn single_value(schema: &Value) -> Option<&Value> {
    schema.get("const").or_else(|| {
        schema
            .get("enum")
            .and_then(Value::as_array)
            .filter(|a| a.len() == 1)
            .map(|a| &a[0])
    })
}

/// `oneOf` of string constants (schemars' form of an enum with documented variants) as one
/// `enum`, the variants' descriptions kept in the description.
fn enums_of_constants(v: &mut Value) {
    match v {
        Value::Object(m) => {
            // Each alternative a string constant or a string enum (schemars splits an enum's
            // documented variants from the others).
            let constants: Option<Vec<(String, Option<String>)>> =
                m.get("oneOf").and_then(Value::as_array).and_then(|alts| {
                    let mut out = Vec::new();
                    for a in alts {
                        let only = a.as_object()?.keys().all(|k| {
                            matches!(k.as_str(), "const" | "enum" | "type" | "description")
                        });
                        if !only || a.get("type").is_some_and(|t| t != "string") {
                            return None;
                        }
                        let values: Vec<&Value> = match (a.get("const"), a.get("enum")) {
                            (Some(c), _) => vec![c],
                            (None, Some(Value::Array(e))) => e.iter().collect(),
                            _ => return None,
                        };
                        let description = a["description"].as_str().map(String::from);
                        for v in values {
                            out.push((v.as_str()?.to_string(), description.clone()));
                        }
                    }
                    Some(out)
                });
            if let Some(constants) = constants.filter(|c| !c.is_empty()) {
                m.remove("oneOf");
                let listed: Vec<String> = constants
                    .iter()
                    .filter_map(|(c, d)| d.as_ref().map(|d| format!("`{c}`: {d}")))
                    .collect();
                if !listed.is_empty() {
                    let mut text = m
                        .get("description")
                        .and_then(Value::as_str)
                        .map(|d| format!("{d}\n\n"))
                        .unwrap_or_default();
                    text.push_str(&listed.join("\n\n"));
                    m.insert("description".into(), Value::String(text));
                }
                m.insert("type".into(), json!("string"));
                m.insert(
                    "enum".into(),
                    Value::Array(
                        constants
                            .into_iter()
                            .map(|(c, _)| Value::String(c))
                            .collect(),
                    ),
                );
            }
            m.values_mut().for_each(enums_of_constants);
        }
        Value::Array(a) => a.iter_mut().for_each(enums_of_constants),
        _ => {}
    }
}

fn camel(s: &str) -> String {
    s.split(['_', '-', ' '])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The tag of a union of inline objects: the one property every member requires with a
/// single value, distinct across members.
fn tag_of(members: &[Value]) -> Option<String> {
    let first = members.first()?.as_object()?;
    let candidates = first.get("properties")?.as_object()?.keys();
    'next: for key in candidates {
        let mut seen = Vec::new();
        for m in members {
            let obj = m.as_object()?;
            let required = obj
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(|r| r.iter().any(|x| x == key.as_str()));
            let value = obj
                .get("properties")
                .and_then(|p| p.get(key))
                .and_then(single_value)
                .and_then(Value::as_str);
            match value {
                Some(v) if required && !seen.contains(&v) => seen.push(v),
                _ => continue 'next,
            }
        }
        return Some(key.clone());
    }
    None
}

/// Every `oneOf` of inline objects sharing a tag property (serde's internally tagged enums)
/// becomes a `oneOf` of named components with a `discriminator` mapping each tag value to
/// its member: generators make one type per member and pick it by the tag.
fn tag_unions(
    v: &mut Value,
    at: &str,
    hoisted: &mut BTreeMap<String, Value>,
    components: &Map<String, Value>,
) {
    let Value::Object(m) = v else {
        if let Value::Array(a) = v {
            a.iter_mut()
                .for_each(|x| tag_unions(x, at, hoisted, components));
        }
        return;
    };
    if let Some(members) = m.get("oneOf").and_then(Value::as_array).cloned() {
        if let Some(tag) = tag_of(&members) {
            let mut refs = Vec::new();
            let mut mapping = Map::new();
            for mut member in members {
                let value = single_value(&member["properties"][&tag])
                    .and_then(Value::as_str)
                    .expect("checked by tag_of")
                    .to_string();
                let name = MEMBER_NAMES
                    .iter()
                    .find(|(union, v, _)| *union == at && *v == value)
                    .map(|(_, _, n)| n.to_string())
                    .unwrap_or_else(|| format!("{at}{}", camel(&value)));
                // One value, written the way every generator reads: a one-element enum.
                member["properties"][&tag] = json!({"type": "string", "enum": [value]});
                inline_reference(&mut member, components);
                tag_unions(&mut member, &name, hoisted, components);
                let reference = format!("#/components/schemas/{name}");
                refs.push(json!({ "$ref": reference }));
                mapping.insert(value, Value::String(reference));
                hoisted.insert(name, member);
            }
            m.insert("oneOf".into(), Value::Array(refs));
            m.insert(
                "discriminator".into(),
                json!({"propertyName": tag, "mapping": mapping}),
            );
            return;
        }
    }
    // Any other union's inline objects (serde's externally tagged variants,
    // `{"round": {…}}`) become named components too: generators name inline members by
    // position, and two of them can collide.
    for key in ["oneOf", "anyOf"] {
        let Some(Value::Array(members)) = m.get_mut(key) else {
            continue;
        };
        for (i, member) in members.iter_mut().enumerate() {
            let Some(props) = member.get("properties").and_then(Value::as_object) else {
                continue;
            };
            let single = (props.len() == 1)
                .then(|| props.keys().next().cloned())
                .flatten();
            let name = match single {
                Some(variant) => format!("{at}{}", camel(&variant)),
                None => format!("{at}Option{}", i + 1),
            };
            let mut hoisted_member = std::mem::replace(
                member,
                json!({ "$ref": format!("#/components/schemas/{name}") }),
            );
            tag_unions(&mut hoisted_member, &name, hoisted, components);
            hoisted.insert(name, hoisted_member);
        }
    }
    for (k, x) in m.iter_mut() {
        let inner = if k == "properties" || k == "items" || k == "oneOf" || k == "anyOf" {
            at.to_string()
        } else if matches!(k.as_str(), "description" | "example" | "examples" | "enum") {
            continue;
        } else {
            format!("{at}{}", camel(k))
        };
        tag_unions(x, &inner, hoisted, components);
    }
}

/// A member that is a tag next to a `$ref` (serde's internally tagged newtype variant) takes
/// the referenced object's fields in, so that the member is one closed object: a `$ref`
/// with siblings, or an `allOf` with a closed object, is read differently by each tool.
fn inline_reference(member: &mut Value, components: &Map<String, Value>) {
    let Some(m) = member.as_object_mut() else {
        return;
    };
    let Some(Value::String(reference)) = m.remove("$ref") else {
        return;
    };
    let name = reference
        .strip_prefix("#/components/schemas/")
        .expect("references point into the components");
    let target = components
        .get(name)
        .and_then(Value::as_object)
        .unwrap_or_else(|| panic!("{reference} is not a component"));
    assert!(
        target.get("type").is_some_and(|t| t == "object"),
        "a tagged member refers to {name}, which is not an object"
    );
    for (k, v) in target {
        match k.as_str() {
            "properties" => {
                let own = m.entry("properties").or_insert_with(|| json!({}));
                for (p, schema) in v.as_object().into_iter().flatten() {
                    own[p] = schema.clone();
                }
            }
            "required" => {
                let own = m.entry("required").or_insert_with(|| json!([]));
                if let Value::Array(own) = own {
                    own.extend(v.as_array().into_iter().flatten().cloned());
                }
            }
            _ => {
                m.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
}

/// Each error response carries one example per code it can hold, from [`errors`].
fn error_examples(doc: &mut Value) {
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, op) in item.iter_mut() {
            let Some(responses) = op["responses"].as_object_mut() else {
                continue;
            };
            for (status, response) in responses.iter_mut() {
                let Ok(status) = status.parse::<u16>() else {
                    continue;
                };
                if status < 400 {
                    continue;
                }
                let codes = errors::codes(method, path, status).unwrap_or_else(|| {
                    panic!(
                        "{} {path} documents {status} but src/api/errors.rs lists no codes for it",
                        method.to_uppercase()
                    )
                });
                let examples: Map<String, Value> = codes
                    .iter()
                    .map(|code| {
                        (
                            code.to_string(),
                            json!({
                                "summary": code,
                                "value": {
                                    "type": format!("urn:pitboss:problem:{code}"),
                                    "title": errors::title(status),
                                    "status": status,
                                    "code": code,
                                    "detail": errors::sample_detail(code),
                                }
                            }),
                        )
                    })
                    .collect();
                if let Some(content) = response["content"].as_object_mut() {
                    for media in content.values_mut() {
                        media["examples"] = Value::Object(examples.clone());
                    }
                }
            }
        }
    }
    for o in errors::OPERATIONS {
        for (status, _) in o.statuses {
            let documented =
                &doc["paths"][o.path][o.method.to_lowercase()]["responses"][status.to_string()];
            assert!(
                documented.is_object(),
                "src/api/errors.rs lists {status} for {} {}, which the operation does not document",
                o.method,
                o.path
            );
        }
    }
}

/// A body declared as `Option<T>` (utoipa writes `oneOf: [null, T]`) may be left out; it is
/// never the JSON `null`.
fn optional_bodies(doc: &mut Value) {
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    for item in paths.values_mut() {
        for op in item
            .as_object_mut()
            .into_iter()
            .flat_map(|m| m.values_mut())
        {
            let Some(content) = op
                .get_mut("requestBody")
                .and_then(|b| b.get_mut("content"))
                .and_then(Value::as_object_mut)
            else {
                continue;
            };
            let mut optional = false;
            for media in content.values_mut() {
                let members = media["schema"]["oneOf"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                if members.len() == 2 && members[0] == json!({"type": "null"}) {
                    media["schema"] = members[1].clone();
                    optional = true;
                }
            }
            if optional {
                op["requestBody"]["required"] = json!(false);
            }
        }
    }
}

/// Every operation that takes a body refuses one above the service's limit (`413`, raised by
/// actix before the handler runs).
fn body_limit(doc: &mut Value) {
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    for item in paths.values_mut() {
        for op in item
            .as_object_mut()
            .into_iter()
            .flat_map(|m| m.values_mut())
        {
            if op.get("requestBody").is_none() {
                continue;
            }
            op["responses"]["413"] = json!({
                "description": format!(
                    "`payload_too_large`: the body is above {} bytes.",
                    super::startup::MAX_BODY_BYTES
                ),
                "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
            });
        }
    }
}

/// Components nothing refers to (an engine definition whose fields a tagged member took in).
fn drop_unused(doc: &mut Value) {
    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    if let Some(name) = r.strip_prefix("#/components/schemas/") {
                        out.push(name.to_string());
                    }
                }
                m.values().for_each(|x| refs(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
            _ => {}
        }
    }
    let mut used = std::collections::BTreeSet::new();
    let mut todo = Vec::new();
    refs(&doc["paths"], &mut todo);
    while let Some(name) = todo.pop() {
        if used.insert(name.clone()) {
            refs(&doc["components"]["schemas"][&name], &mut todo);
        }
    }
    if let Some(schemas) = doc["components"]["schemas"].as_object_mut() {
        schemas.retain(|name, _| used.contains(name));
    }
}

/// An operation without `security` needs no key: say so (`security: []`), so that a linter
/// and a reader do not take it for an oversight.
fn public_operations(doc: &mut Value) {
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    for item in paths.values_mut() {
        for op in item
            .as_object_mut()
            .into_iter()
            .flat_map(|m| m.values_mut())
        {
            if let Some(op) = op.as_object_mut() {
                op.entry("security").or_insert_with(|| json!([]));
            }
        }
    }
}
