//! The console (`/console/`) through HTTP and in a real browser: who may sign in, the
//! session cookie, the plan pages with the documents' tables and every return to player, a
//! round's recall with each entry's proof checked, the log's pages.
//!
//! The browser test drives Debian's headless `chromium` through `chromedriver` (started here
//! on a free port) with `fantoccini`; it skips, saying so, only where those two are not
//! installed (`.ci/run` installs them). With `PITBOSS_SCREENSHOTS=DIR` it also writes the
//! screenshots the README shows (`docs/screenshots/`).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::server::{Storage, TestServer, ADMIN_KEY};
use crate::source::plans_dir;

/// Rounds of the simulated returns the console tests' servers compute (small: a debug build).
fn rtp_rounds() -> String {
    std::env::var("PITBOSS_TEST_RTP_ROUNDS").unwrap_or_else(|_| "2000".into())
}

/// A server for the console's tests; `rtp`: it computes the returns to player (a debug
/// build spends a core on that for a while, so only the tests that read them ask).
fn console_server(rtp: bool) -> (TestServer, Storage) {
    let storage = Storage::new(crate::server::Backend::Sqlite);
    let rounds = if rtp { rtp_rounds() } else { "0".into() };
    let server = TestServer::spawn(
        &plans_dir(),
        &storage,
        &[
            ("PITBOSS_ADMIN_KEY", ADMIN_KEY),
            ("PITBOSS_RTP_ROUNDS", &rounds),
        ],
    );
    (server, storage)
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .new_agent()
}

/// A response's status, `Set-Cookie` headers, `Location` and body.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    cookies: Vec<String>,
    location: Option<String>,
    pub body: String,
    headers: Vec<(String, String)>,
}

impl Reply {
    fn of(mut r: ureq::http::Response<ureq::Body>) -> Reply {
        let headers: Vec<(String, String)> = r
            .headers()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
            .collect();
        Reply {
            status: r.status().as_u16(),
            cookies: headers
                .iter()
                .filter(|(k, _)| k == "set-cookie")
                .map(|(_, v)| v.clone())
                .collect(),
            location: headers
                .iter()
                .find(|(k, _)| k == "location")
                .map(|(_, v)| v.clone()),
            body: r.body_mut().read_to_string().unwrap_or_default(),
            headers,
        }
    }

    /// The value of the cookie `name` this reply sets.
    fn cookie(&self, name: &str) -> Option<String> {
        self.cookies.iter().find_map(|c| {
            c.split(';')
                .next()
                .and_then(|kv| kv.strip_prefix(&format!("{name}=")))
                .map(str::to_string)
        })
    }

    fn set_cookie_line(&self, name: &str) -> &str {
        self.cookies
            .iter()
            .find(|c| c.starts_with(&format!("{name}=")))
            .map(String::as_str)
            .unwrap_or_else(|| panic!("no Set-Cookie {name} in {:?}", self.cookies))
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

pub fn get(server: &TestServer, path: &str, cookies: &str, extra: &[(&str, &str)]) -> Reply {
    let mut req = agent().get(&server.url(path));
    if !cookies.is_empty() {
        req = req.header("Cookie", cookies);
    }
    for (k, v) in extra {
        req = req.header(*k, *v);
    }
    Reply::of(req.call().expect("HTTP request"))
}

fn post_form(
    server: &TestServer,
    path: &str,
    cookies: &str,
    fields: &[(&str, &str)],
    extra: &[(&str, &str)],
) -> Reply {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(fields)
        .finish();
    let mut req = agent()
        .post(&server.url(path))
        .header("Content-Type", "application/x-www-form-urlencoded");
    if !cookies.is_empty() {
        req = req.header("Cookie", cookies);
    }
    for (k, v) in extra {
        req = req.header(*k, *v);
    }
    Reply::of(req.send(&body).expect("HTTP request"))
}

/// The sign-in form's token, from the page and from its cookie.
fn login_form(server: &TestServer, extra: &[(&str, &str)]) -> (String, String) {
    let r = get(server, "/console/login", "", extra);
    assert_eq!(r.status, 200, "{}", r.body);
    let token = r
        .body
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("the form carries a token")
        .to_string();
    let cookie = r
        .cookie("pitboss_console_login")
        .expect("the form's cookie");
    assert_eq!(
        token, cookie,
        "double-submit: the cookie holds the form's token"
    );
    (token, cookie)
}

/// Signs in with `key`: the session cookie (`pitboss_console=…`), or the refusal.
pub fn sign_in(server: &TestServer, key: &str) -> Result<String, Reply> {
    let (token, cookie) = login_form(server, &[]);
    let r = post_form(
        server,
        "/console/login",
        &format!("pitboss_console_login={cookie}"),
        &[("key", key), ("csrf", &token)],
        &[],
    );
    match (r.status, r.cookie("pitboss_console")) {
        (303, Some(id)) if !id.is_empty() => Ok(format!("pitboss_console={id}")),
        _ => Err(r),
    }
}

fn operator(server: &TestServer) -> String {
    server.create_key(ADMIN_KEY, "operator", Some("op1"))
}

/// A live roulette table `t1` (`op1:t1`) with a settled round (`op1:t1.1`, with a refused
/// bet) and a voided one (`op1:t1.2`).
fn play_roulette(server: &TestServer, op: &str) {
    let ok = |(s, b): (u16, serde_json::Value)| assert!(s < 300, "{s} {b}");
    ok(server.post(
        op,
        "/v1/tables",
        serde_json::json!({"table": "t1", "plan": "evolution-roulette@1", "mode": "live"}),
    ));
    ok(server.post(op, "/v1/tables/t1/rounds", serde_json::json!({})));
    ok(server.post(
        op,
        "/v1/rounds/t1.1/bets",
        serde_json::json!({"bets": [
            {"player": "p1", "bet": "split", "numbers": [17, 20], "stake_minor": 1000},
            {"player": "p2", "bet": "voisins", "stake_minor": 500},
            {"player": "p3", "bet": "straight", "numbers": [17], "stake_minor": 2_000_000}
        ]}),
    ));
    ok(server.post(
        op,
        "/v1/rounds/t1.1/events",
        serde_json::json!({"type": "close_betting"}),
    ));
    ok(server.post(
        op,
        "/v1/rounds/t1.1/events",
        serde_json::json!({"type": "spin", "number": 17, "ball_against_rotation": true, "ball_revolutions": 4}),
    ));
    ok(server.post(op, "/v1/tables/t1/rounds", serde_json::json!({})));
    ok(server.post(
        op,
        "/v1/rounds/t1.2/bets",
        serde_json::json!({"bets": [{"player": "p1", "bet": "red_black", "field": "red", "stake_minor": 1000}]}),
    ));
    ok(server.post(
        op,
        "/v1/rounds/t1.2/void",
        serde_json::json!({"reason": "wheel malfunction"}),
    ));
}

/// Waits until the plan page shows its computed returns.
fn rtp_page(server: &TestServer, session: &str, plan: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let r = get(server, &format!("/console/plans/{plan}"), session, &[]);
        assert_eq!(r.status, 200, "{}", r.body);
        if r.body.contains("id=\"rtp-table\"") {
            return r.body;
        }
        assert!(
            Instant::now() < deadline,
            "the returns of {plan} were not computed in time"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The HTML of one table row, found by its id.
fn row<'a>(page: &'a str, id: &str) -> &'a str {
    let start = page
        .find(&format!("<tr id=\"{id}\""))
        .unwrap_or_else(|| panic!("no row {id}"));
    let end = page[start..].find("</tr>").expect("row end");
    &page[start..start + end]
}

#[test]
fn only_regulator_and_auditor_keys_sign_in_with_an_httponly_strict_session_cookie() {
    let (server, _storage) = console_server(false);
    let op = operator(&server);
    let refused = sign_in(&server, &op).expect_err("an operator key must not sign in");
    assert_eq!(refused.status, 403);
    assert!(
        refused.body.contains("Operator keys cannot sign in"),
        "{}",
        refused.body
    );
    assert!(refused.cookie("pitboss_console").is_none());
    let refused = sign_in(&server, ADMIN_KEY).expect_err("an admin key must not sign in");
    assert_eq!(refused.status, 403);
    let unknown = format!("pb_{}_{}", "1".repeat(16), "2".repeat(64));
    assert_eq!(sign_in(&server, &unknown).unwrap_err().status, 401);
    assert_eq!(sign_in(&server, "not a key").unwrap_err().status, 401);

    for role in ["auditor", "regulator"] {
        let key = server.create_key(ADMIN_KEY, role, None);
        let (token, cookie) = login_form(&server, &[]);
        let r = post_form(
            &server,
            "/console/login",
            &format!("pitboss_console_login={cookie}"),
            &[("key", &key), ("csrf", &token)],
            &[],
        );
        assert_eq!(r.status, 303, "{role}: {}", r.body);
        assert_eq!(r.location.as_deref(), Some("/console/"));
        let line = r.set_cookie_line("pitboss_console");
        let attrs: Vec<&str> = line.split(';').map(str::trim).collect();
        assert!(attrs.contains(&"HttpOnly"), "{line}");
        assert!(attrs.contains(&"SameSite=Strict"), "{line}");
        assert!(attrs.contains(&"Path=/console"), "{line}");
        assert!(!attrs.contains(&"Secure"), "plain HTTP: {line}");
        let id = r.cookie("pitboss_console").unwrap();
        assert_eq!(id.len(), 64, "32 random bytes");
        assert!(!line.contains(&key), "the key is not in the cookie");
        // The session reads the console, and names the role.
        let home = get(&server, "/console/", &format!("pitboss_console={id}"), &[]);
        assert_eq!(home.status, 200);
        assert!(
            home.body.contains(&format!("Signed in: {role}")),
            "{}",
            home.body
        );
        // Every page forbids scripts and framing.
        let csp = home.header("content-security-policy").unwrap();
        assert!(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"));
        assert_eq!(home.header("cache-control"), Some("no-store"));
    }
}

#[test]
fn the_session_cookie_is_secure_behind_https() {
    let (server, _storage) = console_server(false);
    let key = server.create_key(ADMIN_KEY, "auditor", None);
    let https = [("X-Forwarded-Proto", "https")];
    let (token, cookie) = login_form(&server, &https);
    let r = post_form(
        &server,
        "/console/login",
        &format!("pitboss_console_login={cookie}"),
        &[("key", &key), ("csrf", &token)],
        &https,
    );
    assert_eq!(r.status, 303, "{}", r.body);
    let line = r.set_cookie_line("pitboss_console");
    assert!(line.split(';').any(|a| a.trim() == "Secure"), "{line}");
}

#[test]
fn a_sign_in_without_its_form_token_is_refused_and_pages_need_a_session() {
    let (server, _storage) = console_server(false);
    let key = server.create_key(ADMIN_KEY, "auditor", None);
    // No cookie, a wrong token, or a token without its cookie: a forged form.
    let (token, cookie) = login_form(&server, &[]);
    for (cookies, csrf) in [
        (String::new(), token.clone()),
        (format!("pitboss_console_login={cookie}"), "0".repeat(64)),
        (
            format!("pitboss_console_login={}", "0".repeat(64)),
            token.clone(),
        ),
    ] {
        let r = post_form(
            &server,
            "/console/login",
            &cookies,
            &[("key", &key), ("csrf", &csrf)],
            &[],
        );
        assert_eq!(r.status, 403, "{}", r.body);
        assert!(r.cookie("pitboss_console").is_none());
    }
    // A key in the URL signs nobody in.
    let r = get(&server, &format!("/console/login?key={key}"), "", &[]);
    assert!(r.cookie("pitboss_console").is_none());
    // Without a session every page sends to the sign-in form; so does an unknown session.
    for cookies in ["", "pitboss_console=00"] {
        for path in [
            "/console/",
            "/console/plans",
            "/console/rounds/op1:t1.1",
            "/console/log",
            "/console/proofs/0.json",
        ] {
            let r = get(&server, path, cookies, &[]);
            assert_eq!(r.status, 303, "{path}");
            assert_eq!(r.location.as_deref(), Some("/console/login"), "{path}");
        }
    }
    // The stylesheet needs no session (the sign-in page uses it).
    let css = get(&server, "/console/static/console.css", "", &[]);
    assert_eq!(css.status, 200);
    assert!(css.body.contains("@media print"));
}

#[test]
fn sign_out_needs_the_sessions_token_and_ends_the_session() {
    let (server, _storage) = console_server(false);
    let key = server.create_key(ADMIN_KEY, "regulator", None);
    let session = sign_in(&server, &key).unwrap();
    let forged = post_form(
        &server,
        "/console/logout",
        &session,
        &[("csrf", &"1".repeat(64))],
        &[],
    );
    assert_eq!(forged.status, 403);
    assert_eq!(get(&server, "/console/", &session, &[]).status, 200);
    // Signing in again from the same browser ends the session it held.
    let (token, cookie) = login_form(&server, &[]);
    let again = post_form(
        &server,
        "/console/login",
        &format!("pitboss_console_login={cookie}; {session}"),
        &[("key", &key), ("csrf", &token)],
        &[],
    );
    assert_eq!(again.status, 303);
    let renewed = format!(
        "pitboss_console={}",
        again.cookie("pitboss_console").unwrap()
    );
    assert_ne!(renewed, session);
    assert_eq!(get(&server, "/console/", &session, &[]).status, 303);
    let session = renewed;
    let home = get(&server, "/console/", &session, &[]);
    let csrf = home
        .body
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap()
        .to_string();
    let out = post_form(
        &server,
        "/console/logout",
        &session,
        &[("csrf", &csrf)],
        &[],
    );
    assert_eq!(out.status, 303);
    assert_eq!(out.location.as_deref(), Some("/console/login"));
    assert!(out.set_cookie_line("pitboss_console").contains("Max-Age=0"));
    assert_eq!(get(&server, "/console/", &session, &[]).status, 303);
}

#[test]
fn plan_pages_show_the_documents_tables_and_every_return_to_player() {
    let (server, _storage) = console_server(true);
    let session = sign_in(&server, &server.create_key(ADMIN_KEY, "regulator", None)).unwrap();
    let list = get(&server, "/console/plans", &session, &[]);
    assert_eq!(list.status, 200);
    let (_, _, plans) = server.get("/v1/plans");
    for p in plans.as_array().unwrap() {
        let key = p["key"].as_str().unwrap();
        assert!(
            list.body
                .contains(&format!("href=\"/console/plans/{key}\"")),
            "{key} listed"
        );
        assert!(list.body.contains(p["sha256"].as_str().unwrap()));
    }
    // The log's plan_loaded entry dates each plan.
    assert!(list.body.contains("href=\"/console/log/entries/0\""));

    // Evolution roulette: the limits table as the document writes it, 97.30 % everywhere.
    let page = rtp_page(&server, &session, "evolution-roulette@1");
    let limits = &page[page.find("id=\"limits\"").unwrap()..];
    let limits = &limits[..limits.find("</table>").unwrap()];
    for amount in [
        "10 000,00 Kč",
        "350 000,00 Kč",
        "360 000,00 Kč",
        "200 000,00 Kč",
        "400 000,00 Kč",
    ] {
        assert!(limits.contains(amount), "{amount} in the limits table");
    }
    for bet in [
        "straight",
        "split",
        "street",
        "corner",
        "line",
        "dozen",
        "column",
        "even_odd",
        "red_black",
        "low_high",
        "tier",
        "orphelins",
        "voisins",
        "zero",
        "neighbours",
    ] {
        let r = row(&page, &format!("rtp-{bet}"));
        assert!(
            r.contains("97.30 %") && r.contains("36/37") && r.contains("exact"),
            "{bet}: {r}"
        );
        assert!(!r.contains("Flagged"), "{bet}: {r}");
    }
    // The source document's section is linked, and served.
    let link = page
        .split("href=\"/console/sources/")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap();
    let (doc, anchor) = link.split_once('#').unwrap();
    let source = get(&server, &format!("/console/sources/{doc}"), &session, &[]);
    assert_eq!(source.status, 200);
    assert!(source.body.contains(&format!("id=\"{anchor}\"")));
    let line = &source.body[source.body.find(&format!("id=\"{anchor}\"")).unwrap()..];
    assert!(
        line[..200].contains("Roulette (Evolution)"),
        "{}",
        &line[..200]
    );

    // SYNOT Casino Hold'em: Casino Razz exactly 147403/324870 ≈ 45.37 %, flagged, next to the
    // assumption that explains it.
    let page = rtp_page(&server, &session, "synot-casino-holdem@1");
    let razz = row(&page, "rtp-casino_razz");
    assert!(
        razz.contains("45.37 %") && razz.contains("147403/324870"),
        "{razz}"
    );
    assert!(
        razz.contains("Flagged") && razz.contains("below 85.00 %"),
        "{razz}"
    );
    assert!(
        razz.contains("rules.casino_holdem.casino_razz.losing_ranks"),
        "{razz}"
    );
    for bet in ["ante", "call", "call_blind", "aa"] {
        assert!(page.contains(&format!("id=\"rtp-{bet}\"")), "{bet}");
    }
    assert!(row(&page, "rtp-ante").contains("simulated"));
    assert!(page.contains("Strategy: </strong>best strategy, estimated per hand"));

    // Blackjack: simulated with basic strategy, the strategy named; SYNOT's main bet flagged
    // with the surrender assumption behind it.
    let page = rtp_page(&server, &session, "synot-blackjack@1");
    let main = row(&page, "rtp-main");
    assert!(
        main.contains("simulated") && main.contains("Flagged"),
        "{main}"
    );
    assert!(
        main.contains("rules.blackjack.surrender.refund_kept_if_dealer_blackjack"),
        "{main}"
    );
    assert!(page.contains("Strategy: </strong>basic strategy"));
    assert!(page.contains("role=\"img\""), "the convergence plot");
    assert!(row(&page, "rtp-split").contains("counted with the main bet"));

    // Versions and the diff of two plans side by side.
    let v = get(
        &server,
        "/console/plans/czech-blackjack/versions",
        &session,
        &[],
    );
    assert_eq!(v.status, 200);
    let d = get(
        &server,
        "/console/diff?from=czech-blackjack@1&to=czech-blackjack-strict@1",
        &session,
        &[],
    );
    assert_eq!(d.status, 200);
    let (_, _, api) =
        server.get("/v1/plan-diff?from=czech-blackjack@1&to=czech-blackjack-strict@1");
    let changes = api["changes"].as_array().unwrap();
    assert!(d
        .body
        .contains(&format!("<strong>{}</strong> fields differ", changes.len())));
    assert_eq!(d.body.matches("class=\"changed\"").count(), changes.len());
    for c in changes {
        assert!(d
            .body
            .contains(&format!("<code>{}</code>", c["path"].as_str().unwrap())));
    }
    let all = get(
        &server,
        "/console/diff?from=czech-blackjack@1&to=czech-blackjack-strict@1&all=1",
        &session,
        &[],
    );
    assert_eq!(all.body.matches("class=\"changed\"").count(), changes.len());
    assert!(all.body.matches("<tr").count() > changes.len() * 2);
    // Bad input is a page, not a failure.
    assert_eq!(
        get(&server, "/console/plans/NOPE", &session, &[]).status,
        400
    );
    assert_eq!(
        get(&server, "/console/plans/no-such-plan@1", &session, &[]).status,
        404
    );
    assert_eq!(
        get(&server, "/console/diff?from=x@0", &session, &[]).status,
        400
    );
}

#[test]
fn a_rounds_recall_shows_every_entry_with_its_proof_checked_and_the_proof_verifies_offline() {
    let (server, _storage) = console_server(false);
    play_roulette(&server, &operator(&server));
    let session = sign_in(&server, &server.create_key(ADMIN_KEY, "auditor", None)).unwrap();
    let (_, _, recall) = server.get_as(Some(ADMIN_KEY), "/v1/rounds/op1:t1.1/recall");
    let entries = recall["entries"].as_array().unwrap();
    let page = get(&server, "/console/rounds/op1:t1.1", &session, &[]);
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.body.matches("✓ included").count(), entries.len());
    assert!(!page.body.contains("not verified"));
    for e in entries {
        assert!(page
            .body
            .contains(&format!("href=\"/console/proofs/{}\"", e["seq"])));
    }
    assert!(page.body.contains("Settlement per bet"));
    assert!(
        page.body.contains("above_max_bet"),
        "the refused bet is in the recall"
    );
    assert!(
        page.body.contains("180,00 Kč"),
        "the split's credit: 10 Kč back and 170 Kč won"
    );
    let voided = get(&server, "/console/rounds/op1:t1.2", &session, &[]);
    assert!(voided.body.contains("Voided") && voided.body.contains("wheel malfunction"));

    // The raw proof checks offline with the public key alone.
    let seq = entries.last().unwrap()["seq"].as_u64().unwrap();
    let raw = get(
        &server,
        &format!("/console/proofs/{seq}.json"),
        &session,
        &[],
    );
    assert_eq!(raw.status, 200);
    let file: pitboss_audit::proof::InclusionProofFile = serde_json::from_str(&raw.body).unwrap();
    let (_, pem) = server.get_text(None, "/v1/audit/public-key");
    let key = pitboss_audit::note::public_key_from_pem(&pem).unwrap();
    let checked = pitboss_audit::proof::check_proof(&file, &[key]).unwrap();
    assert_eq!(checked.seq, seq);
    let proof_page = get(&server, &format!("/console/proofs/{seq}"), &session, &[]);
    assert!(proof_page.body.contains("✓ included"));
    assert_eq!(
        get(&server, "/console/proofs/999999", &session, &[]).status,
        404
    );
    assert_eq!(
        get(&server, "/console/rounds/t9.9", &session, &[]).status,
        404
    );

    // Tables: the open one with its plan version and current round.
    let tables = get(&server, "/console/tables", &session, &[]);
    assert!(tables.body.contains("href=\"/console/tables/op1:t1\""));
    assert!(tables.body.contains("evolution-roulette@1"));
    let t = get(&server, "/console/tables/op1:t1", &session, &[]);
    assert!(
        t.body.contains("href=\"/console/rounds/op1:t1.2\"")
            && t.body.contains("href=\"/console/rounds/op1:t1.1\"")
    );
}

/// With a log per operator (`--log-per-operator`): the open tables of every log, a round read
/// in its operator's log with each entry's proof checked there, the log pages of each log, and a
/// proof file that verifies offline under that log's origin.
#[test]
fn the_console_reads_each_operators_log() {
    let storage = Storage::new(crate::server::Backend::Sqlite);
    let server = TestServer::spawn(
        &plans_dir(),
        &storage,
        &[
            ("PITBOSS_ADMIN_KEY", ADMIN_KEY),
            ("PITBOSS_RTP_ROUNDS", "0"),
            ("PITBOSS_LOG_PER_OPERATOR", "true"),
        ],
    );
    play_roulette(&server, &operator(&server));
    let other = server.create_key(ADMIN_KEY, "operator", Some("op2"));
    let (s, b) = server.post(
        &other,
        "/v1/tables",
        serde_json::json!({"table": "t1", "plan": "evolution-roulette@1", "mode": "live"}),
    );
    assert_eq!(s, 201, "{b}");
    let session = sign_in(&server, &server.create_key(ADMIN_KEY, "auditor", None)).unwrap();
    let tables = get(&server, "/console/tables", &session, &[]);
    for t in ["op1:t1", "op2:t1"] {
        assert!(
            tables
                .body
                .contains(&format!("href=\"/console/tables/{t}\"")),
            "{t}"
        );
    }
    let (_, _, recall) = server.get_as(Some(ADMIN_KEY), "/v1/rounds/op1:t1.1/recall");
    let entries = recall["entries"].as_array().unwrap();
    let page = get(&server, "/console/rounds/op1:t1.1", &session, &[]);
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.body.matches("✓ included").count(), entries.len());
    for e in entries {
        let seq = &e["seq"];
        assert!(page
            .body
            .contains(&format!("href=\"/console/proofs/{seq}?log=op1\"")));
        assert!(page
            .body
            .contains(&format!("href=\"/console/log/entries/{seq}?log=op1\"")));
    }
    // Each log's own pages; the service's lists the operators' logs.
    let service = get(&server, "/console/log", &session, &[]);
    assert!(
        service.body.contains("href=\"/console/log?log=op1\""),
        "{}",
        service.body
    );
    assert!(
        service.body.contains("href=\"/console/log?log=op2\""),
        "{}",
        service.body
    );
    let own = get(&server, "/console/log?log=op1", &session, &[]);
    assert_eq!(own.status, 200, "{}", own.body);
    assert!(own.body.contains("/operator/op1</code>"), "{}", own.body);
    let voids = get(&server, "/console/log/events?log=op1", &session, &[]);
    assert!(voids.body.contains("wheel malfunction"), "{}", voids.body);
    let none = get(&server, "/console/log/events", &session, &[]);
    assert!(
        !none.body.contains("wheel malfunction"),
        "the service's log has no round"
    );
    assert_eq!(
        get(&server, "/console/log?log=op9", &session, &[]).status,
        404
    );
    // The proof file of an operator's log's entry verifies offline, under its origin.
    let seq = entries.last().unwrap()["seq"].as_u64().unwrap();
    let raw = get(
        &server,
        &format!("/console/proofs/{seq}.json?log=op1"),
        &session,
        &[],
    );
    assert_eq!(raw.status, 200, "{}", raw.body);
    let file: pitboss_audit::proof::InclusionProofFile = serde_json::from_str(&raw.body).unwrap();
    let (_, pem) = server.get_text(None, "/v1/audit/public-key");
    let key = pitboss_audit::note::public_key_from_pem(&pem).unwrap();
    let checked = pitboss_audit::proof::check_proof(&file, &[key]).unwrap();
    assert_eq!(checked.seq, seq);
    assert!(
        checked.origin.ends_with("/operator/op1"),
        "{}",
        checked.origin
    );
}

#[test]
fn the_log_pages_filter_entries_and_show_the_significant_events() {
    let (server, _storage) = console_server(false);
    play_roulette(&server, &operator(&server));
    let session = sign_in(&server, &server.create_key(ADMIN_KEY, "auditor", None)).unwrap();
    // A checkpoint covering the rounds.
    let (s, _, _) = server.post_raw(Some(ADMIN_KEY), None, "/v1/audit/checkpoint", "");
    assert_eq!(s, 200);
    let log = get(&server, "/console/log", &session, &[]);
    assert_eq!(log.status, 200);
    let (_, latest) = server.get_text(Some(ADMIN_KEY), "/v1/audit/checkpoint");
    let first_line = latest.lines().next().unwrap();
    assert!(
        log.body.contains(first_line),
        "the latest checkpoint as text"
    );
    assert!(log.body.contains("Growth of the audit log"));
    assert!(log.body.contains("initial key"));

    let voids = get(
        &server,
        "/console/log/entries?kind=round_voided",
        &session,
        &[],
    );
    assert!(voids.body.contains("href=\"/console/rounds/op1:t1.2\""));
    assert!(!voids.body.contains("href=\"/console/rounds/op1:t1.1\""));
    let round = get(
        &server,
        "/console/log/entries?round=op1:t1.1",
        &session,
        &[],
    );
    assert!(round.body.contains("<code>bet_accepted</code>"));
    assert!(!round.body.contains("<code>round_voided</code>"));
    let table = get(
        &server,
        "/console/log/entries?table=op1:t1&kind=round_opened",
        &session,
        &[],
    );
    assert_eq!(table.body.matches("<code>round_opened</code>").count(), 2);

    let events = get(&server, "/console/log/events", &session, &[]);
    assert!(events.body.contains("<code>plan_loaded</code>"));
    assert!(events.body.contains("<code>round_voided</code>"));
    assert!(!events.body.contains("<code>bet_accepted</code>"));
    // The refusal was above_max_bet, not max_win_exceeded: not significant.
    assert!(!events.body.contains("<code>bet_refused</code>"));

    let cps = get(&server, "/console/log/checkpoints", &session, &[]);
    assert!(cps.body.contains("Signed checkpoints"));
    let e0 = get(&server, "/console/log/entries/0", &session, &[]);
    assert!(e0.body.contains("plan_loaded"));
    assert_eq!(
        get(&server, "/console/log/entries?before=x", &session, &[]).status,
        400
    );
}

#[test]
fn plan_lint_flags_returns_outside_the_band_with_the_figure_and_the_assumption() {
    let out = Command::new(env!("CARGO_BIN_EXE_pitboss"))
        .args(["plan", "lint", "--rtp-rounds", "2000"])
        .arg(plans_dir())
        .output()
        .unwrap();
    assert!(out.status.success(), "warnings do not fail lint");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let razz = stderr
        .lines()
        .find(|l| l.contains("synot-casino-holdem@1.toml: bets[casino_razz]"))
        .unwrap_or_else(|| panic!("Casino Razz flagged: {stderr}"));
    assert!(razz.starts_with("warning[rtp_out_of_band]"), "{razz}");
    assert!(
        razz.contains("45.3729 % (exact, 147403/324870): below 85.00 %"),
        "{razz}"
    );
    assert!(
        razz.contains("assumption rules.casino_holdem.casino_razz.losing_ranks"),
        "{razz}"
    );
    let main = stderr
        .lines()
        .find(|l| l.contains("synot-blackjack@1.toml: bets[main]"))
        .unwrap_or_else(|| panic!("SYNOT's main bet flagged: {stderr}"));
    assert!(main.contains("basic strategy"), "{main}");
    assert!(main.contains("refund_kept_if_dealer_blackjack"), "{main}");
    assert!(
        !stderr.contains("evolution-roulette@1.toml: bets"),
        "every roulette bet returns 97.30 %: {stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("on returns to player"), "{stdout}");
}

// ----- In a real browser -----------------------------------------------------------------

/// chromedriver on a free port, stopped when dropped.
struct Driver {
    child: Child,
    port: u16,
    _profile: tempfile::TempDir,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn installed(bin: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(bin))
            .find(|p| p.is_file())
    })
}

fn start_driver() -> Option<Driver> {
    let (Some(chromium), Some(driver)) = (installed("chromium"), installed("chromedriver")) else {
        eprintln!(
            "SKIPPED: the console's browser test needs Debian's `chromium` and `chromium-driver` \
             (apt-get install -y chromium chromium-driver; .ci/run installs them)"
        );
        return None;
    };
    let _ = chromium;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let child = Command::new(driver)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromedriver");
    let driver = Driver {
        child,
        port,
        _profile: tempfile::tempdir().expect("a profile directory"),
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "chromedriver did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    Some(driver)
}

/// chromedriver's browser log (`POST /session/{id}/se/log`): the page's console messages,
/// failed loads and policy violations included.
#[derive(Debug)]
struct BrowserLog;

impl fantoccini::wd::WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base: &url::Url,
        session: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/se/log", session.unwrap_or("")))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (
            http::Method::POST,
            Some(r#"{"type":"browser"}"#.to_string()),
        )
    }
}

/// Chromium's DevTools `Emulation.setEmulatedMedia` through chromedriver: lay the page out as
/// printed (`print`) or on screen (empty).
#[derive(Debug)]
struct EmulateMedia(&'static str);

impl fantoccini::wd::WebDriverCompatibleCommand for EmulateMedia {
    fn endpoint(
        &self,
        base: &url::Url,
        session: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base.join(&format!(
            "session/{}/goog/cdp/execute",
            session.unwrap_or("")
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        let body =
            serde_json::json!({"cmd": "Emulation.setEmulatedMedia", "params": {"media": self.0}});
        (http::Method::POST, Some(body.to_string()))
    }
}

async fn console_errors(c: &fantoccini::Client) -> Vec<String> {
    let log = c.issue_cmd(BrowserLog).await.expect("the browser's log");
    log.as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["level"] == "SEVERE" || e["level"] == "WARNING")
        .map(|e| e["message"].as_str().unwrap_or("").to_string())
        .collect()
}

/// The element `css` once the page has it (a bounded wait: a navigation may be under way).
async fn element(c: &fantoccini::Client, css: &str) -> fantoccini::elements::Element {
    c.wait()
        .at_most(Duration::from_secs(20))
        .for_element(fantoccini::Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
}

async fn text_of(c: &fantoccini::Client, css: &str) -> String {
    element(c, css).await.text().await.expect("text")
}

async fn click(c: &fantoccini::Client, css: &str) {
    element(c, css)
        .await
        .click()
        .await
        .unwrap_or_else(|e| panic!("click {css}: {e}"));
}

async fn shot(c: &fantoccini::Client, name: &str) {
    if let Some(dir) = std::env::var_os("PITBOSS_SCREENSHOTS") {
        let png = c.screenshot().await.expect("screenshot");
        std::fs::create_dir_all(&dir).expect("screenshot directory");
        std::fs::write(std::path::Path::new(&dir).join(format!("{name}.png")), png)
            .expect("write screenshot");
    }
}

/// After each page: no error or warning in the browser's console.
async fn clean(c: &fantoccini::Client, page: &str) {
    let errors = console_errors(c).await;
    assert!(
        errors.is_empty(),
        "{page}: the browser's console reports {errors:?}"
    );
}

/// Waits (a bounded time) until the browser is on `path`: a click's navigation may still be
/// under way when the click returns.
async fn wait_path(c: &fantoccini::Client, path: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let now = c.current_url().await.expect("the current URL");
        if now.path() == path {
            return;
        }
        assert!(Instant::now() < deadline, "still on {now}, not {path}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn sign_in_with(c: &fantoccini::Client, base: &str, key: &str) {
    c.goto(&format!("{base}/console/login"))
        .await
        .expect("open the sign-in page");
    c.find(fantoccini::Locator::Css("#key"))
        .await
        .expect("the key field")
        .send_keys(key)
        .await
        .expect("type the key");
    click(c, "form.login button[type=submit]").await;
}

#[tokio::test(flavor = "current_thread")]
async fn the_console_in_a_browser_from_the_plan_list_to_a_proof() {
    let Some(driver) = start_driver() else {
        return;
    };
    let (server, _storage) = console_server(true);
    let op = operator(&server);
    play_roulette(&server, &op);
    let auditor = server.create_key(ADMIN_KEY, "auditor", None);
    let base = server.base.clone();

    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({
            "binary": installed("chromium").expect("checked").to_string_lossy(),
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--window-size=1280,1100", "--hide-scrollbars",
                format!("--user-data-dir={}", driver._profile.path().display()),
            ],
        }),
    );
    caps.insert(
        "goog:loggingPrefs".into(),
        serde_json::json!({"browser": "ALL"}),
    );
    let c =
        fantoccini::ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{}", driver.port))
            .await
            .expect("a browser session");
    // The pages are driven in a task of their own so that the browser is closed whatever
    // happens there (a failed assertion would otherwise leave Chromium running).
    let driven = tokio::spawn(drive(c.clone(), base, op, auditor)).await;
    let _ = c.close().await;
    if let Err(e) = driven {
        match e.try_into_panic() {
            Ok(p) => std::panic::resume_unwind(p),
            Err(e) => panic!("the browser task: {e}"),
        }
    }
    drop(server);
}

/// The browser test's steps, on a signed-out browser.
async fn drive(c: fantoccini::Client, base: String, op: String, auditor: String) {
    // An operator key cannot sign in.
    sign_in_with(&c, &base, &op).await;
    let error = text_of(&c, "#sign-in-error").await;
    assert!(error.contains("Operator keys cannot sign in"), "{error}");
    wait_path(&c, "/console/login").await;
    // A failed sign-in is no console error: the page answers 403 with the form again, which
    // Chromium logs as a failed resource; read and drop that one.
    let _ = console_errors(&c).await;
    shot(&c, "sign-in").await;

    // An auditor can.
    sign_in_with(&c, &base, &auditor).await;
    wait_path(&c, "/console/").await;
    assert!(text_of(&c, "header.site .who").await.contains("auditor"));
    clean(&c, "home").await;

    // The plan list, then a plan.
    click(&c, "header.site nav a[href='/console/plans']").await;
    assert_eq!(text_of(&c, "h1").await, "Plans");
    clean(&c, "plans").await;
    shot(&c, "plans").await;
    click(&c, "#plans a[href='/console/plans/evolution-roulette@1']").await;
    assert!(text_of(&c, "h1").await.contains("evolution-roulette@1"));
    let limits = text_of(&c, "#limits").await;
    assert!(
        limits.contains("10 000,00 Kč") && limits.contains("360 000,00 Kč"),
        "{limits}"
    );
    clean(&c, "plan").await;
    shot(&c, "plan").await;
    // Its returns, once computed.
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        c.refresh().await.expect("reload");
        if c.find(fantoccini::Locator::Css("#rtp-table")).await.is_ok() {
            break;
        }
        assert!(Instant::now() < deadline, "returns not computed in time");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let straight = text_of(&c, "#rtp-straight").await;
    assert!(straight.contains("97.30 %"), "{straight}");
    clean(&c, "plan with returns").await;
    c.goto(&format!("{base}/console/plans/evolution-roulette@1#rtp"))
        .await
        .unwrap();
    shot(&c, "plan-rtp").await;

    // For the README: a plan whose returns are flagged, once computed.
    if std::env::var_os("PITBOSS_SCREENSHOTS").is_some() {
        let deadline = Instant::now() + Duration::from_secs(900);
        loop {
            // Without the fragment: a navigation to the same page with one only scrolls.
            c.goto(&format!("{base}/console/plans/synot-casino-holdem@1"))
                .await
                .unwrap();
            if c.find(fantoccini::Locator::Css("#rtp-table")).await.is_ok() {
                c.goto(&format!("{base}/console/plans/synot-casino-holdem@1#rtp"))
                    .await
                    .unwrap();
                break;
            }
            assert!(Instant::now() < deadline, "returns not computed in time");
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
        shot(&c, "plan-flagged-rtp").await;
        c.goto(&format!("{base}/console/plans/synot-blackjack@1#rtp"))
            .await
            .unwrap();
        shot(&c, "plan-blackjack-rtp").await;
        c.goto(&format!("{base}/console/")).await.unwrap();
        shot(&c, "home").await;
        clean(&c, "flagged returns").await;
    }

    // Printed, a plan page keeps its content and drops the navigation and the forms.
    c.goto(&format!("{base}/console/plans")).await.unwrap();
    c.issue_cmd(EmulateMedia("print"))
        .await
        .expect("print media");
    assert!(!element(&c, "header.site")
        .await
        .is_displayed()
        .await
        .unwrap());
    assert!(element(&c, "#plans").await.is_displayed().await.unwrap());
    assert!(element(&c, "#plans code.print-only")
        .await
        .is_displayed()
        .await
        .unwrap());
    shot(&c, "plans-printed").await;
    c.issue_cmd(EmulateMedia("")).await.expect("screen media");
    assert!(element(&c, "header.site")
        .await
        .is_displayed()
        .await
        .unwrap());

    // From the plan to a diff with another roulette.
    c.goto(&format!("{base}/console/plans/evolution-roulette@1"))
        .await
        .unwrap();
    click(&c, "a[href^='/console/diff?from=evolution-roulette@1&to=']").await;
    assert!(text_of(&c, "[role=status]").await.contains("fields differ"));
    assert!(c
        .find(fantoccini::Locator::Css("#diff tr.changed"))
        .await
        .is_ok());
    clean(&c, "diff").await;
    shot(&c, "diff").await;

    // The tables, a round, a proof.
    click(&c, "header.site nav a[href='/console/tables']").await;
    click(&c, "#tables a[href='/console/tables/op1:t1']").await;
    click(&c, "#rounds a[href='/console/rounds/op1:t1.1']").await;
    assert_eq!(text_of(&c, "h1").await, "Round op1:t1.1");
    let status = text_of(&c, "[role=status]").await;
    assert!(status.contains("entries shown verified"), "{status}");
    assert!(!text_of(&c, "#recall").await.contains("not verified"));
    clean(&c, "round").await;
    shot(&c, "round").await;
    click(&c, "#recall a[href^='/console/proofs/']").await;
    assert!(text_of(&c, "[role=status]").await.contains("✓ included"));
    clean(&c, "proof").await;
    shot(&c, "proof").await;

    // The log and its significant events.
    click(&c, "header.site nav a[href='/console/log']").await;
    assert!(c
        .find(fantoccini::Locator::Css("#latest-checkpoint"))
        .await
        .is_ok());
    clean(&c, "log").await;
    shot(&c, "log").await;
    click(&c, "header.site nav a[href='/console/log/events']").await;
    assert!(text_of(&c, "#entries").await.contains("round_voided"));
    clean(&c, "events").await;

    // Keyboard users skip to the content: the first focusable element is the skip link.
    let first = c
        .execute(
            "return document.querySelector('a.skip').getAttribute('href')",
            vec![],
        )
        .await;
    // Scripts run only through WebDriver here; the pages themselves carry none.
    assert_eq!(
        first
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .as_deref(),
        Some("#main")
    );

    // Sign out, and the console is closed again.
    click(&c, "header.site form button").await;
    wait_path(&c, "/console/login").await;
    c.goto(&format!("{base}/console/plans")).await.unwrap();
    wait_path(&c, "/console/login").await;
    clean(&c, "signed out").await;
    // And the browser's log is read for real: a page that answers 404 shows up in it.
    c.goto(&format!("{base}/console/no-such-page"))
        .await
        .unwrap();
    let errors = console_errors(&c).await;
    assert!(errors.iter().any(|e| e.contains("404")), "{errors:?}");
}
