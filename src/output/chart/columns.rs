//! What a column means to a reader: its title with its unit, and the values
//! its metric can take (whiskers are cut to them). Known by name for the
//! columns the worlds write; any other column keeps its name, unbounded.

/// A column's name as a reader would say it, in a table with these
/// columns: the meaning the world that wrote the table documents (a
/// service world's table counts calls: its groups are groups of clients,
/// its `load` is attempts per call), else the name itself.
pub fn describe_among(column: &str, header: &[String]) -> String {
    let service = header.iter().any(|h| h == "calls");
    match column {
        "group" if service => "client group".into(),
        "attempts" if service => "attempts sent to the server".into(),
        "load" if service => "attempts per call".into(),
        // A column named `load` that no world writes (a linked axis, say)
        // means what its sweep file says: its name.
        "load" => "load".into(),
        _ => describe(column),
    }
}

/// A column's name as a reader would say it, with its unit.
pub fn describe(column: &str) -> String {
    let last = column.rsplit('.').next().unwrap_or(column);
    match (column, last) {
        ("throughput", _) => "throughput (fraction of bit rate)".into(),
        ("throughput_mbps", _) => "throughput (Mb/s)".into(),
        ("offered_load", _) => "measured offered load (fraction of bit rate)".into(),
        ("attempt_load", _) => "attempt load G (fraction of bit rate)".into(),
        ("delay_mean_us", _) => "mean delay (µs)".into(),
        ("delay_p50_us", _) => "median delay (µs)".into(),
        ("delay_p95_us", _) => "p95 delay (µs)".into(),
        ("delay_p99_us", _) => "p99 delay (µs)".into(),
        ("fairness", _) => "Jain's fairness index (1 = equal shares)".into(),
        ("collisions_per_delivered", _) => "collisions per delivered frame".into(),
        ("drop_fraction", _) => "dropped frames (fraction)".into(),
        ("capture_mean_run", _) => "mean run of successes by one station (frames)".into(),
        ("capture_max_run", _) => "longest run of successes by one station (frames)".into(),
        ("share", _) => "share of delivered bits (fraction)".into(),
        ("throughput_share", _) => "share of delivered bits (fraction)".into(),
        ("collisions", _) => "collisions".into(),
        ("burst_frames", _) => "frames in the burst".into(),
        ("delivered_fraction", _) => "burst frames delivered (fraction)".into(),
        ("drain_us", _) => "time to drain the burst (µs)".into(),
        ("completion_p50_us", _) => "median completion time (µs)".into(),
        ("completion_p90_us", _) => "p90 completion time (µs)".into(),
        ("completion_p99_us", _) => "p99 completion time (µs)".into(),
        ("calls", _) => "calls".into(),
        ("successes", _) => "successful calls".into(),
        ("success_rate", _) => "calls that succeeded (fraction)".into(),
        ("completion_s", _) => "last success (s)".into(),
        ("crashes", _) => "server crashes".into(),
        ("all_connected_s", _) => "all clients connected (s)".into(),
        ("recovered", _) => "recovered after the surge (1) or not (0)".into(),
        ("recovery_s", _) => "time to recover after the surge (s)".into(),
        ("drain_s", _) => "time to drain the queue after the surge (s)".into(),
        ("goodput", _) => "goodput (successful calls/s)".into(),
        ("latency_mean_s", _) => "mean latency of successful calls (s)".into(),
        ("latency_p50_s", _) => "median latency of successful calls (s)".into(),
        ("latency_p90_s", _) => "p90 latency of successful calls (s)".into(),
        ("latency_p99_s", _) => "p99 latency of successful calls (s)".into(),
        ("latency_p999_s", _) => "p99.9 latency of successful calls (s)".into(),
        ("failed_latency_mean_s", _) => "mean latency of failed calls (s)".into(),
        ("timeouts", _) => "timed-out attempts".into(),
        ("wasted_work_s", _) => "server time on attempts whose client had gone (s)".into(),
        ("in_flight", _) => "calls in flight at the end".into(),
        ("hedges", _) => "hedged attempts (sent while another was outstanding)".into(),
        ("hedge_wins", _) => "calls won by a hedged attempt".into(),
        ("calls_started", _) => "calls started".into(),
        ("calls_failed", _) => "calls failed".into(),
        ("failed_fast", _) => "calls failed by a gate before any attempt".into(),
        ("collision_involvements", _) => "collided transmissions".into(),
        ("attempts", _) => "transmission attempts".into(),
        ("stations", _) => "stations".into(),
        ("group", _) => "station group".into(),
        (c, "kind") if c.ends_with(".stack.kind") => "retry stack".into(),
        (c, "stack") if c.starts_with("clients.") => "retry stack".into(),
        (c, "count") if c.starts_with("clients.") => "clients".into(),
        ("policy", _) | (_, "kind") | (_, "backoff") => "backoff policy".into(),
        (_, "access") => "access mode".into(),
        (c, "budget") if c.starts_with("clients.") => "retry budget".into(),
        (c, "breaker") if c.starts_with("clients.") => "circuit breaker".into(),
        (c, "load") if c.contains('.') => "offered load (fraction of bit rate)".into(),
        (_, "count") => "stations".into(),
        (_, "frame") | (_, "size") => "frame size".into(),
        (_, "length") => "bus length".into(),
        ("server.failure", _) => "server failure probability p".into(),
        (_, "backoff_limit") => "backoff limit (max exponent k)".into(),
        (_, "attempt_limit") => "attempt limit".into(),
        ("delivered", _) => "delivered frames".into(),
        ("arrived", _) => "arrived frames".into(),
        ("late_collisions", _) => "late collisions".into(),
        ("undetected_collisions", _) => "undetected collisions (frames lost)".into(),
        ("dropped_excessive", _) => "frames dropped at the attempt limit".into(),
        ("dropped_queue", _) => "frames dropped at a full queue".into(),
        ("position_m", _) => "position on the bus (m)".into(),
        ("t_s", _) => "time (s)".into(),
        ("queue", _) => "attempts in the server".into(),
        ("connected", _) => "connected clients".into(),
        ("failures", _) => "failed attempts".into(),
        ("server_up", _) => "server up (1) or down (0)".into(),
        // A column this does not know keeps its name, and no unit is guessed.
        (c, _) => c.to_string(),
    }
}

/// A column's name as a reader would say it in the named table: a
/// timeseries counts per bin what summary.csv counts per run.
pub fn describe_in(table: Option<&str>, column: &str) -> String {
    match (table, column) {
        (Some("timeseries"), "attempts") => "attempts sent per bin".into(),
        (Some("timeseries"), "successes") => "successful calls per bin".into(),
        (Some("timeseries"), "failures") => "failed attempts per bin".into(),
        _ => describe(column),
    }
}

/// The values a column's metric can take: whiskers are cut to them.
/// Fractions lie in [0, 1], counts, loads and delays are never negative;
/// a column this does not know is unbounded.
pub fn domain(column: &str) -> (f64, f64) {
    const FRACTIONS: &[&str] = &[
        "throughput",
        "fairness",
        "drop_fraction",
        "share",
        "throughput_share",
        "delivered_fraction",
        "success_rate",
        "server_up",
        "recovered",
    ];
    const NON_NEGATIVE: &[&str] = &[
        "throughput_mbps",
        "offered_load",
        "attempt_load",
        "delivered",
        "arrived",
        "attempts",
        "collisions",
        "collision_involvements",
        "late_collisions",
        "undetected_collisions",
        "dropped_excessive",
        "dropped_queue",
        "capture_mean_run",
        "capture_max_run",
        "collisions_per_delivered",
        "stations",
        "position_m",
        "burst_frames",
        "calls",
        "successes",
        "load",
        "completion_s",
        "crashes",
        "all_connected_s",
        "recovery_s",
        "queue",
        "connected",
        "failures",
    ];
    if FRACTIONS.contains(&column) {
        (0.0, 1.0)
    } else if NON_NEGATIVE.contains(&column)
        || column.starts_with("delay_")
        || column.starts_with("completion_")
        || column.starts_with("drain_")
    {
        (0.0, f64::INFINITY)
    } else {
        (f64::NEG_INFINITY, f64::INFINITY)
    }
}

/// The 95 % interval `y` ± `half`, cut to `domain`; None without a
/// (positive, finite) half-width.
pub fn clip_interval(y: f64, half: Option<f64>, domain: (f64, f64)) -> Option<(f64, f64)> {
    let h = half.filter(|h| h.is_finite() && *h > 0.0)?;
    Some(((y - h).max(domain.0), (y + h).min(domain.1)))
}
