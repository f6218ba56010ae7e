#!/usr/bin/env bash
# Runs one sweep's shards over hosts with GNU parallel: shard K of N runs on
# some host into OUT_DIR/shards/K, and once all succeeded they are merged
# here into the files one plain run gives, in OUT_DIR.
#
#   scripts/parallel-sweep.sh SWEEP_FILE N_SHARDS HOSTS [OUT_DIR]
#
# HOSTS is GNU parallel's --sshlogin list: "host1,host2", ":" for this
# machine; one shard at a time runs on each, with all its cores, and
# "4/host1" runs up to 4 at once on host1. Each remote host
# needs passwordless ssh, rsync, and the csmacd binary at the same absolute
# path as here (CSMACD, default target/release/csmacd).
#
# Without a shared filesystem (the default), each remote shard runs in a
# temporary directory of its own there: the sweep file and the shard's
# stored points go there with rsync, the shard comes back the same way, and
# the temporary directory is removed. Shards on ":" run in OUT_DIR directly.
# With SHARED_FS=yes, OUT_DIR and the sweep file are on a filesystem every
# host sees under the same path, and every shard writes there directly;
# nothing is copied or removed. A HOSTS of ":" alone needs no setting.
#
# A shard that fails (host down, connection cut, process killed) keeps its
# stored points, and the failure is recorded in OUT_DIR/shards/joblog: rerun
# the same command and every shard resumes (--resume), running only its
# missing points (a finished shard ends at once); the merge then completes.
# Progress: csmacd status OUT_DIR/shards/*/
set -euo pipefail

me=parallel-sweep.sh
usage="usage: $me SWEEP_FILE N_SHARDS HOSTS [OUT_DIR]"
die() {
  echo "$me: $*" >&2
  exit 2
}
if [ $# -lt 3 ] || [ $# -gt 4 ]; then die "$usage"; fi
file=$1
n=$2
hosts=$3
out=${4:-results/$(basename "${file%.toml}")}
bin=${CSMACD:-target/release/csmacd}
[[ $n =~ ^[1-9][0-9]*$ ]] || die "N_SHARDS is '$n'; give a whole number of 1 or more"
[ -x "$bin" ] || die "no csmacd binary at $bin; build it (cargo build --release) or set CSMACD"
[ -f "$file" ] || die "no sweep file at $file"
[[ $(parallel --version 2>/dev/null || true) == *"GNU parallel"* ]] ||
  die "GNU parallel not found; install it (e.g. apt-get install parallel)"
bin=$(realpath "$bin")
file=$(realpath "$file")
"$bin" validate "$file" >/dev/null
mkdir -p "$out/shards"
out=$(realpath "$out")
shards=$out/shards
# GNU parallel keeps its files under ~/.parallel; where HOME is unset (a
# bare cron or CI environment), the account's home directory.
if [ -z "${HOME:-}" ]; then
  HOME=$(getent passwd "$(id -u)" | cut -d: -f6)
  [ -n "$HOME" ] || die "HOME is not set and the account has no home directory; set HOME"
  export HOME
fi

shared=${SHARED_FS:-no}
# Only this machine: nothing to copy.
if [[ ,$hosts, =~ ^(,([0-9]+/)?:)+,$ ]]; then shared=yes; fi
case $shared in yes | no) ;; *) die "SHARED_FS is '$shared'; give yes or no" ;; esac

q() { printf '%q' "$1"; }
# One shard, K = {}: resume when its directory already holds stored points.
run_shard() { # $1: the sweep file, $2: the shard directory, as the job sees them
  echo "mkdir -p $2 && r= && if [ -f $2/points/scenario.toml ]; then r=--resume; fi &&" \
    "$(q "$bin") sweep $1 --shard {}/$n --quiet --out $2 \$r"
}
# One shard at a time on a host, unless its entry says N/.
IFS=, read -ra entries <<<"$hosts"
logins=()
for h in "${entries[@]}"; do
  if [[ $h =~ ^[0-9]+/ ]]; then logins+=("$h"); else logins+=("1/$h"); fi
done
opts=(--will-cite --sshlogin "$(IFS=,; echo "${logins[*]}")" --tag --joblog "$shards/joblog")
if [ "$shared" = yes ]; then
  cmd=$(run_shard "$(q "$file")" "$(q "$shards")/{}")
else
  # Paths relative to OUT_DIR, where jobs on ":" run; a remote job runs in
  # its own directory under ~/.parallel/tmp, which --cleanup removes.
  name=$(basename "$file")
  cp "$file" "$shards/$name"
  for k in $(seq 1 "$n"); do mkdir -p "$shards/$k"; done
  cd "$out"
  opts+=(--workdir ... --transferfile "shards/$name" --transferfile "shards/{}"
    --return "shards/{}" --cleanup)
  cmd="if [ \"\$PARALLEL_SSHLOGIN\" = : ]; then cd $(q "$out"); fi && $(run_shard "shards/$(q "$name")" "shards/{}")"
fi

if ! seq 1 "$n" | parallel "${opts[@]}" "$cmd"; then
  echo "$me: some shards failed (see $shards/joblog); their finished points are kept:" \
    "run the same command again to run only what is missing" >&2
  exit 1
fi
dirs=()
for k in $(seq 1 "$n"); do
  # A job can end well and still bring nothing back (a remote home
  # directory that is not where the transfer looked): say so, not merge.
  [ -f "$shards/$k/points/scenario.toml" ] ||
    die "shard $k/$n ended without error but $shards/$k holds no stored points;" \
      "check that its host runs the job in the directory the files were sent to"
  dirs+=("$shards/$k")
done
# The merge replaces OUT_DIR whole, by a rename: not from inside it.
cd "$(dirname "$out")"
"$bin" merge "${dirs[@]}" --out "$out"
