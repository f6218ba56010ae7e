//! The interactive view in a real browser (headless Chromium): the DOM
//! contract, steps, JS errors and escaping; and `csmacd serve` over HTTP.

use super::common::{bin, repo, temp_dir};
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

/// Runs `child` to its end within `limit`, killing it past that.
fn wait_output(mut child: std::process::Child, limit: Duration) -> std::process::Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("timed out after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// The DOM of `page` after its scripts ran (with `fragment`, e.g. "#t=12").
fn dump_dom(browser: &Path, page: &Path, fragment: &str) -> String {
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
        .arg(format!("file://{}{fragment}", page.display()))
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
    let dir = temp_dir("view-lesson");
    let out = bin()
        .current_dir(repo())
        .args(["lesson", "2", "--quiet", "--view", "--out"])
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
    let until = attr(&dom, "data-until-us");
    let lines = trace_lines(&[LESSON2, "--until", &format!("{until}us")]);
    assert_eq!(attr(&dom, "data-events"), lines.len().to_string());
    // Before an answer: the question, no numbers.
    assert!(dom.contains("S1 detects: S0's first bit arrives"));
    assert!(dom.contains("<div id=\"answers\" hidden=\"\">"));
    let answer = "document.querySelector('#questions input').value = '10 µs';\
                  document.querySelector('[data-control=\"answer\"]').click();";
    let dom = dump_dom(&browser, &with_script(&page, answer, &dir), "");
    assert!(dom.contains("<div id=\"answers\">"), "revealed");
    assert!(dom.contains("<td>10 µs</td><td>10 µs</td><td>10 µs</td>"));
    assert_eq!(attr(&dom, "data-errors"), "");
}

// ---- csmacd serve over HTTP ----

/// A running `csmacd serve`, stopped with SIGINT when dropped.
struct Server {
    child: Option<std::process::Child>,
    addr: String,
}

impl Server {
    fn start(file: &str) -> Server {
        let mut child = bin()
            .current_dir(repo())
            .args(["serve", file, "--port", "0"])
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

    /// Sends SIGINT and waits; the exit status and stderr.
    fn stop(mut self) -> std::process::Output {
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
    let text = std::fs::read_to_string(repo().join(LESSON2))
        .unwrap()
        .replace("length = \"2000m\"", "length = \"1000m\"");
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, text).unwrap();
    let out = bin().arg("validate").arg(&bad).output().unwrap();
    assert!(!out.status.success());
    let said = String::from_utf8(out.stderr).unwrap();
    let after_place = |m: &str| m.split_once(": `").map(|(_, r)| r.trim().to_string());
    assert!(shown.starts_with("form.toml:"), "{shown}");
    assert_eq!(
        after_place(&shown),
        after_place(said.lines().next().unwrap()),
        "page: {shown}\nvalidate: {said}"
    );

    // The caps, and the form's own checks.
    let (status, page) = server.request("GET", "/run?until=1s", "");
    assert_eq!(status, 400);
    assert!(page_data(&page)["error"]
        .as_str()
        .unwrap()
        .contains("at most 10000 µs"));
    let (status, _) = server.request("GET", "/run?stations=1", "");
    assert_eq!(status, 400);
    let (status, _) = server.request("GET", "/elsewhere", "");
    assert_eq!(status, 404);

    let out = server.stop();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("stopped"));
}
