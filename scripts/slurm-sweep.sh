#!/usr/bin/env bash
# Runs one sweep as a Slurm job array: task K of N runs shard K/N into its own
# directory; a dependent job merges the shards into the files one run gives.
#
#   scripts/slurm-sweep.sh scenarios/throughput-vs-load.toml 8 [results/study]
#
# Needs a csmacd binary on a filesystem every node sees (CSMACD, default
# target/release/csmacd) and the sweep file there too. Extra sbatch options
# (partition, account, time) go in SBATCH_OPTS, e.g.
#   SBATCH_OPTS="--partition=short --time=01:00:00" scripts/slurm-sweep.sh FILE 8
# An interrupted or timed-out task keeps its finished points: resubmit the
# same command and each task resumes (--resume) where it stopped.
set -euo pipefail
file=${1:?usage: slurm-sweep.sh SWEEP_FILE N_SHARDS [OUT_DIR]}
n=${2:?usage: slurm-sweep.sh SWEEP_FILE N_SHARDS [OUT_DIR]}
out=${3:-results/$(basename "${file%.toml}")}
bin=$(realpath "${CSMACD:-target/release/csmacd}")
file=$(realpath "$file")
mkdir -p "$out/shards"
out=$(realpath "$out")
cpus=${CPUS_PER_TASK:-4}

array=$(sbatch --parsable ${SBATCH_OPTS:-} \
  --job-name=csmacd-sweep --array=1-"$n" --cpus-per-task="$cpus" \
  --output="$out/shards/slurm-%a.log" \
  --wrap="d=$out/shards/\$SLURM_ARRAY_TASK_ID; r=; [ -f \$d/scenario.toml ] && r=--resume; \
exec $bin sweep $file --shard \$SLURM_ARRAY_TASK_ID/$n --jobs $cpus --quiet --out \$d \$r")

sbatch ${SBATCH_OPTS:-} --job-name=csmacd-merge --dependency=afterok:"$array" \
  --output="$out/shards/merge.log" \
  --wrap="exec $bin merge $(for k in $(seq 1 "$n"); do printf '%s ' "$out/shards/$k"; done)--out $out"
echo "submitted array $array ($n shards) and its merge; results in $out"
