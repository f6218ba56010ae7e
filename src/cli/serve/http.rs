//! The server's HTTP front: one request per connection, read with every
//! length capped before a byte is kept, parsed by `httparse`, answered and
//! closed. Nothing a client sends is held beyond the caps: a request line
//! over [`MAX_REQUEST_LINE`] is answered 414, a header line over
//! [`MAX_HEADER_LINE`], more than [`MAX_HEADERS`] headers or more than
//! [`MAX_HEADER_BYTES`] of them 431, a body over [`MAX_BODY`] 413, and a
//! client that takes longer than [`READ_DEADLINE`] 408.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

/// The longest request line read (the page's address holds the form's
/// fields, which may be as long as a form): more is answered 414.
pub const MAX_REQUEST_LINE: usize = 64 * 1024;
/// The longest header line read: more is answered 431.
pub const MAX_HEADER_LINE: usize = 8 * 1024;
/// The most headers read: more is answered 431.
pub const MAX_HEADERS: usize = 100;
/// The most bytes of headers together: more is answered 431.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;
/// The most bytes of a form read from a request's body: more is answered 413.
pub const MAX_BODY: usize = 64 * 1024;
/// How long a client may take to send its whole request.
pub const READ_DEADLINE: Duration = Duration::from_secs(30);
/// How long one read may wait for the client's next bytes.
const IDLE: Duration = Duration::from_secs(10);
/// How long an answer may take to be taken by the client.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// After a refusal, how much of what the client still sends is read and
/// thrown away (so that the answer is not lost to a reset), at most.
const DRAIN_BYTES: usize = 1 << 20;
const DRAIN_TIME: Duration = Duration::from_secs(1);

/// A request read whole and within the caps.
pub struct Request {
    pub method: String,
    /// The request target as sent: the path and query string.
    pub target: String,
    pub body: Vec<u8>,
}

/// An answer: its status, body and what kind of body it is.
pub struct Answer {
    pub status: u16,
    pub body: String,
    pub html: bool,
    /// Seconds after which a client may try again (503).
    pub retry_after: Option<u32>,
}

impl Answer {
    /// A plain-text answer.
    pub fn text(status: u16, body: impl Into<String>) -> Answer {
        Answer {
            status,
            body: body.into(),
            html: false,
            retry_after: None,
        }
    }

    /// A page.
    pub fn page(status: u16, body: String) -> Answer {
        Answer {
            status,
            body,
            html: true,
            retry_after: None,
        }
    }

    /// 503: too busy now, try again in `secs` seconds.
    pub fn busy(body: impl Into<String>, secs: u32) -> Answer {
        Answer {
            retry_after: Some(secs),
            ..Answer::text(503, body)
        }
    }
}

/// Why a request is not read further: the answer it gets, or none when the
/// client went away before sending one.
pub enum Refused {
    Answer(Answer),
    Gone,
}

impl From<std::io::Error> for Refused {
    fn from(e: std::io::Error) -> Self {
        match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
                Refused::Answer(Answer::text(
                    408,
                    format!(
                        "the request did not arrive in time: send it within {} s, with no pause over {} s\n",
                        READ_DEADLINE.as_secs(),
                        IDLE.as_secs()
                    ),
                ))
            }
            _ => Refused::Gone,
        }
    }
}

fn refuse(status: u16, message: String) -> Refused {
    Refused::Answer(Answer::text(status, message + "\n"))
}

/// Reads from `stream` within the deadline, each read waiting at most [`IDLE`].
struct Timed<'a> {
    stream: &'a mut TcpStream,
    deadline: Instant,
}

impl Read for Timed<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left.min(IDLE)))?;
        self.stream.read(buf)
    }
}

/// Reads one request from `stream`: its head line by line, each line and
/// their number checked before it is kept, then its body.
pub fn read_request(stream: &mut TcpStream) -> Result<Request, Refused> {
    let deadline = Instant::now() + READ_DEADLINE;
    let mut input = Timed { stream, deadline };
    let (head, mut body) = read_head(&mut input)?;
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut headers);
    match parsed.parse(&head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) | Err(_) => {
            return Err(refuse(400, "a malformed HTTP request".into()))
        }
    }
    let method = parsed.method.unwrap_or_default().to_string();
    let target = parsed.path.unwrap_or_default().to_string();
    let mut length: Option<u64> = None;
    let mut continue_expected = false;
    for h in parsed.headers.iter() {
        if h.name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(refuse(
                411,
                "send the form with a Content-Length (this server reads no chunked body)".into(),
            ));
        }
        if h.name.eq_ignore_ascii_case("content-length") {
            let n = std::str::from_utf8(h.value)
                .ok()
                .map(str::trim)
                .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                .map(|v| v.parse::<u64>().unwrap_or(u64::MAX));
            match (n, length) {
                (None, _) => return Err(refuse(400, "Content-Length is not a number".into())),
                (Some(n), Some(l)) if n != l => {
                    return Err(refuse(400, "two different Content-Length headers".into()))
                }
                (Some(n), _) => length = Some(n),
            }
        }
        if h.name.eq_ignore_ascii_case("expect") && h.value.eq_ignore_ascii_case(b"100-continue") {
            continue_expected = true;
        }
    }
    let length = length.unwrap_or(0);
    if length > MAX_BODY as u64 {
        return Err(refuse(
            413,
            format!("the form is longer than this server reads: at most {MAX_BODY} bytes"),
        ));
    }
    let length = length as usize;
    body.truncate(length);
    if body.len() < length {
        if continue_expected {
            input.stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        }
        let mut rest = vec![0; length - body.len()];
        input.read_exact(&mut rest).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => Refused::Gone,
            _ => e.into(),
        })?;
        body.extend_from_slice(&rest);
    }
    Ok(Request {
        method,
        target,
        body,
    })
}

/// Reads a request's head, up to and with the empty line that ends it;
/// returns it and the bytes read after it (the start of the body). Each
/// line is checked against its cap as it grows, so no more than the caps
/// is ever kept.
fn read_head(input: &mut impl Read) -> Result<(Vec<u8>, Vec<u8>), Refused> {
    let mut head: Vec<u8> = Vec::with_capacity(1024);
    let mut chunk = [0u8; 8192];
    // Where the line being read starts in `head`, and the lines done.
    let mut line_start = 0;
    let mut lines = 0usize;
    let mut request_line = 0;
    loop {
        let n = input.read(&mut chunk)?;
        if n == 0 {
            return Err(Refused::Gone);
        }
        let mut rest = &chunk[..n];
        while !rest.is_empty() {
            let (piece, ended) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&rest[..=i], true),
                None => (rest, false),
            };
            rest = &rest[piece.len()..];
            let line_len = head.len() - line_start + piece.len();
            if lines == 0 && line_len > MAX_REQUEST_LINE + 2 {
                return Err(refuse(
                    414,
                    format!(
                        "the request line is longer than this server reads: at most {MAX_REQUEST_LINE} bytes"
                    ),
                ));
            }
            if lines > 0 && line_len > MAX_HEADER_LINE + 2 {
                return Err(refuse(
                    431,
                    format!(
                        "a header line is longer than this server reads: at most {MAX_HEADER_LINE} bytes"
                    ),
                ));
            }
            if lines > 0 && head.len() + piece.len() - request_line > MAX_HEADER_BYTES + 2 {
                return Err(refuse(
                    431,
                    format!(
                        "the headers are longer than this server reads: at most {MAX_HEADER_BYTES} bytes together"
                    ),
                ));
            }
            head.extend_from_slice(piece);
            if !ended {
                continue;
            }
            let line = &head[line_start..];
            let empty = line == b"\n" || line == b"\r\n";
            if empty && lines == 0 {
                // An empty line before the request line is ignored.
                head.truncate(line_start);
                continue;
            }
            if empty {
                return Ok((head, rest.to_vec()));
            }
            if lines == 0 {
                request_line = head.len();
            }
            lines += 1;
            if lines > MAX_HEADERS + 1 {
                return Err(refuse(
                    431,
                    format!("more headers than this server reads: at most {MAX_HEADERS}"),
                ));
            }
            line_start = head.len();
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Content Too Large",
        414 => "URI Too Long",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// Writes `answer` (its headers only for a HEAD request) and closes the
/// connection: what the client still sends is read and thrown away for a
/// moment, bounded, so that the answer reaches it before the connection
/// closes.
pub fn answer(mut stream: TcpStream, answer: &Answer, head_only: bool) {
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let kind = if answer.html {
        "text/html; charset=utf-8"
    } else {
        "text/plain; charset=utf-8"
    };
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n",
        answer.status,
        reason(answer.status),
        answer.body.len()
    );
    if let Some(secs) = answer.retry_after {
        head.push_str(&format!("Retry-After: {secs}\r\n"));
    }
    head.push_str("\r\n");
    let written = stream.write_all(head.as_bytes()).and_then(|()| {
        if head_only {
            Ok(())
        } else {
            stream.write_all(answer.body.as_bytes())
        }
    });
    if written.is_ok() {
        let _ = stream.flush();
        let _ = stream.shutdown(Shutdown::Write);
        drain(&mut stream);
    }
}

/// Reads and throws away what the client still sends, for at most
/// [`DRAIN_TIME`] and [`DRAIN_BYTES`], until it closes its side.
fn drain(stream: &mut TcpStream) {
    let until = Instant::now() + DRAIN_TIME;
    let mut scratch = [0u8; 8192];
    let mut read = 0;
    while read < DRAIN_BYTES {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return;
        }
        match stream.read(&mut scratch) {
            Ok(0) | Err(_) => return,
            Ok(n) => read += n,
        }
    }
}

/// Refuses a connection over the cap from the accepting thread: the answer
/// is short and written without waiting, what has arrived is read without
/// waiting, and the connection is closed.
pub fn refuse_now(stream: TcpStream, answer: &Answer) {
    let mut stream = stream;
    let _ = stream.set_nonblocking(true);
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\nRetry-After: {}\r\n\r\n{}",
        answer.status,
        reason(answer.status),
        answer.body.len(),
        answer.retry_after.unwrap_or(1),
        answer.body
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.shutdown(Shutdown::Write);
    let mut scratch = [0u8; 8192];
    for _ in 0..8 {
        match stream.read(&mut scratch) {
            Ok(n) if n > 0 => {}
            _ => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that gives `data` in pieces of `step` bytes.
    struct Pieces<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Pieces<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn status(data: &[u8], step: usize) -> Result<(Vec<u8>, Vec<u8>), u16> {
        read_head(&mut Pieces { data, step }).map_err(|r| match r {
            Refused::Answer(a) => a.status,
            Refused::Gone => 0,
        })
    }

    #[test]
    fn a_head_within_the_caps_is_read_with_the_start_of_its_body() {
        for step in [1, 3, 8192] {
            let (head, body) =
                status(b"\r\nPOST /run HTTP/1.1\r\nHost: x\r\n\r\nseed=3", step).unwrap();
            assert_eq!(head, b"POST /run HTTP/1.1\r\nHost: x\r\n\r\n");
            if step == 8192 {
                assert_eq!(body, b"seed=3");
            }
        }
    }

    #[test]
    fn lines_over_their_caps_are_refused_as_they_grow() {
        let long_target = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(MAX_REQUEST_LINE));
        assert_eq!(status(long_target.as_bytes(), 8192).unwrap_err(), 414);
        let fits = format!(
            "GET /{} HTTP/1.1\r\n\r\n",
            "a".repeat(MAX_REQUEST_LINE - 20)
        );
        assert!(status(fits.as_bytes(), 8192).is_ok());
        let long_header = format!(
            "GET / HTTP/1.1\r\nX: {}\r\n\r\n",
            "a".repeat(MAX_HEADER_LINE)
        );
        assert_eq!(status(long_header.as_bytes(), 100).unwrap_err(), 431);
        let many = format!(
            "GET / HTTP/1.1\r\n{}\r\n",
            "X: 1\r\n".repeat(MAX_HEADERS + 1)
        );
        assert_eq!(status(many.as_bytes(), 8192).unwrap_err(), 431);
        let most = format!("GET / HTTP/1.1\r\n{}\r\n", "X: 1\r\n".repeat(MAX_HEADERS));
        assert!(status(most.as_bytes(), 8192).is_ok());
        let heavy = format!(
            "GET / HTTP/1.1\r\n{}\r\n",
            format!("X: {}\r\n", "a".repeat(MAX_HEADER_LINE - 10)).repeat(9)
        );
        assert_eq!(status(heavy.as_bytes(), 8192).unwrap_err(), 431);
        assert_eq!(
            status(b"GET / HTTP/1.1\r\nHost: x\r\n", 8192).unwrap_err(),
            0
        );
    }
}
