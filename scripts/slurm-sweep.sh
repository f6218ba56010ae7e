#!/usr/bin/env bash
# Runs one sweep as a Slurm job array: task K of N runs shard K/N into
# OUT_DIR/shards/K; a merge job, started once every task succeeded, joins the
# shards into the files one plain run gives, in OUT_DIR.
#
#   scripts/slurm-sweep.sh SWEEP_FILE N_SHARDS [OUT_DIR]
#
# OUT_DIR (default results/<sweep file stem>), the csmacd binary (CSMACD,
# default target/release/csmacd) and the sweep file must be on a filesystem
# every node sees, under the same path: the tasks are given absolute paths.
# Environment:
#   CPUS_PER_TASK  CPUs each task asks for and the threads its shard runs (default 1)
#   SBATCH_OPTS    extra sbatch options, e.g. "--partition=short --time=01:00:00"
#   CSMACD         the csmacd binary
# Resubmitting the same command resumes: a task whose shard stored points
# runs only the missing ones, and the merge job of an earlier submission that
# is still waiting is cancelled (one merge job at a time). Each submission
# logs to its own files, OUT_DIR/shards/slurm-ARRAYID_K.log and merge-JOBID.log.
# Progress: csmacd status OUT_DIR/shards/*/
set -euo pipefail

me=slurm-sweep.sh
usage="usage: $me SWEEP_FILE N_SHARDS [OUT_DIR]"
die() {
  echo "$me: $*" >&2
  exit 2
}
if [ $# -lt 2 ] || [ $# -gt 3 ]; then die "$usage"; fi
file=$1
n=$2
out=${3:-results/$(basename "${file%.toml}")}
cpus=${CPUS_PER_TASK:-1}
bin=${CSMACD:-target/release/csmacd}
[[ $n =~ ^[1-9][0-9]*$ ]] || die "N_SHARDS is '$n'; give a whole number of 1 or more"
[[ $cpus =~ ^[1-9][0-9]*$ ]] || die "CPUS_PER_TASK is '$cpus'; give a whole number of 1 or more"
[ -x "$bin" ] || die "no csmacd binary at $bin; build it (cargo build --release) or set CSMACD"
[ -f "$file" ] || die "no sweep file at $file"
command -v sbatch >/dev/null || die "sbatch not found; run this on a Slurm login node"
bin=$(realpath "$bin")
file=$(realpath "$file")
# A sweep file that cannot run is refused here, not in every task.
"$bin" validate "$file" >/dev/null
mkdir -p "$out/shards"
out=$(realpath "$out")
shards=$out/shards
read -ra extra <<<"${SBATCH_OPTS:-}"

# An earlier submission into the same directory: its tasks must be over (two
# tasks on one shard would run the same points twice), and its merge job, if
# still waiting, gives way to the new one.
jobs_file=$shards/slurm-jobs
if [ -f "$jobs_file" ]; then
  read -r old_array old_merge <"$jobs_file" || true
  if [ -n "$(squeue -h -j "$old_array" -o %i 2>/dev/null || true)" ]; then
    echo "$me: job array $old_array of this sweep is still queued or running;" \
      "wait for it to end (squeue -j $old_array) or cancel it (scancel $old_array), then submit again" >&2
    exit 1
  fi
  scancel --state=PENDING "$old_merge" 2>/dev/null || true
fi

# The job scripts, sent on stdin: every path quoted, so that spaces and
# other characters in them survive.
q() { printf '%q' "$1"; }
task_script="#!/bin/bash
set -euo pipefail
d=$(q "$shards")/\$SLURM_ARRAY_TASK_ID
resume=()
if [ -f \"\$d/points/scenario.toml\" ]; then resume=(--resume); fi
exec $(q "$bin") sweep $(q "$file") --shard \"\$SLURM_ARRAY_TASK_ID/$n\" --jobs $cpus --quiet --out \"\$d\" \"\${resume[@]}\"
"
merge_dirs=""
for k in $(seq 1 "$n"); do merge_dirs+=" $(q "$shards/$k")"; done
merge_script="#!/bin/bash
exec $(q "$bin") merge$merge_dirs --out $(q "$out")
"

# --parsable prints "jobid" or "jobid;cluster".
array=$(sbatch --parsable "${extra[@]}" --job-name=csmacd-sweep --array=1-"$n" \
  --cpus-per-task="$cpus" --chdir="$shards" --output="$shards/slurm-%A_%a.log" \
  <<<"$task_script")
array=${array%%;*}
# afterok: only when every task succeeded; a task that failed, was cancelled
# or timed out cancels the merge job instead of leaving it waiting forever.
merge=$(sbatch --parsable "${extra[@]}" --job-name=csmacd-merge \
  --dependency=afterok:"$array" --kill-on-invalid-dep=yes \
  --chdir="$shards" --output="$shards/merge-%j.log" <<<"$merge_script")
merge=${merge%%;*}
echo "$array $merge" >"$jobs_file"
echo "submitted job array $array ($n shards, $cpus CPU(s) each) and merge job $merge; results in $out"
echo "progress: csmacd status $(q "$shards")/*/"
