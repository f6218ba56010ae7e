//! `csmacd serve`: the view page on 127.0.0.1 with a form that changes the
//! scenario (stations, positions, bus length, frame size, policy, seed) and
//! runs it again. Two routes: `/` (the scenario as given, or changed by the
//! form's fields in its query string, so that a run has an address) and
//! `/run` (the form's fields, GET or POST). Each run is capped so no request
//! can hang the server. Every connection is read by a thread of its own
//! (at most [`MAX_CONNECTIONS`]) through the bounded front in [`http`], so a
//! client that sends slowly, stops or sends too much holds up no one else
//! and takes no more than the caps; the page of the scenario as given is
//! answered at once, and a few workers make the runs, with at most
//! [`QUEUE`] waiting (more: 503); runs of more than [`LIGHT_STATIONS`]
//! stations have workers and a queue of their own, so that small runs
//! never wait behind them. Ctrl-C stops it.

mod http;

use super::trace::parse_until;
use super::{CliError, CliResult};
use crate::engine::Time;
use crate::ethernet::Scenario;
use crate::scenario::{self, policies::POLICIES};
use crate::teach::lessons;
use crate::teach::trace::us;
use crate::teach::view::{self, FormView, Window, MAX_VIEW_EVENTS};
use crate::traffic::Arrivals;
use anyhow::anyhow;
use http::Answer;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use toml::{Table, Value};

/// Serve the interactive view on 127.0.0.1, with a form to change the
/// scenario and run it again.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Open the printed URL in a browser. The form changes the stations per group
(e.g. 1,1), every station's position in order (e.g. 0m,500m), the bus
length, the frame size, the backoff policy, the seed and the window shown;
an empty field keeps the scenario's value. The page's address holds the
fields (e.g. /?positions=0m,500m&seed=3): bookmark or share it to show the
same run. Bad input gets the message `csmacd validate` gives, shown in the
page (HTTP 400). Each run is capped: at most 10 ms simulated, 1000 stations,
about 100000 frames queued and 20000 events shown; a form is at most 64 KiB
(more: 413), an address 64 KiB (414), a header line 8 KiB, and 100 headers
(431). Four runs are made at once and 32 more may wait; runs of more than
64 stations are made apart, two at once and 4 more waiting, so that a
class's small runs never wait behind them. When more are asked for, the
answer is 503 with Retry-After. At most 64 connections are open at
once, each answered and closed; a client that sends its request slowly
holds up no one else, and one that takes over 30 s is answered 408.
Listens on 127.0.0.1 only; Ctrl-C stops it.

Examples:
  csmacd serve                                    # lesson 2's scenario
  csmacd serve scenarios/two-saturated.toml --port 8080")]
pub struct ServeArgs {
    /// The scenario to start from (TOML); lesson 2's when absent.
    pub file: Option<PathBuf>,
    /// The port on 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 8021)]
    pub port: u16,
}

/// The most simulated time one request runs.
const MAX_UNTIL_PS: Time = 10_000_000_000;
/// The most stations one request simulates.
const MAX_STATIONS: usize = 1000;
/// The most frames one request's run may queue (estimated before it runs).
const MAX_ARRIVALS: f64 = 100_000.0;
/// The requests run side by side (a run is work for a core; more at once
/// would only share the cores).
const WORKERS: usize = 4;
/// The runs that may wait for a worker; a request for one more is answered
/// 503 at once, so that a crowd of runs delays no one long. Small runs
/// take a few milliseconds each, so a classroom's worth may wait.
const QUEUE: usize = 32;
/// Runs of more stations than this are heavy: they have workers and a
/// queue of their own, so that a class's small runs never wait behind them.
const LIGHT_STATIONS: usize = 64;
/// The heavy runs made at once, and those that may wait for them.
const HEAVY_WORKERS: usize = 2;
const HEAVY_QUEUE: usize = 4;
/// The connections open at once; one more is answered 503 and closed.
const MAX_CONNECTIONS: usize = 64;
/// What a 503 asks the client to wait, in seconds.
const RETRY_AFTER: u32 = 2;
/// The most time a request waits for its run (queued and run).
const RUN_WAIT: std::time::Duration = std::time::Duration::from_secs(120);
/// Test hook: with this variable set, a request for `/panic` panics in the
/// worker that handles it (the tests check that it is answered 500 and
/// that the worker lives on).
const PANIC_HOOK: &str = "CSMACD_SERVE_TEST_PANIC";

/// The scenario the server starts from.
struct Base {
    stem: String,
    table: Table,
}

pub fn run(args: ServeArgs) -> CliResult {
    let base = match &args.file {
        Some(path) => {
            let text = scenario::read_text(path).map_err(CliError::usage)?;
            let file = path.display().to_string();
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "scenario".into());
            let sc = scenario::bus_from_str(&file, &stem, &text).map_err(CliError::usage)?;
            super::trace::along_one_cable(&sc, "the page")
                .map_err(|e| CliError::usage(anyhow!("{file}: {e}")))?;
            let table = scenario::parse_table(&file, &text).map_err(CliError::usage)?;
            Base { stem, table }
        }
        None => {
            let (file, text) = lessons::find_file(2)
                .and_then(|l| l.named("2-collision.toml"))
                .expect("lesson 2 is built in");
            let table = scenario::parse_table(&file, text).map_err(CliError::usage)?;
            Base {
                stem: "lesson".into(),
                table,
            }
        }
    };
    let first = build(&base, &[]).map_err(|e| CliError::usage(anyhow!("{}", e.message)))?;
    let listener = TcpListener::bind(("127.0.0.1", args.port))
        .map_err(|e| CliError::failure(anyhow!("cannot listen on 127.0.0.1:{}: {e}", args.port)))?;
    let addr = listener.local_addr().map_err(CliError::failure)?;
    // Ctrl-C, or a listener that failed, ends the command.
    let (stop, stopped) = mpsc::channel::<Option<String>>();
    let on_signal = stop.clone();
    ctrlc::set_handler(move || {
        let _ = on_signal.send(None);
    })
    .map_err(|e| CliError::failure(anyhow!("cannot catch Ctrl-C: {e}")))?;
    // The page of the scenario as given is the same for every request
    // without fields: made once, it is answered without a worker.
    let home = page(&first, &[], None);
    let served = Arc::new(Served { base, first });
    let jobs = workers(&served, WORKERS, QUEUE);
    let heavy_jobs = workers(&served, HEAVY_WORKERS, HEAVY_QUEUE);
    let front = Arc::new(Front {
        home,
        jobs,
        heavy_jobs,
        base_stations: served.first.sc.station_count(),
        open: AtomicUsize::new(0),
        panic_hook: std::env::var_os(PANIC_HOOK).is_some(),
    });
    println!("csmacd serve: http://{addr}/  (Ctrl-C stops)");
    use std::io::Write;
    std::io::stdout().flush().map_err(CliError::failure)?;
    std::thread::spawn(move || loop {
        match listener.accept() {
            Ok((stream, _)) => admit(&front, stream),
            Err(e) if transient(&e) => std::thread::sleep(std::time::Duration::from_millis(20)),
            Err(e) => {
                let _ = stop.send(Some(e.to_string()));
                return;
            }
        }
    });
    let failed = stopped.recv().ok().flatten();
    eprintln!("csmacd serve: stopped");
    match failed {
        None => Ok(()),
        Some(e) => Err(CliError::failure(anyhow!(
            "the server stopped listening: {e}"
        ))),
    }
}

/// Starts `count` workers taking runs from a queue of `waiting`; returns
/// where to queue them.
fn workers(served: &Arc<Served>, count: usize, waiting: usize) -> mpsc::SyncSender<Job> {
    let (jobs, queue) = mpsc::sync_channel::<Job>(waiting);
    let queue = Arc::new(Mutex::new(queue));
    for _ in 0..count {
        let queue = Arc::clone(&queue);
        let served = Arc::clone(served);
        std::thread::spawn(move || loop {
            // The lock is held only while waiting for the next job.
            let next = queue
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .recv();
            let Ok(job) = next else {
                return;
            };
            let _ = job.reply.send(answer(&served, &job));
        });
    }
    jobs
}

/// Whether an error of `accept` passes: a connection reset before it was
/// taken, or descriptors or memory short for a moment.
fn transient(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(
            libc::ECONNABORTED
                | libc::EINTR
                | libc::EMFILE
                | libc::ENFILE
                | libc::ENOBUFS
                | libc::ENOMEM
                | libc::EPROTO
                | libc::EPERM
                | libc::EAGAIN
        )
    ) || e.kind() == std::io::ErrorKind::Interrupted
}

/// The scenario the server starts from, and its run (the page of `/`).
struct Served {
    base: Base,
    first: Built,
}

/// What the connections share: the home page, the queue of runs and how
/// many connections are open.
struct Front {
    home: String,
    /// The queues of small runs and of heavy ones.
    jobs: mpsc::SyncSender<Job>,
    heavy_jobs: mpsc::SyncSender<Job>,
    /// The stations of the scenario as given.
    base_stations: usize,
    open: AtomicUsize,
    panic_hook: bool,
}

/// A run for a worker: the request's target and form (or why it has
/// none), and where to send its answer.
struct Job {
    target: String,
    form: Result<String, String>,
    reply: mpsc::SyncSender<Answer>,
}

/// One open connection, counted while it lives.
struct Open(Arc<Front>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Takes a new connection: one over the cap is answered 503 here; else a
/// thread of its own reads its request and answers it.
fn admit(front: &Arc<Front>, stream: TcpStream) {
    if front.open.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
        front.open.fetch_sub(1, Ordering::SeqCst);
        http::refuse_now(
            stream,
            &Answer::busy(
                format!("this server has {MAX_CONNECTIONS} connections open; try again shortly\n"),
                RETRY_AFTER,
            ),
        );
        return;
    }
    let open = Open(Arc::clone(front));
    // A thread that cannot be made drops the connection and its count.
    let _ = std::thread::Builder::new().spawn(move || connection(&open.0, stream));
}

/// Reads one request from `stream`, answers it and closes the connection.
fn connection(front: &Front, mut stream: TcpStream) {
    let (answer, head_only) = match http::read_request(&mut stream) {
        Ok(request) => (route(front, &request), request.method == "HEAD"),
        Err(http::Refused::Answer(a)) => (a, false),
        Err(http::Refused::Gone) => return,
    };
    http::answer(stream, &answer, head_only);
}

/// The answer to a request read whole: the home page and a wrong address at
/// once, a run through the bounded queue of the workers.
fn route(front: &Front, request: &http::Request) -> Answer {
    let target = request.target.as_str();
    let path = target.split_once('?').map_or(target, |(p, _)| p);
    if path == "/panic" && front.panic_hook {
        return queue(front, target, Ok(String::new()));
    }
    if path != "/" && path != "/run" {
        return Answer::text(404, NOT_FOUND);
    }
    let form = if request.method == "POST" {
        String::from_utf8(request.body.clone())
            .map_err(|_| "the form must be UTF-8 text".to_string())
    } else {
        Ok(target.split_once('?').map_or("", |(_, q)| q).to_string())
    };
    if form
        .as_ref()
        .is_ok_and(|f| form_urlencoded::parse(f.as_bytes()).next().is_none())
    {
        return Answer::page(200, front.home.clone());
    }
    queue(front, target, form)
}

const NOT_FOUND: &str = "not found: this server has two routes, / (the page) and /run (the form)\n";

/// Whether a form asks for a heavy run: more than [`LIGHT_STATIONS`]
/// stations (only its `stations` field changes the count; a form that
/// cannot be read is refused quickly, as a small run).
fn heavy(front: &Front, form: &Result<String, String>) -> bool {
    let Ok(form) = form else { return false };
    let asked = form_urlencoded::parse(form.as_bytes())
        .filter(|(k, _)| k == "stations")
        .last()
        .map(|(_, v)| v.into_owned());
    let stations = match asked {
        None => Some(front.base_stations),
        Some(v) => v
            .split(',')
            .map(|c| c.trim().parse::<usize>().ok())
            .try_fold(0usize, |t, c| c.and_then(|c| t.checked_add(c))),
    };
    stations.is_some_and(|n| n > LIGHT_STATIONS)
}

/// Queues a run and waits for its answer; a full queue is answered 503.
/// Heavy runs go to their own queue and workers.
fn queue(front: &Front, target: &str, form: Result<String, String>) -> Answer {
    let (reply, answered) = mpsc::sync_channel(1);
    let heavy = heavy(front, &form);
    let job = Job {
        target: target.to_string(),
        form,
        reply,
    };
    let (lane, workers, waiting, what) = if heavy {
        (
            &front.heavy_jobs,
            HEAVY_WORKERS,
            HEAVY_QUEUE,
            "runs of more than 64 stations",
        )
    } else {
        (&front.jobs, WORKERS, QUEUE, "runs")
    };
    match lane.try_send(job) {
        Ok(()) => {}
        Err(mpsc::TrySendError::Full(_)) => {
            return Answer::busy(
                format!(
                    "this server is busy: {workers} {what} are being made and {waiting} wait; \
                     try again in a few seconds\n"
                ),
                RETRY_AFTER,
            )
        }
        Err(mpsc::TrySendError::Disconnected(_)) => return Answer::text(500, INTERNAL),
    }
    answered
        .recv_timeout(RUN_WAIT)
        .unwrap_or_else(|_| Answer::text(500, INTERNAL))
}

const INTERNAL: &str =
    "this request could not be answered: csmacd failed while making it (a bug); \
the server goes on answering others\n";

/// A worker's answer to a job: the page, or why there is none. A panic
/// while making it is answered 500 and the worker goes on.
fn answer(served: &Served, job: &Job) -> Answer {
    let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if job.target.starts_with("/panic") {
            panic!("the test hook {PANIC_HOOK} asked for a panic");
        }
        match &job.form {
            Ok(form) => handle(served, &job.target, form),
            Err(message) => (400, page(&served.first, &[], Some(message.clone().into()))),
        }
    }));
    match made {
        Ok((status, body)) => Answer::page(status, body),
        Err(_) => Answer::text(500, INTERNAL),
    }
}

/// A run the form asked for, checked and within the caps.
struct Built {
    sc: Scenario,
    window: Window,
    form: FormView,
}

/// The status and page of a request for `url` with the form's `text`.
fn handle(served: &Served, url: &str, text: &str) -> (u16, String) {
    let path = url.split_once('?').map_or(url, |(p, _)| p);
    if path != "/" && path != "/run" {
        return (
            404,
            "not found: this server has two routes, / (the page) and /run (the form)\n".into(),
        );
    }
    let fields: Vec<(String, String)> = form_urlencoded::parse(text.as_bytes())
        .into_owned()
        .collect();
    if fields.is_empty() {
        return (200, page(&served.first, &[], None));
    }
    match build(&served.base, &fields) {
        Ok(b) => (200, page(&b, &fields, None)),
        Err(refused) => (400, page(&served.first, &fields, Some(refused))),
    }
}

/// The page of a run: `asked` holds the fields of the request (the address
/// that asks for this page again is made of them); when the request was
/// refused, they fill the form as typed and `refused` says why.
fn page(b: &Built, asked: &[(String, String)], refused: Option<Refused>) -> String {
    let mut v = view::of_scenario(&b.sc, &b.window);
    let mut form = b.form.clone();
    form.query = address_query(asked);
    if let Some(r) = refused {
        for (name, value) in asked {
            let slot = match name.as_str() {
                "stations" => &mut form.stations,
                "positions" => &mut form.positions,
                "length" => &mut form.length,
                "frame" => &mut form.frame,
                "policy" => &mut form.policy,
                "seed" => &mut form.seed,
                "until" => &mut form.until,
                _ => continue,
            };
            slot.clone_from(value);
        }
        v.left_out.insert(
            0,
            "The form could not be run (the message above says why): the run shown is the scenario as given."
                .into(),
        );
        if let Some(text) = r.scenario {
            form.scenario = text;
        }
        v.error = Some(r.message);
    }
    v.form = Some(form);
    view::page(&v)
}

/// The query string of the address that asks for the same page: the fields
/// given, in their order, empty ones (which keep the scenario's value) left
/// out. Commas stay commas (a query string may hold them), so the address
/// reads as the form does: `positions=0m,500m`.
fn address_query(fields: &[(String, String)]) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (name, value) in fields.iter().filter(|(_, v)| !v.trim().is_empty()) {
        query.append_pair(name, value);
    }
    query.finish().replace("%2C", ",")
}

/// The form's fields, in the order the page shows them.
const FIELDS: &[&str] = &[
    "stations",
    "positions",
    "length",
    "frame",
    "policy",
    "seed",
    "until",
];

/// The name errors give the scenario the form builds (its text is shown in the page).
const FORM_FILE: &str = "form.toml";

/// Applies the form's fields to the base scenario, validates it as
/// `csmacd validate` does and checks the caps.
fn build(base: &Base, fields: &[(String, String)]) -> Result<Built, Refused> {
    if let Some((name, _)) = fields.iter().find(|(n, _)| !FIELDS.contains(&n.as_str())) {
        return Err(format!(
            "unknown form field `{name}`; the fields are {}",
            FIELDS.join(", ")
        )
        .into());
    }
    let get = |k: &str| {
        fields
            .iter()
            .rev()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
    };
    let mut table = base.table.clone();
    let base_positions = positions_of(&table);
    let groups = table
        .get("stations")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if let Some(s) = get("stations") {
        let counts: Vec<&str> = s.split(',').map(str::trim).collect();
        if counts.len() != groups {
            return Err(format!(
                "stations: {} count{} given for {groups} group{} of stations; give one count per group, comma separated",
                counts.len(),
                if counts.len() == 1 { "" } else { "s" },
                if groups == 1 { "" } else { "s" }
            ).into());
        }
        for (i, c) in counts.iter().enumerate() {
            set(&mut table, &format!("stations.{i}.count"), c)?;
            // A group whose count no longer matches its positions is
            // placed by the scenario's placement (evenly, by default).
            let group = table["stations"][i].as_table_mut();
            if let Some(g) = group {
                let fits = match (
                    g.get("count").and_then(Value::as_integer),
                    g.get("positions"),
                ) {
                    (Some(n), Some(Value::Array(p))) => usize::try_from(n) == Ok(p.len()),
                    _ => true,
                };
                if !fits {
                    g.remove("positions");
                }
            }
        }
    }
    // The form comes back with the positions it was filled with: with new
    // counts they are the old scenario's, not a choice.
    let positions =
        get("positions").filter(|p| !(get("stations").is_some() && *p == base_positions));
    if let Some(p) = positions {
        let list: Vec<&str> = p.split(',').map(str::trim).collect();
        let counts: Option<Vec<usize>> = (0..groups)
            .map(|i| match table["stations"][i].get("count") {
                None => Some(1),
                Some(c) => c.as_integer().and_then(|c| usize::try_from(c).ok()),
            })
            .collect();
        if let Some(counts) = counts {
            // Counts as typed may be anything up to 2^63: summed unchecked
            // they could wrap around to the number of positions given.
            let total = counts.iter().try_fold(0usize, |t, &c| t.checked_add(c));
            if total != Some(list.len()) {
                let total = total.map_or_else(|| "more".to_string(), |t| t.to_string());
                return Err(format!(
                    "positions: {} given for {total} stations; give one per station in order (e.g. 0m,2000m), or leave it empty for the scenario's placement",
                    list.len()
                ).into());
            }
            let mut rest = list.as_slice();
            for (i, &c) in counts.iter().enumerate() {
                let (mine, after) = rest.split_at(c);
                rest = after;
                let values: Vec<Value> = mine.iter().map(|x| value_of(x)).collect();
                table["stations"][i]
                    .as_table_mut()
                    .ok_or_else(|| format!("stations.{i}: is not a table"))?
                    .insert("positions".into(), Value::Array(values));
            }
        }
    }
    if let Some(l) = get("length") {
        set(&mut table, "medium.length", l)?;
    }
    for i in 0..groups {
        if let Some(f) = get("frame") {
            set(&mut table, &format!("stations.{i}.frame"), f)?;
        }
        if let Some(p) = get("policy") {
            let mut backoff = Table::new();
            backoff.insert("kind".into(), Value::String(p.into()));
            crate::sweep::set_path(
                &mut table,
                &format!("stations.{i}.backoff"),
                Value::Table(backoff),
            )?;
        }
    }
    if let Some(s) = get("seed") {
        set(&mut table, "seed", s)?;
    }
    let text = toml::to_string(&table).map_err(|e| format!("the form: {e}"))?;
    let sc = scenario::bus_from_str(FORM_FILE, &base.stem, &text).map_err(|e| Refused {
        message: e.to_string(),
        scenario: Some(text.clone()),
    })?;
    let n = sc.station_count();
    if n > MAX_STATIONS {
        return Err(format!(
            "{n} stations: this server runs at most {MAX_STATIONS} per request; \
             use `csmacd view` for bigger scenarios"
        )
        .into());
    }
    let until = match get("until") {
        None => crate::teach::trace::default_window(&sc).min(MAX_UNTIL_PS),
        Some(t) => parse_until(&sc, t).map_err(|e| format!("until: {}", e.error))?,
    };
    if until > MAX_UNTIL_PS {
        return Err(format!(
            "until {}: this server runs at most {} µs per request; use `csmacd view` for longer windows",
            get("until").unwrap_or_default(),
            us(MAX_UNTIL_PS)
        ).into());
    }
    let queued = frames_queued(&sc, until);
    if queued > MAX_ARRIVALS {
        return Err(format!(
            "about {queued:.0} frames would be queued before {} µs; this server runs at most \
             {MAX_ARRIVALS} per request: lower the load or the window",
            us(until)
        )
        .into());
    }
    let form = FormView {
        query: String::new(),
        stations: sc
            .groups
            .iter()
            .map(|g| g.count.to_string())
            .collect::<Vec<_>>()
            .join(","),
        positions: positions_of(&table),
        length: table
            .get("medium")
            .and_then(|m| m.get("length"))
            .map_or_else(|| format!("{}m", sc.medium.length_m), plain),
        frame: same_frame(&table),
        policy: get("policy").unwrap_or_default().to_string(),
        seed: sc.seed.to_string(),
        until: format!("{}us", us(until)),
        policies: POLICIES.iter().map(|p| p.kind.to_string()).collect(),
        scenario: text,
        caps: format!(
            "Each run is capped: at most {} µs simulated, {MAX_STATIONS} stations, about \
             {MAX_ARRIVALS} frames queued, and {MAX_VIEW_EVENTS} events shown; runs of more \
             than {LIGHT_STATIONS} stations wait in a queue of their own, {HEAVY_WORKERS} made \
             at once, so that small runs never wait behind them. Errors name lines of \
             {FORM_FILE}, the scenario run (below).",
            us(MAX_UNTIL_PS)
        ),
    };
    let window = Window {
        from: 0,
        until,
        stations: None,
    };
    Ok(Built { sc, window, form })
}

/// Why a form was not run, and the scenario it made when it got that far.
struct Refused {
    message: String,
    scenario: Option<String>,
}

impl From<String> for Refused {
    fn from(message: String) -> Self {
        Refused {
            message,
            scenario: None,
        }
    }
}

/// Sets a dotted path to a form value (TOML if it parses, else a string).
fn set(table: &mut Table, path: &str, text: &str) -> Result<(), String> {
    crate::sweep::set_path(table, path, value_of(text))
}

fn value_of(text: &str) -> Value {
    lessons::parse_override(&format!("v={text}"))
        .map(|(_, v)| v)
        .unwrap_or_else(|_| Value::String(text.into()))
}

/// A value as a person typed it: strings without quotes.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Every station's position when every group lists them, else empty.
fn positions_of(table: &Table) -> String {
    let Some(groups) = table.get("stations").and_then(Value::as_array) else {
        return String::new();
    };
    let mut all = Vec::new();
    for g in groups {
        match g.get("positions").and_then(Value::as_array) {
            Some(p) => all.extend(p.iter().map(plain)),
            None => return String::new(),
        }
    }
    all.join(",")
}

/// The frame size when every group has the same simple one, else empty.
fn same_frame(table: &Table) -> String {
    let frames: Vec<String> = table
        .get("stations")
        .and_then(Value::as_array)
        .map(|gs| {
            gs.iter()
                .map(|g| g.get("frame").map(plain).unwrap_or_default())
                .collect()
        })
        .unwrap_or_default();
    match frames.first() {
        Some(f) if frames.iter().all(|x| x == f) => f.clone(),
        _ => String::new(),
    }
}

/// The frames a run queues before `until`, estimated before it runs (a
/// saturated group queues one per frame it can send).
fn frames_queued(sc: &Scenario, until: Time) -> f64 {
    let secs = until as f64 / crate::units::PS_PER_S;
    sc.groups
        .iter()
        .map(|g| {
            let n = g.count as f64;
            match g.arrivals {
                Arrivals::Saturated => {
                    secs * sc.medium.bit_rate / (g.frame.mean_bits() + 160.0) + n
                }
                Arrivals::Poisson { rate } | Arrivals::OnOff { rate, .. } => rate * n * secs,
                Arrivals::Periodic { interval, .. } => n * (until / interval.max(1)) as f64 + n,
                Arrivals::Burst { frames, .. } => n * f64::from(frames),
            }
        })
        .sum()
}
