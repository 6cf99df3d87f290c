#!/usr/bin/env bash
# A sweep gives the same results.csv (byte for byte) on one thread, on two, as three shards merged and, where
# OpenMPI is installed, under mpirun with 3 ranks (loopback; sanitizers' leak checks off for MPI's own); a rerun
# skips the finished points; a sweep with a point whose plan is refused records it and exits 1; a folder of another
# sweep is refused (exit 3), and so is a point whose folder cannot be made.
# Usage: sweep_outputs.sh CLUSTERSIM SWEEP.yaml BASE_SCENARIO OUT_DIR
set -euo pipefail
cs=$1 sweep=$2 base=$3 out=$4
rm -rf "$out"
mkdir -p "$out"
"$cs" -q sweep "$sweep" -j 2 -o "$out/two" > /dev/null
"$cs" -q sweep "$sweep" -j 1 -o "$out/one" > /dev/null
for i in 0 1 2; do "$cs" -q sweep "$sweep" --shard "$i/3" -o "$out/shard$i" > /dev/null; done
"$cs" -q sweep merge "$out"/shard0 "$out"/shard1 "$out"/shard2 -o "$out/merged" > /dev/null
cmp "$out/two/results.csv" "$out/one/results.csv"
cmp "$out/two/results.csv" "$out/merged/results.csv"
cmp "$out/two/results.csv" "$(dirname "$sweep")/expected/results.csv"  # the example's rows, as its README quotes
if command -v mpirun > /dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
  mpirun --allow-run-as-root --oversubscribe -np 3 -x ASAN_OPTIONS=detect_leaks=0 \
    "$cs" -q sweep "$sweep" --mpi -j 2 -o "$out/mpi" > /dev/null
  cmp "$out/two/results.csv" "$out/mpi/results.csv"
  mpi="; the same under mpirun -np 3"
else
  echo "mpirun not found (tools/setup installs OpenMPI): the MPI run skipped"
fi
rows=$(($(wc -l < "$out/two/results.csv") - 1))
[ "$rows" -gt 0 ]
"$cs" -q sweep "$sweep" -j 2 -o "$out/two" --report | grep -q "(0 run now, $rows finished before)"
# The report: a plot per metric and axis, a best point per metric.
keys=$(head -1 "$out/two/results.csv" | tr ',' '\n' | sed -n '2,/^status$/p' | grep -vc '^status$')
metrics=$(($(head -1 "$out/two/results.csv" | tr ',' '\n' | wc -l) - keys - 3))
[ "$(grep -o '<svg id="m[0-9]*-a[0-9]*"' "$out/two/report.html" | wc -l)" -eq $((keys * metrics)) ]
[ "$(grep -o '<tr><td>[a-z_]* (\(lowest\|highest\))' "$out/two/report.html" | wc -l)" -eq "$metrics" ]
# A refused plan is a row, and the exit code says so.
printf 'base: %s\naxes:\n  workload.dp: [4, 5]\n' "$base" > "$out/failing.yaml"
set +e
"$cs" -q sweep "$out/failing.yaml" -j 2 -o "$out/failing" > /dev/null; rc=$?
"$cs" -q sweep "$out/failing.yaml" -o "$out/two" > /dev/null 2>&1; other=$?
set -e
[ "$rc" -eq 1 ] || { echo "a sweep with a refused point exited $rc, not 1"; exit 1; }
grep -q '^1,5,invalid,' "$out/failing/results.csv"
[ "$other" -eq 3 ] || { echo "a folder of another sweep was not refused (exit $other)"; exit 1; }
# A point whose folder cannot be made (a file in its way) stops the sweep with a located error on two threads, as
# on one (a worker thread's escaping error used to abort the process).
mkdir -p "$out/blocked/points" && touch "$out/blocked/points/000001"
set +e
"$cs" -q sweep "$sweep" -j 2 -o "$out/blocked" > /dev/null 2> "$out/blocked.err"; rc=$?
set -e
[ "$rc" -eq 3 ] || { echo "a point folder that cannot be made exited $rc, not 3"; cat "$out/blocked.err"; exit 1; }
grep -q "blocked/points/000001: cannot create the output folder" "$out/blocked.err"
echo "sweep outputs: $rows points, identical on 1 and 2 threads and in 3 shards merged${mpi:-}"
