#!/usr/bin/env bash
# Where a perf profile's samples fall in csmacd's own source, with inlining
# resolved: perf's own report charges inlined code to the caller that the
# compiler kept, which in a release build is nearly always the run loop.
#
#   perf record -F 20000 -o /tmp/p.data target/release/examples/bench_runs \
#       --child benches/scenarios/saturated-1000.toml
#   scripts/perf-lines.sh /tmp/p.data target/release/examples/bench_runs
#
# Prints the share of samples per function (the outermost of this crate's
# frames below the run loop) and per source line (the innermost frame in
# src/). Works on recordings with or without -g (call chains are ignored).
# Needs perf, addr2line, readelf and python3; the binary needs debug info
# (the release profile keeps it).
set -euo pipefail
data=$1
bin=$2
src="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)/src/"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The executable mapping: load address and file offset of the text segment.
read -r start pgoff < <(perf script -i "$data" --show-mmap-events 2>/dev/null |
    grep -m1 "MMAP.*r-xp.*$(basename "$bin")" |
    sed -E 's/.*\[(0x[0-9a-f]+)\(0x[0-9a-f]+\) @ (0x[0-9a-f]+).*/\1 \2/')
# Virtual address minus file offset of the executable segment.
delta=$(readelf -lW "$bin" | awk '$1 == "LOAD" && /E/ { print $3, $2; exit }')
perf script -G -i "$data" -F ip 2>/dev/null | sort | uniq -c > "$tmp/ips"
python3 - "$tmp" "$start" "$pgoff" "$delta" "$bin" "$src" <<'PY'
import collections, subprocess, sys
tmp, start, pgoff, delta, binary, src = sys.argv[1:]
vaddr, offset = (int(x, 16) for x in delta.split())
base = int(start, 16) - int(pgoff, 16) - (vaddr - offset)
counts = collections.Counter()
for line in open(f"{tmp}/ips"):
    n, ip = line.split()
    counts[int(ip, 16) - base] += int(n)
addrs = [a for a in counts if 0 <= a < 1 << 40]
out = subprocess.run(["addr2line", "-i", "-f", "-C", "-a", "-e", binary],
                     input="\n".join(hex(a) for a in addrs), capture_output=True,
                     text=True).stdout.splitlines()
frames, cur = {}, None
i = 0
while i < len(out):
    if out[i].startswith("0x"):
        cur = int(out[i], 16); frames[cur] = []; i += 1
    else:
        frames[cur].append((out[i], out[i + 1] if i + 1 < len(out) else "")); i += 2
by_fn, by_line = collections.Counter(), collections.Counter()
total = sum(counts.values())
for a, fr in frames.items():
    ours = [(f, l) for f, l in fr if src in l]
    n = counts[a]
    if not ours:
        by_fn["(outside src/) " + (fr[0][0][:60] if fr else "?")] += n
        continue
    by_line[ours[0][0].split("::")[-1] + " " + ours[0][1].replace(src, "src/")] += n
    top = ours[0][0]
    for f, _ in ours:
        if f.endswith(("::run", "::run_with_index", "::dispatch")):
            break
        top = f
    by_fn[top.split("::")[-1]] += n
print(f"{total} samples")
for k, v in by_fn.most_common(25):
    print(f"{100 * v / total:6.2f}%  {k}")
print("--- lines")
for k, v in by_line.most_common(40):
    print(f"{100 * v / total:6.2f}%  {k}")
PY
