#!/usr/bin/env bash
# Builds the CPU benchmarks (Release, libtorch as the peer) and runs them, each printing a
# Markdown report to stdout:
#   braid_bench_cpu   per-op overhead, bandwidth, threads and streams -> bench/results-cpu.md
#   braid_bench_ops   the array ops against libtorch and memcpy       -> bench/results-ops-cpu.md
#   braid_bench_train a training step and value_and_grad against libtorch -> bench/results-train-cpu.md
#   braid_bench_capi  the C API's per-op overhead against the C++ API's -> bench/results-capi.md
#   bench/python/bench_python.py  braid.core against PyTorch from Python -> bench/results-python-cpu.md
# With gnuplot installed, a chart of each report's ratios goes next to it (.png).
#
#   bench/run.sh               all of them, full runs (a few minutes)
#   bench/run.sh --quick       fewer samples, for a smoke test
#   bench/run.sh --runs 15     more samples per figure
#   bench/run.sh --only ops    one of them (cpu, ops, train, capi or python); other options as above
#
# Environment:
#   BRAID_BUILD_DIR   build directory (default build/bench). An existing directory configured
#                     with the bench on is used as it is (this is how `make bench` calls it).
#   BRAID_BENCH_OUT   directory of the reports (default bench/)
#   JOBS              parallel compile jobs (default: nproc)
#   BRAID_NUM_THREADS worker threads for braid and libtorch alike (default: all hardware threads)
#   BRAID_PYTHON_DIR  with --only python: a braid package already built (the directory holding
#                     braid/, e.g. build/python after `make python`); nothing is configured or
#                     built then. Otherwise the bench build directory builds braid.core.
#   PYTHON            the interpreter of the Python benchmark (default /usr/bin/python3, which
#                     must have python3-torch for the peer columns)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BRAID_BUILD_DIR:-$root/build/bench}
out_dir=${BRAID_BENCH_OUT:-$root/bench}
jobs=${JOBS:-$(nproc)}

only=
args=()
while [[ $# -gt 0 ]]; do
  if [[ $1 == --only && $# -gt 1 ]]; then
    only=$2
    shift 2
  else
    args+=("$1")
    shift
  fi
done
case $only in
  ''|cpu|ops|train|capi|python) ;;
  *) echo "bench/run.sh: --only takes cpu, ops, train, capi or python, not '$only'" >&2; exit 2 ;;
esac
python=${PYTHON:-/usr/bin/python3}
python_dir=${BRAID_PYTHON_DIR:-}

# cached VARIABLE: its value in the build directory's CMake cache (empty when unset).
cached() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }

# configure_and_build: configures the bench build directory if needed, picks the programs it
# can build (into "programs") and builds them.
configure_and_build() {
  if ! grep -qs '^BRAID_BUILD_BENCH:BOOL=ON' "$build/CMakeCache.txt"; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBRAID_BUILD_BENCH=ON \
      -DBRAID_BUILD_TESTS=OFF -DBRAID_SANITIZE=
  fi
  build_type=$(cached CMAKE_BUILD_TYPE)
  sanitize=$(cached BRAID_SANITIZE)
  if [[ "$build_type" != "Release" || -n "$sanitize" ]]; then
    echo "bench/run.sh: $build is a ${build_type:-default} build${sanitize:+ with BRAID_SANITIZE=$sanitize};" \
         "figures need a plain Release build (unset BRAID_BUILD_DIR to use build/bench)" >&2
    exit 1
  fi
  # braid_bench_ops and braid_bench_train exist only when libtorch was found at configure time.
  [[ -z $only || $only == cpu ]] && programs+=(cpu)
  [[ -z $only || $only == capi ]] && programs+=(capi)
  if [[ -z $only || $only == ops || $only == train ]]; then
    torch_dir=$(cached Torch_DIR)
    if [[ -n $torch_dir && $torch_dir != *NOTFOUND ]]; then
      [[ -z $only || $only == ops ]] && programs+=(ops)
      [[ -z $only || $only == train ]] && programs+=(train)
    else
      echo "bench/run.sh: libtorch was not found when $build was configured;" \
           "skipping braid_bench_ops and braid_bench_train" >&2
    fi
  fi
  # braid.core exists only when pybind11 was found at configure time (scripts/install-deps bench).
  if [[ -z $only || $only == python ]]; then
    pybind11_dir=$(cached pybind11_DIR)
    if [[ -n $pybind11_dir && $pybind11_dir != *NOTFOUND ]]; then
      programs+=(python)
      python_dir=$(cached BRAID_PYTHON_DIR)
    else
      echo "bench/run.sh: pybind11 was not found when $build was configured;" \
           "skipping the Python benchmark (scripts/install-deps bench installs it)" >&2
    fi
  fi
  [[ ${#programs[@]} -gt 0 ]] || exit 1
  targets=()
  for name in "${programs[@]}"; do
    if [[ $name == python ]]; then targets+=(--target braid_python); else targets+=(--target "braid_bench_$name"); fi
  done
  cmake --build "$build" -j "$jobs" "${targets[@]}"
}

programs=()
if [[ $only == python && -n $python_dir ]]; then
  # A package built elsewhere: no CMake step at all.
  [[ -f $python_dir/braid/__init__.py ]] || {
    echo "bench/run.sh: BRAID_PYTHON_DIR=$python_dir holds no braid package (braid/__init__.py)" >&2
    exit 1
  }
  python_dir=$(cd "$python_dir" && pwd)
  programs=(python)
else
  configure_and_build
fi

# Figures taken while the machine is busy are noise; say so up front (the report also records
# the load average at start and end).
cores=$(nproc)
load=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load" -v c="$cores" 'BEGIN { exit !(l > 0.5 * c) }'; then
  echo "bench/run.sh: warning: load average $load on $cores hardware threads; figures will be noisy" >&2
fi

# run_one NAME REPORT TITLE: runs benchmark NAME (braid_bench_NAME, or bench_python.py for
# python), writes REPORT and, with gnuplot, its chart.
run_one() {
  local name=$1 report_file=$2 title=$3 plot_data report status=0 program
  plot_data=$(mktemp)
  report=$(mktemp)
  if [[ $name == python ]]; then
    program=(env PYTHONPATH="$python_dir${PYTHONPATH:+:$PYTHONPATH}" "$python" "$root/bench/python/bench_python.py")
  else
    program=("$build/bench/braid_bench_$name")
  fi
  "${program[@]}" --plot-data "$plot_data" ${args[@]+"${args[@]}"} | tee "$report" || status=$?
  cp "$report" "$report_file"
  echo "bench/run.sh: report written to $report_file" >&2
  if command -v gnuplot >/dev/null && [[ -s "$plot_data" ]]; then
    local png=${report_file%.md}.png
    gnuplot <<GNUPLOT || echo "bench/run.sh: gnuplot failed; no chart" >&2
set terminal pngcairo size 900,420
set output '$png'
set title '$title'
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
  rm -f "$plot_data" "$report"
  return "$status"
}

status=0
for name in "${programs[@]}"; do
  case $name in
    cpu) run_one cpu "$out_dir/results-cpu.md" 'braid on the CPU: each figure and its target' || status=$? ;;
    ops) run_one ops "$out_dir/results-ops-cpu.md" 'braid ops on the CPU: ratio to the peer and target' || status=$? ;;
    train) run_one train "$out_dir/results-train-cpu.md" 'braid training on the CPU: ratio and target' || status=$? ;;
    capi) run_one capi "$out_dir/results-capi.md" 'the C API against the C++ API' || status=$? ;;
    python) run_one python "$out_dir/results-python-cpu.md" 'braid.core against PyTorch from Python' || status=$? ;;
  esac
done
exit "$status"
