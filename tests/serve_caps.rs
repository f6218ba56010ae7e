//! `csmacd serve` against hostile clients: requests far over the caps are
//! refused in bounded memory and their connections closed, the connections
//! and the queue of runs are capped, counts that overflow are refused, and
//! a panic in one request takes no worker down.

use super::common::temp_dir;
use super::view::Server;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

const LESSON2: &str = "scenarios/lessons/2-collision.toml";

/// A field of /proc/PID/status, in its unit (kB for memory).
fn proc_status(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim_start_matches(':').split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// The server's peak resident memory so far, in MB.
fn peak_mb(pid: u32) -> f64 {
    proc_status(pid, "VmHWM") as f64 / 1024.0
}

fn open_descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

/// Waits up to 10 s for the server's descriptors and threads to come back
/// to `fds` and `threads`; the counts reached.
fn settle(pid: u32, fds: usize, threads: u64) -> (usize, u64) {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let now = (open_descriptors(pid), proc_status(pid, "Threads"));
        if (now.0 <= fds && now.1 <= threads) || Instant::now() > until {
            return now;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends `head`, then `unit` over and over up to `total` bytes (streamed
/// from one small buffer, never built whole) on one thread, until the
/// server closes the connection, while another reads the answer's status
/// line; the status, the bytes sent and the time the status took.
fn stream_hostile(addr: &str, head: &[u8], unit: &[u8], total: u64) -> (u16, u64, Duration) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut reader = s.try_clone().unwrap();
    let head = head.to_vec();
    let block: Vec<u8> = unit.iter().copied().cycle().take(64 * 1024).collect();
    let block = &block[..block.len() - block.len() % unit.len()];
    let block = block.to_vec();
    let started = Instant::now();
    let writer = std::thread::spawn(move || {
        let mut sent = 0u64;
        if s.write_all(&head).is_err() {
            return sent;
        }
        while sent < total {
            let n = (total - sent).min(block.len() as u64) as usize;
            if s.write_all(&block[..n]).is_err() {
                break;
            }
            sent += n as u64;
        }
        sent
    });
    reader
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    while !got.ends_with(b"\r\n") {
        match reader.read(&mut byte) {
            Ok(1) => got.push(byte[0]),
            other => panic!(
                "no status line ({other:?}): {:?}",
                String::from_utf8_lossy(&got)
            ),
        }
    }
    let took = started.elapsed();
    // The writer goes on until the server closes the connection (and
    // would send it all if it did not).
    let sent = writer.join().unwrap();
    let status = String::from_utf8_lossy(&got)
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status in {got:?}"));
    (status, sent, took)
}

/// A whole request and its answer: the status, the headers and the time.
fn ask(addr: &str, request: &str) -> (u16, String, Duration) {
    let started = Instant::now();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut response = Vec::new();
    let _ = s.read_to_end(&mut response);
    let response = String::from_utf8_lossy(&response).into_owned();
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status in {response:?}"));
    (status, response, started.elapsed())
}

fn get(addr: &str, target: &str) -> (u16, String, Duration) {
    ask(
        addr,
        &format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\n\r\n"),
    )
}

#[test]
fn serve_refuses_heads_over_the_caps_in_bounded_memory_and_closes_them() {
    let server = Server::start(LESSON2);
    let pid = server.pid();
    let addr = server.addr.clone();
    // The home page once, so that the descriptors counted are the idle server's.
    assert_eq!(get(&addr, "/").0, 200);
    let (fds, threads) = settle(pid, usize::MAX, u64::MAX);
    let fds = open_descriptors(pid).min(fds);
    let before = peak_mb(pid);
    // What is sent, its head, the unit repeated after it, how many bytes
    // of it are offered, and the answer expected.
    type Hostile<'a> = (&'a str, &'a [u8], &'a [u8], u64, u16);
    let hostile: [Hostile; 4] = [
        (
            "a 2.3 GB header line",
            b"GET / HTTP/1.1\r\nHost: x\r\nX-Long: ",
            b"a",
            2_300_000_000,
            431,
        ),
        (
            "16 million header lines",
            b"GET / HTTP/1.1\r\n",
            b"X: 1\r\n",
            16_000_000 * 6,
            431,
        ),
        ("a 200 MB request line", b"GET /?", b"a", 200_000_000, 414),
        (
            "a body declared as 10^12 bytes",
            b"POST /run HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000000\r\n\r\n",
            b"seed=3&",
            1_000_000_000_000,
            413,
        ),
    ];
    for (what, head, unit, total, expected) in hostile {
        let (status, sent, took) = stream_hostile(&addr, head, unit, total);
        let peak = peak_mb(pid);
        eprintln!(
            "{what}: {status} after {took:?}, {sent} bytes sent before the server closed; peak {peak:.1} MB"
        );
        assert_eq!(status, expected, "{what}");
        assert!(sent < total, "{what}: the server read it all");
        assert!(peak < 100.0, "{what}: peak {peak:.1} MB");
    }
    // Many refused requests leave no descriptor or thread behind.
    for i in 0..200 {
        let request = match i % 4 {
            0 => "POST /run HTTP/1.1\r\nContent-Length: 1000000000000\r\n\r\nseed=3".to_string(),
            1 => format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(9000)),
            2 => format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(70_000)),
            _ => format!("GET / HTTP/1.1\r\n{}\r\n", "X: 1\r\n".repeat(101)),
        };
        let (status, _, _) = ask(&addr, &request);
        assert!([413, 431, 414].contains(&status), "{status}");
    }
    let (status, _, took) = get(&addr, "/?seed=3");
    assert_eq!(status, 200);
    let after = settle(pid, fds, threads);
    eprintln!(
        "descriptors {fds} before, {} after; threads {threads} before, {} after; \
         peak {before:.1} MB before, {:.1} MB after; a run after them took {took:?}",
        after.0,
        after.1,
        peak_mb(pid)
    );
    assert!(
        after.0 <= fds,
        "descriptors: {fds} before, {} after",
        after.0
    );
    assert!(
        after.1 <= threads,
        "threads: {threads} before, {} after",
        after.1
    );
    let out = server.stop();
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn serve_caps_its_connections_and_its_queue_of_runs() {
    let server = Server::start("scenarios/two-saturated.toml");
    let addr = server.addr.clone();
    // 64 connections that send nothing hold every place: one more is
    // answered 503 at once.
    let idle: Vec<TcpStream> = (0..64)
        .map(|_| TcpStream::connect(&addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let (status, response, took) = get(&addr, "/");
    assert_eq!(status, 503, "{response}");
    assert!(response.contains("Retry-After: "), "{response}");
    assert!(took < Duration::from_secs(2), "{took:?}");
    drop(idle);
    // Their places are given back.
    let until = Instant::now() + Duration::from_secs(10);
    while get(&addr, "/").0 != 200 {
        assert!(Instant::now() < until, "places not given back");
        std::thread::sleep(Duration::from_millis(100));
    }
    // 150 runs at the caps asked at once: those that find the queue full
    // are answered 503 with Retry-After, and a plain GET meanwhile is not
    // held up behind the rest.
    // 1000 saturated stations for 10 ms: a run at the caps.
    let what_if = "/run?stations=1000&until=10ms&seed=";
    let crowd: Vec<_> = (0..150)
        .map(|i| {
            let addr = addr.clone();
            std::thread::spawn(move || get(&addr, &format!("{what_if}{i}")))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let (status, _, plain) = get(&addr, "/");
    let answers: Vec<_> = crowd.into_iter().map(|t| t.join().unwrap()).collect();
    let ran = answers.iter().filter(|a| a.0 == 200).count();
    let busy = answers.iter().filter(|a| a.0 == 503).count();
    let slowest = answers.iter().map(|a| a.2).max().unwrap();
    eprintln!(
        "150 runs at once: {ran} answered 200, {busy} 503, the slowest after {slowest:?}; \
         a plain GET meanwhile took {plain:?}"
    );
    assert_eq!(status, 200);
    assert_eq!(ran + busy, 150);
    assert!(ran >= 4 && busy > 0, "{ran} ran, {busy} busy");
    assert!(answers
        .iter()
        .filter(|a| a.0 == 503)
        .all(|a| a.1.contains("Retry-After: ")));
    assert!(plain < Duration::from_secs(2), "a plain GET took {plain:?}");
    let out = server.stop();
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn serve_refuses_counts_that_overflow_and_outlives_a_panicking_request() {
    let dir = temp_dir("serve-three-groups");
    let file = dir.join("three.toml");
    let group = "[[stations]]\ncount = 1\ntraffic = { kind = \"saturated\" }\nframe = \"512B\"\n";
    std::fs::write(
        &file,
        format!(
            "name = \"three\"\nduration = \"1ms\"\n[medium]\nbit_rate = \"10Mbps\"\nlength = \"500m\"\n{}",
            group.repeat(3)
        ),
    )
    .unwrap();
    let server = Server::start_with(file.to_str().unwrap(), &[("CSMACD_SERVE_TEST_PANIC", "1")]);
    let addr = server.addr.clone();
    // Counts whose sum wraps around to the one position given.
    for _ in 0..6 {
        let (status, page, _) = get(
            &addr,
            "/?stations=9223372036854775807,9223372036854775807,3&positions=0m",
        );
        assert_eq!(status, 400);
        assert!(
            page.contains("positions: 1 given for more stations"),
            "{page}"
        );
    }
    // A panic in a request is answered 500, as many times as there are
    // workers and more, and every worker goes on.
    for _ in 0..6 {
        let (status, text, _) = get(&addr, "/panic");
        assert_eq!(status, 500, "{text}");
    }
    let runs: Vec<_> = (0..4)
        .map(|i| {
            let addr = addr.clone();
            std::thread::spawn(move || get(&addr, &format!("/?seed={}", i + 2)).0)
        })
        .collect();
    for r in runs {
        assert_eq!(r.join().unwrap(), 200);
    }
    let out = server.stop();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("CSMACD_SERVE_TEST_PANIC"), "{stderr}");
}

#[test]
fn serve_answers_a_class_of_30_small_pages_within_a_second_beside_heavy_runs() {
    let server = Server::start(LESSON2);
    let addr = server.addr.clone();
    // A few students ask for 1000-station what-ifs over 10 ms (pages of
    // about a megabyte, seconds of work each)...
    let heavy: Vec<_> = (0..4)
        .map(|i| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                get(&addr, &format!("/run?stations=500,500&until=10ms&seed={i}"))
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    // ... while the rest of the class, 26 at once, each runs the lesson
    // with a seed of their own: every small page answers within 1 s.
    let light: Vec<_> = (0..26)
        .map(|i| {
            let addr = addr.clone();
            std::thread::spawn(move || get(&addr, &format!("/?seed={}", 100 + i)))
        })
        .collect();
    let light: Vec<_> = light.into_iter().map(|t| t.join().unwrap()).collect();
    let heavy: Vec<_> = heavy.into_iter().map(|t| t.join().unwrap()).collect();
    let slowest = light.iter().map(|a| a.2).max().unwrap();
    eprintln!(
        "30 clients: the slowest of 26 small pages took {slowest:?}; the heavy runs {:?}",
        heavy.iter().map(|a| (a.0, a.2)).collect::<Vec<_>>()
    );
    for (status, response, took) in &light {
        assert_eq!(*status, 200, "{}", &response[..response.len().min(300)]);
        assert!(*took < Duration::from_secs(1), "a small page took {took:?}");
    }
    // The heavy runs were made too (two at once, two waiting), not refused.
    for (status, response, _) in &heavy {
        assert_eq!(*status, 200, "{}", &response[..response.len().min(300)]);
        assert!(response.len() > 200_000, "a page of 1000 stations");
    }
    let out = server.stop();
    assert!(out.status.success(), "{out:?}");
}
