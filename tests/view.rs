//! The interactive view in a real browser (headless Chromium): the DOM
//! contract, steps, JS errors and escaping; and `csmacd serve`, over HTTP
//! (its routes, caps and stalled clients) and in the browser (the address
//! that asks for a run).

use super::common::{bin, repo, temp_dir, Scratch};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LESSON2: &str = "scenarios/lessons/2-collision.toml";

fn csmacd(args: &[&str]) -> std::process::Output {
    let out = bin().current_dir(repo()).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "csmacd {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The jsonl trace's lines for the same scenario and window.
fn trace_lines(args: &[&str]) -> Vec<serde_json::Value> {
    let mut all = vec!["trace"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "jsonl"]);
    String::from_utf8(csmacd(&all).stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The distinct event times of a trace, in order.
fn distinct_times(lines: &[serde_json::Value]) -> Vec<f64> {
    let mut times: Vec<f64> = lines
        .iter()
        .map(|l| l["time_us"].as_f64().unwrap())
        .collect();
    times.dedup();
    times
}

/// Chromium, or None with a loud message when it is missing. `.ci/run`
/// installs it and sets CSMACD_REQUIRE_CHROMIUM, which makes a missing
/// browser a failure.
fn chromium() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("chromium"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("CSMACD_REQUIRE_CHROMIUM").is_none(),
            "chromium is required (CSMACD_REQUIRE_CHROMIUM) but not on PATH"
        );
        eprintln!(
            "\n!!!!! SKIP: chromium is not installed, so the browser tests of the view did not run.\n\
             !!!!! Install it (apt-get install chromium) to run them; .ci/run does.\n"
        );
    }
    found
}

/// Runs `child` to its end within `limit`, killing it past that. Its
/// output is read meanwhile: a page's DOM can pass a pipe's buffer, and a
/// child blocked writing it would never end.
fn wait_output(mut child: std::process::Child, limit: Duration) -> std::process::Output {
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("timed out after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    std::process::Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// The DOM of `page` after its scripts ran (with `fragment`, e.g. "#t=12").
fn dump_dom(browser: &Path, page: &Path, fragment: &str) -> String {
    dump_dom_of(browser, &format!("file://{}{fragment}", page.display()))
}

/// The DOM of the page at `url` after its scripts ran.
fn dump_dom_of(browser: &Path, url: &str) -> String {
    let profile = temp_dir("chromium-profile");
    let child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--virtual-time-budget=5000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_output(child, Duration::from_secs(120));
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        dom.contains("</html>"),
        "chromium gave no DOM: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dom
}

/// The attributes of the one element with `data-csmacd-view`, checking there is one.
fn root_attrs(dom: &str) -> Vec<(String, String)> {
    assert_eq!(
        dom.matches("data-csmacd-view=\"\"").count(),
        1,
        "exactly one root element"
    );
    let at = dom.find("data-csmacd-view=\"\"").unwrap();
    let start = dom[..at].rfind('<').unwrap();
    let end = at + dom[at..].find('>').unwrap();
    let tag = &dom[start..end];
    let mut attrs = Vec::new();
    let mut rest = tag;
    while let Some(eq) = rest.find("=\"") {
        let name = rest[..eq].rsplit(' ').next().unwrap().to_string();
        let after = &rest[eq + 2..];
        let close = after.find('"').unwrap();
        attrs.push((name, after[..close].to_string()));
        rest = &after[close + 1..];
    }
    attrs
}

fn attr(dom: &str, name: &str) -> String {
    root_attrs(dom)
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("the root has no {name}"))
        .1
}

/// A copy of `page` with `script` run after the page's own.
fn with_script(page: &Path, script: &str, dir: &Path) -> PathBuf {
    let html = std::fs::read_to_string(page).unwrap();
    let out = dir.join("with-script.html");
    std::fs::write(&out, format!("{html}<script>{script}</script>")).unwrap();
    out
}

fn clicks(control: &str, times: usize) -> String {
    format!(
        "for (let i = 0; i < {times}; i++) document.querySelector('[data-control=\"{control}\"]').click();"
    )
}

fn write_view(dir: &Path, extra: &[&str]) -> PathBuf {
    let out = dir.join("view.html");
    let mut args = vec!["view", LESSON2, "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    csmacd(&args);
    out
}

#[test]
fn the_page_holds_the_traces_events_and_follows_the_dom_contract() {
    let Some(browser) = chromium() else { return };
    let dir = temp_dir("view-contract");
    let page = write_view(&dir, &["--until", "250us"]);
    let dom = dump_dom(&browser, &page, "");
    let lines = trace_lines(&[LESSON2, "--until", "250us"]);
    assert_eq!(attr(&dom, "data-events"), lines.len().to_string());
    assert_eq!(attr(&dom, "data-until-us"), "250");
    assert_eq!(attr(&dom, "data-time-us"), "0", "opens paused at the start");
    assert_eq!(attr(&dom, "data-errors"), "");
    assert!(dom.contains("data-station=\"0\"") && dom.contains("data-station=\"1\""));
    assert_eq!(dom.matches("data-station=\"").count(), 2, "one per station");
    for control in ["step", "play", "speed", "scrub"] {
        assert!(
            dom.contains(&format!("data-control=\"{control}\"")),
            "{control}"
        );
    }
    // --from and --stations keep the page equal to the trace with the same flags.
    let page = write_view(
        &dir,
        &["--from", "100us", "--until", "300us", "--stations", "1"],
    );
    let dom = dump_dom(&browser, &page, "");
    let lines = trace_lines(&[
        LESSON2,
        "--from",
        "100us",
        "--until",
        "300us",
        "--stations",
        "1",
    ]);
    assert_eq!(attr(&dom, "data-events"), lines.len().to_string());
    assert_eq!(attr(&dom, "data-time-us"), "100");
    assert_eq!(dom.matches("data-station=\"").count(), 1);
    assert_eq!(attr(&dom, "data-errors"), "");
}

#[test]
fn each_step_moves_the_time_onto_the_next_event_and_back_returns() {
    let Some(browser) = chromium() else { return };
    let dir = temp_dir("view-step");
    let page = write_view(&dir, &["--until", "250us"]);
    let times = distinct_times(&trace_lines(&[LESSON2, "--until", "250us"]));
    assert!(times.len() > 8, "{times:?}");
    for (steps, backs) in [(1, 0), (6, 0), (6, 2)] {
        let script = clicks("step", steps) + &clicks("back", backs);
        let dom = dump_dom(&browser, &with_script(&page, &script, &dir), "");
        let t: f64 = attr(&dom, "data-time-us").parse().unwrap();
        assert_eq!(t, times[steps - backs - 1], "{steps} steps, {backs} back");
        assert_eq!(attr(&dom, "data-errors"), "");
    }
    // The fragment #t= sets the time the page opens at.
    let dom = dump_dom(&browser, &page, "#t=12");
    assert_eq!(attr(&dom, "data-time-us"), "12");
}

#[test]
fn a_script_error_shows_in_data_errors() {
    // The check for JS errors can fail: a page that throws says so.
    let Some(browser) = chromium() else { return };
    let dir = temp_dir("view-error");
    let page = write_view(&dir, &["--until", "50us"]);
    let dom = dump_dom(
        &browser,
        &with_script(&page, "throw new Error('boom in the page')", &dir),
        "",
    );
    assert!(attr(&dom, "data-errors").contains("boom in the page"));
}

#[test]
fn a_scenario_name_holding_markup_stays_text() {
    let dir = temp_dir("view-escape");
    let text = std::fs::read_to_string(repo().join(LESSON2))
        .unwrap()
        .replace(
            "name = \"lesson 2: two stations collide\"",
            "name = \"</script><script>document.title='pwned'</script><b id=x>\"",
        );
    let file = dir.join("markup.toml");
    std::fs::write(&file, text).unwrap();
    let page = dir.join("markup.html");
    csmacd(&[
        "view",
        file.to_str().unwrap(),
        "--until",
        "50us",
        "--out",
        page.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("</script>").count(), 2, "only the page's own");
    assert!(html.contains("\\u003c/script>\\u003cscript>"));
    let Some(browser) = chromium() else { return };
    let dom = dump_dom(&browser, &page, "");
    assert_eq!(attr(&dom, "data-errors"), "");
    assert!(!dom.contains("<b id=\"x\">"), "no element from the name");
    assert!(dom.contains(
        "<h1 id=\"title\">&lt;/script&gt;&lt;script&gt;document.title='pwned'&lt;/script&gt;&lt;b id=x&gt;</h1>"
    ));
    assert!(!dom.contains("<title>pwned"));
}

#[test]
fn a_lesson_asks_first_then_plays_and_shows_its_numbers() {
    let Some(browser) = chromium() else { return };
    let dir = lesson_page("2", "view-lesson");
    let page = dir.join("view.html");
    let dom = dump_dom(&browser, &page, "");
    let until = attr(&dom, "data-until-us");
    let lines = trace_lines(&[LESSON2, "--until", &format!("{until}us")]);
    assert_eq!(attr(&dom, "data-events"), lines.len().to_string());
    // Before an answer: the question with its unit, no numbers.
    let q = question(&dom, 0);
    assert!(
        q.contains("When does S1, the later sender, detect the collision? (µs)"),
        "{q}"
    );
    assert!(!dom.contains("data-verdict=\""));
    let answer = "document.querySelector('#questions input').value = '10 µs';\
                  document.querySelector('[data-control=\"answer\"]').click();";
    let dom = dump_dom(&browser, &with_script(&page, answer, &dir), "");
    assert!(question(&dom, 0).contains("data-verdict=\"right\""));
    assert!(dom.contains(
        "<td>S1 detects: S0's first bit arrives (S0's start + 2000 m at 2e8 m/s)</td>\
         <td>10 µs</td><td>10 µs</td>"
    ));
    assert_eq!(attr(&dom, "data-errors"), "");
}

/// The element `<li data-question="I" ...>` of the DOM, up to its end.
fn question(dom: &str, i: usize) -> &str {
    let at = dom
        .find(&format!("<li data-question=\"{i}\""))
        .unwrap_or_else(|| panic!("no data-question={i}"));
    let rest = &dom[at..];
    &rest[..rest.find("</li>").unwrap()]
}

#[test]
fn a_lesson_file_grades_its_questions_right_and_wrong() {
    let Some(browser) = chromium() else { return };
    let dir = temp_dir("view-lesson-file");
    let out = bin()
        .current_dir(repo())
        .args([
            "lesson",
            "scenarios/lessons/14-far-station.lesson.toml",
            "--quiet",
            "--view",
            "--out",
        ])
        .arg(&*dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = dir.join("view.html");
    let dom = dump_dom(&browser, &page, "");
    assert_eq!(attr(&dom, "data-errors"), "");
    // Asked with its unit, an input in each, no verdict and no answer yet.
    let q = question(&dom, 2);
    assert!(
        q.contains("When does S2, 2500 m away, detect the collision? (µs)"),
        "{q}"
    );
    assert!(q.contains("<input name=\"q2\""), "{q}");
    assert!(!dom.contains("data-verdict=\""));
    assert!(!dom.contains("the run says 0.5 µs"));
    // The text's Markdown is rendered as elements, never as raw markup.
    let section = &dom[dom.find("<section id=\"lesson\"").unwrap()..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(section.contains("<strong>0.5 µs</strong>"), "bold rendered");
    assert!(section.contains("<li>S0 and S1 detect"), "a list rendered");
    assert!(!section.contains("**"), "no raw Markdown: {section}");
    // Answered by typing and clicking: right within the tolerance (a unit
    // typed after the number is allowed), wrong outside it or empty.
    let answer = "const i = document.querySelectorAll('#questions input');\
                  i[0].value = '0.5 µs'; i[1].value = '9.6'; i[2].value = '12.04';\
                  document.querySelector('[data-control=\"answer\"]').click();";
    let dom = dump_dom(&browser, &with_script(&page, answer, &dir), "");
    assert_eq!(attr(&dom, "data-errors"), "");
    let verdict = |i| {
        let q = question(&dom, i);
        let at = q
            .find("data-verdict=\"")
            .unwrap_or_else(|| panic!("no verdict: {q}"));
        q[at + 14..].split('"').next().unwrap().to_string()
    };
    assert_eq!(verdict(0), "right");
    assert_eq!(verdict(1), "wrong");
    assert_eq!(verdict(2), "right");
    assert_eq!(verdict(3), "wrong", "no answer is wrong");
    assert!(question(&dom, 1).contains("✗ the run says 6.4 µs"));
    assert!(question(&dom, 0).contains("✓ right: the run says 0.5 µs"));
    assert!(dom.contains("2 of 4 right."));
    // Then the checks, with what the run shows.
    assert!(dom.contains(
        "<td>S0 jams from the end of its 64-bit preamble</td><td>6.4 µs</td><td>6.4 µs</td>"
    ));
}

// ---- csmacd serve over HTTP ----

/// A running `csmacd serve`, stopped with SIGINT when dropped.
pub(super) struct Server {
    child: Option<std::process::Child>,
    pub(super) addr: String,
}

impl Server {
    pub(super) fn start(file: &str) -> Server {
        Server::start_with(file, &[])
    }

    /// Starts the server with these variables in its environment.
    pub(super) fn start_with(file: &str, env: &[(&str, &str)]) -> Server {
        let mut child = bin()
            .current_dir(repo())
            .args(["serve", file, "--port", "0"])
            .envs(env.iter().copied())
            // As a user runs it: a fatal error ends the process at once,
            // not after a backtrace that may never finish printing.
            .env("RUST_BACKTRACE", "0")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let mut r = std::io::BufReader::new(stdout);
            let _ = std::io::BufRead::read_line(&mut r, &mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(Duration::from_secs(60)).unwrap();
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://127.0.0.1:"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"));
        let addr = url
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_string();
        Server {
            child: Some(child),
            addr,
        }
    }

    /// One request; the status and body (HTTP/1.0: the body comes unchunked).
    fn request(&self, method: &str, path: &str, body: &str) -> (u16, String) {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            s,
            "{method} {path} HTTP/1.0\r\nHost: {}\r\nConnection: close\r\n\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
            self.addr,
            body.len()
        )
        .unwrap();
        let mut response = String::new();
        s.read_to_string(&mut response).unwrap();
        let status = response
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("no status in {response:?}"));
        let body = response
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default();
        (status, body)
    }

    /// The server's process id.
    pub(super) fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    /// Sends SIGINT and waits; the exit status and stderr.
    pub(super) fn stop(mut self) -> std::process::Output {
        let child = self.child.take().unwrap();
        // SAFETY: kill(2) on the pid of a child this test started.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        wait_output(child, Duration::from_secs(30))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The JSON data a page embeds.
fn page_data(html: &str) -> serde_json::Value {
    let open = "<script type=\"application/json\" id=\"view-data\">";
    let start = html.find(open).unwrap() + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

/// A message without its place (`form.toml:25: ` or `bad.toml:25: `).
fn after_place(message: &str) -> String {
    message
        .split_once(": `")
        .map(|(_, rest)| rest.trim().to_string())
        .unwrap_or_else(|| panic!("no place in {message:?}"))
}

/// What `csmacd validate` says of lesson 2 on a 1000 m bus (S1 at 2000 m is
/// off it), without the place.
fn validate_says_of_a_short_bus(dir: &Path) -> String {
    let text = std::fs::read_to_string(repo().join(LESSON2))
        .unwrap()
        .replace("length = \"2000m\"", "length = \"1000m\"");
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, text).unwrap();
    let out = bin().arg("validate").arg(&bad).output().unwrap();
    assert!(!out.status.success());
    let said = String::from_utf8(out.stderr).unwrap();
    after_place(said.lines().next().unwrap().trim_start_matches("error: "))
}

#[test]
fn serve_answers_the_page_a_run_and_bad_input_with_validates_message() {
    let server = Server::start(LESSON2);
    let (status, page) = server.request("GET", "/", "");
    assert_eq!(status, 200);
    assert_eq!(page.matches("<main data-csmacd-view").count(), 1);
    let data = page_data(&page);
    assert_eq!(data["form"]["stations"], "1,1");
    assert_eq!(data["form"]["positions"], "0m,2000m");

    // A good run: S1 nearer, another seed; the page holds what the trace
    // of the scenario it ran prints.
    let (status, page) = server.request(
        "POST",
        "/run",
        "stations=1%2C1&positions=0m%2C500m&length=1000m&frame=100B&policy=beb&seed=3&until=400us",
    );
    assert_eq!(status, 200, "{page}");
    let data = page_data(&page);
    assert!(data["error"].is_null());
    assert_eq!(data["stations"][1]["x_m"], 500.0);
    let dir = temp_dir("serve-run");
    let file = dir.join("form.toml");
    std::fs::write(&file, data["form"]["scenario"].as_str().unwrap()).unwrap();
    let lines = trace_lines(&[file.to_str().unwrap(), "--until", "400us"]);
    assert_eq!(data["events"].as_array().unwrap().len(), lines.len());
    assert_eq!(data["events"][3], lines[3]);

    // Bad input: the message `csmacd validate` gives for the same change.
    let (status, page) = server.request("GET", "/run?length=1000m", "");
    assert_eq!(status, 400);
    let shown = page_data(&page)["error"].as_str().unwrap().to_string();
    assert!(shown.starts_with("form.toml:"), "{shown}");
    assert_eq!(after_place(&shown), validate_says_of_a_short_bus(&dir));

    // The caps, and the form's own checks.
    let (status, page) = server.request("GET", "/run?until=1s", "");
    assert_eq!(status, 400);
    assert!(page_data(&page)["error"]
        .as_str()
        .unwrap()
        .contains("at most 10000 µs"));
    let (status, _) = server.request("GET", "/run?stations=1", "");
    assert_eq!(status, 400);
    // New counts without positions (or with the form's old ones): the
    // stations spread evenly along the 2000 m bus.
    for ask in ["/?stations=8,8", "/run?stations=8%2C8&positions=0m%2C2000m"] {
        let (status, page) = server.request("GET", ask, "");
        assert_eq!(status, 200, "{ask}: {page}");
        let data = page_data(&page);
        let mut xs: Vec<f64> = data["stations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["x_m"].as_f64().unwrap())
            .collect();
        assert_eq!(xs.len(), 16, "{ask}");
        xs.sort_by(f64::total_cmp);
        assert_eq!((xs[0], xs[15]), (0.0, 2000.0), "{ask}");
        let gaps: Vec<f64> = xs.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(
            gaps.iter().all(|g| (g - gaps[0]).abs() < 1e-6 && *g > 0.0),
            "{ask}: evenly spread: {xs:?}"
        );
    }
    let (status, _) = server.request("GET", "/elsewhere", "");
    assert_eq!(status, 404);

    let out = server.stop();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("stopped"));
}

// ---- csmacd serve in the browser: the address asks for the run ----

/// Text as the DOM serializes it.
fn html_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The rows of the open station history, as (time, event, detail).
fn history_rows(dom: &str) -> Vec<(String, String, String)> {
    let start = dom
        .find("<table id=\"history-table\">")
        .expect("a history table");
    let table = &dom[start..start + dom[start..].find("</table>").unwrap()];
    let body = &table[table.find("<tbody>").unwrap()..];
    body.split("<tr>")
        .skip(1)
        .map(|row| {
            let cells: Vec<String> = row
                .split("<td>")
                .skip(1)
                .map(|c| c[..c.find("</td>").unwrap()].to_string())
                .collect();
            (cells[0].clone(), cells[1].clone(), cells[2].clone())
        })
        .collect()
}

#[test]
fn serve_in_a_browser_runs_the_scenario_its_address_asks_for() {
    let Some(browser) = chromium() else { return };
    let server = Server::start(LESSON2);
    // S1 nearer on a shorter bus, longer frames, another seed: every field
    // changed, in the query string of the page's address.
    let query =
        "stations=1%2C1&positions=0m%2C1500m&length=1500m&frame=100B&policy=beb&seed=3&until=400us";
    let url = format!("http://{}/?{query}#station=0", server.addr);
    let dom = dump_dom_of(&browser, &url);
    assert_eq!(attr(&dom, "data-errors"), "");
    assert!(
        dom.contains("<p id=\"error\" role=\"alert\" hidden=\"\"></p>"),
        "no error"
    );

    // The same change made by hand in the scenario file: the page holds
    // the events its trace prints.
    let dir = temp_dir("serve-browser");
    let text = std::fs::read_to_string(repo().join(LESSON2))
        .unwrap()
        .replace("length = \"2000m\"", "length = \"1500m\"")
        .replace("positions = [\"2000m\"]", "positions = [\"1500m\"]")
        .replace("frame = \"64B\"", "frame = \"100B\"");
    let changed = dir.join("changed.toml");
    std::fs::write(&changed, text).unwrap();
    let lines = trace_lines(&[changed.to_str().unwrap(), "--seed", "3", "--until", "400us"]);
    assert_eq!(attr(&dom, "data-events"), lines.len().to_string());
    assert_eq!(attr(&dom, "data-until-us"), "400");
    let unchanged = trace_lines(&[LESSON2, "--until", "400us"]);
    assert_ne!(
        unchanged.len(),
        lines.len(),
        "the test tells the runs apart"
    );
    assert!(
        dom.contains(&format!(
            "2 stations on 1500 m, seed 3, {} events from 0 to 400 µs",
            lines.len()
        )),
        "the subtitle names the bus and the seed"
    );
    assert!(dom.contains("<span class=\"station-pos\">1500 m</span>"));

    // S0's history (#station=0) is the trace's, instant by instant: the
    // positions, the frame size and the seed all reached the run.
    let mine: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["station"] == 0 && !l["event"].as_str().unwrap().starts_with("signal-"))
        .collect();
    let rows = history_rows(&dom);
    assert_eq!(rows.len(), mine.len(), "{rows:?}");
    for (row, line) in rows.iter().zip(&mine) {
        let t: f64 = row.0.parse().unwrap();
        assert!(
            (t - line["time_us"].as_f64().unwrap()).abs() < 1e-6,
            "{row:?} {line}"
        );
        assert_eq!(row.1, line["event"].as_str().unwrap());
    }
    assert!(
        rows.iter()
            .any(|r| r.1 == "tx-start" && r.2.contains("100 B to S1")),
        "{rows:?}"
    );
    assert!(
        rows.iter().any(|r| r.1 == "collision"),
        "the stations still collide: {rows:?}"
    );

    // The page's address is the run's: its link to itself keeps the query
    // (with its commas as typed).
    let address = url.replace("%2C", ",");
    assert!(
        dom.contains(&format!(
            "<a id=\"share\" href=\"{}\">",
            html_text(&address)
        )),
        "share link to {address}"
    );

    // The form posted to /run (here by a page that submits the same
    // fields, but the policy left empty: the scenario's, BEB): the page
    // takes the address of the same run, without the empty field.
    let inputs: String = form_urlencoded_pairs(query)
        .iter()
        .map(|(n, v)| {
            let v = if n == "policy" { "" } else { v };
            format!("<input name=\"{n}\" value=\"{v}\">")
        })
        .collect();
    let poster = dir.join("post.html");
    std::fs::write(
        &poster,
        format!(
            "<!DOCTYPE html><form method=\"post\" action=\"http://{}/run\">{inputs}</form>\
             <script>document.forms[0].submit()</script>",
            server.addr
        ),
    )
    .unwrap();
    let dom = dump_dom(&browser, &poster, "");
    assert_eq!(attr(&dom, "data-events"), lines.len().to_string());
    assert_eq!(attr(&dom, "data-errors"), "");
    let address = html_text(&format!(
        "http://{}/?{}",
        server.addr,
        query.replace("&policy=beb", "").replace("%2C", ",")
    ));
    assert!(
        dom.contains(&format!("<a id=\"share\" href=\"{address}\">")),
        "the posted page's address is {address}"
    );
    let _ = server.stop();
}

/// The (name, value) pairs of a query string whose only escape is %2C.
fn form_urlencoded_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .map(|p| {
            let (n, v) = p.split_once('=').unwrap();
            (n.to_string(), v.replace("%2C", ","))
        })
        .collect()
}

#[test]
fn serve_in_a_browser_shows_validates_message_for_a_bad_address() {
    let Some(browser) = chromium() else { return };
    let server = Server::start(LESSON2);
    let dir = temp_dir("serve-browser-bad");
    // Asked through /run (as the form does): the address becomes /?...
    let dom = dump_dom_of(
        &browser,
        &format!("http://{}/run?length=1000m", server.addr),
    );
    assert_eq!(attr(&dom, "data-errors"), "", "no script error");
    let start = dom
        .find("<p id=\"error\" role=\"alert\">")
        .expect("the error shown, not hidden");
    let shown = &dom[start + "<p id=\"error\" role=\"alert\">".len()..];
    let shown = &shown[..shown.find("</p>").unwrap()];
    assert!(shown.starts_with("form.toml:"), "{shown}");
    assert_eq!(
        after_place(shown),
        html_text(&validate_says_of_a_short_bus(&dir))
    );
    // The run shown is the scenario as given, and the address keeps what was asked.
    // The default window: one slot after both frames are sent whole
    // (S1's at 200.4 µs), rounded up to a whole µs.
    assert_eq!(attr(&dom, "data-until-us"), "252");
    let lines = trace_lines(&[LESSON2, "--until", "252us"]);
    assert_eq!(attr(&dom, "data-events"), lines.len().to_string());
    assert!(dom.contains(&format!(
        "<a id=\"share\" href=\"http://{0}/?length=1000m\">http://{0}/?length=1000m</a>",
        server.addr
    )));
    let _ = server.stop();
}

// ---- csmacd serve against slow and stalled clients ----

/// The status of the response on `stream`, read within `limit` (the status
/// line only: the server may keep the connection open after it).
fn status_within(stream: &mut TcpStream, limit: Duration) -> u16 {
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    while !got.ends_with(b"\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => got.push(byte[0]),
            Ok(_) => panic!(
                "closed before a status line: {:?}",
                String::from_utf8_lossy(&got)
            ),
            Err(e) => panic!("no status line within {limit:?}: {e}"),
        }
    }
    String::from_utf8_lossy(&got)
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status in {got:?}"))
}

/// Opens a connection and sends a POST's headers declaring `length` bytes
/// of form, and `sent` of them; the rest never comes.
fn stalled_post(addr: &str, length: usize, sent: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "POST /run HTTP/1.1\r\nHost: {addr}\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {length}\r\n\r\n{sent}"
    )
    .unwrap();
    s.flush().unwrap();
    s
}

#[test]
fn serve_answers_others_while_a_client_stalls() {
    let server = Server::start(LESSON2);
    // A form of 5000 bytes (padded with empty fields, which are skipped),
    // of which the first 7 arrive; more than the server reads in one go,
    // so its read waits on it.
    let form = format!("{:&<5000}", "seed=3&until=300us");
    let mut stalled = stalled_post(&server.addr, form.len(), &form[..7]);
    std::thread::sleep(Duration::from_secs(1));
    // Another client is answered meanwhile (a server that waits for the
    // stalled body never answers it).
    let mut other = TcpStream::connect(&server.addr).unwrap();
    write!(
        other,
        "GET /?seed=3 HTTP/1.1\r\nHost: {}\r\n\r\n",
        server.addr
    )
    .unwrap();
    assert_eq!(status_within(&mut other, Duration::from_secs(20)), 200);
    // A form longer than the server reads is refused before it is read.
    let mut long = stalled_post(&server.addr, 10_000_000, "");
    assert_eq!(status_within(&mut long, Duration::from_secs(20)), 413);
    // So is one that declares 2^62 bytes (read whole, it would exhaust
    // the server's memory), and the server goes on answering.
    let mut huge = stalled_post(&server.addr, 1 << 62, "seed=3");
    assert_eq!(status_within(&mut huge, Duration::from_secs(20)), 413);
    drop(huge);
    let mut after = TcpStream::connect(&server.addr).unwrap();
    write!(
        after,
        "GET /?seed=4 HTTP/1.1\r\nHost: {}\r\n\r\n",
        server.addr
    )
    .unwrap();
    assert_eq!(status_within(&mut after, Duration::from_secs(20)), 200);
    // The stalled client sends the rest of its form: it gets its run.
    stalled.write_all(&form.as_bytes()[7..]).unwrap();
    assert_eq!(status_within(&mut stalled, Duration::from_secs(20)), 200);
    let out = server.stop();
    assert!(out.status.success(), "{out:?}");
}

/// Lesson pages show something to watch: lessons 4 and 13 (first frames
/// milliseconds in) a window around their first collision, late in lesson
/// 4 (its 10 km bus); lesson 7's herd of 1000 stations four of them spread
/// over the whole 2500 m bus, not 64 packed into 160 m, through more than
/// a slot of the herd before the event cap.
#[test]
fn lesson_pages_show_a_window_with_something_to_watch() {
    let page = |n: &str| {
        let dir = lesson_page(n, &format!("view-lesson-window-{n}"));
        std::fs::read_to_string(dir.join("view.html")).unwrap()
    };
    let count = |html: &str, pat: &str| html.matches(pat).count();
    let four = page("4");
    assert!(count(&four, "\"time_us\":") > 10, "lesson 4 holds events");
    assert!(
        count(&four, "\"event\":\"late-collision\"") > 0,
        "a late collision"
    );
    let thirteen = page("13");
    assert!(
        count(&thirteen, "\"time_us\":") > 10,
        "lesson 13 holds events"
    );
    let seven = page("7");
    assert_eq!(count(&seven, "\"x_m\":"), 4, "four stations");
    assert!(seven.contains("\"x_m\":2500.0"), "the far end shown");
    let until: f64 = seven
        .split("\"until_us\":")
        .nth(1)
        .and_then(|r| r.split(|c: char| c != '.' && !c.is_ascii_digit()).next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    assert!(
        until > 51.2 * 2.0,
        "the herd's first slots: until {until} µs"
    );
    assert!(
        !seven.contains("This page holds at most"),
        "the herd's window whole"
    );
}

/// A lesson text's Markdown table (lesson 13's speeds) is a table on the
/// page, its cells text, never a paragraph of pipes.
#[test]
fn a_lesson_texts_table_is_a_table_on_the_page() {
    let Some(browser) = chromium() else { return };
    let dir = lesson_page("13", "view-lesson-table");
    let dom = dump_dom(&browser, &dir.join("view.html"), "");
    assert_eq!(attr(&dom, "data-errors"), "");
    let section = &dom[dom.find("<section id=\"lesson\"").unwrap()..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(section.contains("<th>speed</th>"), "{section}");
    assert!(section.contains("<td>10 Mb/s</td>"), "{section}");
    assert!(!section.contains("| speed |"), "{section}");
    assert!(!section.contains("| ---"), "{section}");
    // The table gives the answers away: it is no part of the setting
    // shown before the questions are answered.
    let setup = &section[section.find("id=\"lesson-setup\"").unwrap()..];
    let setup = &setup[..setup.find("</div>").unwrap()];
    assert!(setup.contains("64-byte minimum frame."), "{setup}");
    assert!(!setup.contains("<table"), "{setup}");
    assert!(!setup.contains("480 m"), "{setup}");
}

/// Writes lesson `n`'s page (`lesson N --view`) into a new scratch
/// directory named by `tag`, which it returns; the command must succeed.
fn lesson_page(n: &str, tag: &str) -> Scratch {
    let dir = temp_dir(tag);
    let out = bin()
        .current_dir(repo())
        .args(["lesson", n, "--quiet", "--view", "--out"])
        .arg(&*dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// The DOM of lesson `n`'s page (`lesson N --view`) after its scripts ran.
fn lesson_dom(browser: &Path, n: &str) -> String {
    let dir = lesson_page(n, &format!("view-lesson-dom-{n}"));
    let dom = dump_dom(browser, &dir.join("view.html"), "");
    assert_eq!(attr(&dom, "data-errors"), "");
    dom
}

/// The text of the element with `id`, up to its first nested tag's end.
fn element_text<'a>(dom: &'a str, id: &str) -> &'a str {
    let start = dom.find(&format!("id=\"{id}\"")).unwrap();
    let rest = &dom[start..];
    let rest = &rest[rest.find('>').unwrap() + 1..];
    &rest[..rest.find('<').unwrap()]
}

/// A lesson page's header tells the truth about a herd drawn in part
/// (lesson 7: 1000 stations, four drawn), and its durations are in the
/// unit that suits them: "the run lasts 60 s", never "60000000 µs".
#[test]
fn a_lesson_page_header_tells_the_herd_and_durations_in_their_units() {
    let Some(browser) = chromium() else { return };
    let dom = lesson_dom(&browser, "7");
    let subtitle = element_text(&dom, "subtitle");
    assert!(
        subtitle.starts_with("1000 stations (4 of them drawn) on 2500 m"),
        "{subtitle}"
    );
    assert!(subtitle.contains("the run lasts 60 s"), "{subtitle}");
    let notes = &dom[dom.find("id=\"left-out\"").unwrap()..];
    let notes = &notes[..notes.find("</ul>").unwrap()];
    assert!(notes.contains("The run goes on to 60 s;"), "{notes}");
    // No duration of a million µs or more in the page's notes.
    let long = notes
        .split(" µs")
        .filter_map(|s| s.rsplit(|c: char| !c.is_ascii_digit() && c != '.').next())
        .filter_map(|v| v.parse::<f64>().ok())
        .find(|&v| v >= 1e6);
    assert_eq!(long, None, "{notes}");
}

/// Indented lines of a lesson's text (lesson 11's formulas) are a code
/// block on the page, line by line as text, not joined into a paragraph.
#[test]
fn a_lesson_texts_indented_lines_are_a_code_block() {
    let Some(browser) = chromium() else { return };
    let dom = lesson_dom(&browser, "11");
    let section = &dom[dom.find("<section id=\"lesson\"").unwrap()..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(
        section.contains(
            "<pre><code>64·8 / ((8 + 512)·8 + 96) = 512 / 4256 = 0.1203 of the bit rate,</code></pre>"
        ),
        "{section}"
    );
    assert!(!section.contains("station alone gets 64·8"), "{section}");
}
