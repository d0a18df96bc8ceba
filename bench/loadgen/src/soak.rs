//! Memory and restart measurements (issue 13): the soak, the closed-loop growth and the fill.
//!
//! Every figure is taken by this program while it runs: resident memory from
//! `/proc/<pid>/status`, the log size and the in-memory counts from pitboss's `/metrics`, the
//! database size from the data directory (SQLite) or `pg_database_size` (PostgreSQL), and
//! restart times from the spawn of the new process to its first `200` on `/healthz`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use super::*;

/// What the benchmark reads of the server at one instant.
#[derive(Clone, Debug, Default)]
pub(crate) struct Sample {
    /// Seconds since the start of the measured run.
    t_s: f64,
    /// VmRSS, RssAnon, RssFile of `/proc/<pid>/status`, in MB (10^6 bytes).
    rss_mb: f64,
    anon_mb: f64,
    file_mb: f64,
    log_entries: f64,
    rounds_in_memory: f64,
    tables_in_memory: f64,
    snapshots: f64,
    db_mb: f64,
}

/// Where to read a running pitboss: its process, its HTTP address and its storage.
#[derive(Clone)]
struct Probe {
    pid: u32,
    addr: SocketAddr,
    data_dir: Option<PathBuf>,
    pg: Option<(String, String)>,
}

impl Probe {
    fn of(s: &Spawned) -> Probe {
        Probe {
            pid: s.child.id(),
            addr: s.addr,
            data_dir: s.data_dir.clone(),
            pg: s.pg_database.clone(),
        }
    }

    async fn sample(&self, t0: Instant) -> Sample {
        let t_s = t0.elapsed().as_secs_f64();
        let (rss_mb, anon_mb, file_mb) = rss_mb(self.pid);
        let m = metrics(self.addr).await;
        let this = self.clone();
        let db = tokio::task::spawn_blocking(move || this.db_bytes())
            .await
            .unwrap_or(0);
        let g = |k: &str| m.get(k).copied().unwrap_or(f64::NAN);
        Sample {
            t_s,
            rss_mb,
            anon_mb,
            file_mb,
            log_entries: g("pitboss_log_entries"),
            rounds_in_memory: g("pitboss_rounds_in_memory"),
            tables_in_memory: g("pitboss_tables_in_memory"),
            snapshots: g("pitboss_snapshots_total"),
            db_mb: db as f64 / 1e6,
        }
    }

    /// Bytes the database takes on disk: the SQLite data directory's allocated blocks (the
    /// database, its WAL and shared memory, the signing key), or PostgreSQL's own figure.
    fn db_bytes(&self) -> u64 {
        if let Some((admin, name)) = &self.pg {
            let out = Command::new("psql")
                .args([admin.as_str(), "-tAc"])
                .arg(format!("SELECT pg_database_size('{name}')"))
                .output();
            return out
                .ok()
                .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
                .unwrap_or(0);
        }
        self.data_dir.as_deref().map_or(0, dir_bytes)
    }
}

fn dir_bytes(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    rd.flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.blocks() * 512,
            Err(_) => 0,
        })
        .sum()
}

/// VmRSS, RssAnon and RssFile of a process, in MB.
fn rss_mb(pid: u32) -> (f64, f64, f64) {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kb = |name: &str| {
        s.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
            .map_or(f64::NAN, |k| k * 1024.0 / 1e6)
    };
    (kb("VmRSS:"), kb("RssAnon:"), kb("RssFile:"))
}

/// pitboss's `/metrics` as name → value (series without labels only).
async fn metrics(addr: SocketAddr) -> HashMap<String, f64> {
    let mut out = HashMap::new();
    let Ok(mut c) = Conn::open(addr).await else {
        return out;
    };
    let Ok((200, b)) = c.get("/metrics").await else {
        return out;
    };
    for l in String::from_utf8_lossy(&b).lines() {
        if l.starts_with('#') {
            continue;
        }
        if let Some((k, v)) = l.split_once(' ') {
            if let Ok(v) = v.trim().parse::<f64>() {
                out.insert(k.to_string(), v);
            }
        }
    }
    out
}

/// One timed restart of the server on the same data.
#[derive(Clone, Debug)]
pub(crate) struct Restarted {
    signal: &'static str,
    /// From the signal to the old process's exit.
    stop_s: f64,
    /// From the spawn to the `listening on` line.
    listening_s: f64,
    /// From the spawn to the first `200` of `/healthz`.
    ready_s: f64,
    replayed: f64,
    log_entries: f64,
    rss_mb: f64,
}

/// Stops the server with `signal` (`KILL` or `TERM`), starts it again with the same command on
/// the same data, and times it until `/healthz` answers `200`.
async fn restart(server: &mut Spawned, signal: &'static str) -> Result<Restarted, String> {
    let pid = server.child.id();
    let t = Instant::now();
    if signal == "KILL" {
        server
            .child
            .kill()
            .map_err(|e| format!("kill {pid}: {e}"))?;
    } else {
        let st = Command::new("kill")
            .args([format!("-{signal}"), pid.to_string()])
            .status()
            .map_err(|e| format!("kill -{signal} {pid}: {e}"))?;
        if !st.success() {
            return Err(format!("kill -{signal} {pid}: {st}"));
        }
    }
    server
        .child
        .wait()
        .map_err(|e| format!("waiting for {pid}: {e}"))?;
    let stop_s = t.elapsed().as_secs_f64();
    let cmd = (server.remake.as_ref().ok_or("no command to restart")?)();
    let t = Instant::now();
    let (child, addr) = Spawned::spawn(cmd)?;
    let listening_s = t.elapsed().as_secs_f64();
    server.child = child;
    server.addr = addr;
    loop {
        if let Ok(mut c) = Conn::open(addr).await {
            if let Ok((200, _)) = c.get("/healthz").await {
                break;
            }
        }
        if t.elapsed() > Duration::from_secs(900) {
            return Err("no 200 from /healthz 900 s after the restart".into());
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let ready_s = t.elapsed().as_secs_f64();
    let m = metrics(addr).await;
    let g = |k: &str| m.get(k).copied().unwrap_or(f64::NAN);
    let r = Restarted {
        signal,
        stop_s,
        listening_s,
        ready_s,
        replayed: g("pitboss_start_replayed_entries"),
        log_entries: g("pitboss_log_entries"),
        rss_mb: rss_mb(server.child.id()).0,
    };
    eprintln!(
        "restart after SIG{signal}: stopped in {stop_s:.3} s; listening {listening_s:.3} s, \
         /healthz 200 {ready_s:.3} s after spawn; {} entries replayed of {}; RSS {:.1} MB",
        r.replayed, r.log_entries, r.rss_mb
    );
    Ok(r)
}

// ----- reporting ---------------------------------------------------------------------------

fn utc_now() -> String {
    Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn header(title: &str, opts: &Options, started: &str, load_start: &str) -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    format!(
        "# {title}\n\n\
         Written by `bench/loadgen` (run {started} → {}). Command (from the workspace root, after \
         `cargo build --release`):\n\n\
         ```sh\ncargo run --release --manifest-path bench/loadgen/Cargo.toml -- {}\n```\n\n\
         Machine: {} cores, shared with other builds during the run (load average {load_start} at \
         the start, {} at the end). {} connections (one table each), {} bet(s) per request, \
         {} bets per round. Memory is VmRSS of the pitboss process (`/proc/<pid>/status`, \
         MB = 10^6 bytes); log size and in-memory counts from `/metrics`; database size is the \
         data directory's allocated blocks (SQLite) or `pg_database_size` (PostgreSQL).\n\n",
        utc_now(),
        args.join(" "),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        loadavg(),
        opts.connections,
        opts.bets_per_request,
        opts.bets_per_round,
    )
}

fn samples_table(samples: &[Sample]) -> String {
    let mut s = String::from(
        "| t s | RSS MB | anon MB | file MB | log entries | rounds in memory | tables in memory \
         | snapshots | database MB |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for x in samples {
        let _ = writeln!(
            s,
            "| {:.0} | {:.1} | {:.1} | {:.1} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} |",
            x.t_s,
            x.rss_mb,
            x.anon_mb,
            x.file_mb,
            x.log_entries,
            x.rounds_in_memory,
            x.tables_in_memory,
            x.snapshots,
            x.db_mb
        );
    }
    s
}

fn row_line(r: &Row) -> String {
    format!(
        "| {} | {} | {:.0} | {:.0} | {:.2} | {:.2} | {:.1} | {} | {} |\n",
        r.pass,
        r.offered.map_or("–".into(), |o| format!("{o:.0}")),
        r.requests_per_s,
        r.accepted_per_s,
        r.p50_ms,
        r.p99_ms,
        r.max_ms,
        r.refused,
        r.errors
    )
}

const ROW_HEADER: &str = "| pass | offered req/s | answered req/s | accepted bets/s | p50 ms | \
                          p99 ms | max ms | refused | errors |\n|---|---|---|---|---|---|---|---|---|\n";

fn restart_lines(rs: &[Restarted]) -> String {
    let mut s = String::from(
        "| stopped by | stop s | spawn → listening s | spawn → /healthz 200 s | entries replayed \
         | log entries | RSS after start MB |\n|---|---|---|---|---|---|---|\n",
    );
    for r in rs {
        let _ = writeln!(
            s,
            "| SIG{} | {:.3} | {:.3} | **{:.3}** | {:.0} | {:.0} | {:.1} |",
            r.signal, r.stop_s, r.listening_s, r.ready_s, r.replayed, r.log_entries, r.rss_mb
        );
    }
    s
}

fn write(opts: &Options, name: &str, text: &str) -> Result<(), String> {
    std::fs::create_dir_all(&opts.out).map_err(|e| format!("{}: {e}", opts.out.display()))?;
    let p = opts.out.join(name);
    std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
    eprintln!("wrote {}", p.display());
    Ok(())
}

/// Memory (left axis, MB) and log entries (right axis, millions) over time, as SVG.
fn plot(path: &Path, title: &str, samples: &[Sample], ceiling: Option<f64>) -> Result<(), String> {
    use plotters::prelude::*;
    let e = |e: &dyn std::fmt::Display| format!("plot {}: {e}", path.display());
    let t_max = samples.iter().map(|s| s.t_s).fold(1.0, f64::max);
    let mem_max = samples
        .iter()
        .map(|s| s.rss_mb)
        .chain(ceiling)
        .filter(|v| v.is_finite())
        .fold(1.0, f64::max)
        * 1.15;
    let log_max = samples
        .iter()
        .map(|s| s.log_entries / 1e6)
        .filter(|v| v.is_finite())
        .fold(0.001, f64::max)
        * 1.1;
    let root = SVGBackend::new(path, (960, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(65)
        .right_y_label_area_size(75)
        .build_cartesian_2d(0f64..t_max, 0f64..mem_max)
        .map_err(|x| e(&x))?
        .set_secondary_coord(0f64..t_max, 0f64..log_max);
    chart
        .configure_mesh()
        .x_desc("seconds")
        .y_desc("resident memory (MB)")
        .draw()
        .map_err(|x| e(&x))?;
    chart
        .configure_secondary_axes()
        .y_desc("log entries (millions)")
        .draw()
        .map_err(|x| e(&x))?;
    chart
        .draw_series(LineSeries::new(
            samples.iter().map(|s| (s.t_s, s.rss_mb)),
            RED.stroke_width(2),
        ))
        .map_err(|x| e(&x))?
        .label("resident memory, MB (left)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED.stroke_width(2)));
    if let Some(c) = ceiling {
        chart
            .draw_series(LineSeries::new([(60.0, c), (t_max, c)], BLACK.mix(0.4)))
            .map_err(|x| e(&x))?
            .label("goal: level at 1 min + 64 MB")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.4)));
    }
    chart
        .draw_secondary_series(LineSeries::new(
            samples.iter().map(|s| (s.t_s, s.log_entries / 1e6)),
            BLUE.stroke_width(2),
        ))
        .map_err(|x| e(&x))?
        .label("log entries, millions (right)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(2)));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

// ----- the soak ----------------------------------------------------------------------------

/// The rate-limited pass for `duration`, sampling the server every `--sample-every` seconds.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn soak(
    opts: &Options,
    target: &str,
    label: &str,
    server: &Spawned,
    drivers: Vec<Driver>,
    rate: f64,
    duration: Duration,
    max: &Row,
) -> Result<Row, String> {
    let (started, load_start) = (utc_now(), loadavg());
    let probe = Probe::of(server);
    let t0 = Instant::now();
    let every = opts.sample_every;
    let n = (duration.as_secs_f64() / every.as_secs_f64()).floor() as u32;
    let sampler = tokio::spawn(async move {
        let mut out = Vec::new();
        for k in 0..=n {
            tokio::time::sleep_until((t0 + every * k).into()).await;
            let s = probe.sample(t0).await;
            eprintln!(
                "soak t={:>5.0}s RSS {:>7.1} MB (anon {:.1}, file {:.1})  log {:>10.0}  \
                 rounds {:.0} tables {:.0}  snapshots {:.0}  db {:.0} MB",
                s.t_s,
                s.rss_mb,
                s.anon_mb,
                s.file_mb,
                s.log_entries,
                s.rounds_in_memory,
                s.tables_in_memory,
                s.snapshots,
                s.db_mb
            );
            out.push(s);
        }
        out
    });
    let mut o = opts.clone();
    o.warmup = Duration::ZERO;
    o.duration = duration;
    let (_, row) = run_pass(&o, label, Some(server), drivers, Some(rate)).await;
    let samples = sampler.await.map_err(|e| e.to_string())?;

    let level = samples
        .iter()
        .find(|s| s.t_s >= 59.0)
        .or(samples.last())
        .cloned()
        .unwrap_or_default();
    let later = samples.iter().filter(|s| s.t_s >= level.t_s);
    let peak = later.clone().map(|s| s.rss_mb).fold(f64::NAN, f64::max);
    let (first, last) = (
        samples.first().cloned().unwrap_or_default(),
        samples.last().cloned().unwrap_or_default(),
    );
    let grown = peak - level.rss_mb;
    let verdict = if grown <= 64.0 {
        "**met**"
    } else {
        "**not met**"
    };
    let mut md = header(
        &format!(
            "Soak: pitboss {target}, {:.0} s at half the closed-loop maximum",
            duration.as_secs_f64()
        ),
        opts,
        &started,
        &load_start,
    );
    let _ = write!(
        md,
        "## Result\n\n\
         * Level after the first minute (t = {:.0} s): **{:.1} MB**; highest from then to the end: \
         **{:.1} MB**; highest minus level: **{:+.1} MB** (goal ≤ 64 MB: {verdict}).\n\
         * Resident memory at the start of the pass {:.1} MB, at the end {:.1} MB.\n\
         * The log grew from {:.0} to {:.0} entries (**{:+.0}**, {:+.0} since the first minute); \
         the database from {:.0} MB to {:.0} MB.\n\
         * Rounds in memory at the end: {:.0}; tables in memory: {:.0}; snapshots written: {:.0}.\n\n\
         ## Passes\n\n{ROW_HEADER}{}{}\n\
         The closed-loop pass ran {:.0} s after {:.0} s of warm-up; the rate-limited pass is the soak \
         itself (latency from each request's scheduled send time).\n\n\
         ## Samples (every {:.0} s)\n\n{}\n\
         Plot: `soak-{target}.svg` (drawn by the benchmark with `plotters`).\n",
        level.t_s,
        level.rss_mb,
        peak,
        grown,
        first.rss_mb,
        last.rss_mb,
        first.log_entries,
        last.log_entries,
        last.log_entries - first.log_entries,
        last.log_entries - level.log_entries,
        first.db_mb,
        last.db_mb,
        last.rounds_in_memory,
        last.tables_in_memory,
        last.snapshots,
        row_line(max),
        row_line(&row),
        opts.duration.as_secs_f64(),
        opts.warmup.as_secs_f64(),
        every.as_secs_f64(),
        samples_table(&samples),
    );
    write(opts, &format!("soak-{target}.md"), &md)?;
    plot(
        &opts.out.join(format!("soak-{target}.svg")),
        &format!(
            "pitboss {target}: {:.0} req/s ({} bets each) for {:.0} s",
            rate,
            opts.bets_per_request,
            duration.as_secs_f64()
        ),
        &samples,
        Some(level.rss_mb + 64.0),
    )?;
    eprintln!(
        "soak {target}: level at 1 min {:.1} MB, peak after {peak:.1} MB ({grown:+.1} MB); log +{:.0} entries",
        level.rss_mb,
        last.log_entries - first.log_entries
    );
    Ok(row)
}

// ----- closed-loop growth and restart ------------------------------------------------------

/// A closed-loop pass of `window` seconds with the server's memory and log size at its edges,
/// then a restart after SIGKILL and one after SIGTERM.
pub(crate) async fn growth(
    opts: &Options,
    target: &str,
    label: &str,
    server: &mut Spawned,
    drivers: Vec<Driver>,
    window: Duration,
) -> Result<Row, String> {
    let (started, load_start) = (utc_now(), loadavg());
    let probe = Probe::of(server);
    let t0 = Instant::now();
    let (start, end) = (t0 + opts.warmup, t0 + opts.warmup + window);
    let edges = {
        let probe = probe.clone();
        tokio::spawn(async move {
            tokio::time::sleep_until(start.into()).await;
            let a = probe.sample(t0).await;
            tokio::time::sleep_until(end.into()).await;
            let b = probe.sample(t0).await;
            (a, b)
        })
    };
    let mut o = opts.clone();
    o.duration = window;
    let (drivers, row) = run_pass(&o, label, Some(server), drivers, None).await;
    let (a, b) = edges.await.map_err(|e| e.to_string())?;
    drop(drivers); // the connections close, so a clean stop does not wait for them
    let idle = probe.sample(t0).await;
    let kill = restart(server, "KILL").await?;
    let term = restart(server, "TERM").await?;

    let entries = b.log_entries - a.log_entries;
    let per_100k = (b.rss_mb - a.rss_mb) / entries * 100_000.0;
    let ok = |v: bool| if v { "**met**" } else { "**not met**" };
    let mut md = header(
        &format!(
            "Closed-loop growth and restart: pitboss {target}, {:.0} s",
            window.as_secs_f64()
        ),
        opts,
        &started,
        &load_start,
    );
    let _ = write!(
        md,
        "## Result\n\n\
         * Closed loop, {:.0} s measured after {:.0} s of warm-up: resident memory {:.1} MB at the \
         window's start, {:.1} MB at its end ({:+.1} MB) while the log grew by {:.0} entries \
         ({:.0} → {:.0}): **{:+.2} MB per 100,000 entries** (goal ≤ 5: {}).\n\
         * After the load stopped: {:.1} MB, rounds in memory {:.0}, tables in memory {:.0}, \
         snapshots written {:.0}, database {:.0} MB.\n\
         * Restart on that log after SIGKILL: /healthz 200 **{:.3} s** after spawn ({:.0} entries \
         replayed); after SIGTERM: **{:.3} s** ({:.0} replayed) (goal ≤ 2 s: {}).\n\n\
         ## Pass\n\n{ROW_HEADER}{}\n\
         ## Edges of the window and after the load\n\n{}\n\
         ## Restarts (same data directory/database, same command)\n\n{}",
        window.as_secs_f64(),
        opts.warmup.as_secs_f64(),
        a.rss_mb,
        b.rss_mb,
        b.rss_mb - a.rss_mb,
        entries,
        a.log_entries,
        b.log_entries,
        per_100k,
        ok(per_100k <= 5.0),
        idle.rss_mb,
        idle.rounds_in_memory,
        idle.tables_in_memory,
        idle.snapshots,
        idle.db_mb,
        kill.ready_s,
        kill.replayed,
        term.ready_s,
        term.replayed,
        ok(kill.ready_s <= 2.0 && term.ready_s <= 2.0),
        row_line(&row),
        samples_table(&[a.clone(), b.clone(), idle.clone()]),
        restart_lines(&[kill.clone(), term.clone()]),
    );
    write(opts, &format!("growth-{target}.md"), &md)?;
    Ok(row)
}

// ----- fill to N entries, then restart -----------------------------------------------------

/// A driver without its connection, across a restart of the server.
struct Parked {
    workload: Workload,
    index: usize,
    seq: u64,
    rng: Rng,
    table: Table,
    bets_per_round: u64,
    bets_per_request: u64,
    players: u64,
}

fn park(d: Driver) -> Parked {
    let Driver {
        conn,
        workload,
        index,
        seq,
        rng,
        table,
        bets_per_round,
        bets_per_request,
        players,
    } = d;
    drop(conn);
    Parked {
        workload,
        index,
        seq,
        rng,
        table,
        bets_per_round,
        bets_per_request,
        players,
    }
}

async fn unpark(p: Parked, addr: SocketAddr) -> Result<Driver, String> {
    Ok(Driver {
        conn: Conn::open(addr).await?,
        workload: p.workload,
        index: p.index,
        seq: p.seq,
        rng: p.rng,
        table: p.table,
        bets_per_round: p.bets_per_round,
        bets_per_request: p.bets_per_request,
        players: p.players,
    })
}

/// Bets as fast as answered until `stop`, then settles the table's round.
async fn fill_loop(mut d: Driver, stop: Arc<AtomicBool>) -> (Driver, ConnStats) {
    let mut stats = ConnStats::default();
    let complain = |stats: &mut ConnStats, e: String, i: usize| {
        stats.errors += 1;
        if stats.errors <= 5 {
            eprintln!("connection {i}: {e}");
        }
    };
    while !stop.load(Ordering::Relaxed) {
        if let Err(e) = d.ensure_round(&mut stats).await {
            complain(&mut stats, e, d.index);
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        match d.one_bet().await {
            Ok((_, n)) => {
                stats.requests += 1;
                stats.accepted += n;
                stats.refused += d.bets_per_request - n;
            }
            Err(e) => {
                complain(&mut stats, e, d.index);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    if let Err(e) = d.settle(&mut stats).await {
        complain(&mut stats, e, d.index);
    }
    (d, stats)
}

/// For each goal: closed-loop load until the log holds that many entries, every round
/// settled, then a restart after SIGKILL and one after SIGTERM. Results are written after each
/// goal, so a long run leaves what it measured so far.
pub(crate) async fn fill(
    opts: &Options,
    target: &str,
    server: &mut Spawned,
    mut drivers: Vec<Driver>,
) -> Result<(), String> {
    let (started, load_start) = (utc_now(), loadavg());
    let t0 = Instant::now();
    let mut progress: Vec<Sample> = Vec::new();
    let mut results: Vec<(u64, Sample, f64, ConnStats, Vec<Restarted>)> = Vec::new();
    let mut goals = opts.fill.clone();
    goals.sort_unstable();
    for goal in goals {
        let fill_start = Instant::now();
        let stop = Arc::new(AtomicBool::new(false));
        let tasks: Vec<_> = drivers
            .into_iter()
            .map(|d| tokio::spawn(fill_loop(d, stop.clone())))
            .collect();
        let probe = Probe::of(server);
        let mut next_sample = Instant::now();
        loop {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let now = Instant::now();
            let entries = if now >= next_sample {
                next_sample = now + opts.sample_every;
                let s = probe.sample(t0).await;
                let (prev_t, prev_n) = progress
                    .last()
                    .map_or((0.0, 0.0), |p| (p.t_s, p.log_entries));
                eprintln!(
                    "fill t={:>6.0}s log {:>10.0} ({:>6.0} entries/s)  RSS {:>7.1} MB  rounds {:.0} \
                     tables {:.0} snapshots {:.0}  db {:.0} MB",
                    s.t_s,
                    s.log_entries,
                    (s.log_entries - prev_n) / (s.t_s - prev_t).max(1e-9),
                    s.rss_mb,
                    s.rounds_in_memory,
                    s.tables_in_memory,
                    s.snapshots,
                    s.db_mb
                );
                let n = s.log_entries;
                progress.push(s);
                n
            } else {
                metrics(probe.addr)
                    .await
                    .get("pitboss_log_entries")
                    .copied()
                    .unwrap_or(0.0)
            };
            if entries >= goal as f64 {
                break;
            }
        }
        stop.store(true, Ordering::Relaxed);
        let mut stats = ConnStats::default();
        let mut ds = Vec::new();
        for t in tasks {
            let (d, s) = t.await.map_err(|e| e.to_string())?;
            stats.requests += s.requests;
            stats.accepted += s.accepted;
            stats.refused += s.refused;
            stats.errors += s.errors;
            stats.upkeep += s.upkeep;
            ds.push(d);
        }
        let fill_s = fill_start.elapsed().as_secs_f64();
        let at_goal = probe.sample(t0).await;
        eprintln!(
            "fill: {} entries after {fill_s:.0} s ({} requests, {} bets accepted, {} refused, {} errors); \
             RSS {:.1} MB, db {:.0} MB",
            at_goal.log_entries,
            stats.requests,
            stats.accepted,
            stats.refused,
            stats.errors,
            at_goal.rss_mb,
            at_goal.db_mb
        );
        let parked: Vec<Parked> = ds.into_iter().map(park).collect();
        let kill = restart(server, "KILL").await?;
        let term = restart(server, "TERM").await?;
        results.push((goal, at_goal, fill_s, stats, vec![kill, term]));
        write_fill(opts, target, &started, &load_start, &results, &progress)?;
        drivers = Vec::with_capacity(parked.len());
        for p in parked {
            drivers.push(unpark(p, server.addr).await?);
        }
    }
    Ok(())
}

fn write_fill(
    opts: &Options,
    target: &str,
    started: &str,
    load_start: &str,
    results: &[(u64, Sample, f64, ConnStats, Vec<Restarted>)],
    progress: &[Sample],
) -> Result<(), String> {
    let mut md = header(
        &format!("Restart time with a large log: pitboss {target}"),
        opts,
        started,
        load_start,
    );
    md.push_str(
        "The log is filled through the real service (closed loop, every round settled before \
         the restarts); then the server is stopped (SIGKILL, then SIGTERM) and started again with \
         the same command on the same data, timed from the spawn to the first `200` of \
         `/healthz`. Goal: at most 2 s.\n\n\
         | goal (entries) | log entries | fill s | bets accepted | RSS at goal MB | database MB \
         | SIGKILL → /healthz 200 s (replayed) | SIGTERM stop s | SIGTERM → /healthz 200 s (replayed) |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for (goal, at, fill_s, stats, rs) in results {
        let k = &rs[0];
        let t = &rs[1];
        let _ = writeln!(
            md,
            "| {goal} | {:.0} | {fill_s:.0} | {} | {:.1} | {:.0} | **{:.3}** ({:.0}) | {:.3} | **{:.3}** ({:.0}) |",
            at.log_entries,
            stats.accepted,
            at.rss_mb,
            at.db_mb,
            k.ready_s,
            k.replayed,
            t.stop_s,
            t.ready_s,
            t.replayed
        );
    }
    for (goal, _, _, _, rs) in results {
        let _ = write!(
            md,
            "\n### Restarts at {goal} entries\n\n{}",
            restart_lines(rs)
        );
    }
    let _ = write!(
        md,
        "\n## Filling (every {:.0} s)\n\n{}\nPlot: `restart-{target}.svg`.\n",
        opts.sample_every.as_secs_f64(),
        samples_table(progress)
    );
    write(opts, &format!("restart-{target}.md"), &md)?;
    plot(
        &opts.out.join(format!("restart-{target}.svg")),
        &format!(
            "pitboss {target}: filling the log ({} bets per request)",
            opts.bets_per_request
        ),
        progress,
        None,
    )
}
