//! `csmacd serve`: the view page on 127.0.0.1 with a form that changes the
//! scenario (stations, positions, bus length, frame size, policy, seed) and
//! runs it again. Two routes: `/` (the scenario as given, or changed by the
//! form's fields in its query string, so that a run has an address) and
//! `/run` (the form's fields, GET or POST). Each run is capped so no request
//! can hang the server. A few workers make the runs side by side; a
//! request's body is read first, on a thread of its own, so a client that
//! sends it slowly or stops holds up no one else. Ctrl-C stops it.

use super::trace::parse_until;
use super::{CliError, CliResult};
use crate::engine::Time;
use crate::ethernet::Scenario;
use crate::scenario::{self, policies::POLICIES};
use crate::teach::lessons::{self, LESSONS};
use crate::teach::trace::us;
use crate::teach::view::{self, FormView, Window, MAX_VIEW_EVENTS};
use crate::traffic::Arrivals;
use anyhow::anyhow;
use std::io::Read;
use std::path::PathBuf;
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
about 100000 frames queued and 20000 events shown; a form is at most 64 KiB.
Four runs are made at once, and a client that sends its form slowly holds up
no one else. Listens on 127.0.0.1 only; Ctrl-C stops it.

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
/// The most bytes of a form read from a request (more: 413).
const MAX_BODY: usize = 64 * 1024;
/// The requests run side by side (a run is work for a core; more at once
/// would only share the cores).
const WORKERS: usize = 4;

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
            let l = &LESSONS[1];
            let table = scenario::parse_table(l.file, l.scenario).map_err(CliError::usage)?;
            Base {
                stem: "lesson".into(),
                table,
            }
        }
    };
    let first = build(&base, &[]).map_err(|e| CliError::usage(anyhow!("{}", e.message)))?;
    let server = tiny_http::Server::http(("127.0.0.1", args.port))
        .map_err(|e| CliError::failure(anyhow!("cannot listen on 127.0.0.1:{}: {e}", args.port)))?;
    let addr = server
        .server_addr()
        .to_ip()
        .ok_or_else(|| CliError::failure(anyhow!("the server has no IP address")))?;
    // Ctrl-C, or a listener that failed, ends the command.
    let (stop, stopped) = mpsc::channel::<Option<String>>();
    let on_signal = stop.clone();
    ctrlc::set_handler(move || {
        let _ = on_signal.send(None);
    })
    .map_err(|e| CliError::failure(anyhow!("cannot catch Ctrl-C: {e}")))?;
    println!("csmacd serve: http://{addr}/  (Ctrl-C stops)");
    use std::io::Write;
    std::io::stdout().flush().map_err(CliError::failure)?;
    let served = Arc::new(Served { base, first });
    let (jobs, queue) = mpsc::channel::<Job>();
    let queue = Arc::new(Mutex::new(queue));
    for _ in 0..WORKERS {
        let queue = Arc::clone(&queue);
        let served = Arc::clone(&served);
        std::thread::spawn(move || loop {
            // The lock is held only while waiting for the next job.
            let Ok(job) = queue.lock().expect("only recv holds the lock").recv() else {
                return;
            };
            answer(&served, job);
        });
    }
    // Requests without a body go straight to the workers; a body is read
    // on a thread of its own first, so a client that sends it slowly, or
    // stops, holds that thread only.
    std::thread::spawn(move || loop {
        match server.recv() {
            Ok(request) if carries_body(&request) => {
                let jobs = jobs.clone();
                std::thread::spawn(move || {
                    if let Some(job) = read_body(request) {
                        let _ = jobs.send(job);
                    }
                });
            }
            Ok(request) => {
                let form = Ok(form_of(&request, String::new()));
                let _ = jobs.send(Job { request, form });
            }
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

/// The scenario the server starts from, and its run (the page of `/`).
struct Served {
    base: Base,
    first: Built,
}

/// A request for a worker: its body, if it had one, read to its end, and
/// the form's text or why there is none.
struct Job {
    request: tiny_http::Request,
    form: Result<String, (u16, String)>,
}

/// Whether a request has a body to read. tiny_http reads a body only when
/// asked, and what is left of it when the request is dropped, which waits
/// for a client that stalls.
fn carries_body(request: &tiny_http::Request) -> bool {
    request.body_length().is_some_and(|n| n > 0)
        || request
            .headers()
            .iter()
            .any(|h| h.field.equiv("Transfer-Encoding"))
}

/// The form's text of a request: its body for a POST, else its query string.
fn form_of(request: &tiny_http::Request, body: String) -> String {
    if *request.method() == tiny_http::Method::Post {
        body
    } else {
        let url = request.url();
        url.split_once('?').map_or("", |(_, q)| q).to_string()
    }
}

/// Reads the body of `request` to its end (at most `MAX_BODY` bytes, UTF-8)
/// and makes the request a job. A longer body is answered 413 here, on this
/// thread rather than a worker's; see [`refuse_declared`] for one whose
/// declared length is too long.
fn read_body(mut request: tiny_http::Request) -> Option<Job> {
    if request.body_length().is_some_and(|n| n > MAX_BODY) {
        refuse_declared(request);
        return None;
    }
    let mut body = Vec::new();
    let read = request
        .as_reader()
        .take(MAX_BODY as u64 + 1)
        .read_to_end(&mut body);
    let form = match read {
        Ok(n) if n > MAX_BODY => {
            let _ = reply(request, 413, too_long());
            return None;
        }
        Ok(_) => String::from_utf8(body)
            .map(|text| form_of(&request, text))
            .map_err(|_| (400, "the form must be UTF-8 text".to_string())),
        Err(e) => Err((400, format!("the form could not be read: {e}"))),
    };
    Some(Job { request, form })
}

/// Answers 413 to a request that declares a body longer than `MAX_BODY`,
/// without reading any of it. tiny_http, when a request is dropped, reads
/// what is left of its body into one buffer of the declared size, so that
/// a request declaring a terabyte would abort the server: this request's
/// connection is answered, then left to the client to close and never
/// dropped (the connection and its thread stay until the server stops).
fn refuse_declared(request: tiny_http::Request) {
    let response = response(413, too_long());
    // The upgrade writes the answer and hands over the connection, body
    // reader included; forgetting it skips that reader's drop.
    std::mem::forget(request.upgrade("close", response));
}

/// A worker's answer to a job: the page, or why there is none.
fn answer(served: &Served, job: Job) {
    let (status, body) = match job.form {
        Ok(text) => handle(served, job.request.url(), &text),
        Err((status, message)) => (status, page(&served.first, &[], Some(message.into()))),
    };
    let _ = reply(job.request, status, body);
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
        }
    }
    if let Some(p) = get("positions") {
        let list: Vec<&str> = p.split(',').map(str::trim).collect();
        let counts: Option<Vec<usize>> = (0..groups)
            .map(|i| match table["stations"][i].get("count") {
                None => Some(1),
                Some(c) => c.as_integer().and_then(|c| usize::try_from(c).ok()),
            })
            .collect();
        if let Some(counts) = counts {
            let total: usize = counts.iter().sum();
            if list.len() != total {
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
        None => sc.duration.min(2_000_000_000),
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
             {MAX_ARRIVALS} frames queued, and {MAX_VIEW_EVENTS} events shown. Errors name \
             lines of {FORM_FILE}, the scenario run (below).",
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

/// What a 413 says.
fn too_long() -> String {
    format!("the form is longer than this server reads: at most {MAX_BODY} bytes\n")
}

/// An answer: plain text for 404 and 413, else a page.
fn response(status: u16, body: String) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let kind = if status == 404 || status == 413 {
        "text/plain; charset=utf-8"
    } else {
        "text/html; charset=utf-8"
    };
    let header = tiny_http::Header::from_bytes(&b"Content-Type"[..], kind.as_bytes())
        .expect("a valid header");
    tiny_http::Response::from_string(body)
        .with_status_code(status)
        .with_header(header)
}

fn reply(request: tiny_http::Request, status: u16, body: String) -> std::io::Result<()> {
    request.respond(response(status, body))
}
