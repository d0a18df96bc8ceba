//! Every reply of the HTTP tests, checked against `openapi/openapi.json` (which
//! `api_openapi.rs` holds equal to the served document): the status is documented for the
//! operation, a JSON body validates against the operation's schema for that status (with the
//! `jsonschema` crate), and a problem document's `code` is one of the codes the document
//! lists for that status. The test HTTP helpers call [`check_reply`] on every answer, so
//! every end-to-end test exercises the description.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use serde_json::{json, Value};

/// The committed description.
pub fn document() -> &'static Value {
    static SPEC: LazyLock<Value> = LazyLock::new(|| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi/openapi.json");
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        serde_json::from_str(&text).expect("openapi/openapi.json is JSON")
    });
    &SPEC
}

/// The document as the validators read it: every object schema that lists its properties and
/// does not say otherwise is closed, so a reply with a field the description does not name
/// fails.
fn closed_document() -> &'static Value {
    static CLOSED: LazyLock<Value> = LazyLock::new(|| {
        let mut doc = document().clone();
        close(&mut doc);
        doc
    });
    &CLOSED
}

fn close(v: &mut Value) {
    match v {
        Value::Object(m) => {
            let object_schema = m.get("properties").is_some_and(Value::is_object)
                && m.get("type").is_some_and(|t| t == "object")
                && !m.contains_key("additionalProperties")
                && !m.contains_key("patternProperties");
            if object_schema {
                m.insert("additionalProperties".into(), Value::Bool(false));
            }
            for (k, x) in m.iter_mut() {
                // Property *names* are not schemas; their values are.
                if k == "properties" {
                    for p in x.as_object_mut().into_iter().flat_map(|p| p.values_mut()) {
                        close(p);
                    }
                } else if k != "example" && k != "examples" {
                    close(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(close),
        _ => {}
    }
}

/// The path template of the operation `path` (without its query) reaches.
pub fn template_of(path: &str) -> Option<String> {
    let path = path.split('?').next().unwrap_or(path);
    let segments: Vec<&str> = path.split('/').collect();
    let paths = document()["paths"].as_object()?;
    let mut best: Option<(usize, &String)> = None;
    for template in paths.keys() {
        let t: Vec<&str> = template.split('/').collect();
        if t.len() != segments.len() {
            continue;
        }
        let mut exact = 0;
        let fits = t.iter().zip(&segments).all(|(a, b)| {
            if a.starts_with('{') && a.ends_with('}') {
                !b.is_empty()
            } else {
                exact += usize::from(a == b);
                a == b
            }
        });
        if fits && best.is_none_or(|(e, _)| exact > e) {
            best = Some((exact, template));
        }
    }
    best.map(|(_, t)| t.clone())
}

fn pointer_token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

type Validators = Mutex<HashMap<String, Arc<jsonschema::Validator>>>;

/// The validator of a schema at `pointer` in the document.
fn validator(pointer: &str) -> Arc<jsonschema::Validator> {
    static CACHE: LazyLock<Validators> = LazyLock::new(Default::default);
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(v) = cache.get(pointer) {
        return v.clone();
    }
    // The schema with the document's components beside it, so that `#/components/schemas/…`
    // resolve.
    let schema = closed_document()
        .pointer(pointer)
        .unwrap_or_else(|| panic!("no schema at {pointer}"));
    let mut root = json!({ "allOf": [schema] });
    root["components"] = closed_document()["components"].clone();
    root["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
    let v = Arc::new(
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&root)
            .unwrap_or_else(|e| panic!("the schema at {pointer} does not compile: {e}")),
    );
    cache.insert(pointer.to_string(), v.clone());
    v
}

/// Validates `value` against the schema at `pointer`; the errors, if any.
pub fn errors_at(pointer: &str, value: &Value) -> Vec<String> {
    validator(pointer)
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// A body for a message: the first few thousand characters.
fn abridged(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(4000) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

fn media_type(content_type: &str) -> &str {
    content_type.split(';').next().unwrap_or("").trim()
}

/// Checks one reply against the description: see the module's comment. Replies of routes the
/// description does not have (a test of an unknown route) are not checked.
pub fn check_reply(method: &str, path: &str, status: u16, content_type: &str, body: &[u8]) {
    let Some(template) = template_of(path) else {
        return;
    };
    let method = method.to_lowercase();
    let op = &document()["paths"][&template][&method];
    if !op.is_object() {
        return;
    }
    let response = &op["responses"][status.to_string()];
    assert!(
        response.is_object(),
        "{} {path} answered {status}, which openapi.json does not document for {template}: {}",
        method.to_uppercase(),
        String::from_utf8_lossy(body)
    );
    let media = media_type(content_type);
    let Some(content) = response["content"].as_object() else {
        return;
    };
    let (declared, documented) = content
        .iter()
        .find(|(ct, _)| media_type(ct) == media)
        .unwrap_or_else(|| {
            panic!(
                "{} {path} {status}: content type {content_type} is not among the documented {:?}",
                method.to_uppercase(),
                content.keys().collect::<Vec<_>>()
            )
        });
    if !media.ends_with("json") {
        return;
    }
    let value: Value = serde_json::from_slice(body).unwrap_or_else(|e| {
        panic!(
            "{} {path} {status}: the body is not JSON ({e}): {}",
            method.to_uppercase(),
            String::from_utf8_lossy(body)
        )
    });
    let pointer = format!(
        "/paths/{}/{method}/responses/{status}/content/{}/schema",
        pointer_token(&template),
        pointer_token(declared)
    );
    let errors = errors_at(&pointer, &value);
    assert!(
        errors.is_empty(),
        "{} {path} {status} does not match openapi.json:\n  {}\nbody: {}",
        method.to_uppercase(),
        errors.join("\n  "),
        abridged(&value)
    );
    if media == "application/problem+json" {
        let code = value["code"].as_str().unwrap_or_default();
        let listed = documented["examples"].as_object();
        assert!(
            listed.is_some_and(|l| l.contains_key(code)),
            "{} {template} {status} carried `{code}`, which openapi.json does not list for it \
             (add it to src/api/errors.rs): {value}",
            method.to_uppercase()
        );
    }
}

#[test]
fn the_reply_check_refuses_what_the_description_does_not_allow() {
    let reply = "/components/schemas/RoundOpenedReply";
    let good = json!({"round": "t1.1", "table": "t1", "number": 1,
        "betting_deadline": "2026-01-01T00:00:00Z", "rng_commitment": null});
    assert!(
        errors_at(reply, &good).is_empty(),
        "{:?}",
        errors_at(reply, &good)
    );
    let mut extra = good.clone();
    extra["undocumented"] = json!(1);
    assert!(
        !errors_at(reply, &extra).is_empty(),
        "an undocumented field"
    );
    let mut wrong = good.clone();
    wrong["number"] = json!("one");
    assert!(!errors_at(reply, &wrong).is_empty(), "a wrong type");
    // Through a reference and a tagged union.
    let event = "/components/schemas/BlackjackInput";
    assert!(errors_at(event, &json!({"input": "card", "card": "As"})).is_empty());
    assert!(!errors_at(event, &json!({"input": "card"})).is_empty());
    assert_eq!(
        template_of("/v1/plans/alg-roulette@1").as_deref(),
        Some("/v1/plans/{plan}")
    );
    assert_eq!(
        template_of("/v1/plan-diff?from=a&to=b").as_deref(),
        Some("/v1/plan-diff")
    );
    assert_eq!(
        template_of("/v1/plans/alg-roulette/versions").as_deref(),
        Some("/v1/plans/{id}/versions")
    );
}
