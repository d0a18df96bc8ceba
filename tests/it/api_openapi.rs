//! The OpenAPI description: the committed `openapi/openapi.json` is what the code generates
//! and what the server serves; every route of `configure` is in it and every operation in it
//! reaches a route; operator commands declare the `Idempotency-Key` the server demands; real
//! requests and responses of a whole session (every operation, every status it returned)
//! match their schemas; and the docs page works offline.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use crate::server::{Backend, Storage, TestServer, ADMIN_KEY};

const REGENERATE: &str = "regenerate it with `cargo run -- openapi > openapi/openapi.json`";

fn repo_file(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn committed() -> String {
    std::fs::read_to_string(repo_file("openapi/openapi.json"))
        .unwrap_or_else(|e| panic!("openapi/openapi.json: {e}; {REGENERATE}"))
}

fn spec() -> Value {
    serde_json::from_str(&committed()).expect("openapi/openapi.json is JSON")
}

/// Every (METHOD, path template) of the spec.
fn operations(spec: &Value) -> BTreeSet<(String, String)> {
    let mut ops = BTreeSet::new();
    for (path, item) in spec["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("path item").keys() {
            ops.insert((method.to_uppercase(), path.clone()));
        }
    }
    ops
}

fn operation<'a>(spec: &'a Value, method: &str, template: &str) -> &'a Value {
    let op = &spec["paths"][template][method.to_lowercase()];
    assert!(op.is_object(), "{method} {template} is not in openapi.json");
    op
}

// ----- schemas ------------------------------------------------------------------------------

/// `v` against the schema at `pointer` of the committed document (`crate::spec`: objects
/// closed, so a field the description does not name fails).
fn assert_matches_at(pointer: &str, v: &Value, what: &str) {
    let errors = crate::spec::errors_at(pointer, v);
    assert!(
        errors.is_empty(),
        "{what} does not match openapi.json:\n  {}\nbody: {v}",
        errors.join("\n  ")
    );
}

fn pointer_token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

// ----- HTTP --------------------------------------------------------------------------------

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .new_agent()
}

struct Response {
    status: u16,
    content_type: String,
    csp: Option<String>,
    allow: Option<String>,
    bytes: Vec<u8>,
}

impl Response {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.bytes).unwrap_or(Value::Null)
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

fn send(
    method: &str,
    url: &str,
    key: Option<&str>,
    idem: Option<&str>,
    body: Option<&str>,
) -> Response {
    let mut headers: Vec<(&str, String)> = Vec::new();
    if let Some(k) = key {
        headers.push(("Authorization", format!("Bearer {k}")));
    }
    if let Some(i) = idem {
        headers.push(("Idempotency-Key", i.to_string()));
    }
    let result = match method {
        "GET" => {
            let mut r = agent().get(url);
            for (k, v) in &headers {
                r = r.header(*k, v);
            }
            r.call()
        }
        "POST" => {
            let mut r = agent().post(url).header("Content-Type", "application/json");
            for (k, v) in &headers {
                r = r.header(*k, v);
            }
            r.send(body.unwrap_or(""))
        }
        "DELETE" => {
            let mut r = agent().delete(url);
            for (k, v) in &headers {
                r = r.header(*k, v);
            }
            r.call()
        }
        other => panic!("no {other} in this test"),
    };
    let mut resp = result.unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let content_type = header("content-type").unwrap_or_default();
    let csp = header("content-security-policy");
    let allow = header("allow");
    let bytes = resp
        .body_mut()
        .with_config()
        .limit(1 << 26)
        .read_to_vec()
        .expect("response body");
    Response {
        status: resp.status().as_u16(),
        content_type,
        csp,
        allow,
        bytes,
    }
}

fn media_type(content_type: &str) -> &str {
    content_type.split(';').next().unwrap_or("").trim()
}

/// A server and the spec; every call is checked against the spec on the way out and back.
struct Api {
    server: TestServer,
    spec: Value,
    _storage: Storage,
    idem: std::cell::Cell<u32>,
}

impl Api {
    fn start() -> Api {
        let storage = Storage::new(Backend::Sqlite);
        Api {
            server: TestServer::on(&storage),
            spec: spec(),
            _storage: storage,
            idem: std::cell::Cell::new(0),
        }
    }

    fn fresh_idem(&self) -> String {
        self.idem.set(self.idem.get() + 1);
        format!("openapi-test-{}", self.idem.get())
    }

    /// Sends `METHOD template` with `args` filled into the template's `{…}` in order, checks the
    /// request body against the operation's request schema, that the status is documented, and
    /// that the response matches the documented content type and schema.
    #[allow(clippy::too_many_arguments)]
    fn call(
        &self,
        method: &str,
        template: &str,
        args: &[&str],
        query: &str,
        key: Option<&str>,
        idem: Option<&str>,
        body: Option<&Value>,
    ) -> (u16, Value) {
        self.send_checked(true, method, template, args, query, key, idem, body)
    }

    /// As [`Api::call`], but a request body that breaks the schema is sent as it is (to see it
    /// refused).
    #[allow(clippy::too_many_arguments)]
    fn send_checked(
        &self,
        check_request: bool,
        method: &str,
        template: &str,
        args: &[&str],
        query: &str,
        key: Option<&str>,
        idem: Option<&str>,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let op = operation(&self.spec, method, template);
        let mut path = String::new();
        let mut rest = template;
        let mut args = args.iter();
        while let Some(i) = rest.find('{') {
            let j = rest[i..].find('}').expect("closing brace") + i;
            path.push_str(&rest[..i]);
            path.push_str(args.next().expect("an argument per template variable"));
            rest = &rest[j + 1..];
        }
        path.push_str(rest);
        path.push_str(query);
        if let Some(b) = body.filter(|_| check_request) {
            let schema = &op["requestBody"]["content"]["application/json"]["schema"];
            assert!(
                schema.is_object(),
                "{method} {template} documents no JSON body"
            );
            assert_matches_at(
                &format!(
                    "/paths/{}/{}/requestBody/content/application~1json/schema",
                    pointer_token(template),
                    method.to_lowercase()
                ),
                b,
                &format!("the request to {method} {template}"),
            );
        }
        let text = body.map(Value::to_string);
        let r = send(method, &self.server.url(&path), key, idem, text.as_deref());
        crate::spec::check_reply(method, &path, r.status, &r.content_type, &r.bytes);
        if media_type(&r.content_type).ends_with("json") {
            (r.status, r.json())
        } else {
            (r.status, Value::String(r.text()))
        }
    }

    fn get(&self, template: &str, args: &[&str], key: Option<&str>) -> (u16, Value) {
        self.call("GET", template, args, "", key, None, None)
    }

    /// An operator command with a fresh Idempotency-Key.
    fn command(&self, template: &str, args: &[&str], key: &str, body: Value) -> (u16, Value) {
        let idem = self.fresh_idem();
        self.call(
            "POST",
            template,
            args,
            "",
            Some(key),
            Some(&idem),
            Some(&body),
        )
    }
}

// ----- the tests ---------------------------------------------------------------------------

#[test]
fn committed_openapi_json_is_the_generated_one() {
    let generated = pitboss::api::openapi::openapi_json_text();
    assert!(
        committed() == generated,
        "openapi/openapi.json differs from what the code generates: {REGENERATE}"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pitboss"))
        .arg("openapi")
        .output()
        .expect("run pitboss openapi");
    assert!(out.status.success());
    assert!(
        out.stdout == generated.as_bytes(),
        "`pitboss openapi` prints something else than the generated document"
    );
}

#[test]
fn served_openapi_json_is_the_committed_one() {
    let storage = Storage::new(Backend::Sqlite);
    let server = TestServer::on(&storage);
    let r = send("GET", &server.url("/openapi.json"), None, None, None);
    assert_eq!(r.status, 200);
    assert_eq!(media_type(&r.content_type), "application/json");
    assert!(
        r.text() == committed(),
        "GET /openapi.json differs from openapi/openapi.json: {REGENERATE}"
    );
    let spec = r.json();
    assert_eq!(spec["info"]["title"], "pitboss");
    assert_eq!(spec["info"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(spec["openapi"].as_str().unwrap().starts_with("3.1"));
    assert_eq!(
        spec["components"]["securitySchemes"]["api_key"]["scheme"],
        "bearer"
    );
}

/// The routes as the source registers them: every `#[get("…")]`/`#[post("…")]` of `src/api/`.
fn routes_in_source() -> BTreeSet<(String, String)> {
    let mut routes = BTreeSet::new();
    let dir = repo_file("src/api");
    for entry in std::fs::read_dir(&dir).expect("src/api") {
        let path = entry.expect("dir entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("source file");
        for line in text.lines() {
            for method in ["get", "post", "put", "patch", "delete"] {
                if let Some(rest) = line.trim().strip_prefix(&format!("#[{method}(\"")) {
                    let route = rest.split('"').next().expect("route literal");
                    routes.insert((method.to_uppercase(), route.to_string()));
                }
            }
        }
    }
    routes
}

#[test]
fn every_route_is_documented_and_every_documented_operation_is_routed() {
    let spec = spec();
    let documented = operations(&spec);
    let routed = routes_in_source();
    let undocumented: Vec<_> = routed.difference(&documented).collect();
    assert!(
        undocumented.is_empty(),
        "routes without an operation in openapi.json (annotate them with #[utoipa::path], list \
         them in ApiDoc, then {REGENERATE}): {undocumented:?}"
    );
    let unrouted: Vec<_> = documented.difference(&routed).collect();
    assert!(
        unrouted.is_empty(),
        "operations with no route: {unrouted:?}"
    );
    // `configure` registers exactly these: one `.service(…)` per route.
    let startup = std::fs::read_to_string(repo_file("src/api/startup.rs")).expect("startup.rs");
    let configure = startup
        .split("pub fn configure(")
        .nth(1)
        .and_then(|s| s.split("\n}\n").next())
        .expect("configure in startup.rs");
    assert_eq!(
        configure.matches(".service(").count(),
        documented.len(),
        "configure registers {} services but openapi.json has {} operations",
        configure.matches(".service(").count(),
        documented.len()
    );

    // Each documented operation reaches a handler on the running server (an unknown route or
    // method would be the `no_such_route` problem).
    let storage = Storage::new(Backend::Sqlite);
    let server = TestServer::on(&storage);
    for (method, template) in &documented {
        let path = template
            .replace("{plan}", "alg-roulette@1")
            .replace("{id}", "alg-roulette")
            .replace("{seq}", "0")
            .replace("{file}", "init.js")
            .replace("{table}", "t")
            .replace("{round}", "t.1");
        let r = send(method, &server.url(&path), None, None, Some("{}"));
        assert!(
            !(r.status == 404 && r.json()["code"] == "no_such_route"),
            "{method} {template} is documented but not routed"
        );
    }
}

#[test]
fn the_console_is_outside_the_api_description_and_only_under_console() {
    // The console's HTML pages (src/console/) are for people, not part of the API: none is
    // in openapi.json, every one lies under /console/ (registered by console::configure
    // inside that scope), and `configure` above registers none of them.
    let spec = spec();
    let documented = operations(&spec);
    assert!(documented.iter().all(|(_, p)| !p.starts_with("/console")));
    let dir = repo_file("src/console");
    let mut pages = 0;
    for entry in std::fs::read_dir(&dir).expect("src/console") {
        let text = std::fs::read_to_string(entry.expect("dir entry").path()).expect("source");
        for line in text.lines() {
            for method in ["get", "post"] {
                if let Some(rest) = line.trim().strip_prefix(&format!("#[{method}(\"")) {
                    let route = rest.split('"').next().expect("route literal");
                    assert!(route.starts_with('/'), "{route}");
                    assert!(
                        !documented.contains(&(method.to_uppercase(), format!("/console{route}"))),
                        "{route}"
                    );
                    pages += 1;
                }
            }
        }
    }
    assert!(pages > 10, "the console's pages were found ({pages})");
    let startup = std::fs::read_to_string(repo_file("src/api/startup.rs")).expect("startup.rs");
    assert!(startup.contains(".configure(crate::console::configure)"));
    let console = std::fs::read_to_string(repo_file("src/console/mod.rs")).expect("mod.rs");
    assert!(console.contains("web::scope(\"/console\")"));
}

#[test]
fn operator_commands_declare_the_idempotency_key_the_server_demands() {
    let api = Api::start();
    let op = api.server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let auditor = api.server.create_key(ADMIN_KEY, "auditor", None);
    let mut commands = 0;
    for (method, template) in operations(&api.spec) {
        if method != "POST" {
            continue;
        }
        let o = operation(&api.spec, &method, &template);
        let header = o["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["in"] == "header" && p["name"] == "Idempotency-Key");
        let is_command = template.starts_with("/v1/tables")
            || template.starts_with("/v1/rounds")
            || template.starts_with("/v1/payouts")
            || template.starts_with("/v1/players");
        if !is_command {
            // The two other changes are documented, and behave, as taking no key: signing a
            // checkpoint is naturally idempotent, and each key creation is a new key.
            assert!(
                header.is_none(),
                "{template} does not read an Idempotency-Key"
            );
            continue;
        }
        commands += 1;
        let header = header.unwrap_or_else(|| {
            panic!("{method} {template} does not declare the Idempotency-Key header")
        });
        assert_eq!(header["required"], true, "{template}: Idempotency-Key");
        assert_eq!(header["schema"]["type"], "string");
        // The documented example body gets past parsing; without the header it is refused.
        let body = &o["requestBody"]["content"]["application/json"];
        let example = body["examples"]
            .as_object()
            .and_then(|m| m.values().next())
            .map(|e| e["value"].clone())
            .or_else(|| body.get("example").cloned())
            .or_else(|| {
                let r = body["schema"]["$ref"].as_str()?;
                let name = r.trim_start_matches("#/components/schemas/");
                api.spec["components"]["schemas"][name]
                    .get("example")
                    .cloned()
            })
            .unwrap_or_else(|| panic!("{template} documents no example body"));
        let path = template.replace("{table}", "t1").replace("{round}", "t1.1");
        let (s, b) = api.call(
            "POST",
            &template,
            &[if template.contains("{round}") {
                "t1.1"
            } else if template.contains("{player}") {
                "p1"
            } else {
                "t1"
            }],
            "",
            Some(&op),
            None,
            Some(&example),
        );
        assert_eq!(
            (s, b["code"].as_str()),
            (400, Some("idempotency_key_required")),
            "POST {path} without an Idempotency-Key: {b}"
        );
    }
    assert_eq!(commands, 18, "the operator commands");
    // And those without it need none.
    let (s, b) = api.call(
        "POST",
        "/v1/audit/checkpoint",
        &[],
        "",
        Some(&auditor),
        None,
        None,
    );
    assert_eq!(s, 200, "{b}");
}

#[test]
fn examples_in_the_spec_match_their_schemas() {
    let spec = spec();
    let mut examples = 0;
    for (name, schema) in spec["components"]["schemas"].as_object().expect("schemas") {
        if let Some(example) = schema.get("example") {
            examples += 1;
            assert_matches_at(
                &format!("/components/schemas/{}", pointer_token(name)),
                example,
                &format!("the example of {name}"),
            );
        }
    }
    assert!(examples >= 10, "the components have examples");
    let mut bodies = 0;
    for (method, template) in operations(&spec) {
        let op = operation(&spec, &method, &template);
        let at = |rest: &str| {
            format!(
                "/paths/{}/{}/{rest}",
                pointer_token(&template),
                method.to_lowercase()
            )
        };
        let body = &op["requestBody"]["content"]["application/json"];
        for (name, e) in body["examples"].as_object().into_iter().flatten() {
            bodies += 1;
            assert_matches_at(
                &at("requestBody/content/application~1json/schema"),
                &e["value"],
                &format!("example {name} of {method} {template}"),
            );
        }
        // Every error example is a problem document of its response's status.
        for (status, response) in op["responses"].as_object().expect("responses") {
            for (media, content) in response["content"].as_object().into_iter().flatten() {
                for (code, e) in content["examples"].as_object().into_iter().flatten() {
                    assert_matches_at(
                        &at(&format!(
                            "responses/{status}/content/{}/schema",
                            pointer_token(media)
                        )),
                        &e["value"],
                        &format!("example {code} of {method} {template} {status}"),
                    );
                    assert_eq!(e["value"]["code"], code.as_str());
                    assert_eq!(e["value"]["status"].to_string(), *status);
                }
            }
        }
    }
    assert!(bodies >= 8, "the bet kinds and dealer events have examples");
}

/// One session that calls every operation, with successes and refusals; `Api::call` checks
/// each request and response against the spec.
#[test]
fn real_requests_and_responses_match_the_spec() {
    let api = Api::start();
    let admin = Some(ADMIN_KEY);
    let mut called: BTreeSet<(String, String)> = BTreeSet::new();
    let mut note = |m: &str, t: &str| called.insert((m.to_string(), t.to_string()));

    // Ops and plans, without a key.
    let (s, h) = api.get("/healthz", &[], None);
    assert_eq!((s, h["status"].as_str()), (200, Some("ok")));
    note("GET", "/healthz");
    let (s, h) = api.get("/readyz", &[], None);
    assert_eq!((s, h["status"].as_str()), (200, Some("ready")));
    note("GET", "/readyz");
    assert_eq!(api.get("/metrics", &[], None).0, 200);
    note("GET", "/metrics");
    assert_eq!(api.get("/openapi.json", &[], None).0, 200);
    note("GET", "/openapi.json");
    assert_eq!(api.get("/docs", &[], None).0, 200);
    note("GET", "/docs");
    assert_eq!(api.get("/docs/{file}", &["init.js"], None).0, 200);
    assert_eq!(api.get("/docs/{file}", &["nope.js"], None).0, 404);
    note("GET", "/docs/{file}");
    let (s, plans) = api.get("/v1/plans", &[], None);
    assert!(s == 200 && plans.as_array().is_some_and(|p| !p.is_empty()));
    note("GET", "/v1/plans");
    assert_eq!(
        api.get("/v1/plans/{plan}", &["alg-roulette@1"], None).0,
        200
    );
    assert_eq!(
        api.get("/v1/plans/{plan}", &["alg-roulette@x"], None).0,
        400
    );
    assert_eq!(api.get("/v1/plans/{plan}", &["no-such-plan"], None).0, 404);
    note("GET", "/v1/plans/{plan}");
    assert_eq!(
        api.get("/v1/plans/{id}/versions", &["alg-roulette"], None)
            .0,
        200
    );
    assert_eq!(
        api.get("/v1/plans/{id}/versions", &["alg-roulette@1"], None)
            .0,
        400
    );
    note("GET", "/v1/plans/{id}/versions");
    let diff = |q: &str| api.call("GET", "/v1/plan-diff", &[], q, None, None, None);
    let (s, d) = diff("?from=czech-blackjack@1&to=czech-blackjack-strict@1");
    assert!(
        s == 200 && !d["changes"].as_array().unwrap().is_empty(),
        "{d}"
    );
    assert_eq!(diff("?from=czech-blackjack@1").0, 400);
    assert_eq!(diff("?from=czech-blackjack@1&to=nope@1").0, 404);
    note("GET", "/v1/plan-diff");

    // Keys.
    let new_key = |key: Option<&str>, body: Value| {
        api.call("POST", "/v1/admin/keys", &[], "", key, None, Some(&body))
    };
    let (s, k) = new_key(admin, json!({"role": "operator", "operator": "op1"}));
    assert_eq!(s, 201);
    let op1 = k["key"].as_str().unwrap().to_string();
    let op1 = op1.as_str();
    let (_, k) = new_key(admin, json!({"role": "operator", "operator": "op2"}));
    let op2 = k["key"].as_str().unwrap().to_string();
    let op2 = op2.as_str();
    let (_, k) = new_key(admin, json!({"role": "auditor"}));
    let auditor = k["key"].as_str().unwrap().to_string();
    let auditor = auditor.as_str();
    assert_eq!(new_key(admin, json!({"role": "operator"})).0, 400);
    assert_eq!(new_key(Some(auditor), json!({"role": "auditor"})).0, 403);
    assert_eq!(new_key(None, json!({"role": "auditor"})).0, 401);
    note("POST", "/v1/admin/keys");
    let (s, l) = api.call("GET", "/v1/admin/keys", &[], "?limit=2", admin, None, None);
    assert!(s == 200 && l["next"].is_string(), "{l}");
    assert_eq!(
        api.call("GET", "/v1/admin/keys", &[], "?limit=0", admin, None, None)
            .0,
        400
    );
    assert_eq!(
        api.call("GET", "/v1/admin/keys", &[], "", Some(auditor), None, None)
            .0,
        403
    );
    note("GET", "/v1/admin/keys");
    let (_, k) = new_key(admin, json!({"role": "auditor"}));
    let spare = k["key_id"].as_str().unwrap().to_string();
    let (s, r) = api.call(
        "POST",
        "/v1/admin/keys/{key_id}/rotate",
        &[&spare],
        "",
        admin,
        None,
        Some(&json!({"overlap_s": 60})),
    );
    assert_eq!(s, 201, "{r}");
    let rotated = r["key_id"].as_str().unwrap().to_string();
    assert_eq!(
        api.call(
            "POST",
            "/v1/admin/keys/{key_id}/rotate",
            &["0000000000000000"],
            "",
            admin,
            None,
            Some(&json!({}))
        )
        .0,
        404
    );
    note("POST", "/v1/admin/keys/{key_id}/rotate");
    // The signing key's rotation (its 200s: tests/it/signing_key.rs): an end with none open.
    let (s, r) = api.call(
        "POST",
        "/v1/admin/signing-key/rotate",
        &[],
        "",
        admin,
        None,
        Some(&json!({"stage": "end"})),
    );
    assert_eq!(
        (s, r["code"].as_str()),
        (409, Some("no_rotation_open")),
        "{r}"
    );
    note("POST", "/v1/admin/signing-key/rotate");
    let revoke = |id: &str| {
        api.call(
            "POST",
            "/v1/admin/keys/{key_id}/revoke",
            &[id],
            "",
            admin,
            None,
            Some(&json!({"reason": "test"})),
        )
    };
    assert_eq!(revoke(&rotated).0, 200);
    assert_eq!(revoke(&rotated).0, 409);
    note("POST", "/v1/admin/keys/{key_id}/revoke");
    let (s, l) = api.call("GET", "/v1/tables", &[], "?limit=5", Some(op1), None, None);
    assert_eq!(s, 200, "{l}");
    assert_eq!(
        api.call("GET", "/v1/tables", &[], "?limit=0", Some(op1), None, None)
            .0,
        400
    );
    note("GET", "/v1/tables");

    // Tables.
    let open = |key: &str, body: Value| api.command("/v1/tables", &[], key, body);
    assert_eq!(
        open(
            op1,
            json!({"table": "t-live", "plan": "alg-roulette@1", "mode": "live"})
        )
        .0,
        201
    );
    let (s, t) = open(
        op1,
        json!({"table": "t-rng", "plan": "alg-roulette", "mode": "rng"}),
    );
    assert_eq!((s, t["plan"].as_str()), (201, Some("alg-roulette@1")));
    assert_eq!(
        open(
            op1,
            json!({"table": "t-live", "plan": "alg-roulette@1", "mode": "live"})
        )
        .0,
        409
    );
    assert_eq!(
        open(
            op1,
            json!({"table": "bad id", "plan": "alg-roulette@1", "mode": "live"})
        )
        .0,
        422
    );
    assert_eq!(
        open(
            op1,
            json!({"table": "t-x", "plan": "nope@1", "mode": "live"})
        )
        .0,
        404
    );
    assert_eq!(
        open(
            auditor,
            json!({"table": "t-x", "plan": "alg-roulette@1", "mode": "live"})
        )
        .0,
        403
    );
    let body = json!({"table": "t-y", "plan": "alg-roulette@1", "mode": "live"});
    let once = |b: &Value| {
        api.call(
            "POST",
            "/v1/tables",
            &[],
            "",
            Some(op1),
            Some("same-key"),
            Some(b),
        )
    };
    assert_eq!(once(&body).0, 201);
    assert_eq!(once(&body).0, 201, "a retry answers the first answer");
    let mut other = body.clone();
    other["table"] = json!("t-z");
    assert_eq!(once(&other).0, 422, "the same key for another request");
    assert_eq!(
        api.call("POST", "/v1/tables", &[], "", Some(op1), None, Some(&body))
            .0,
        400
    );
    note("POST", "/v1/tables");
    assert_eq!(api.get("/v1/tables/{table}", &["t-live"], Some(op1)).0, 200);
    assert_eq!(api.get("/v1/tables/{table}", &["t-live"], Some(op2)).0, 404);
    assert_eq!(api.get("/v1/tables/{table}", &["t-live"], None).0, 401);
    note("GET", "/v1/tables/{table}");
    for connected in [false, true] {
        let (s, _) = api.command(
            "/v1/tables/{table}/players",
            &["t-live"],
            op1,
            json!({"player": "p1", "connected": connected}),
        );
        assert_eq!(s, 200);
    }
    note("POST", "/v1/tables/{table}/players");

    // A live round with every kind of bet.
    let round_of = |table: &str| {
        let (s, r) = api.command("/v1/tables/{table}/rounds", &[table], op1, json!({}));
        assert_eq!(s, 201, "{r}");
        r["round"].as_str().unwrap().to_string()
    };
    let round = round_of("t-live");
    let (s, _) = api.command("/v1/tables/{table}/rounds", &["t-live"], op1, json!({}));
    assert_eq!(s, 409, "round_in_progress");
    note("POST", "/v1/tables/{table}/rounds");
    let (s, l) = api.call(
        "GET",
        "/v1/tables/{table}/rounds",
        &["t-live"],
        "?phase=betting",
        Some(op1),
        None,
        None,
    );
    assert!(
        s == 200 && l["rounds"].as_array().unwrap().len() == 1,
        "{l}"
    );
    assert_eq!(
        api.call(
            "GET",
            "/v1/tables/{table}/rounds",
            &["t-live"],
            "",
            Some(op2),
            None,
            None
        )
        .0,
        404
    );
    note("GET", "/v1/tables/{table}/rounds");
    let bets = |round: &str, bets: Value| {
        api.command(
            "/v1/rounds/{round}/bets",
            &[round],
            op1,
            json!({"bets": bets}),
        )
    };
    let (s, placed) = bets(
        &round,
        json!([
            {"player": "p1", "bet": "straight", "numbers": [17], "stake_minor": 1000},
            {"player": "p1", "bet": "split", "numbers": [0, 3], "stake_minor": 1000},
            {"player": "p1", "bet": "line", "numbers": [13, 14, 15, 16, 17, 18], "stake_minor": 1000},
            {"player": "p2", "bet": "dozen", "field": "dozen_2", "stake_minor": 2000},
            {"player": "p2", "bet": "red_black", "field": "red", "stake_minor": 2000},
            {"player": "p3", "bet": "voisins", "stake_minor": 100},
            {"player": "p3", "bet": "neighbours", "number": 17, "neighbours": 2, "stake_minor": 100},
            {"player": "p4", "bet": "complete", "number": 17, "stake_minor": 100},
            {"player": "p5", "bet": "split", "numbers": [1, 36], "stake_minor": 1000}
        ]),
    );
    assert_eq!(s, 200);
    assert_eq!(
        (placed["accepted"].as_u64(), placed["refused"].as_u64()),
        (Some(8), Some(1)),
        "{placed}"
    );
    let no_player = json!({"bets": [{"bet": "straight", "numbers": [1], "stake_minor": 1000}]});
    let (s, b) = api.send_checked(
        false,
        "POST",
        "/v1/rounds/{round}/bets",
        &[&round],
        "",
        Some(op1),
        Some("no-player"),
        Some(&no_player),
    );
    assert_eq!((s, b["code"].as_str()), (400, Some("malformed_json")));
    let event = |round: &str, e: Value| api.command("/v1/rounds/{round}/events", &[round], op1, e);
    let spin = |n: u8, against: bool, revs: u8| json!({"type": "spin", "number": n, "ball_against_rotation": against, "ball_revolutions": revs});
    assert_eq!(event(&round, spin(17, true, 4)).0, 409, "betting_open");
    assert_eq!(event(&round, json!({"type": "close_betting"})).0, 200);
    let (s, late) = bets(
        &round,
        json!([{"player": "p1", "bet": "straight", "numbers": [1], "stake_minor": 1000}]),
    );
    assert_eq!(s, 200);
    assert_eq!(late["results"][0]["code"], "betting_closed", "{late}");
    let (s, b) = api.send_checked(
        false,
        "POST",
        "/v1/rounds/{round}/bets",
        &[&round],
        "",
        Some(op1),
        Some("no-bets"),
        Some(&json!({"bets": []})),
    );
    assert_eq!((s, b["code"].as_str()), (422, Some("bad_bet_count")));
    note("POST", "/v1/rounds/{round}/bets");
    let (s, b) = event(&round, spin(17, true, 2));
    assert_eq!((s, b["spin"]["valid"].as_bool()), (200, Some(false)));
    assert_eq!(event(&round, json!({"type": "draw"})).0, 409, "not_rng");
    let (s, b) = event(&round, spin(17, true, 4));
    assert_eq!((s, b["phase"].as_str()), (200, Some("settled")), "{b}");
    assert_eq!(event(&round, spin(17, true, 4)).0, 409);
    note("POST", "/v1/rounds/{round}/events");
    assert_eq!(api.get("/v1/rounds/{round}", &[&round], Some(op1)).0, 200);
    assert_eq!(api.get("/v1/rounds/{round}", &[&round], Some(op2)).0, 404);
    note("GET", "/v1/rounds/{round}");
    let (s, b) = api.get("/v1/rounds/{round}/settlement", &[&round], Some(auditor));
    assert_eq!((s, b["phase"].as_str()), (200, Some("settled")));
    let (s, b) = api.get("/v1/rounds/{round}/recall", &[&round], Some(op1));
    assert!(
        s == 200 && b["entries"].as_array().unwrap().len() >= 5,
        "{b}"
    );
    assert_eq!(
        api.get("/v1/rounds/{round}/recall", &[&round], Some(op2)).0,
        404
    );
    note("GET", "/v1/rounds/{round}/recall");

    // An RNG round.
    let rng_round = round_of("t-rng");
    assert_eq!(
        bets(
            &rng_round,
            json!([{"player": "p1", "bet": "straight", "numbers": [7], "stake_minor": 1000}])
        )
        .0,
        200
    );
    assert_eq!(event(&rng_round, json!({"type": "close_betting"})).0, 200);
    assert_eq!(event(&rng_round, spin(7, true, 4)).0, 409, "wrong_mode");
    let (s, b) = event(&rng_round, json!({"type": "draw"}));
    assert!(s == 200 && b["rng_seed"].is_string(), "{b}");

    // Card games: a live Casino Hold'em round with a decision, an RNG one, and a baccarat
    // table's shoe.
    assert_eq!(
        open(
            op1,
            json!({"table": "h-live", "plan": "evolution-casino-holdem@1", "mode": "live"})
        )
        .0,
        201
    );
    let h = round_of("h-live");
    let (s, placed) = bets(
        &h,
        json!([
            {"player": "p1", "bet": "ante", "stake_minor": 1000},
            {"player": "p2", "bet": "ante", "stake_minor": 1000},
            {"player": "p2", "bet": "bonus", "stake_minor": 500}
        ]),
    );
    assert_eq!((s, placed["accepted"].as_u64()), (200, Some(3)), "{placed}");
    assert_eq!(event(&h, json!({"type": "close_betting"})).0, 200);
    let card = |to: &str, c: &str| json!({"to": to, "card": c});
    let (s, b) = event(
        &h,
        json!({"type": "cards", "cards": [
            card("player", "AS"), card("dealer", "2C"), card("player", "AD"),
            card("dealer", "7H"), card("board", "AH"), card("board", "9C"), card("board", "4D")
        ]}),
    );
    assert_eq!((s, b["phase"].as_str()), (200, Some("decisions")), "{b}");
    let decide = |round: &str, d: Value| {
        api.command(
            "/v1/rounds/{round}/decisions",
            &[round],
            op1,
            json!({ "decisions": d }),
        )
    };
    let (s, b) = decide(
        &h,
        json!([{"player": "p1", "decision": "call"}, {"player": "p2", "decision": "fold"}, {"player": "p9", "decision": "call"}]),
    );
    assert_eq!(
        (s, b["phase"].as_str()),
        (200, Some("betting_closed")),
        "{b}"
    );
    assert_eq!(b["decisions"][2]["code"], "no_decision_owed", "{b}");
    assert_eq!(
        decide(&h, json!([{"player": "p1", "decision": "call"}])).0,
        409,
        "no decision time is open"
    );
    note("POST", "/v1/rounds/{round}/decisions");
    let (s, b) = event(
        &h,
        json!({"type": "cards", "cards": [card("board", "KD"), card("board", "3S")]}),
    );
    assert_eq!((s, b["phase"].as_str()), (200, Some("settled")), "{b}");
    assert_eq!(
        open(
            op1,
            json!({"table": "h-rng", "plan": "synot-casino-holdem@1", "mode": "rng"})
        )
        .0,
        201
    );
    let hr = round_of("h-rng");
    assert_eq!(
        bets(
            &hr,
            json!([{"player": "p1", "bet": "call_blind", "stake_minor": 2000}])
        )
        .0,
        200
    );
    assert_eq!(event(&hr, json!({"type": "close_betting"})).0, 200);
    let (s, b) = event(&hr, json!({"type": "deal"}));
    assert_eq!((s, b["phase"].as_str()), (200, Some("settled")), "{b}");
    assert_eq!(
        open(
            op1,
            json!({"table": "b-live", "plan": "synot-baccarat@1", "mode": "live"})
        )
        .0,
        201
    );
    let shoe = |table: &str, action: &str| {
        api.command(
            "/v1/tables/{table}/shoe",
            &[table],
            op1,
            json!({ "action": action }),
        )
    };
    let (s, b) = shoe("b-live", "shuffle");
    assert_eq!((s, b["cards_seen_before"].as_u64()), (200, Some(0)), "{b}");
    assert_eq!(shoe("b-live", "change").0, 200);
    assert_eq!(shoe("t-live", "shuffle").0, 422, "no_shoe");
    assert_eq!(shoe("nope", "shuffle").0, 404);
    note("POST", "/v1/tables/{table}/shoe");
    // A player-versus-player table takes actions.
    assert_eq!(
        open(
            op1,
            json!({"table": "poker", "plan": "c40-poker-holdem-cash@1", "mode": "live"})
        )
        .0,
        201
    );
    let act = |table: &str, a: Value| api.command("/v1/tables/{table}/actions", &[table], op1, a);
    let (s, b) = act(
        "poker",
        json!({"action": "sit_down", "seat": 1, "player": "p1", "chips_minor": 1_000_000, "entry": "buy_in"}),
    );
    assert_eq!(s, 200, "{b}");
    assert!(
        b["effects"].as_array().is_some_and(|e| !e.is_empty()),
        "{b}"
    );
    let (s, b) = act(
        "poker",
        json!({"action": "sit_down", "seat": 1, "player": "p2", "chips_minor": 1_000_000, "entry": "buy_in"}),
    );
    assert_eq!(s, 422, "the seat is taken: {b}");
    assert_eq!(
        act("poker", json!({"action": "automatic"})).0,
        422,
        "nobody owes a decision"
    );
    let (s, b) = act("t-live", json!({"action": "fold", "seat": 1}));
    assert_eq!(
        (s, b["code"].as_str()),
        (422, Some("not_in_game")),
        "a roulette table: {b}"
    );
    assert_eq!(act("nope", json!({"action": "fold", "seat": 1})).0, 404);
    assert_eq!(
        round_of_status(&api, op1, "poker"),
        422,
        "no rounds at a poker table"
    );
    note("POST", "/v1/tables/{table}/actions");

    // A voided round, and one not settled.
    let void_round = round_of("t-live");
    assert_eq!(
        bets(
            &void_round,
            json!([{"player": "p1", "bet": "straight", "numbers": [7], "stake_minor": 1000}])
        )
        .0,
        200
    );
    let void = |round: &str, reason: &str| {
        api.command(
            "/v1/rounds/{round}/void",
            &[round],
            op1,
            json!({"reason": reason}),
        )
    };
    assert_eq!(void(&void_round, " ").0, 422, "bad_reason");
    let (s, b) = void(&void_round, "wheel fault");
    assert_eq!((s, b["phase"].as_str()), (200, Some("voided")));
    assert_eq!(void(&void_round, "again").0, 409);
    assert_eq!(void("t-live.99", "no such round").0, 404);
    note("POST", "/v1/rounds/{round}/void");
    // A partial void and a withdrawal (SYNOT Baccarat allows it before betting closes).
    let br = round_of("b-live");
    assert_eq!(
        bets(
            &br,
            json!([{"player": "p1", "bet": "player", "stake_minor": 1000},
                   {"player": "p2", "bet": "banker", "stake_minor": 1000},
                   {"player": "p3", "bet": "tie", "stake_minor": 1000}])
        )
        .0,
        200
    );
    let withdraw = |body: Value| api.command("/v1/rounds/{round}/withdrawals", &[&br], op1, body);
    let (s, b) = withdraw(json!({"player": "p1"}));
    assert_eq!((s, b["refund_minor"].as_i64()), (200, Some(1000)), "{b}");
    assert_eq!(withdraw(json!({"player": "p1"})).0, 422, "no_live_bet");
    let (s, b) = api.command(
        "/v1/rounds/{round}/void",
        &[&br],
        op1,
        json!({"reason": "chip misread", "players": ["p2"]}),
    );
    assert_eq!((s, b["refund_minor"].as_i64()), (200, Some(1000)), "{b}");
    let (s, b) = api.command(
        "/v1/rounds/{round}/void",
        &[&br],
        op1,
        json!({"reason": "done"}),
    );
    assert_eq!((s, b["phase"].as_str()), (200, Some("voided")), "{b}");
    assert_eq!(withdraw(json!({"player": "p3"})).0, 409, "betting_closed");
    note("POST", "/v1/rounds/{round}/withdrawals");
    // Payouts (002 § 9(1)): nothing of these rounds is owed, nothing overdue.
    let (s, b) = api.command(
        "/v1/payouts/confirm",
        &[],
        op1,
        json!({"round": br, "player": "p3", "wallet_reference": "W-1"}),
    );
    assert_eq!(
        (s, b["code"].as_str()),
        (404, Some("payout_not_found")),
        "{b}"
    );
    note("POST", "/v1/payouts/confirm");
    let (s, b) = api.get("/v1/payouts/overdue", &[], Some(op1));
    assert_eq!((s, &b["overdue"]), (200, &json!([])), "{b}");
    note("GET", "/v1/payouts/overdue");
    // The player register (002 § 6).
    let player = |tail: &str, key: &str, body: Value| {
        api.command(
            &format!("/v1/players/{{player}}{tail}"),
            &["reg-1"],
            key,
            body,
        )
    };
    let (s, b) = player(
        "/exclusion",
        op1,
        json!({"source": "self_exclusion", "until": "2099-01-01T00:00:00Z", "person": "desk-1"}),
    );
    assert_eq!((s, &b["excluded"]), (200, &json!(true)), "{b}");
    let (s, b) = player(
        "/exclusion",
        op1,
        json!({"source": "national_register", "from": "2026-01-02T00:00:00Z", "until": "2026-01-01T00:00:00Z"}),
    );
    assert_eq!((s, b["code"].as_str()), (422, Some("bad_exclusion")), "{b}");
    note("POST", "/v1/players/{player}/exclusion");
    let (s, b) = player(
        "/exclusion/lift",
        op1,
        json!({"reason": "entered in error"}),
    );
    assert_eq!((s, &b["excluded"]), (200, &json!(false)), "{b}");
    let (s, b) = player("/exclusion/lift", op1, json!({"reason": "again"}));
    assert_eq!((s, b["code"].as_str()), (409, Some("not_excluded")), "{b}");
    let (s, b) = player(
        "/exclusion/lift",
        op2,
        json!({"reason": "another operator's"}),
    );
    assert_eq!((s, b["code"].as_str()), (409, Some("not_excluded")), "{b}");
    note("POST", "/v1/players/{player}/exclusion/lift");
    let (s, b) = player("/limits", op1, json!({"stakes_per_day_minor": 5000}));
    assert_eq!(
        (s, &b["limits"][0]["value_minor"]),
        (200, &json!(5000)),
        "{b}"
    );
    let (s, b) = player("/limits", op1, json!({"stake_per_bet_minor": -1}));
    assert_eq!((s, b["code"].as_str()), (422, Some("bad_limits")), "{b}");
    note("POST", "/v1/players/{player}/limits");
    let (s, b) = player(
        "/usage",
        op1,
        json!({"day": {"staked_minor": 100, "net_loss_minor": 40}}),
    );
    assert_eq!(
        (s, &b["day"]["reported"]["staked_minor"]),
        (200, &json!(100)),
        "{b}"
    );
    let (s, b) = player("/usage", op1, json!({}));
    assert_eq!((s, b["code"].as_str()), (422, Some("bad_usage")), "{b}");
    note("POST", "/v1/players/{player}/usage");
    let (s, b) = api.get("/v1/players/{player}", &["reg-1"], Some(op1));
    assert_eq!(
        (s, &b["day"]["reported"]["net_loss_minor"]),
        (200, &json!(40)),
        "{b}"
    );
    let (s, b) = api.get("/v1/players/{player}", &["reg-1"], Some(auditor));
    assert_eq!(
        (s, b["code"].as_str()),
        (400, Some("operator_required")),
        "{b}"
    );
    let (s, b) = api.call(
        "GET",
        "/v1/players/{player}",
        &["reg-1"],
        "?operator=op1",
        Some(auditor),
        None,
        None,
    );
    assert_eq!(
        (s, &b["limits"][0]["limit"]),
        (200, &json!("stakes_per_day")),
        "{b}"
    );
    let (s, b) = api.call(
        "GET",
        "/v1/players/{player}",
        &["reg-1"],
        "?operator=op1",
        Some(op2),
        None,
        None,
    );
    assert_eq!((s, b["code"].as_str()), (403, Some("forbidden")), "{b}");
    note("GET", "/v1/players/{player}");
    let (s, b) = api.get("/v1/rounds/{round}/settlement", &[&void_round], Some(op1));
    assert_eq!((s, b["phase"].as_str()), (200, Some("voided")));
    let open_round = round_of("t-live");
    assert_eq!(
        api.get("/v1/rounds/{round}/settlement", &[&open_round], Some(op1))
            .0,
        409
    );
    assert_eq!(
        api.get("/v1/rounds/{round}/settlement", &["t-live.99"], Some(op1))
            .0,
        404
    );
    note("GET", "/v1/rounds/{round}/settlement");
    let close = |table: &str| {
        api.command(
            "/v1/tables/{table}/close",
            &[table],
            op1,
            json!({"reason": "end of shift"}),
        )
    };
    assert_eq!(close("t-live").0, 200);
    assert_eq!(close("t-live").0, 409);
    assert_eq!(close("t-nope").0, 404);
    note("POST", "/v1/tables/{table}/close");

    // The audit log.
    let (s, b) = api.call(
        "GET",
        "/v1/audit/entries",
        &[],
        "?since=1&limit=5",
        Some(auditor),
        None,
        None,
    );
    assert!(
        s == 200 && b["entries"].as_array().unwrap().len() == 5,
        "{b}"
    );
    assert_eq!(
        api.call(
            "GET",
            "/v1/audit/entries",
            &[],
            "?since=x",
            Some(auditor),
            None,
            None
        )
        .0,
        400
    );
    // An operator lists its own entries; it cannot follow the log.
    assert_eq!(api.get("/v1/audit/entries", &[], Some(op1)).0, 200);
    assert_eq!(
        api.call(
            "GET",
            "/v1/audit/entries",
            &[],
            "?wait=1",
            Some(op1),
            None,
            None
        )
        .0,
        403
    );
    assert_eq!(api.get("/v1/audit/entries", &[], None).0, 401);
    note("GET", "/v1/audit/entries");
    let (s, b) = api.call(
        "POST",
        "/v1/audit/checkpoint",
        &[],
        "",
        Some(auditor),
        None,
        None,
    );
    assert!(s == 200 && b["tree_size"].as_u64().unwrap() > 0, "{b}");
    note("POST", "/v1/audit/checkpoint");
    let (s, b) = api.get("/v1/audit/checkpoint", &[], Some(auditor));
    assert!(
        s == 200 && b.as_str().unwrap().starts_with("localhost/pitboss/"),
        "{b}"
    );
    note("GET", "/v1/audit/checkpoint");
    assert_eq!(
        api.get("/v1/audit/proof/{seq}", &["3"], Some(auditor)).0,
        200
    );
    assert_eq!(
        api.get("/v1/audit/proof/{seq}", &["999999"], Some(auditor))
            .0,
        404
    );
    assert_eq!(
        api.get("/v1/audit/proof/{seq}", &["x"], Some(auditor)).0,
        400
    );
    note("GET", "/v1/audit/proof/{seq}");
    let consistency = |query: &str| {
        api.call(
            "GET",
            "/v1/audit/consistency",
            &[],
            query,
            Some(auditor),
            None,
            None,
        )
    };
    let (s, b) = consistency("?from=3&to=7");
    assert!(
        s == 200
            && b["old_size"] == 3
            && b["new_size"] == 7
            && !b["proof"].as_array().unwrap().is_empty(),
        "{b}"
    );
    assert_eq!(consistency("?from=7&to=3").0, 400);
    assert_eq!(consistency("?from=1&to=99999999").0, 404);
    assert_eq!(consistency("?from=1").0, 400);
    note("GET", "/v1/audit/consistency");
    let (s, b) = api.get("/v1/audit/export", &[], Some(auditor));
    assert!(s == 200 && b.as_str().unwrap().lines().count() > 5);
    note("GET", "/v1/audit/export");
    let (s, b) = api.get("/v1/audit/public-key", &[], None);
    assert!(s == 200 && b.as_str().unwrap().contains("BEGIN PUBLIC KEY"));
    note("GET", "/v1/audit/public-key");

    // Exception events (issue 20): a round paused on a reported error, and resumed.
    let (s, b) = api.command(
        "/v1/tables",
        &[],
        op1,
        json!({"table": "t-exc", "plan": "alg-roulette@1", "mode": "live"}),
    );
    assert_eq!(s, 201, "{b}");
    let (s, b) = api.command("/v1/tables/{table}/rounds", &["t-exc"], op1, json!({}));
    assert_eq!(s, 201, "{b}");
    let round = b["round"].as_str().expect("a round").to_string();
    let pause = |path: &str, body: Value| api.command(path, &[round.as_str()], op1, body);
    assert_eq!(
        pause(
            "/v1/rounds/{round}/pause",
            json!({"reason": "wheel fault", "reported": "E17"})
        )
        .0,
        200
    );
    assert_eq!(
        pause("/v1/rounds/{round}/pause", json!({"reason": "again"})).0,
        409
    );
    assert_eq!(
        pause("/v1/rounds/{round}/pause", json!({"reason": ""})).0,
        422
    );
    note("POST", "/v1/rounds/{round}/pause");
    assert_eq!(
        pause(
            "/v1/rounds/{round}/resume",
            json!({"reason": "repaired", "person": "tech-7"})
        )
        .0,
        200
    );
    assert_eq!(
        pause("/v1/rounds/{round}/resume", json!({"reason": "again"})).0,
        409
    );
    note("POST", "/v1/rounds/{round}/resume");

    // The daily summary (issue 20).
    let (s, b) = api.call(
        "GET",
        "/v1/audit/daily-summary",
        &[],
        &format!("?date={}", chrono::Utc::now().format("%Y-%m-%d")),
        Some(auditor),
        None,
        None,
    );
    assert!(s == 200 && b["entries"].as_u64().unwrap() > 0, "{b}");
    assert_eq!(
        api.call(
            "GET",
            "/v1/audit/daily-summary",
            &[],
            "?date=x",
            Some(auditor),
            None,
            None
        )
        .0,
        400
    );
    note("GET", "/v1/audit/daily-summary");

    // Plan approvals (issue 20).
    let (_, k) = new_key(admin, json!({"role": "regulator"}));
    let regulator = k["key"].as_str().unwrap().to_string();
    let regulator = regulator.as_str();
    let (_, p) = api.get("/v1/plans/{plan}", &["alg-roulette@1"], None);
    let approve = |key: &str, body: Value| {
        api.call(
            "POST",
            "/v1/plan-approvals",
            &[],
            "",
            Some(key),
            None,
            Some(&body),
        )
    };
    let approval = json!({"plan": "alg-roulette@1", "sha256": p["sha256"], "reference": "MF-1",
                          "valid_from": "2026-01-01T00:00:00Z"});
    assert_eq!(approve(regulator, approval.clone()).0, 201);
    assert_eq!(approve(regulator, approval.clone()).0, 409);
    assert_eq!(approve(op1, approval).0, 403);
    note("POST", "/v1/plan-approvals");
    let (s, b) = api.send_checked(
        false,
        "POST",
        "/v1/plan-approvals/note",
        &[],
        "",
        admin,
        None,
        Some(&Value::String("not a note".into())),
    );
    assert_eq!(
        (s, b["code"].as_str()),
        (422, Some("bad_approval_note")),
        "{b}"
    );
    note("POST", "/v1/plan-approvals/note");
    let withdraw = |body: Value| {
        api.call(
            "POST",
            "/v1/plan-approvals/withdrawals",
            &[],
            "",
            Some(regulator),
            None,
            Some(&body),
        )
    };
    assert_eq!(
        withdraw(json!({"reference": "MF-1", "reason": "test"})).0,
        200
    );
    assert_eq!(
        withdraw(json!({"reference": "MF-1", "reason": "test"})).0,
        409
    );
    assert_eq!(
        withdraw(json!({"reference": "MF-9", "reason": "test"})).0,
        404
    );
    note("POST", "/v1/plan-approvals/withdrawals");
    let (s, b) = api.get("/v1/plan-approvals", &[], Some(auditor));
    assert!(
        s == 200 && b["approvals"][0]["status"] == "withdrawn",
        "{b}"
    );
    assert_eq!(api.get("/v1/plan-approvals", &[], None).0, 401);
    note("GET", "/v1/plan-approvals");

    let all = operations(&api.spec);
    let missed: Vec<_> = all.difference(&called).collect();
    assert!(
        missed.is_empty(),
        "operations this session did not call: {missed:?}"
    );
}

#[test]
fn docs_page_works_offline() {
    let storage = Storage::new(Backend::Sqlite);
    let server = TestServer::on(&storage);
    let page = send("GET", &server.url("/docs"), None, None, None);
    assert_eq!(page.status, 200);
    assert_eq!(page.content_type, "text/html; charset=utf-8");
    let csp = page
        .csp
        .clone()
        .expect("a Content-Security-Policy on the page");
    assert!(csp.contains("default-src 'self'"), "{csp}");
    let html = page.text();
    // No URL to another host: only paths on this service.
    for scheme in ["http://", "https://", "//"] {
        for (i, _) in html.match_indices(scheme) {
            let before = &html[..i];
            assert!(
                scheme == "//" && before.ends_with(':'),
                "the page names another host: …{}…",
                &html[i.saturating_sub(40)..(i + 60).min(html.len())]
            );
        }
    }
    // Every URL the page loads is local and served with its content type.
    let mut loaded = Vec::new();
    for attr in ["src=\"", "href=\""] {
        for part in html.split(attr).skip(1) {
            let url = part.split('"').next().expect("closing quote");
            assert!(url.starts_with('/'), "{url} is not a path on this service");
            loaded.push(url.to_string());
        }
    }
    for (url, content_type) in [
        (
            "/docs/swagger-ui-bundle.js",
            "text/javascript; charset=utf-8",
        ),
        ("/docs/swagger-ui.css", "text/css; charset=utf-8"),
        ("/docs/init.js", "text/javascript; charset=utf-8"),
    ] {
        assert!(loaded.iter().any(|u| u == url), "the page loads {url}");
        let r = send("GET", &server.url(url), None, None, None);
        assert_eq!(
            (r.status, r.content_type.as_str()),
            (200, content_type),
            "{url}"
        );
        let file = repo_file(&format!("static/docs/{}", url.trim_start_matches("/docs/")));
        assert!(
            r.bytes == std::fs::read(&file).expect("vendored file"),
            "{url} is not the file under static/docs/"
        );
    }
    assert!(loaded.iter().any(|u| u == "/openapi.json"));
    let init = send("GET", &server.url("/docs/init.js"), None, None, None).text();
    assert!(init.contains("url: \"/openapi.json\"") && init.contains("validatorUrl: null"));
    assert!(!init.contains("http://") && !init.contains("https://"));
    let r = send("GET", &server.url("/docs/LICENSE"), None, None, None);
    assert!(r.status == 200 && r.text().contains("Apache License"));
    let r = send("GET", &server.url("/docs/missing.js"), None, None, None);
    assert_eq!(
        (r.status, media_type(&r.content_type)),
        (404, "application/problem+json")
    );
}

fn round_of_status(api: &Api, key: &str, table: &str) -> u16 {
    api.command("/v1/tables/{table}/rounds", &[table], key, json!({}))
        .0
}

// ----- error codes ---------------------------------------------------------------------------

/// Every `.rs` file under `dir`, with its text.
fn sources(dir: &std::path::Path, out: &mut Vec<(PathBuf, String)>) {
    for entry in std::fs::read_dir(dir).expect("source dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("source file");
            out.push((path, text));
        }
    }
}

/// The string literals that follow each occurrence of `prefix` (whitespace and newlines
/// skipped), with the text just before the literal's opening quote.
fn literals_after<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices(prefix) {
        let rest = text[i + prefix.len()..].trim_start();
        if let Some(lit) = rest.strip_prefix('"') {
            if let Some(end) = lit.find('"') {
                let s = &lit[..end];
                if !s.is_empty()
                    && s.bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
                {
                    out.push(s);
                }
            }
        }
    }
    out
}

/// The codes the source produces and the statuses each leaves with, read from the code that
/// makes them: refusals of the engines and the round lifecycle (their status is the service's
/// `refusal_status`), and the problems the HTTP layer builds itself. `src/api/errors.rs`, the
/// list under test, is not read.
fn codes_in_source() -> std::collections::BTreeMap<String, BTreeSet<u16>> {
    let mut files = Vec::new();
    sources(&repo_file("src"), &mut files);
    let mut codes: std::collections::BTreeMap<String, BTreeSet<u16>> = Default::default();
    let mut add = |code: &str, status: u16| {
        codes.entry(code.to_string()).or_default().insert(status);
    };
    let refusal =
        |code: &str| pitboss::service::refusal_status(&pitboss::games::Refusal::new(code, ""));
    for (path, text) in &files {
        if path.ends_with("src/api/errors.rs") {
            continue;
        }
        // Refusals: the engines' `code` modules and the lifecycle's literal codes.
        if let Some(block) = text.split("pub mod code {").nth(1) {
            let block = block.split("\n}\n").next().unwrap_or(block);
            for line in block.lines() {
                for code in literals_after(line, ": &str =") {
                    add(code, refusal(code));
                }
            }
        }
        for prefix in ["refuse(", "Refusal::new(", "Err(refuse("] {
            for code in literals_after(text, prefix) {
                add(code, refusal(code));
            }
        }
        // The HTTP layer's own problems.
        for code in literals_after(text, "Problem::bad_request(") {
            add(code, 400);
        }
        for code in literals_after(text, "Problem::not_found(") {
            add(code, 404);
        }
        for (name, status) in [
            ("BAD_REQUEST", 400),
            ("UNAUTHORIZED", 401),
            ("FORBIDDEN", 403),
            ("NOT_FOUND", 404),
            ("CONFLICT", 409),
            ("PAYLOAD_TOO_LARGE", 413),
            ("URI_TOO_LONG", 414),
            ("UNPROCESSABLE_ENTITY", 422),
            ("TOO_MANY_REQUESTS", 429),
            ("SERVICE_UNAVAILABLE", 503),
        ] {
            for code in literals_after(text, &format!("StatusCode::{name},")) {
                add(code, status);
            }
        }
        // The limits' 429s (src/limits.rs): `Throttled { code: … }` and `Reply::throttled(…)`.
        if text.contains("Throttled {") {
            for code in literals_after(text, "code: ") {
                add(code, 429);
            }
        }
        for code in literals_after(text, "Reply::throttled(") {
            add(code, 429);
        }
        // Replies built with an explicit status, and actix's own errors made problems.
        for status in [400u16, 404, 405, 409, 413, 422, 429, 503] {
            for code in literals_after(
                text,
                &format!("Reply::refusal(\n        {status},\n        &Refusal::new("),
            ) {
                add(code, status);
            }
            for code in literals_after(text, &format!("{status} => (")) {
                add(code, status);
            }
        }
    }
    codes
}

#[test]
fn every_documented_error_code_is_one_the_source_produces_with_that_status() {
    let spec = spec();
    let source = codes_in_source();
    // The scan finds the codes it must: a broken scan would pass everything.
    for (code, status) in [
        ("plan_not_found", 404),
        ("malformed_json", 400),
        ("unauthorized", 401),
        ("forbidden", 403),
        ("table_exists", 409),
        ("below_min_bet", 422),
        ("idempotency_key_reused", 422),
        ("payload_too_large", 413),
        ("unavailable", 503),
        ("no_such_route", 404),
    ] {
        assert!(
            source.get(code).is_some_and(|s| s.contains(&status)),
            "the source scan does not see {code} ({status}): {:?}",
            source.get(code)
        );
    }
    let mut checked = 0;
    for (method, template) in operations(&spec) {
        let op = operation(&spec, &method, &template);
        for (status, response) in op["responses"].as_object().expect("responses") {
            let status: u16 = status.parse().expect("numeric status");
            if status < 400 {
                continue;
            }
            let examples = response["content"]["application/problem+json"]["examples"]
                .as_object()
                .unwrap_or_else(|| panic!("{method} {template} {status} has no examples"));
            assert!(!examples.is_empty(), "{method} {template} {status}");
            for code in examples.keys() {
                checked += 1;
                let statuses = source.get(code).unwrap_or_else(|| {
                    panic!(
                        "{method} {template} {status}: `{code}` is not a code the source produces"
                    )
                });
                assert!(
                    statuses.contains(&status),
                    "{method} {template}: `{code}` leaves with {statuses:?}, not {status}"
                );
            }
            // The prose names no code the examples leave out.
            let description = response["description"].as_str().unwrap_or_default();
            for named in description.split('`').skip(1).step_by(2) {
                if source.get(named).is_some_and(|s| s.contains(&status)) {
                    assert!(
                        examples.contains_key(named),
                        "{method} {template} {status}: the description names `{named}`, the examples do not"
                    );
                }
            }
        }
    }
    assert!(checked > 150, "{checked} documented codes checked");
}

/// What schemathesis found, kept: a number the audit log cannot hold (a fraction, or beyond
/// ±(2^53 − 1)) was taken into the log's batch and failed it (`503`, retried forever); a
/// `since` beyond i64 wrapped to the log's start; `limit` outside its range was clamped
/// though documented as refused; an undeclared method on a known path answered 404.
#[test]
fn requests_outside_the_description_are_refused_before_anything_is_decided() {
    let storage = Storage::new(Backend::Sqlite);
    let server = TestServer::on(&storage);
    let op = server.create_key(ADMIN_KEY, "operator", Some("op1"));
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    let (s, b) = server.post(
        &op,
        "/v1/tables",
        json!({"table": "t1", "plan": "alg-roulette@1", "mode": "live"}),
    );
    assert_eq!(s, 201, "{b}");
    assert_eq!(server.post(&op, "/v1/tables/t1/rounds", json!({})).0, 201);
    let log_size = || {
        server.get("/healthz").2["log_entries"]
            .as_u64()
            .expect("size")
    };
    let before = log_size();
    for (body, at) in [
        (
            r#"{"bets": [{"player": "p1", "bet": "complete", "number": 12.0, "stake_minor": 100}]}"#,
            "/bets/0/number",
        ),
        (
            r#"{"bets": [{"player": "p1", "bet": "straight", "numbers": [12], "stake_minor": 9007199254740993}]}"#,
            "/bets/0/stake_minor",
        ),
        (
            r#"{"bets": [{"player": "p1", "bet": "straight", "numbers": [12], "stake_minor": -1e3}]}"#,
            "/bets/0/stake_minor",
        ),
    ] {
        let (s, _, b) = server.post_raw(Some(&op), Some(at), "/v1/rounds/t1.1/bets", body);
        assert_eq!(
            (s, b["code"].as_str()),
            (400, Some("bad_number")),
            "{body}: {b}"
        );
        assert!(b["detail"].as_str().is_some_and(|d| d.contains(at)), "{b}");
    }
    assert_eq!(log_size(), before, "nothing of a refused request is logged");
    // The largest number the log holds is taken (and refused by the plan's limits).
    let (s, b) = server.post(
        &op,
        "/v1/rounds/t1.1/bets",
        json!({"bets": [{"player": "p1", "bet": "straight", "numbers": [12], "stake_minor": 9_007_199_254_740_991_u64}]}),
    );
    assert_eq!(
        (s, b["results"][0]["code"].as_str()),
        (200, Some("above_max_bet")),
        "{b}"
    );

    // The audit log's paging.
    for query in [
        "?since=9223372036854775808",
        "?since=9007199254740992",
        "?limit=0",
        "?limit=10001",
    ] {
        let (s, _, b) = server.get_as(Some(&auditor), &format!("/v1/audit/entries{query}"));
        assert_eq!(
            (s, b["code"].as_str()),
            (400, Some("malformed_query")),
            "{query}: {b}"
        );
    }
    let (s, _, b) = server.get_as(Some(&auditor), "/v1/audit/entries?since=9007199254740991");
    assert_eq!(s, 200, "{b}");
    assert_eq!(
        b["entries"],
        json!([]),
        "nothing after the last possible entry"
    );

    // An undeclared method on a known path, and an unknown path.
    let r = send(
        "DELETE",
        &server.url("/v1/tables/t1"),
        Some(&op),
        None,
        None,
    );
    assert_eq!(
        (r.status, r.json()["code"].as_str()),
        (405, Some("method_not_allowed"))
    );
    assert_eq!(r.allow.as_deref(), Some("GET"));
    let r = send("DELETE", &server.url("/v1/tables"), Some(&op), None, None);
    assert_eq!(r.allow.as_deref(), Some("GET, POST"));
    let r = send(
        "DELETE",
        &server.url("/v1/nothing/here"),
        Some(&op),
        None,
        None,
    );
    assert_eq!(
        (r.status, r.json()["code"].as_str()),
        (404, Some("no_such_route"))
    );
}
