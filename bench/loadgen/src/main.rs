//! Load generator for pitboss.
//!
//! Drives one bet per request over many keep-alive connections, each with a unique
//! Idempotency-Key, and reports accepted bets/s and latency percentiles. Each connection plays
//! its own table: it opens a round, places bets until the round holds `--bets-per-round` (or is
//! 10 s old, well inside the plans' 15 s betting window), then closes betting, spins (which
//! settles every bet) and opens the next round. Round upkeep requests are counted apart.
//!
//! For comparison it measures the **HTTP floor** in the same run: a trivial actix-web server
//! (this binary, `floor-server`) that parses and echoes the same JSON body, driven by the same
//! client with the same connections.
//!
//! Passes: for each target, a closed-loop pass (every connection sends its next request as soon
//! as the previous is answered: the maximum) and an open-loop pass at a fixed rate (half the
//! measured maximum unless `--rate` says otherwise). In the open-loop pass each request has a
//! scheduled send time and its latency is measured from that time, so a stalled server is not
//! hidden by the client waiting (no coordinated omission).
//!
//! The load generator and the server share the machine: on a 2-core box the figures are for
//! both together, and the CPU seconds each used are reported.
//!
//! Three further modes measure memory and restart (issue 13, `soak.rs`):
//! * `--soak S`: after the closed-loop pass, the rate-limited pass runs S seconds while the
//!   server's resident memory, log size and database size are sampled every `--sample-every`
//!   seconds; a markdown table and an SVG plot are written to `--out`.
//! * `--growth S`: an S-second closed-loop pass with memory and log size at the window's edges,
//!   then restarts of the server on the same data, after SIGKILL and after SIGTERM, timed from
//!   spawn to the first `200` of `/healthz`.
//! * `--fill N[,N...]`: closed-loop load (best with `--bets-per-request 50`) until the log holds
//!   N entries, then the same two timed restarts, for each N in turn.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;

mod soak;

const USAGE: &str = "\
pitboss-loadgen: accepted bets/s and latency of pitboss, next to an actix-web floor

USAGE (from the workspace root, after `cargo build --release`):
  cargo run --release --manifest-path bench/loadgen/Cargo.toml -- [OPTIONS]

OPTIONS
  --targets LIST         comma-separated: floor, sqlite, postgres   [floor,sqlite,postgres]
  --url URL[,URL...]     drive an already running pitboss instead (target 'external');
                         needs --admin-key; with several URLs (nodes of one deployment),
                         connection i goes to the i-th modulo their number
  --admin-key KEY        admin key (or PITBOSS_ADMIN_KEY); generated when pitboss is started here
  --pitboss PATH         the pitboss binary                          [target/release/pitboss]
  --plans DIR            plan directory                              [game_plans]
  --pg-admin-url URL     PostgreSQL where a fresh database is made   [postgres://127.0.0.1:5432/test]
  --connections N        concurrent keep-alive connections (tables)  [64]
  --duration S           measured seconds per pass                   [15]
  --warmup S             unmeasured seconds before each pass         [3]
  --bets-per-round N     bets before a table's round is settled      [200]
  --rate R               requests/s of the rate-limited pass         [half the measured max]
  --no-rate-pass         only the closed-loop pass
  --client-threads N     tokio worker threads of the client          [1]
  --bets-per-request N   bets in each bet request (at most 500)      [1]
  --players N            players the bets name (p1..pN, each bet one  [7]
                         at random): the player register's size
  --operators N          operators the connections are spread over   [1]
                         (connection i plays for operator i mod N, each with its own key)
  --log-per-operator     start pitboss with --log-per-operator (a log and a writer per
                         operator, issue 17)
  --trace FILE           each bet of the rate-limited pass, as tab-separated lines
                         (answered ms after the window's start, latency ms, ms sent late
                         because the connection's round upkeep overran): FILE with its
                         extension replaced by TARGET.tsv

MEMORY AND RESTART (issue 13; targets sqlite, postgres)
  --soak S               after the closed-loop pass, run the rate-limited pass for S seconds,
                         sampling memory, log and database size; writes soak-TARGET.md/.svg
  --sample-every S       seconds between soak samples                [10]
  --growth S             S seconds of closed loop (memory per entry), then timed restarts after
                         SIGKILL and SIGTERM; writes growth-TARGET.md
  --fill N[,N...]        closed loop until the log holds N entries, then timed restarts after
                         SIGKILL and SIGTERM, for each N; writes restart-TARGET.md
  --out DIR              where those files go                        [bench]
";

#[derive(Debug, Clone)]
struct Options {
    targets: Vec<String>,
    url: Option<String>,
    admin_key: Option<String>,
    pitboss: PathBuf,
    plans: PathBuf,
    pg_admin_url: String,
    connections: usize,
    duration: Duration,
    warmup: Duration,
    bets_per_round: u64,
    rate: Option<f64>,
    rate_pass: bool,
    client_threads: usize,
    bets_per_request: u64,
    players: u64,
    operators: usize,
    log_per_operator: bool,
    soak: Option<Duration>,
    sample_every: Duration,
    growth: Option<Duration>,
    fill: Vec<u64>,
    out: PathBuf,
    trace: Option<PathBuf>,
}

fn parse_options() -> Result<Options, String> {
    let mut o = Options {
        targets: vec!["floor".into(), "sqlite".into(), "postgres".into()],
        url: None,
        admin_key: std::env::var("PITBOSS_ADMIN_KEY").ok(),
        pitboss: PathBuf::from("target/release/pitboss"),
        plans: PathBuf::from("game_plans"),
        pg_admin_url: "postgres://127.0.0.1:5432/test".into(),
        connections: 64,
        duration: Duration::from_secs(15),
        warmup: Duration::from_secs(3),
        bets_per_round: 200,
        rate: None,
        rate_pass: true,
        client_threads: 1,
        bets_per_request: 1,
        players: 7,
        operators: 1,
        log_per_operator: false,
        soak: None,
        sample_every: Duration::from_secs(10),
        growth: None,
        fill: Vec::new(),
        out: PathBuf::from("bench"),
        trace: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or_else(|| format!("{a} needs a value"));
        let num = |v: String| v.parse::<f64>().map_err(|e| format!("{a}: {e}"));
        match a.as_str() {
            "--targets" => o.targets = val()?.split(',').map(str::to_string).collect(),
            "--url" => o.url = Some(val()?.trim_end_matches('/').to_string()),
            "--admin-key" => o.admin_key = Some(val()?),
            "--pitboss" => o.pitboss = val()?.into(),
            "--plans" => o.plans = val()?.into(),
            "--pg-admin-url" => o.pg_admin_url = val()?,
            "--connections" => o.connections = num(val()?)? as usize,
            "--duration" => o.duration = Duration::from_secs_f64(num(val()?)?),
            "--warmup" => o.warmup = Duration::from_secs_f64(num(val()?)?),
            "--bets-per-round" => o.bets_per_round = num(val()?)? as u64,
            "--rate" => o.rate = Some(num(val()?)?),
            "--no-rate-pass" => o.rate_pass = false,
            "--client-threads" => o.client_threads = num(val()?)?.max(1.0) as usize,
            "--bets-per-request" => o.bets_per_request = num(val()?)?.clamp(1.0, 500.0) as u64,
            "--players" => o.players = num(val()?)?.max(1.0) as u64,
            "--operators" => o.operators = num(val()?)?.max(1.0) as usize,
            "--log-per-operator" => o.log_per_operator = true,
            "--soak" => o.soak = Some(Duration::from_secs_f64(num(val()?)?)),
            "--sample-every" => o.sample_every = Duration::from_secs_f64(num(val()?)?.max(0.1)),
            "--growth" => o.growth = Some(Duration::from_secs_f64(num(val()?)?)),
            "--fill" => {
                o.fill = val()?
                    .split(',')
                    .map(|v| v.trim().replace('_', "").parse::<u64>())
                    .collect::<Result<_, _>>()
                    .map_err(|e| format!("--fill: {e}"))?
            }
            "--out" => o.out = val()?.into(),
            "--trace" => o.trace = Some(val()?.into()),
            "-h" | "--help" => {
                print!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown option {other}\n\n{USAGE}")),
        }
    }
    if o.url.is_some() {
        if o.admin_key.is_none() {
            return Err("--url needs --admin-key (or PITBOSS_ADMIN_KEY)".into());
        }
        o.targets = vec!["external".into()];
    }
    if o.connections == 0 {
        return Err("--connections must be at least 1".into());
    }
    Ok(o)
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("floor-server") {
        floor::serve();
        return;
    }
    let opts = parse_options().unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(opts.client_threads)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let mut rows = Vec::new();
    for target in opts.targets.clone() {
        match rt.block_on(run_target(&opts, &target)) {
            Ok(mut r) => rows.append(&mut r),
            Err(e) => {
                eprintln!("{target}: {e}");
                std::process::exit(1);
            }
        }
    }
    print_markdown(&opts, &rows);
}

// ----- the floor server --------------------------------------------------------------------

mod floor {
    use actix_web::{post, web, App, HttpResponse, HttpServer};

    /// Parses the JSON body and answers it back: the least a JSON endpoint does.
    #[post("/echo")]
    async fn echo(body: web::Json<serde_json::Value>) -> HttpResponse {
        HttpResponse::Ok().json(body.into_inner())
    }

    /// actix-web with its defaults (one worker per core), as `pitboss serve` runs it.
    pub fn serve() {
        actix_web::rt::System::new().block_on(async {
            let server = HttpServer::new(|| App::new().service(echo))
                .bind("127.0.0.1:0")
                .expect("bind");
            for a in server.addrs() {
                println!("listening on http://{a}");
            }
            server.run().await.expect("floor server");
        });
    }
}

// ----- servers under test ------------------------------------------------------------------

/// A child process (pitboss or the floor server) listening on a port it printed.
struct Spawned {
    child: Child,
    addr: SocketAddr,
    cleanup: Vec<Box<dyn FnOnce()>>,
    /// Builds the command again, with the same arguments and data, for a restart.
    remake: Option<Box<dyn Fn() -> Command>>,
    /// pitboss's SQLite data directory, or its PostgreSQL database (admin URL, name).
    data_dir: Option<PathBuf>,
    pg_database: Option<(String, String)>,
}

impl Spawned {
    fn start(cmd: Command) -> Result<Spawned, String> {
        let (child, addr) = Self::spawn(cmd)?;
        Ok(Spawned {
            child,
            addr,
            cleanup: Vec::new(),
            remake: None,
            data_dir: None,
            pg_database: None,
        })
    }

    /// Spawns the command and waits for its `listening on` line.
    fn spawn(mut cmd: Command) -> Result<(Child, SocketAddr), String> {
        cmd.stdout(Stdio::piped()).stderr(Stdio::inherit());
        let mut child = cmd.spawn().map_err(|e| format!("spawn {cmd:?}: {e}"))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let addr = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(a) = line.strip_prefix("listening on http://") {
                        break a.trim().parse().map_err(|e| format!("{line}: {e}"))?;
                    }
                }
                _ => {
                    let _ = child.kill();
                    return Err(format!("{cmd:?} exited before listening"));
                }
            }
        };
        std::thread::spawn(move || for _ in lines {});
        Ok((child, addr))
    }

    fn cpu_seconds(&self) -> f64 {
        cpu_seconds(&format!("/proc/{}/stat", self.child.id()))
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        for f in self.cleanup.drain(..) {
            f();
        }
    }
}

/// utime + stime of a process, from /proc (0 where there is no /proc).
fn cpu_seconds(stat_path: &str) -> f64 {
    let Ok(s) = std::fs::read_to_string(stat_path) else {
        return 0.0;
    };
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th.
    let rest = s.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11).and_then(|v| v.parse().ok()).unwrap_or(0.0)
        + f.get(12).and_then(|v| v.parse().ok()).unwrap_or(0.0);
    ticks / 100.0 // USER_HZ is 100 on Linux
}

fn unique_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{:x}{:x}", nanos & 0xffff_ffff_ffff, std::process::id())
}

/// A random-enough admin key of the form `pb_<16 hex>_<64 hex>`.
fn generated_admin_key() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut out = String::new();
    for i in 0..5 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(i);
        h.write(unique_suffix().as_bytes());
        out.push_str(&format!("{:016x}", h.finish()));
    }
    format!("pb_{}_{}", &out[..16], &out[16..80])
}

fn psql(url: &str, sql: &str) -> Result<(), String> {
    let out = Command::new("psql")
        .args([url, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql])
        .output()
        .map_err(|e| format!("psql: {e} (the postgres target needs the psql client)"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn start_pitboss(opts: &Options, backend: &str, admin_key: &str) -> Result<Spawned, String> {
    let data = std::env::temp_dir().join(format!("pitboss-bench-{}", unique_suffix()));
    std::fs::create_dir_all(&data).map_err(|e| format!("{}: {e}", data.display()))?;
    let pg = (backend == "postgres").then(|| {
        let name = format!("pitboss_bench_{}", unique_suffix());
        let base = opts
            .pg_admin_url
            .rsplit_once('/')
            .map_or(opts.pg_admin_url.as_str(), |(b, _)| b)
            .to_string();
        (name, base)
    });
    if let Some((name, _)) = &pg {
        psql(&opts.pg_admin_url, &format!("CREATE DATABASE {name}"))?;
    }
    let remake = {
        let (pitboss, plans, data, pg, admin_key, sharded) = (
            opts.pitboss.clone(),
            opts.plans.clone(),
            data.clone(),
            pg.clone(),
            admin_key.to_string(),
            opts.log_per_operator,
        );
        move || {
            let mut cmd = pitboss_command(&pitboss, &plans, &data, pg.as_ref(), &admin_key);
            if sharded {
                cmd.env("PITBOSS_LOG_PER_OPERATOR", "true");
            }
            cmd
        }
    };
    let mut s = Spawned::start(remake())?;
    s.remake = Some(Box::new(remake));
    s.data_dir = Some(data.clone());
    s.cleanup.push(Box::new(move || {
        let _ = std::fs::remove_dir_all(&data);
    }));
    if let Some((name, _)) = pg {
        let admin = opts.pg_admin_url.clone();
        s.pg_database = Some((admin.clone(), name.clone()));
        s.cleanup.push(Box::new(move || {
            let _ = psql(
                &admin,
                &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            );
        }));
    }
    Ok(s)
}

/// `pitboss serve` on `data` (and on PostgreSQL database `pg` = (name, base URL) if given).
fn pitboss_command(
    pitboss: &std::path::Path,
    plans: &std::path::Path,
    data: &std::path::Path,
    pg: Option<&(String, String)>,
    admin_key: &str,
) -> Command {
    let mut cmd = Command::new(pitboss);
    cmd.arg("--plans")
        .arg(plans)
        .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
        .arg(data)
        .env_remove("DATABASE_URL")
        // The console's background computation of returns to player would take a core.
        .env("PITBOSS_RTP_ROUNDS", "0")
        // Measure the service, not its per-key limits (their defaults are 20,000 requests a
        // second per key and 40,000 per operator; the load generator uses one key).
        .env("PITBOSS_LIMIT_KEY_RPS", "0")
        .env("PITBOSS_LIMIT_OPERATOR_RPS", "0")
        .env("PITBOSS_ADMIN_KEY", admin_key);
    if let Some((name, base)) = pg {
        // A PostgreSQL deployment names its log.
        cmd.args(["--database-url", &format!("{base}/{name}")])
            .args(["--origin", &format!("pitboss.bench/{name}")]);
    }
    cmd
}

// ----- HTTP client -------------------------------------------------------------------------

struct Conn {
    sender: SendRequest<Full<Bytes>>,
    host: String,
}

impl Conn {
    async fn open(addr: SocketAddr) -> Result<Conn, String> {
        let stream = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect {addr}: {e}"))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("handshake: {e}"))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(Conn {
            sender,
            host: addr.to_string(),
        })
    }

    async fn post(
        &mut self,
        path: &str,
        key: Option<&str>,
        idem: Option<&str>,
        body: String,
    ) -> Result<(u16, Bytes), String> {
        let mut b = hyper::Request::post(path)
            .header(hyper::header::HOST, &self.host)
            .header(hyper::header::CONTENT_TYPE, "application/json");
        if let Some(k) = key {
            b = b.header(hyper::header::AUTHORIZATION, format!("Bearer {k}"));
        }
        if let Some(i) = idem {
            b = b.header("idempotency-key", i);
        }
        let req = b
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        self.sender.ready().await.map_err(|e| e.to_string())?;
        let resp = self
            .sender
            .send_request(req)
            .await
            .map_err(|e| e.to_string())?;
        let status = resp.status().as_u16();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok((status, body))
    }

    async fn get(&mut self, path: &str) -> Result<(u16, Bytes), String> {
        let req = hyper::Request::get(path)
            .header(hyper::header::HOST, &self.host)
            .body(Full::new(Bytes::new()))
            .map_err(|e| e.to_string())?;
        self.sender.ready().await.map_err(|e| e.to_string())?;
        let resp = self
            .sender
            .send_request(req)
            .await
            .map_err(|e| e.to_string())?;
        let status = resp.status().as_u16();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok((status, body))
    }
}

fn json_of(body: &Bytes) -> serde_json::Value {
    serde_json::from_slice(body).unwrap_or(serde_json::Value::Null)
}

// ----- the workload ------------------------------------------------------------------------

#[derive(Clone)]
enum Workload {
    /// POST /echo with the body of a bet request.
    Floor,
    /// Bets on pitboss, one per request; each connection its own table.
    Pitboss {
        operator_key: Arc<str>,
        run: Arc<str>,
    },
}

/// What one connection saw during the measured window.
#[derive(Default)]
struct ConnStats {
    latencies_us: Vec<u32>,
    requests: u64,
    accepted: u64,
    refused: u64,
    errors: u64,
    upkeep: u64,
    /// With `--trace`, each bet of the rate-limited pass: (answered, µs after the window's
    /// start; latency µs; how late it was sent, µs: the connection's round upkeep overran).
    trace: Vec<(u32, u32, u32)>,
}

#[derive(Clone, Copy)]
struct Window {
    start: Instant,
    end: Instant,
}

impl Window {
    fn contains(&self, t: Instant) -> bool {
        t >= self.start && t < self.end
    }
}

/// xorshift64*, one per connection: which number and player each bet names.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

fn bet_body(rng: &mut Rng, n: u64, players: u64) -> String {
    let bets: Vec<String> = (0..n)
        .map(|_| {
            format!(
                r#"{{"player":"p{}","bet":"straight","numbers":[{}],"stake_minor":100}}"#,
                1 + rng.below(players),
                rng.below(37)
            )
        })
        .collect();
    format!(r#"{{"bets":[{}]}}"#, bets.join(","))
}

/// The table's round: opened, and settled after enough bets.
struct Table {
    name: String,
    round: Option<(String, u64, Instant)>,
    /// Bets before this round is settled. The first round of table i of n takes
    /// `bets_per_round × (i+1)/n` bets, so that the tables' settlements are spread evenly
    /// over time instead of all landing in the same few group commits, as they would if
    /// every table started together and bet at the same rate; later rounds take
    /// `bets_per_round`.
    round_target: u64,
}

struct Driver {
    conn: Conn,
    workload: Workload,
    index: usize,
    seq: u64,
    rng: Rng,
    table: Table,
    bets_per_round: u64,
    bets_per_request: u64,
    players: u64,
}

impl Driver {
    fn idem(&mut self) -> String {
        self.seq += 1;
        match &self.workload {
            Workload::Pitboss { run, .. } => format!("lg-{run}-{}-{}", self.index, self.seq),
            Workload::Floor => format!("lg-floor-{}-{}", self.index, self.seq),
        }
    }

    async fn upkeep_post(&mut self, path: &str, body: &str) -> Result<serde_json::Value, String> {
        let key = match &self.workload {
            Workload::Pitboss { operator_key, .. } => operator_key.clone(),
            Workload::Floor => return Ok(serde_json::Value::Null),
        };
        let idem = self.idem();
        let (s, b) = self
            .conn
            .post(path, Some(&key), Some(&idem), body.to_string())
            .await?;
        if s >= 300 {
            return Err(format!("{path}: {s} {}", String::from_utf8_lossy(&b)));
        }
        Ok(json_of(&b))
    }

    /// Settles the table's round once it is full (or old), and opens the next one.
    async fn ensure_round(&mut self, stats: &mut ConnStats) -> Result<(), String> {
        if matches!(self.workload, Workload::Floor) {
            return Ok(());
        }
        if let Some((_, bets, opened)) = &self.table.round {
            if *bets < self.table.round_target && opened.elapsed() < Duration::from_secs(10) {
                return Ok(());
            }
            self.settle(stats).await?;
        }
        let path = format!("/v1/tables/{}/rounds", self.table.name);
        let opened = self.upkeep_post(&path, "{}").await?;
        let round = opened["round"]
            .as_str()
            .ok_or_else(|| format!("no round in {opened}"))?
            .to_string();
        stats.upkeep += 1;
        self.table.round = Some((round, 0, Instant::now()));
        Ok(())
    }

    /// Closes betting on the table's open round (if any) and spins, which settles every bet.
    async fn settle(&mut self, stats: &mut ConnStats) -> Result<(), String> {
        let Some((round, _, _)) = &self.table.round else {
            return Ok(());
        };
        let (round, events) = (round.clone(), format!("/v1/rounds/{round}/events"));
        self.upkeep_post(&events, r#"{"type":"close_betting"}"#)
            .await?;
        let n = self.rng.below(37);
        let spin = format!(
            r#"{{"type":"spin","number":{n},"ball_against_rotation":true,"ball_revolutions":5}}"#
        );
        let settled = self.upkeep_post(&events, &spin).await?;
        if settled["phase"] != "settled" {
            return Err(format!("round {round} did not settle: {settled}"));
        }
        stats.upkeep += 2;
        self.table.round = None;
        self.table.round_target = self.bets_per_round;
        Ok(())
    }

    /// One bet request; its status and how many of its bets were accepted.
    async fn one_bet(&mut self) -> Result<(u16, u64), String> {
        let body = bet_body(&mut self.rng, self.bets_per_request, self.players);
        let idem = self.idem();
        match self.workload.clone() {
            Workload::Floor => {
                let (s, _) = self.conn.post("/echo", None, Some(&idem), body).await?;
                Ok((s, u64::from(s == 200)))
            }
            Workload::Pitboss { operator_key, .. } => {
                let (round, bets, _) = self.table.round.as_mut().expect("a round is open");
                let path = format!("/v1/rounds/{round}/bets");
                let (s, b) = self
                    .conn
                    .post(&path, Some(&operator_key), Some(&idem), body)
                    .await?;
                let accepted = if s == 200 {
                    json_of(&b)["accepted"].as_u64().unwrap_or(0)
                } else {
                    0
                };
                *bets += accepted;
                Ok((s, accepted))
            }
        }
    }
}

fn record(stats: &mut ConnStats, w: Window, done: Instant, latency: Duration, r: (u16, u64)) {
    if !w.contains(done) {
        return;
    }

    stats.requests += 1;
    stats
        .latencies_us
        .push(latency.as_micros().min(u32::MAX as u128) as u32);
    if r.1 > 0 {
        stats.accepted += r.1;
    } else {
        stats.refused += 1;
    }
}

/// Closed loop: the next request as soon as the previous one is answered.
async fn closed_loop(mut d: Driver, w: Window) -> (Driver, ConnStats) {
    let mut stats = ConnStats::default();
    while Instant::now() < w.end {
        if let Err(e) = d.ensure_round(&mut stats).await {
            stats.errors += 1;
            eprintln!("connection {}: {e}", d.index);
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        let t0 = Instant::now();
        match d.one_bet().await {
            Ok(r) => record(&mut stats, w, Instant::now(), t0.elapsed(), r),
            Err(e) => {
                stats.errors += 1;
                eprintln!("connection {}: {e}", d.index);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    (d, stats)
}

/// Open loop at `interval` per connection: latency counts from the scheduled send time.
async fn open_loop(
    mut d: Driver,
    w: Window,
    begin: Instant,
    interval: Duration,
    phase: Duration,
) -> (Driver, ConnStats) {
    let mut stats = ConnStats::default();
    let mut next = begin + phase;
    while next < w.end {
        // Round upkeep in the idle time before the next send; if it overruns, the overrun
        // counts in the next bet's latency (that connection was busy).
        if let Err(e) = d.ensure_round(&mut stats).await {
            stats.errors += 1;
            eprintln!("connection {}: {e}", d.index);
        }
        tokio::time::sleep_until(next.into()).await;
        let scheduled = next;
        next += interval;
        let late = scheduled.elapsed();
        match d.one_bet().await {
            Ok(r) => {
                let done = Instant::now();
                if w.contains(done) {
                    let us = |d: Duration| d.as_micros().min(u32::MAX as u128) as u32;
                    let at = us(done - w.start);
                    stats.trace.push((at, us(done - scheduled), us(late)));
                }
                record(&mut stats, w, done, done - scheduled, r)
            }
            Err(e) => {
                stats.errors += 1;
                eprintln!("connection {}: {e}", d.index);
            }
        }
    }
    (d, stats)
}

/// One row of the results.
#[derive(Debug, Clone)]
struct Row {
    target: String,
    pass: String,
    connections: usize,
    offered: Option<f64>,
    requests_per_s: f64,
    accepted_per_s: f64,
    p50_ms: f64,
    p99_ms: f64,
    p999_ms: f64,
    max_ms: f64,
    refused: u64,
    errors: u64,
    upkeep: u64,
    server_cpu_s: f64,
    client_cpu_s: f64,
    batch_avg: Option<f64>,
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i] as f64 / 1000.0
}

/// (log batches, commands in them) from pitboss's /metrics.
async fn batch_counters(addr: SocketAddr) -> Option<(f64, f64)> {
    let mut c = Conn::open(addr).await.ok()?;
    let (s, b) = c.get("/metrics").await.ok()?;
    if s != 200 {
        return None;
    }
    let text = String::from_utf8_lossy(&b);
    let value = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse::<f64>().ok())
    };
    Some((
        value("pitboss_log_batches_total ")?,
        value("pitboss_log_batch_commands_total ")?,
    ))
}

async fn run_pass(
    opts: &Options,
    target: &str,
    server: Option<&Spawned>,
    drivers: Vec<Driver>,
    rate: Option<f64>,
) -> (Vec<Driver>, Row) {
    let addr = drivers[0].conn_addr();
    let begin = Instant::now();
    let w = Window {
        start: begin + opts.warmup,
        end: begin + opts.warmup + opts.duration,
    };
    // Counters are read at the window's edges, from a task of their own.
    let counters = {
        let (start, end) = (w.start, w.end);
        tokio::spawn(async move {
            tokio::time::sleep_until(start.into()).await;
            let a = batch_counters(addr).await;
            let cpu_client_a = cpu_seconds("/proc/self/stat");
            tokio::time::sleep_until(end.into()).await;
            let b = batch_counters(addr).await;
            let cpu_client_b = cpu_seconds("/proc/self/stat");
            (a, b, cpu_client_b - cpu_client_a)
        })
    };
    let server_cpu_at = |s: Option<&Spawned>| s.map_or(0.0, Spawned::cpu_seconds);
    let n = drivers.len();
    let mut tasks = Vec::with_capacity(n);
    for d in drivers {
        tasks.push(match rate {
            None => tokio::spawn(closed_loop(d, w)),
            Some(r) => {
                let interval = Duration::from_secs_f64(n as f64 / r);
                let phase = interval.mul_f64(tasks.len() as f64 / n as f64);
                tokio::spawn(open_loop(d, w, begin, interval, phase))
            }
        });
    }
    tokio::time::sleep_until(w.start.into()).await;
    let cpu_server_a = server_cpu_at(server);
    tokio::time::sleep_until(w.end.into()).await;
    let cpu_server_b = server_cpu_at(server);
    let mut drivers = Vec::with_capacity(n);
    let mut all = ConnStats::default();
    for t in tasks {
        let (d, s) = t.await.expect("connection task");
        drivers.push(d);
        all.latencies_us.extend(s.latencies_us);
        all.requests += s.requests;
        all.accepted += s.accepted;
        all.refused += s.refused;
        all.errors += s.errors;
        all.upkeep += s.upkeep;
        all.trace.extend(s.trace);
    }
    if let (Some(path), Some(_)) = (&opts.trace, rate) {
        all.trace.sort_unstable();
        // The window's start on the wall clock, to line the trace up with the service's log.
        let start_unix_ms = (std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .saturating_sub(w.start.elapsed()))
        .as_millis();
        let mut text = format!("# window start, unix ms: {start_unix_ms}\n");
        text.push_str("answered_ms\tlatency_ms\tsent_late_ms\n");
        for (at, lat, late) in &all.trace {
            let ms = |v: u32| v as f64 / 1000.0;
            text.push_str(&format!(
                "{:.3}\t{:.3}\t{:.3}\n",
                ms(*at),
                ms(*lat),
                ms(*late)
            ));
        }
        let path = path.with_extension(format!("{target}.tsv"));
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("--trace {}: {e}", path.display());
        }
    }
    let (a, b, client_cpu) = counters.await.expect("counter task");
    let batch_avg = match (a, b) {
        (Some((b0, c0)), Some((b1, c1))) if b1 > b0 => Some((c1 - c0) / (b1 - b0)),
        _ => None,
    };
    all.latencies_us.sort_unstable();
    let secs = opts.duration.as_secs_f64();
    let row = Row {
        target: target.to_string(),
        pass: if rate.is_some() {
            "rate-limited"
        } else {
            "max (closed loop)"
        }
        .to_string(),
        connections: n,
        offered: rate,
        requests_per_s: all.requests as f64 / secs,
        accepted_per_s: all.accepted as f64 / secs,
        p50_ms: percentile(&all.latencies_us, 0.50),
        p99_ms: percentile(&all.latencies_us, 0.99),
        p999_ms: percentile(&all.latencies_us, 0.999),
        max_ms: all
            .latencies_us
            .last()
            .map_or(f64::NAN, |v| *v as f64 / 1000.0),
        refused: all.refused,
        errors: all.errors,
        upkeep: all.upkeep,
        server_cpu_s: cpu_server_b - cpu_server_a,
        client_cpu_s: client_cpu,
        batch_avg,
    };
    eprintln!(
        "{:>9} {:<18} {:>8.0} req/s {:>8.0} accepted/s  p50 {:>6.2} ms  p99 {:>6.2} ms  \
         p99.9 {:>6.2} ms  refused {} errors {}  cpu server {:.1}s client {:.1}s{}",
        row.target,
        row.pass,
        row.requests_per_s,
        row.accepted_per_s,
        row.p50_ms,
        row.p99_ms,
        row.p999_ms,
        row.refused,
        row.errors,
        row.server_cpu_s,
        row.client_cpu_s,
        row.batch_avg
            .map_or(String::new(), |b| format!("  {b:.1} commands/commit"))
    );
    (drivers, row)
}

impl Driver {
    fn conn_addr(&self) -> SocketAddr {
        self.conn.host.parse().expect("host is an address")
    }
}

async fn run_target(opts: &Options, target: &str) -> Result<Vec<Row>, String> {
    let mut nodes: Vec<SocketAddr> = Vec::new();
    let (mut server, addr, admin_key) = match target {
        "floor" => {
            let exe = std::env::current_exe().map_err(|e| e.to_string())?;
            let mut cmd = Command::new(exe);
            cmd.arg("floor-server");
            let s = Spawned::start(cmd)?;
            let addr = s.addr;
            (Some(s), addr, None)
        }
        "sqlite" | "postgres" => {
            let key = opts.admin_key.clone().unwrap_or_else(generated_admin_key);
            let s = start_pitboss(opts, target, &key)?;
            let addr = s.addr;
            (Some(s), addr, Some(key))
        }
        "external" => {
            // Several URLs (nodes of one deployment, issue 17): connection i goes to the
            // i-th modulo their number; set-up goes to the first.
            let mut addrs = Vec::new();
            for url in opts.url.as_deref().expect("--url").split(',') {
                let host = url
                    .trim_end_matches('/')
                    .strip_prefix("http://")
                    .ok_or("--url must be http://HOST:PORT[,http://HOST:PORT…]")?;
                let addr: SocketAddr = host
                    .parse()
                    .map_err(|e| format!("--url {url}: {e} (give an IP address and port)"))?;
                addrs.push(addr);
            }
            nodes = addrs.clone();
            (None, addrs[0], opts.admin_key.clone())
        }
        other => return Err(format!("unknown target {other}")),
    };
    let run: Arc<str> = unique_suffix().into();
    // One workload per operator: connection i plays for operator i mod N.
    let workloads = match &admin_key {
        None => vec![Workload::Floor],
        Some(admin) => {
            let mut c = Conn::open(addr).await?;
            let mut all = Vec::with_capacity(opts.operators);
            for n in 0..opts.operators {
                let operator = format!("bench{}o{n}", &run[..6.min(run.len())]);
                let body = format!(r#"{{"role":"operator","operator":"{operator}"}}"#);
                let (s, b) = c.post("/v1/admin/keys", Some(admin), None, body).await?;
                if s != 201 {
                    return Err(format!(
                        "creating an operator key: {s} {}",
                        String::from_utf8_lossy(&b)
                    ));
                }
                let key = json_of(&b)["key"]
                    .as_str()
                    .ok_or("no key in the answer")?
                    .to_string();
                all.push(Workload::Pitboss {
                    operator_key: key.into(),
                    run: run.clone(),
                });
            }
            all
        }
    };
    let mut drivers = Vec::with_capacity(opts.connections);
    for i in 0..opts.connections {
        let mut d = Driver {
            conn: Conn::open(if nodes.is_empty() {
                addr
            } else {
                nodes[i % nodes.len()]
            })
            .await?,
            workload: workloads[i % workloads.len()].clone(),
            index: i,
            seq: 0,
            rng: Rng(0x9e37_79b9_7f4a_7c15 ^ (i as u64 + 1).wrapping_mul(0xff51_afd7_ed55_8ccd)),
            table: Table {
                name: format!("lg-{run}-{i}"),
                round: None,
                round_target: (opts.bets_per_round * (i as u64 + 1) / opts.connections as u64)
                    .max(1),
            },
            bets_per_round: opts.bets_per_round,
            bets_per_request: opts.bets_per_request,
            players: opts.players,
        };
        if let Workload::Pitboss { .. } = &d.workload {
            let body = format!(
                r#"{{"table":"{}","plan":"evolution-roulette@1","mode":"live"}}"#,
                d.table.name
            );
            d.upkeep_post("/v1/tables", &body).await?;
        }
        drivers.push(d);
    }
    let label = if target == "floor" {
        "floor (actix-web echo)".to_string()
    } else {
        format!("pitboss {target}")
    };
    let mut rows = Vec::new();
    let issue13 = !opts.fill.is_empty() || opts.growth.is_some() || opts.soak.is_some();
    if issue13 && server.as_ref().is_none_or(|s| s.remake.is_none()) {
        return Err("--soak, --growth and --fill need the sqlite or postgres target".into());
    }
    if !opts.fill.is_empty() {
        let s = server.as_mut().expect("a pitboss server");
        soak::fill(opts, target, s, drivers).await?;
        return Ok(rows);
    }
    if let Some(window) = opts.growth {
        let s = server.as_mut().expect("a pitboss server");
        rows.push(soak::growth(opts, target, &label, s, drivers, window).await?);
        return Ok(rows);
    }
    let (drivers, max) = run_pass(opts, &label, server.as_ref(), drivers, None).await;
    rows.push(max.clone());
    if opts.rate_pass {
        let rate = opts
            .rate
            .unwrap_or((max.requests_per_s / 2.0).max(1.0))
            .round();
        if let Some(duration) = opts.soak {
            let s = server.as_ref().expect("a pitboss server");
            rows.push(soak::soak(opts, target, &label, s, drivers, rate, duration, &max).await?);
        } else {
            let (_, half) = run_pass(opts, &label, server.as_ref(), drivers, Some(rate)).await;
            rows.push(half);
        }
    }
    drop(server);
    Ok(rows)
}

fn print_markdown(opts: &Options, rows: &[Row]) {
    println!(
        "\n{} connections, {} s measured after {} s warm-up per pass, {} bets per round, \
         {} client thread(s)\n",
        opts.connections,
        opts.duration.as_secs_f64(),
        opts.warmup.as_secs_f64(),
        opts.bets_per_round,
        opts.client_threads
    );
    println!(
        "| target | pass | connections | offered req/s | answered req/s | accepted bets/s | p50 ms | p99 ms | \
         p99.9 ms | max ms | refused | errors | round upkeep req | commands/commit | \
         CPU s server / client |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        let is_floor = r.target.starts_with("floor");
        println!(
            "| {} | {} | {} | {} | {:.0} | {} | {:.2} | {:.2} | {:.2} | {:.1} | {} | {} | {} | {} | {:.1} / {:.1} |",
            r.target,
            r.pass,
            r.connections,
            r.offered.map_or("–".into(), |o| format!("{o:.0}")),
            r.requests_per_s,
            if is_floor { "–".into() } else { format!("{:.0}", r.accepted_per_s) },
            r.p50_ms,
            r.p99_ms,
            r.p999_ms,
            r.max_ms,
            if is_floor { "–".into() } else { r.refused.to_string() },
            r.errors,
            if is_floor { "–".into() } else { r.upkeep.to_string() },
            r.batch_avg.map_or("–".into(), |b| format!("{b:.1}")),
            r.server_cpu_s,
            r.client_cpu_s,
        );
    }
}
