#!/usr/bin/env bash
# Times csmacd against ns-2's Mac/802_3 on the same saturated bus, runs of
# the two interleaved: N stations on a 10 Mb/s LAN with 12.5 µs between any
# two (csmacd: a 2500 m bus at 2e8 m/s), each always holding a frame of
# 64 bytes (ns-2: a CBR source of 2 Mb/s per station, five times what the
# bus carries), 802.3 BEB, SECONDS simulated. Prints each run, then the best
# of each and the ratio of their wall times, and the frames each delivered
# (ns-2 adds its UDP, IP and MAC headers to the 64 bytes, so it carries a
# few percent fewer frames: the work per simulated second is alike, not
# equal).
#
#   scripts/bench-ns2.sh [N_STATIONS [SECONDS [RUNS]]]    # default 50 10 3
#
# ns-2 is Debian's ns2 package: installed with apt-get when missing and
# this is root, else the script says how and exits 2. CSMACD names the
# binary (default target/release/csmacd, built here).
set -euo pipefail
cd "$(dirname "$0")/.."
me=bench-ns2.sh
n=${1:-50}
secs=${2:-10}
runs=${3:-3}
for v in "$n" "$secs" "$runs"; do
  [[ $v =~ ^[1-9][0-9]*$ ]] || {
    echo "$me: '$v' is not a whole number of 1 or more" >&2
    echo "usage: $me [N_STATIONS [SECONDS [RUNS]]]" >&2
    exit 2
  }
done
if ! command -v ns >/dev/null; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "$me: installing ns2 (ns-2) with apt-get" >&2
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q ns2 >&2
  else
    echo "$me: ns-2 not found; install Debian's ns2 package (apt-get install ns2)" >&2
    exit 2
  fi
fi
if [ -z "${CSMACD:-}" ]; then
  cargo build --locked --release --quiet
  CSMACD=target/release/csmacd
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/saturated.tcl" <<'EOF'
# N saturated stations on one Mac/802_3 LAN; prints the frames delivered.
set ns [new Simulator]
set n [lindex $argv 0]
set until [lindex $argv 1]
set nodes ""
for {set i 0} {$i < $n} {incr i} { set node($i) [$ns node]; lappend nodes $node($i) }
$ns make-lan $nodes 10Mb 12.5us LL Queue/DropTail Mac/802_3 Channel
for {set i 0} {$i < $n} {incr i} {
  set udp($i) [new Agent/UDP]
  $ns attach-agent $node($i) $udp($i)
  set sink($i) [new Agent/LossMonitor]
  $ns attach-agent $node([expr ($i + 1) % $n]) $sink($i)
  $ns connect $udp($i) $sink($i)
  set cbr($i) [new Application/Traffic/CBR]
  $cbr($i) attach-agent $udp($i)
  $cbr($i) set packetSize_ 64
  $cbr($i) set rate_ 2Mb
  $ns at 0.0 "$cbr($i) start"
}
proc finish {} {
  global sink n
  set t 0
  for {set i 0} {$i < $n} {incr i} { incr t [$sink($i) set npkts_] }
  puts stderr "delivered $t"
  exit 0
}
$ns at $until "finish"
$ns run
EOF
cat >"$work/saturated.toml" <<EOF
name = "$n saturated, 64 B, against ns-2"
seed = 1
duration = "${secs}s"

[[stations]]
count = $n
traffic = { kind = "saturated" }
frame = "64B"
backoff = { kind = "beb" }
EOF

# Wall seconds of a command, its stdout and stderr kept in $work/last.
wall() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >"$work/last" 2>&1 || {
    cat "$work/last" >&2
    exit 1
  }
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
best_ns=
best_cs=
for r in $(seq 1 "$runs"); do
  t=$(wall ns "$work/saturated.tcl" "$n" "$secs")
  ns_frames=$(sed -n 's/^delivered //p' "$work/last")
  if [ -z "$best_ns" ] || awk -v a="$t" -v b="$best_ns" 'BEGIN { exit !(a < b) }'; then best_ns=$t; fi
  printf 'run %d  ns-2    %8.3f s  %s frames\n' "$r" "$t" "$ns_frames"
  t=$(wall "$CSMACD" run "$work/saturated.toml" --out "$work/out" --force -j 1)
  cs_frames=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "delivered") c = i }
    NR == 2 { printf "%d", $c }' "$work/out/summary.csv")
  if [ -z "$best_cs" ] || awk -v a="$t" -v b="$best_cs" 'BEGIN { exit !(a < b) }'; then best_cs=$t; fi
  printf 'run %d  csmacd  %8.3f s  %s frames\n' "$r" "$t" "$cs_frames"
done
printf '\n%d saturated stations, 64-byte frames, %d s simulated, best of %d:\n' "$n" "$secs" "$runs"
printf '  ns-2 Mac/802_3  %8.3f s  %s frames delivered\n' "$best_ns" "$ns_frames"
printf '  csmacd          %8.3f s  %s frames delivered\n' "$best_cs" "$cs_frames"
awk -v a="$best_ns" -v b="$best_cs" 'BEGIN { printf "  csmacd is %.0fx faster\n", a / b }'
