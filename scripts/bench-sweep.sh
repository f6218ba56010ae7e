#!/usr/bin/env bash
# Parallel speed-up of a 40-point sweep: wall time with --jobs 1 and with
# --jobs N (default 2), best of R runs each (default 3), and a check that
# both give the same bytes.
#
#   cargo build --release && scripts/bench-sweep.sh [N] [R]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${1:-2}
reps=${2:-3}
bin=${CSMACD:-target/release/csmacd}
file=benches/sweep-40.toml
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

best() { # best wall time in seconds of $reps runs of: csmacd sweep --jobs $1
  local b=
  for _ in $(seq "$reps"); do
    local s e
    s=$(date +%s.%N)
    "$bin" sweep "$file" --jobs "$1" --quiet --out "$out/j$1" >/dev/null 2>&1
    e=$(date +%s.%N)
    b=$(echo "$s $e ${b:-inf}" | awk '{t = $2 - $1; if ($3 == "inf" || t < $3) print t; else print $3}')
  done
  echo "$b"
}

t1=$(best 1)
tn=$(best "$jobs")
cmp -s "$out/j1/summary.csv" "$out/j$jobs/summary.csv" && cmp -s "$out/j1/runs.csv" "$out/j$jobs/runs.csv" \
  && same=identical || same=DIFFERENT
echo "40-point sweep ($file), best of $reps:"
printf '  --jobs 1: %.2f s\n  --jobs %s: %.2f s\n  speed-up: %.2fx\n' "$t1" "$jobs" "$tn" "$(echo "$t1 $tn" | awk '{print $1/$2}')"
echo "  summary.csv and runs.csv: $same"
