#!/usr/bin/env python3
"""The library stacks against the real libraries: botocore and grpcio
calling local servers on 127.0.0.1, and csmacd running the same setups.

Run by scripts/real-clients.sh, which makes the virtual environments:

    real_clients.py case NAME          (in a venv: one real client run, JSON out)
    real_clients.py check CSMACD PY..  (the driver: every case, csmacd, the tests)

A case is M calls made one after another from one client object, against
a server that fails every attempt (or each with probability 0.5, from a
seed) with an HTTP status, or a gRPC server aborting with UNAVAILABLE.
The check fails unless always-failing attempt counts are equal, the
p = 0.5 attempts per call and success rates agree within 3 standard
errors, and the first-retry waits pass a two-sample Kolmogorov-Smirnov
test at 1 %.
"""

import json
import math
import os
import random
import subprocess
import sys
import tempfile
import threading
import time

# name: (library, version venv key, stack keys, status, failure, calls)
CASES = {
    "aws-500": ("botocore", "1.44", "", 500, 1.0, 200),
    "aws-503": ("botocore", "1.44", "", 503, 1.0, 200),
    "aws-429": ("botocore", "1.44", "", 429, 1.0, 200),
    "aws-503-half": ("botocore", "1.44", "", 503, 0.5, 1000),
    "aws-429-half": ("botocore", "1.44", "", 429, 0.5, 300),
    "aws-dynamodb-503": ("botocore", "1.44", "dynamodb = true", 503, 1.0, 200),
    "aws-1.43-503": ("botocore", "1.43", 'version = "1.43"', 503, 1.0, 150),
    "aws-1.43-429": ("botocore", "1.43", 'version = "1.43"', 429, 1.0, 200),
    "grpc": ("grpcio", "1.44", "", 503, 1.0, 200),
    "grpc-half": ("grpcio", "1.44", "", 503, 0.5, 2000),
    "grpc-tokens-half": ("grpcio", "1.44", "max_attempts = 2, max_tokens = 1000", 503, 0.5, 600),
}
SEED = 20260101
# Roughly how long a case takes (s), to start the slow ones first.
SLOW = {"aws-429-half": 90, "aws-429": 75, "aws-1.43-503": 75, "grpc-tokens-half": 40, "aws-503-half": 15}


class Server:
    """Counts attempts per call and when each arrives and is answered."""

    def __init__(self, failure, seed):
        self.rng = random.Random(seed)
        self.failure = failure
        self.lock = threading.Lock()
        self.calls = []  # per call: [(arrived, answered, failed)]

    def attempt(self, first):
        with self.lock:
            arrived = time.monotonic()
            if first or not self.calls:
                self.calls.append([])
            failed = self.rng.random() < self.failure
            self.calls[-1].append([arrived, time.monotonic(), failed])
            return failed

    def answered(self):
        with self.lock:
            self.calls[-1][-1][1] = time.monotonic()


def run_botocore(status, failure, calls, dynamodb):
    import http.server

    import botocore.session
    from botocore.config import Config

    server = Server(failure, SEED)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body leave in separate writes: without this, Nagle's
        # algorithm and the client's delayed ACK hold the body for 40 ms.
        disable_nagle_algorithm = True

        def log_message(self, *args):
            pass

        def do_POST(self):
            length = int(self.headers.get("Content-Length", 0))
            self.rfile.read(length)
            # botocore's amz-sdk-request: attempt=N; max=M
            attempt = self.headers.get("amz-sdk-request", "attempt=1").split(";")[0]
            failed = server.attempt(attempt.strip() == "attempt=1")
            body = b"{}" if not failed else b""
            server.answered()
            self.send_response(status if failed else 200)
            self.send_header("Content-Type", "application/x-amz-json-1.0")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    os.environ.pop("AWS_NEW_RETRIES_2026", None)
    session = botocore.session.get_session()
    client = session.create_client(
        "dynamodb" if dynamodb else "kinesis",
        region_name="us-east-1",
        endpoint_url="http://127.0.0.1:%d" % httpd.server_address[1],
        aws_access_key_id="x",
        aws_secret_access_key="y",
        config=Config(retries={"mode": "standard"}),
    )
    call = client.list_tables if dynamodb else client.list_streams
    # The waits botocore draws: its endpoint sleeps them between attempts.
    import botocore.endpoint

    slept = []

    class Clock:
        def __getattr__(self, name):
            return getattr(time, name)

        def sleep(self, seconds):
            slept[-1].append(seconds)
            time.sleep(seconds)

    botocore.endpoint.time = Clock()
    ok = 0
    for _ in range(calls):
        slept.append([])
        try:
            call()
            ok += 1
        except Exception:
            pass
    httpd.shutdown()
    return server, ok, [c[0] for c in slept if c], []


def run_grpcio(failure, calls, keys):
    from concurrent import futures

    import grpc

    server = Server(failure, SEED)
    # The retry path's own time, as the server sees it: a second service
    # that always fails, called between the calls with a 2 ms backoff (1 ms
    # hangs grpcio here), less the 2 ms.
    probe = Server(1.0, SEED)

    def handler_of(srv):
        def handle(request, context):
            previous = dict(context.invocation_metadata()).get("grpc-previous-rpc-attempts", "0")
            failed = srv.attempt(previous == "0")
            srv.answered()
            if failed:
                context.abort(grpc.StatusCode.UNAVAILABLE, "unavailable")
            return b"ok"

        return grpc.unary_unary_rpc_method_handler(handle)

    handler = grpc.method_handlers_generic_handler(
        "csmacd.Check", {"Call": handler_of(server), "Probe": handler_of(probe)}
    )
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    srv.add_generic_rpc_handlers((handler,))
    port = srv.add_insecure_port("127.0.0.1:0")
    srv.start()
    # A6's example policy and throttling, as csmacd's grpc stack defaults;
    # `keys` may set max_attempts and max_tokens as csmacd's stack does.
    given = dict(kv.split(" = ") for kv in keys.split(", ")) if keys else {}
    config = {
        "methodConfig": [
            {
                "name": [{"service": "csmacd.Check"}],
                "retryPolicy": {
                    "maxAttempts": int(given.get("max_attempts", 5)),
                    "initialBackoff": "0.1s",
                    "maxBackoff": "1s",
                    "backoffMultiplier": 2,
                    "retryableStatusCodes": ["UNAVAILABLE"],
                },
            }
        ],
        "retryThrottling": {"maxTokens": int(given.get("max_tokens", 10)), "tokenRatio": 0.1},
    }
    def channel_of(config):
        return grpc.insecure_channel(
            "127.0.0.1:%d" % port,
            options=[("grpc.service_config", json.dumps(config)), ("grpc.enable_retries", 1)],
        )

    channel = channel_of(config)
    probe_config = json.loads(json.dumps(config))
    policy = probe_config["methodConfig"][0]["retryPolicy"]
    policy.update(maxAttempts=2, initialBackoff="0.002s", maxBackoff="0.002s")
    probe_config["retryThrottling"]["maxTokens"] = 1000
    probe_channel = channel_of(probe_config)
    stub = channel.unary_unary("/csmacd.Check/Call")
    probe_stub = probe_channel.unary_unary("/csmacd.Check/Probe")
    ok = 0
    for k in range(calls):
        try:
            stub(b"x", timeout=60)
            ok += 1
        except grpc.RpcError:
            pass
        if k < 300:
            try:
                probe_stub(b"x", timeout=60)
            except grpc.RpcError:
                pass
    channel.close()
    probe_channel.close()
    srv.stop(0)
    waits = [c[1][0] - c[0][1] for c in server.calls if len(c) > 1]
    overhead = [c[1][0] - c[0][1] - 0.002 for c in probe.calls if len(c) > 1]
    return server, ok, waits, overhead


def case(name):
    lib, _, keys, status, failure, calls = CASES[name]
    # The first retry's waits: botocore's as it draws them (its endpoint's
    # sleeps); grpcio's from the first attempt's answer to the second
    # attempt's arrival as the server sees them, with `overhead` that span
    # for a retry after 2 ms, less the 2 ms.
    if lib == "botocore":
        server, ok, waits, overhead = run_botocore(status, failure, calls, "dynamodb" in keys)
    else:
        server, ok, waits, overhead = run_grpcio(failure, calls, keys)
    attempts = [len(c) for c in server.calls]
    version = __import__("grpc" if lib == "grpcio" else lib).__version__
    json.dump(
        {
            "calls": len(attempts),
            "attempts": attempts,
            "ok": ok,
            "waits": waits,
            "overhead": overhead,
            "version": version,
        },
        sys.stdout,
    )


# -- the driver ---------------------------------------------------------------


def csmacd_toml(name, calls, replications, first_waits=False):
    lib, _, keys, status, failure, _ = CASES[name]
    if lib == "grpcio":
        stack = "kind = \"grpc\"" + (", " + keys if keys else "")
        if first_waits:
            stack = "kind = \"grpc\", max_attempts = 2, max_tokens = 1000"
    else:
        stack = "kind = \"aws-standard\"" + (", " + keys if keys else "")
        if first_waits:
            stack += ", max_attempts = 2, quota = 1000000"
    if first_waits:
        # Every call at once, no network delay: the second attempts' times
        # are the first waits, binned by 100 us in timeseries.csv.
        clients = "count = %d\ncalls = { kind = \"once\" }" % calls
        extra = 'bin = "100us"\nduration = "3s"\n'
    else:
        clients = "count = 1\ncalls = { kind = \"sequential\", count = %d }" % calls
        extra = 'duration = "1000000s"\nbin = "10000s"\nreplications = %d\n' % replications
    return (
        'name = "%s"\nseed = 7\n%s[server]\nkind = "flaky"\nfailure = %s\nfailure_status = %d\n'
        "[[clients]]\n%s\nstack = { %s }\n"
    ) % (name.replace(".", "-"), extra, failure, status, clients, stack)


def run_csmacd(csmacd, toml, out):
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "s.toml")
    with open(path, "w") as f:
        f.write(toml)
    done = subprocess.run(
        [csmacd, "run", path, "--out", os.path.join(out, "r")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    if done.returncode != 0:
        sys.exit("error: csmacd failed on %s:\n%s" % (path, done.stderr))

    def rows(name):
        with open(os.path.join(out, "r", name)) as f:
            head, *body = [line.rstrip("\n").split(",") for line in f]
        return [dict(zip(head, r)) for r in body]

    return rows


def ks_p(a, b):
    """Two-sample Kolmogorov-Smirnov: D and its asymptotic p-value."""
    a, b = sorted(a), sorted(b)
    i = j = 0
    d = 0.0
    while i < len(a) and j < len(b):
        x = min(a[i], b[j])
        while i < len(a) and a[i] <= x:
            i += 1
        while j < len(b) and b[j] <= x:
            j += 1
        d = max(d, abs(i / len(a) - j / len(b)))
    ne = len(a) * len(b) / (len(a) + len(b))
    lam = (math.sqrt(ne) + 0.12 + 0.11 / math.sqrt(ne)) * d
    p = 2 * sum((-1) ** (k - 1) * math.exp(-2 * k * k * lam * lam) for k in range(1, 101))
    return d, min(1.0, max(0.0, p))


def check(csmacd, pythons):
    reuse = os.environ.get("REAL_CLIENTS_REUSE")
    real = json.load(open(reuse)) if reuse else {}
    # At most 4 clients at once (each with its server), the slowest first:
    # fewer at once keep the machine's own delays out of the waits.
    order = [] if reuse else sorted(CASES, key=lambda n: -SLOW.get(n, 0))
    running = {}
    while order or running:
        while order and len(running) < 4:
            name = order.pop(0)
            py = pythons.get(CASES[name][1])
            sink = tempfile.TemporaryFile(mode="w+")
            running[name] = (subprocess.Popen([py, __file__, "case", name], stdout=sink), sink)
        done = [n for n, (q, _) in running.items() if q.poll() is not None]
        if not done:
            time.sleep(0.2)
            continue
        name = done[0]
        p, sink = running.pop(name)
        sink.seek(0)
        out = sink.read()
        if p.returncode != 0:
            sys.exit("error: the real client of case %s failed" % name)
        real[name] = json.loads(out)
    keep = os.environ.get("REAL_CLIENTS_KEEP")
    if keep:
        with open(keep, "w") as f:
            json.dump(real, f)
    failures = []
    table = []
    tmp = tempfile.mkdtemp(prefix="csmacd-real-clients-")
    for name, (lib, venv, keys, status, failure, calls) in CASES.items():
        r = real[name]
        n_real = sum(r["attempts"])
        replications = 1 if failure == 1.0 else 40
        rows = run_csmacd(csmacd, csmacd_toml(name, calls, replications), os.path.join(tmp, name))
        runs = rows("runs.csv")
        per_call = [float(x["attempts"]) / float(x["calls"]) for x in runs]
        success = [float(x["success_rate"]) for x in runs]
        mean = sum(per_call) / len(per_call)
        s_mean = sum(success) / len(success)
        label = "%s %s, %s%s" % (lib, r["version"], "gRPC UNAVAILABLE" if lib == "grpcio" else status, ", " + keys if keys else "")
        if failure == 1.0:
            sim = int(float(runs[0]["attempts"]))
            same = sim == n_real
            if not same:
                failures.append("%s: %d real attempts, %d simulated" % (name, n_real, sim))
            verdict = "equal" if same else "DIFFERENT"
            table.append((label, "1", calls, "%d" % n_real, "%d" % sim, "-", "-", verdict))
        else:
            # The real run is one replication: its spread is the
            # replications' (and the simulated mean's own error).
            def sd(xs, m):
                return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))

            real_pc = n_real / r["calls"]
            real_s = r["ok"] / r["calls"]
            se = sd(per_call, mean) * math.sqrt(1 + 1 / len(per_call))
            se_s = sd(success, s_mean) * math.sqrt(1 + 1 / len(success))
            ok_a = abs(real_pc - mean) <= 3 * se
            ok_s = abs(real_s - s_mean) <= 3 * se_s + 1e-12
            if not ok_a:
                failures.append("%s: %.4f attempts per call real, %.4f +- %.4f simulated" % (name, real_pc, mean, se))
            if not ok_s:
                failures.append("%s: success rate %.4f real, %.4f +- %.4f simulated" % (name, real_s, s_mean, se_s))
            table.append(
                (
                    label,
                    "0.5",
                    calls,
                    "%.4f" % real_pc,
                    "%.4f +- %.4f" % (mean, se),
                    "%.4f" % real_s,
                    "%.4f +- %.4f" % (s_mean, se_s),
                    "within 3 SE" if ok_a and ok_s else "OUTSIDE",
                )
            )
    # First-retry waits: the real ones of each kind against csmacd's.
    ks = []
    for name in ["aws-503-half", "aws-429-half", "aws-dynamodb-503", "aws-1.43-503", "grpc-tokens-half"]:
        waits = real[name]["waits"]
        rows = run_csmacd(csmacd, csmacd_toml(name, 4000, 1, first_waits=True), os.path.join(tmp, name + "-waits"))
        sim = []
        for i, row in enumerate(rows("timeseries.csv")):
            # A bin ending at t_s: its second attempts at the bin's middle
            # (the first bin also holds the 4000 first attempts).
            k = int(row["attempts"]) - (4000 if i == 0 else 0)
            sim += [float(row["t_s"]) - 0.00005] * k
        # grpcio's waits as the server sees them hold the retry path's own
        # time: add a draw of it, measured with a 2 ms backoff, to each
        # simulated wait.
        overhead = real[name]["overhead"]
        if overhead:
            draw = random.Random(SEED)
            sim = [w + draw.choice(overhead) for w in sim]
        d, p = ks_p(waits, sim)
        lo, hi = min(waits), max(waits)
        ks.append((name, len(waits), "%.1f-%.1f ms" % (lo * 1e3, hi * 1e3), "%.3f" % d, "%.3f" % p))
        if p < 0.01:
            failures.append("%s: first-retry waits differ (KS D = %.3f, p = %.4f)" % (name, d, p))
    print("| client, failure | p | calls | attempts (real) | attempts (csmacd) | success (real) | success (csmacd) | |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for row in table:
        print("| %s | %s | %s | %s | %s | %s | %s | %s |" % row)
    print()
    print("| first-retry waits | n (real) | range (real) | KS D | p |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for row in ks:
        print("| %s | %s | %s | %s | %s |" % row)
    if failures:
        for f in failures:
            print("FAIL: " + f, file=sys.stderr)
        sys.exit(1)
    print("\nreal-clients: every check passed", file=sys.stderr)


if __name__ == "__main__":
    if sys.argv[1] == "case":
        case(sys.argv[2])
    else:
        pythons = dict(a.split("=", 1) for a in sys.argv[3:])
        check(sys.argv[2], pythons)
