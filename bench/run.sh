#!/usr/bin/env bash
# Builds the CPU benchmark (Release, libtorch as the peer) and runs it. The report goes to
# stdout and to bench/results-cpu.md; with gnuplot installed, a chart of the ratios goes to
# bench/results-cpu.png.
#
#   bench/run.sh               the full run (a minute or two)
#   bench/run.sh --quick       fewer samples, for a smoke test
#   bench/run.sh --runs 15     more samples per figure
#
# Environment:
#   BRAID_BUILD_DIR   build directory (default build/bench). An existing directory configured
#                     with the bench on is used as it is (this is how `make bench` calls it).
#   BRAID_BENCH_OUT   report file (default bench/results-cpu.md)
#   JOBS              parallel compile jobs (default: nproc)
#   BRAID_NUM_THREADS worker threads for braid and libtorch alike (default: all hardware threads)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BRAID_BUILD_DIR:-$root/build/bench}
out=${BRAID_BENCH_OUT:-$root/bench/results-cpu.md}
jobs=${JOBS:-$(nproc)}

if ! grep -qs '^BRAID_BUILD_BENCH:BOOL=ON' "$build/CMakeCache.txt"; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBRAID_BUILD_BENCH=ON \
    -DBRAID_BUILD_TESTS=OFF -DBRAID_SANITIZE=
fi
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
sanitize=$(sed -n 's/^BRAID_SANITIZE:[A-Z]*=//p' "$build/CMakeCache.txt")
if [[ "$build_type" != "Release" || -n "$sanitize" ]]; then
  echo "bench/run.sh: $build is a ${build_type:-default} build${sanitize:+ with BRAID_SANITIZE=$sanitize};" \
       "figures need a plain Release build (unset BRAID_BUILD_DIR to use build/bench)" >&2
  exit 1
fi
cmake --build "$build" --target braid_bench_cpu -j "$jobs"

# Figures taken while the machine is busy are noise; say so up front (the report also records
# the load average at start and end).
cores=$(nproc)
load=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load" -v c="$cores" 'BEGIN { exit !(l > 0.5 * c) }'; then
  echo "bench/run.sh: warning: load average $load on $cores hardware threads; figures will be noisy" >&2
fi

plot_data=$(mktemp)
report=$(mktemp)
trap 'rm -f "$plot_data" "$report"' EXIT

status=0
"$build/bench/braid_bench_cpu" --plot-data "$plot_data" "$@" | tee "$report" || status=$?
cp "$report" "$out"
echo "bench/run.sh: report written to $out" >&2

if command -v gnuplot >/dev/null && [[ -s "$plot_data" ]]; then
  png=${out%.md}.png
  gnuplot <<GNUPLOT || echo "bench/run.sh: gnuplot failed; no chart" >&2
set terminal pngcairo size 900,420
set output '$png'
set title 'braid on the CPU: each figure and its target'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set yrange [0:*]
set grid ytics
set key top left
plot '$plot_data' using 2:xtic(1) title 'braid (ratio)', '' using 3 title 'target'
GNUPLOT
  [[ -f "$png" ]] && echo "bench/run.sh: chart written to $png" >&2
fi
exit "$status"
