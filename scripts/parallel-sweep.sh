#!/usr/bin/env bash
# Runs one sweep across several hosts with GNU parallel over ssh: shard K/N
# runs on some host into its own directory there, comes back with rsync, and
# the shards are merged here into the files one run gives.
#
#   scripts/parallel-sweep.sh scenarios/throughput-vs-load.toml 8 host1,host2,host3 [results/study]
#
# Each host needs the csmacd binary at the same path (CSMACD, default
# target/release/csmacd relative to this checkout) and passwordless ssh.
# Use ":" as a host name to include this machine, "4/host1" to run up to 4
# shards at once there. A shard that fails (host down, ssh cut) is recorded in
# the job log: rerun the same command and only the failed shards run again
# (parallel --resume-failed); the merge then completes.
set -euo pipefail
file=${1:?usage: parallel-sweep.sh SWEEP_FILE N_SHARDS HOSTS [OUT_DIR]}
n=${2:?usage: parallel-sweep.sh SWEEP_FILE N_SHARDS HOSTS [OUT_DIR]}
hosts=${3:?usage: parallel-sweep.sh SWEEP_FILE N_SHARDS HOSTS [OUT_DIR]}
out=${4:-results/$(basename "${file%.toml}")}
bin=${CSMACD:-$(pwd)/target/release/csmacd}
remote=${REMOTE_DIR:-/tmp/csmacd-sweep-$USER}
mkdir -p "$out/shards"

# Each job: the sweep file is sent once per host, the shard runs there with
# all its cores, its directory comes back with rsync, remote copies are removed.
seq 1 "$n" | parallel --sshlogin "$hosts" --jobs 1 \
  --joblog "$out/shards/joblog" --resume-failed \
  --basefile "$file" --return "$out/shards/{}" --cleanup \
  --workdir "$remote" \
  "mkdir -p $out/shards/{} && r= && [ -f $out/shards/{}/scenario.toml ] && r=--resume; \
   $bin sweep $file --shard {}/$n --quiet --out $out/shards/{} \$r" \
  2>&1 | sed 's/^/  /'

"$bin" merge "$out"/shards/* --out "$out"
echo "merged $n shards into $out"
