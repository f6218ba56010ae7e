#!/usr/bin/env bash
# Two builds of csmacd against each other on the whole-run benchmark's
# scenarios, run alternately on the same machine: each round runs every
# scenario with both builds, one after the other (the build that goes first
# swaps every round), so that a drift in the machine's speed falls on both.
# Prints a Markdown table: per scenario, the median wall time of each build
# with its range, the median over rounds of the ratio AFTER/BEFORE of the
# two runs of a round, the peak memory of each, and whether the two builds
# wrote byte-identical output in every round.
#
#   scripts/bench-compare.sh BEFORE AFTER [ROUNDS] [SCENARIO ...]
#
# BEFORE, AFTER: csmacd binaries (e.g. a release build of another commit,
# made with `git worktree add`), as paths or names on PATH. ROUNDS: default
# 3; it comes before any SCENARIO. SCENARIO: names of files in
# benches/scenarios/ without .toml (default: all of them). Each run is
# `csmacd run FILE -j 1`, timed as a whole process (start-up, set-up and
# output included), its peak resident memory read by GNU time. The output
# files are compared but for the line that names csmacd's version; what a
# run prints on stdout is not. Needs bash 5 or later. Progress and the
# names of files that differ go to stderr, the table to stdout.
set -euo pipefail
# Decimal points, not the locale's commas, in the times and their sums.
export LC_ALL=C

usage() { echo "usage: scripts/bench-compare.sh BEFORE AFTER [ROUNDS] [SCENARIO ...]" >&2; exit 2; }
[ $# -ge 2 ] || usage
[ -n "${EPOCHREALTIME:-}" ] || { echo "error: bash 5 or later is needed (it reads \$EPOCHREALTIME)" >&2; exit 2; }
# A binary as given (a path, from the caller's directory, or a name on PATH).
resolve() {
  local found
  if [[ $1 == */* ]]; then
    [ -f "$1" ] && [ -x "$1" ] && realpath -- "$1" && return
  elif found=$(command -v -- "$1") && [ -x "$found" ]; then
    realpath -- "$found" && return
  fi
  echo "error: '$1' is not an executable csmacd" >&2
  exit 2
}
before=$(resolve "$1")
after=$(resolve "$2")
shift 2
cd "$(dirname "$0")/.."
rounds=3
if [ $# -ge 1 ]; then
  [[ $1 =~ ^[1-9][0-9]*$ ]] || { echo "error: ROUNDS must be a whole number of at least 1, not '$1'" >&2; exit 2; }
  rounds=$1
  shift
fi
if [ $# -ge 1 ]; then
  names=("$@")
else
  names=()
  for f in benches/scenarios/*.toml; do names+=("$(basename "$f" .toml)"); done
fi
for n in "${names[@]}"; do
  [ -f "benches/scenarios/$n.toml" ] \
    || { echo "error: no scenario benches/scenarios/$n.toml (give a file name without .toml)" >&2; exit 2; }
done
gnu_time=/usr/bin/time
"$gnu_time" -f %M true >/dev/null 2>&1 \
  || { echo "error: GNU time is needed at $gnu_time (Debian: apt-get install time)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One run: appends "wall_s peak_kib" to $work/<scenario>.<side>.
run_one() { # side binary scenario
  local side=$1 bin=$2 n=$3 start end
  start=$EPOCHREALTIME
  if ! "$gnu_time" -o "$work/t" -f '%M' "$bin" run "benches/scenarios/$n.toml" \
    --out "$work/out.$side" -j 1 --force >/dev/null 2>"$work/err"; then
    echo "error: $bin failed on benches/scenarios/$n.toml:" >&2
    tail -5 "$work/err" >&2
    exit 1
  fi
  end=$EPOCHREALTIME
  echo "$start $end $(tail -1 "$work/t")" | awk '{ printf "%.4f %d\n", $2 - $1, $3 }' >>"$work/$n.$side"
}

for r in $(seq "$rounds"); do
  for n in "${names[@]}"; do
    echo "round $r of $rounds: $n" >&2
    rm -rf "$work/out.before" "$work/out.after"
    if [ $((r % 2)) -eq 1 ]; then
      run_one before "$before" "$n"
      run_one after "$after" "$n"
    else
      run_one after "$after" "$n"
      run_one before "$before" "$n"
    fi
    if diff -r -I '^# As run by csmacd' "$work/out.before" "$work/out.after" >"$work/diff"; then
      echo yes >>"$work/$n.same"
    else
      echo no >>"$work/$n.same"
      echo "round $r: $n: the two builds' outputs differ:" >&2
      # Each file that differs, by its name in the output directory.
      { grep -E '^(diff |Only in )' "$work/diff" || true; } | sed -e "s|$work/out\.[a-z]*/\{0,1\}||g" \
        -e 's|^diff .* \([^ ]*\)$|  \1|' -e 's|^Only in \(.*\): |  only in one build: \1/|' -e 's|build: /|build: |' >&2
    fi
  done
done

# Column $1 of a file divided by $4 (default 1), as "median (min to max)"
# with $2 decimals.
spread() { # column decimals file [divisor]
  sort -g -k"$1,$1" "$3" | awk -v c="$1" -v d="$2" -v q="${4:-1}" '
    { v[NR] = $c / q }
    END {
      m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
      if (NR == 1) printf "%.*f", d, m
      else printf "%.*f (%.*f to %.*f)", d, m, d, v[1], d, v[NR]
    }'
}

echo "| scenario | before, wall s | after, wall s | after/before | before, peak MiB | after, peak MiB | output identical |"
echo "|---|---:|---:|---:|---:|---:|---|"
for n in "${names[@]}"; do
  paste -d' ' "$work/$n.before" "$work/$n.after" | awk '{ print ($1 > 0 ? $3 / $1 : 0) }' >"$work/$n.ratio"
  if grep -q '^no$' "$work/$n.same"; then same=no; else same=yes; fi
  printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$n" \
    "$(spread 1 3 "$work/$n.before")" "$(spread 1 3 "$work/$n.after")" \
    "$(spread 1 3 "$work/$n.ratio")" \
    "$(spread 2 1 "$work/$n.before" 1024)" "$(spread 2 1 "$work/$n.after" 1024)" "$same"
done
echo
echo "$rounds round(s); medians with their range; after/before is the median of each round's ratio."
