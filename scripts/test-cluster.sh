#!/usr/bin/env bash
# Tests the cluster scripts against the real things. Starts a single-node
# Slurm here (munged, slurmctld, slurmd; no systemd), runs a sharded sweep
# through scripts/slurm-sweep.sh, cancels one task mid-way, resubmits; runs
# the same sweep through scripts/parallel-sweep.sh on this machine, and to a
# host without the shared filesystem (whose ssh runs here), each time
# killing one shard mid-way and running the command again. Each time it
# checks that `csmacd status` shows the cut shard, that the second command
# ran only the missing points, and that the merged output is byte-identical
# to one plain `csmacd sweep` (charts included). The daemons it started are
# stopped on exit.
#
#   scripts/test-cluster.sh
#
# Installs Debian's slurm-wlm, munge, parallel and rsync with apt-get when
# they are missing; where they cannot be installed (not root, no apt-get, no
# network) it says so loudly and exits 0. CSMACD names the binary to test
# (default: target/release/csmacd, built here).
set -euo pipefail
cd "$(dirname "$0")/.."
PATH=$PATH:/usr/sbin:/sbin # the daemons, for a PATH without them

say() { echo "test-cluster: $*" >&2; }
fail() {
  say "FAILED: $*"
  exit 1
}
skip() {
  say "################################################################"
  say "SKIPPED: $*"
  say "the cluster scripts were NOT tested"
  say "################################################################"
  exit 0
}

# --- The packages ------------------------------------------------------------
missing=()
find_missing() { # the packages of the commands not on PATH, into missing
  missing=()
  for p in sbatch:slurm-wlm slurmctld:slurm-wlm slurmd:slurm-wlm munged:munge \
    parallel:parallel rsync:rsync; do
    command -v "${p%%:*}" >/dev/null || missing+=("${p#*:}")
  done
  # moreutils has a parallel of its own.
  [[ $(parallel --version 2>/dev/null || true) == *"GNU parallel"* ]] || missing+=(parallel)
}
find_missing
if [ ${#missing[@]} -gt 0 ]; then
  read -ra missing <<<"$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')"
  [ "$(id -u)" -eq 0 ] || skip "${missing[*]} missing, and installing them needs root"
  command -v apt-get >/dev/null || skip "${missing[*]} missing, and there is no apt-get"
  say "installing ${missing[*]}"
  apt_install() {
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q "${missing[@]}" >&2
  }
  if ! apt_install; then
    # A machine that never fetched the package lists.
    if ! apt-get -o DPkg::Lock::Timeout=600 update -q >&2 || ! apt_install; then
      skip "apt-get could not install ${missing[*]}"
    fi
  fi
  find_missing
  [ ${#missing[@]} -eq 0 ] || fail "installed, yet the commands of ${missing[*]} are not on PATH"
fi
[ "$(id -u)" -eq 0 ] || skip "slurmd runs jobs as their users and needs root"

# --- The binary --------------------------------------------------------------
if [ -z "${CSMACD:-}" ]; then
  cargo build --locked --release --quiet
  CSMACD=target/release/csmacd
fi
CSMACD=$(realpath "$CSMACD")
export CSMACD
scripts=$(pwd)/scripts

# --- A single-node Slurm -----------------------------------------------------
work=$(mktemp -d /tmp/csmacd-cluster.XXXXXX)
chmod 755 "$work" # munged wants its socket's directories open to all
daemons=()
stop_all() {
  local status=$?
  if [ -n "${SLURM_CONF:-}" ] && command -v squeue >/dev/null; then
    squeue -h -o %A 2>/dev/null | xargs -r scancel 2>/dev/null || true
  fi
  for ((i = ${#daemons[@]} - 1; i >= 0; i--)); do
    kill "${daemons[i]}" 2>/dev/null || true
    wait "${daemons[i]}" 2>/dev/null || true
  done
  if [ "$status" -eq 0 ]; then rm -rf "$work"; else say "its files are kept in $work"; fi
}
trap stop_all EXIT

head -c 1024 /dev/urandom >"$work/munge.key"
chmod 400 "$work/munge.key"
munged --foreground --force --key-file="$work/munge.key" --socket="$work/munge.socket" \
  --pid-file="$work/munged.pid" --log-file="$work/munged.log" \
  --seed-file="$work/munged.seed" 2>"$work/munged.err" &
daemons+=($!)

node=$(hostname -s)
cpus=$(nproc)
mem_mb=$(awk '/^MemTotal:/ { print int($2 / 1024 * 0.9) }' /proc/meminfo)
port=$((20000 + RANDOM % 20000))
mkdir -p "$work/state" "$work/spool"
export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=csmacdtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
for _ in $(seq 50); do [ -S "$work/munge.socket" ] && break; sleep 0.1; done
[ -S "$work/munge.socket" ] || fail "munged did not start: $(cat "$work/munged.err")"
slurmctld -D -c >"$work/slurmctld.out" 2>&1 &
daemons+=($!)
slurmd -D -N "$node" >"$work/slurmd.out" 2>&1 &
daemons+=($!)
state=
for _ in $(seq 120); do
  state=$(sinfo -h -n "$node" -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.5
done
[ "$state" = idle ] || fail "the Slurm node is '$state', not idle; see $work/slurmctld.log and slurmd.log"
say "Slurm $(sinfo --version | cut -d' ' -f2) up: node $node, $cpus CPUs, $mem_mb MB"

# --- The sweep and its plain run ---------------------------------------------
cd "$work"
cat >grid.toml <<'EOF'
name = "cluster test"
seed = 11
duration = "60s"
warmup = "10ms"
replications = 2

[[stations]]
count = 2
traffic = { kind = "poisson", load = 0.5 }
frame = "512B"

[sweep]
"stations.0.count" = [2, 4, 8, 16, 32, 64]
"stations.0.traffic.load" = [0.3, 0.6, 0.9]
EOF
points=18
shards=3
per_shard=$((points / shards))
"$CSMACD" sweep grid.toml --quiet --out plain >/dev/null 2>&1 || fail "the plain sweep failed"

stored() { # the stored points of a shard directory, one "inode name" a line
  find "$1/points" -maxdepth 1 -name '*.runs.csv' -printf '%i %f\n' 2>/dev/null | sort
}
all_stored() { # $1: the run
  for k in $(seq 1 $shards); do stored "$1/shards/$k"; done
}
wait_for_points() { # $1: where shard $2 writes; waits for its first stored point
  # $3, $4: the PID of the command that runs it, and where its output goes.
  for _ in $(seq 3000); do
    [ -n "$(find "$1" -path "*shards/$2/points/*.runs.csv" 2>/dev/null)" ] && return 0
    if [ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null; then
      fail "the sweep ended before shard $2 stored a point under $1: $(cat "$4")"
    fi
    sleep 0.02
  done
  fail "no point of shard $2 stored under $1 after a minute"
}
# $1: the run, whose shard $2 was cut after $3 points, and $4 the output of
# the command that completed it. Checks that the shard resumed with those
# points and ran only the others; with $5, that the points stored before
# (as `stored` gives them) were left untouched; and the merged output.
check_resumed() {
  local dir=$1 k=$2 cut=$3 log=$4 before=${5:-} now
  grep -q "resuming: $cut of the $per_shard points of shard $k/$shards are stored; running the other $((per_shard - cut))" "$log" ||
    fail "$dir: shard $k did not resume with its $cut stored points: $(cat "$log")"
  now=$(all_stored "$dir")
  if [ -n "$before" ]; then
    comm -23 <(echo "$before" | sort) <(echo "$now" | sort) | grep -q . &&
      fail "$dir: points that were already stored were written again"
  fi
  [ "$(echo "$now" | grep -c .)" -eq $points ] || fail "$dir: not every point is stored"
  diff -r -x shards plain "$dir" >/dev/null ||
    fail "$dir: the merged output differs from the plain sweep's (diff -r -x shards plain $dir)"
  say "$dir: shard $k resumed and ran only its $((per_shard - cut)) missing points;" \
    "merged output identical to the plain sweep"
}
# $1: the run, whose shard $2 stored $3 points: csmacd status says so.
check_status() {
  "$CSMACD" status "$1"/shards/*/ >status.out
  grep -q "$1/shards/$2/: shard $2/$shards, $3 of $per_shard points" status.out ||
    fail "csmacd status does not show the cut shard: $(cat status.out)"
}
gone() { # waits until the Slurm jobs $@ are no longer queued or running
  for _ in $(seq 600); do
    [ -z "$(squeue -h -j "$(
      IFS=,
      echo "$*"
    )" -o %i 2>/dev/null || true)" ] && return 0
    sleep 0.2
  done
  fail "Slurm jobs $* still queued after two minutes"
}

# --- Slurm: cancel a task mid-way, resubmit ----------------------------------
"$scripts/slurm-sweep.sh" grid.toml $shards slurm >slurm.out ||
  fail "slurm-sweep.sh: $(cat slurm.out)"
read -r array merge <slurm/shards/slurm-jobs
wait_for_points slurm 1
scancel "${array}_1"
gone "$array" "$merge"
[ -e slurm/summary.csv ] && fail "slurm: merged although a task was cancelled"
ls slurm/shards/merge-*.log >/dev/null 2>&1 && fail "slurm: the merge job ran although a task was cancelled"
cut=$(stored slurm/shards/1 | grep -c .)
[ "$cut" -lt $per_shard ] || fail "slurm: task 1 finished before it could be cancelled"
check_status slurm 1 "$cut"
say "slurm: task 1 cancelled after $cut of its $per_shard points; the merge job was cancelled with it"
before=$(all_stored slurm)
"$scripts/slurm-sweep.sh" grid.toml $shards slurm >>slurm.out ||
  fail "slurm-sweep.sh (resubmitted): $(cat slurm.out)"
read -r array2 merge2 <slurm/shards/slurm-jobs
gone "$array2" "$merge2"
grep -q "merged $points points" slurm/shards/merge-"$merge2".log ||
  fail "slurm: the merge job did not merge: $(cat slurm/shards/merge-"$merge2".log)"
for log in "slurm-${array}_1.log" "slurm-${array2}_1.log"; do
  [ -e "slurm/shards/$log" ] || fail "slurm: $log is missing; each submission keeps its logs"
done
check_resumed slurm 1 "$cut" "slurm/shards/slurm-${array2}_1.log" "$before"

# --- GNU parallel: kill a shard mid-way, run again ---------------------------
# $1: the run; $2: its hosts; $3: where shard 2 writes; $4: "untouched" when
# the points stored before must stay untouched (from a remote host, rsync
# brings them back as new files).
parallel_run() {
  local dir=$1 hosts=$2 where=$3 untouched=$4 runner shard_pid proc cut before
  "$scripts/parallel-sweep.sh" grid.toml $shards "$hosts" "$dir" >"$dir.out" 2>&1 &
  runner=$!
  wait_for_points "$where" 2 $runner "$dir.out"
  # The shard's process, found without starting any (it must not finish meanwhile).
  shard_pid=
  for proc in /proc/[0-9]*; do
    mapfile -d '' args 2>/dev/null <"$proc/cmdline" || continue
    [ "${args[0]:-}" = "$CSMACD" ] && [[ " ${args[*]} " == *" --shard 2/$shards "* ]] &&
      shard_pid=${proc#/proc/}
  done
  [ -n "$shard_pid" ] || fail "$dir: shard 2 finished before it could be killed"
  kill -KILL "$shard_pid"
  if wait "$runner"; then fail "$dir: parallel-sweep.sh succeeded although a shard was killed"; fi
  grep -q "some shards failed" "$dir.out" ||
    fail "$dir: parallel-sweep.sh did not say a shard failed: $(cat "$dir.out")"
  [ -e "$dir/summary.csv" ] && fail "$dir: merged although a shard was killed"
  cut=$(stored "$dir/shards/2" | grep -c .)
  [ "$cut" -lt $per_shard ] || fail "$dir: shard 2 finished before it was killed"
  check_status "$dir" 2 "$cut"
  say "$dir: shard 2 killed after $cut of its $per_shard points; nothing merged"
  before=
  if [ "$untouched" = untouched ]; then before=$(all_stored "$dir"); fi
  "$scripts/parallel-sweep.sh" grid.toml $shards "$hosts" "$dir" >"$dir.out" 2>&1 ||
    fail "$dir: parallel-sweep.sh (run again): $(cat "$dir.out")"
  check_resumed "$dir" 2 "$cut" "$dir.out" "$before"
}

# On this machine, with relative paths.
parallel_run par : par/shards/2 untouched

# On a host without the shared filesystem: its ssh runs commands here, in a
# home directory of its own, so that every file the shards leave there is seen.
mkdir -p remote-home bin
cat >bin/ssh <<EOF
#!/bin/bash
while [[ \$1 == -* ]]; do case \$1 in -[oplSe]) shift 2 ;; *) shift ;; esac; done
shift
[ "\${1:-}" = -- ] && shift
# A login there starts in its home directory, with its environment set
# (GNU parallel's remote wrapper runs the job with the login's SHELL).
export HOME=$(printf '%q' "$work/remote-home") SHELL=/bin/bash USER=\$(id -un)
export LOGNAME=\$USER
cd "\$HOME" && exec bash -c "\$*"
EOF
chmod +x bin/ssh
export PARALLEL_SSH=$work/bin/ssh
parallel_run remote farhost remote-home copied
grep -q farhost remote/shards/joblog || fail "remote: no shard ran on the remote host"
left=$(find remote-home/.parallel/tmp -mindepth 1 -maxdepth 1 -name "$(hostname)-*" 2>/dev/null || true)
[ -z "$left" ] || fail "remote: files left behind there: $left"
say "remote: the shards ran in temporary directories there, all removed"
say "passed"
