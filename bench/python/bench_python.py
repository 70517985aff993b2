#!/usr/bin/env python3
"""braid.core against PyTorch, both called from Python, side by side in one run:
  a. per-op overhead: a chain of 1,000 tiny adds built and evaluated from Python (CPU),
  b. a ThreadPoolExecutor serving the MLP of examples/demo.cpp (256 -> 512 -> 10, relu,
     requests of 8 rows) on the CPU with 1 and 2 workers, each worker on its own stream;
     with them, references: the same requests from plain threads (p), braid evaluating graphs
     built beforehand (e), the executor's ceiling for requests as long as braid's (x), and how
     much of the second core the machine left (m).
  c. with --device gpu, the same serving on the GPU: braid with 1 and 8 workers, each on its
     own GPU stream, against torch with 1, 2, 4 and 8 workers on their own CUDA streams.
Prints a Markdown report (machine, versions, figures with targets, spread, answers) and exits
non-zero when an answer is wrong. bench/run.sh --only python runs the CPU report.

  bench_python.py [--device cpu|gpu] [--runs N] [--quick] [--plot-data FILE]

braid.core is imported from PYTHONPATH, else from $BRAID_PYTHON_DIR, else from build/python.
"""
import argparse
import hashlib
import itertools
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402

# braid's pool reads BRAID_NUM_THREADS when it starts: settle the count before importing it.
THREADS = report.pool_threads()

import numpy as np  # noqa: E402

try:
    import braid.core as mx
except ImportError:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for candidate in (os.environ.get("BRAID_PYTHON_DIR"), os.path.join(root, "build", "python")):
        if candidate and os.path.isdir(os.path.join(candidate, "braid")):
            sys.path.insert(0, candidate)
            break
    try:
        import braid.core as mx
    except ImportError as e:
        sys.exit(f"bench_python.py: cannot import braid.core ({e}); build it with `make python` "
                 "and run with PYTHONPATH=build/python")

try:
    import torch
except ImportError:
    torch = None

# Each CPU worker's stream, made once at import as a server module would make them.
CPU_STREAMS = [mx.new_stream(mx.cpu) for _ in range(2)]

CHAIN_LEN = 1000  # (a) adds per chain
TINY_ELEMS = 16  # (a) elements of the tiny array
INPUTS, HIDDEN, OUTPUTS, BATCH = 256, 512, 10, 8  # (b, c) examples/demo.cpp's model and requests
DISTINCT_REQUESTS = 1000  # (b, c) request r carries input r % DISTINCT_REQUESTS
SEED = 20240611
TOLERANCE = 1e-4  # on |answer - float64 reference|; outputs are of order 1
SAME_TOLERANCE = 1e-5  # on |pool answer - the same library's sequential answer|


# ---- (a) per-op overhead ----


def braid_chain_us(start, chains, wrong):
    t0 = time.perf_counter()
    for _ in range(chains):
        y = start
        for _ in range(CHAIN_LEN):
            y = y + 1.0
        mx.eval(y)
        if y[0].item() != CHAIN_LEN:
            wrong[0] += 1
    return (time.perf_counter() - t0) * 1e6 / (chains * CHAIN_LEN)


def torch_chain_us(start, chains, wrong):
    with torch.inference_mode():
        t0 = time.perf_counter()
        for _ in range(chains):
            y = start
            for _ in range(CHAIN_LEN):
                y = y + 1.0
            if y[0].item() != CHAIN_LEN:
                wrong[0] += 1
        return (time.perf_counter() - t0) * 1e6 / (chains * CHAIN_LEN)


def figure_a(runs, chains):
    """Samples of braid and torch alternate; each is `chains` chains, in microseconds per op."""
    wrong = [0]
    braid_start = mx.zeros((TINY_ELEMS,))
    mx.eval(braid_start)
    sides = [(lambda n: braid_chain_us(braid_start, n, wrong), report.Stats())]
    if torch is not None:
        torch_start = torch.zeros(TINY_ELEMS)
        sides.append((lambda n: torch_chain_us(torch_start, n, wrong), report.Stats()))
    for timed, _ in sides:
        timed(2)  # warm-up: allocator caches, the pool, code paths
    for _ in range(runs):
        for timed, stats in sides:
            stats.add(timed(chains))
    return sides[0][1], sides[1][1] if torch is not None else report.Stats(), wrong[0]


# ---- (b, c) serving the demo's MLP from a thread pool ----


def model_values():
    """The demo's model with weights from a fixed seed: w1 [256, 512], b1 [512], w2 [512, 10],
    b2 [10], float32, scaled as examples/demo.cpp scales its own."""
    rng = np.random.default_rng(SEED)
    w1 = rng.uniform(-1, 1, (INPUTS, HIDDEN)) / np.sqrt(INPUTS)
    b1 = rng.uniform(-1, 1, HIDDEN) * 0.1
    w2 = rng.uniform(-1, 1, (HIDDEN, OUTPUTS)) / np.sqrt(HIDDEN)
    b2 = rng.uniform(-1, 1, OUTPUTS) * 0.1
    return [v.astype(np.float32) for v in (w1, b1, w2, b2)]


def request_inputs():
    rng = np.random.default_rng(SEED + 1)
    return rng.uniform(-1, 1, (DISTINCT_REQUESTS, BATCH, INPUTS)).astype(np.float32)


def numpy_reference(values, inputs):
    """Every distinct request's answer, computed sequentially in float64 by NumPy."""
    w1, b1, w2, b2 = (v.astype(np.float64) for v in values)
    h = np.maximum(inputs.astype(np.float64) @ w1 + b1, 0.0)
    return h @ w2 + b2


class BraidServer:
    """The model on braid: weights evaluated on the serving device before any request, each
    pool worker bound to one stream for its whole life (`streams`, made once, outside)."""

    name = "braid"

    def __init__(self, values, inputs, streams):
        self.inputs = inputs
        self.streams = streams
        self.local = threading.local()
        # Copied on the device's stream and evaluated: the weights live where they are used.
        with mx.stream(streams[0]):
            self.w1, self.b1, self.w2, self.b2 = (mx.copy(mx.array(v)) for v in values)
            self.zero = mx.copy(mx.array(0.0))  # relu's constant, made once
        mx.eval(self.w1, self.b1, self.w2, self.b2, self.zero)

    def bind(self, worker):
        """Makes the calling thread worker number `worker`, serving on its own stream."""
        self.local.stream = self.streams[worker]

    def build(self, r, stream):
        """Request r's graph on `stream`; nothing is computed yet."""
        x = mx.array(self.inputs[r % DISTINCT_REQUESTS])
        with mx.stream(stream):
            h = mx.maximum(mx.addmm(self.b1, x, self.w1), self.zero)
            return mx.addmm(self.b2, h, self.w2)

    def serve(self, r):
        y = self.build(r, self.local.stream)
        mx.eval(y)  # releases the GIL while it computes
        return np.asarray(y)


class TorchServer:
    """The same model on torch, eager under inference_mode; on CUDA each pool worker has its
    own stream, made in the worker, and every result is copied to the host on that stream
    (a synchronous copy, so it waits for the kernels before it)."""

    name = "torch"

    def __init__(self, values, inputs, device):
        self.inputs = inputs
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        self.local = threading.local()
        self.w1, self.b1, self.w2, self.b2 = (torch.from_numpy(v).to(self.device).contiguous() for v in values)
        if self.cuda:
            torch.cuda.synchronize()  # the weights are complete before any worker stream reads them

    def bind(self, worker):
        """Makes the calling thread a worker; on CUDA it gets a stream of its own."""
        self.local.stream = torch.cuda.Stream(device=self.device) if self.cuda else None

    def _forward(self, r):
        x = torch.from_numpy(self.inputs[r % DISTINCT_REQUESTS]).to(self.device)
        h = torch.addmm(self.b1, x, self.w1).relu_()
        return torch.addmm(self.b2, h, self.w2)

    def serve(self, r):
        with torch.inference_mode():  # thread-local: entered on the worker
            if self.cuda:
                with torch.cuda.stream(self.local.stream):
                    return self._forward(r).cpu().numpy()
            return self._forward(r).numpy()


def make_pool(server, workers):
    """A ThreadPoolExecutor whose i-th thread is bound as worker i when it starts."""
    ids = itertools.count()
    return ThreadPoolExecutor(max_workers=workers, initializer=lambda: server.bind(next(ids)),
                              thread_name_prefix=server.name)


class Serving:
    """One library's pools, their samples, and the largest differences of their answers. With
    `references`, the same worker counts also serve from plain threads, each looping over its
    share of the requests (a reference without the executor's own work), and, for braid, only
    evaluate graphs built beforehand (a reference without Python: the GIL is released
    throughout)."""

    def __init__(self, server, worker_counts, reference, sample_s, references=False):
        self.server = server
        self.reference = reference
        self.pools = {w: make_pool(server, w) for w in worker_counts}
        self.configs = [("pool", w) for w in worker_counts]
        if references:
            self.configs += [("threads", w) for w in worker_counts]
            if hasattr(server, "build"):
                self.configs += [("eval", w) for w in worker_counts]
        self.stats = {c: report.Stats() for c in self.configs}
        self.diff = {c: 0.0 for c in self.configs}  # against the float64 reference
        self.same = {c: 0.0 for c in self.configs}  # against this library's sequential answers
        # The sequential reference of this library: every distinct request on the calling thread.
        server.bind(0)
        t0 = time.perf_counter()
        self.sequential = np.stack([server.serve(r) for r in range(DISTINCT_REQUESTS)])
        per_request = (time.perf_counter() - t0) / DISTINCT_REQUESTS
        self.sequential_diff = float(np.max(np.abs(self.sequential - reference)))
        self.requests = int(min(max(sample_s / per_request, 200), 50000))
        for w, pool in self.pools.items():
            wait([pool.submit(server.serve, r) for r in range(8 * w)])  # warm-up: start every worker

    def sample(self, config):
        kind, workers = config
        through = {"pool": self._through_pool, "threads": self._through_threads, "eval": self._eval_only}[kind]
        answers, seconds = through(workers)
        self.stats[config].add(self.requests / seconds)
        got = np.stack(answers)
        index = np.arange(self.requests) % DISTINCT_REQUESTS
        self.diff[config] = max(self.diff[config], float(np.max(np.abs(got - self.reference[index]))))
        self.same[config] = max(self.same[config], float(np.max(np.abs(got - self.sequential[index]))))

    def _through_pool(self, workers):
        return answer_backlog(self.pools[workers], workers, self.server.serve, self.requests)

    def _through_threads(self, workers):
        answers = [None] * self.requests
        server = self.server

        def work(i):
            server.bind(i)
            for r in range(i, self.requests, workers):
                answers[r] = server.serve(r)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return answers, time.perf_counter() - t0

    def _eval_only(self, workers):
        """Seconds `workers` threads take to evaluate, one by one, the graphs of their share of
        the requests, all built beforehand on this thread for the evaluating thread's stream."""
        server = self.server
        shares = [[server.build(r, server.streams[i]) for r in range(i, self.requests, workers)]
                  for i in range(workers)]

        def work(i):
            for y in shares[i]:
                mx.eval(y)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seconds = time.perf_counter() - t0
        answers = [None] * self.requests
        for i, share in enumerate(shares):
            answers[i::workers] = [np.asarray(y) for y in share]
        return answers, seconds

    def close(self):
        for pool in self.pools.values():
            pool.shutdown()


def answer_backlog(pool, workers, serve, requests):
    """The answers of `serve(r)` for r in range(requests), and the seconds the pool takes to
    give them. The workers are held at a gate while the requests are queued, so the timing
    starts with a full queue: queuing thousands of requests holds the GIL in bursts that would
    stall the workers, and the caller then sleeps until the last answer (waiting on each
    future in turn, as pool.map does, would wake it and take the GIL for every request)."""
    gate, held = threading.Event(), threading.Barrier(workers + 1)

    def hold():
        held.wait()
        gate.wait()

    for _ in range(workers):
        pool.submit(hold)
    held.wait()  # every worker is at the gate: none can take a request early
    futures = [pool.submit(serve, r) for r in range(requests)]
    t0 = time.perf_counter()
    gate.set()
    wait(futures)
    seconds = time.perf_counter() - t0
    return [f.result() for f in futures], seconds


class ExecutorCeiling:
    """The most any library can get from figure b's executor with requests as long as braid's:
    the same pools answer backlogs in the same way, but a request is one call that releases
    the GIL for as long as braid takes to evaluate one request on one thread (SHA-256 of a
    block sized to that time) and runs no other Python. Its 2-worker scaling is what is left
    once the executor's own work and the handing over of the GIL are paid."""

    def __init__(self, seconds_per_request, sample_s):
        probe = bytes(1 << 20)
        t0 = time.perf_counter()
        for _ in range(20):
            hashlib.sha256(probe).digest()
        bytes_per_s = 20 * len(probe) / (time.perf_counter() - t0)
        self.block = bytes(max(4096, int(bytes_per_s * seconds_per_request)))
        self.seconds_per_request = seconds_per_request
        self.requests = int(min(max(sample_s / seconds_per_request, 200), 50000))
        self.pools = {w: ThreadPoolExecutor(max_workers=w, thread_name_prefix="ceiling") for w in (1, 2)}
        self.stats = {1: report.Stats(), 2: report.Stats()}
        for w, pool in self.pools.items():
            wait([pool.submit(self.serve, r) for r in range(8 * w)])  # warm-up: start every worker

    def serve(self, r):
        return hashlib.sha256(self.block).digest()

    def sample(self, workers):
        _, seconds = answer_backlog(self.pools[workers], workers, self.serve, self.requests)
        self.stats[workers].add(self.requests / seconds)

    def close(self):
        for pool in self.pools.values():
            pool.shutdown()


def eval_seconds_per_request(server, count=400):
    """Seconds braid takes to evaluate one request's graph, built beforehand, on this thread."""
    graphs = [server.build(r, server.streams[0]) for r in range(count)]
    t0 = time.perf_counter()
    for y in graphs:
        mx.eval(y)
    return (time.perf_counter() - t0) / count


class MachineProbe:
    """What the machine gives 2 threads right now, whatever the libraries do: SHA-256 of 64 KiB
    blocks from plain threads (hashlib releases the GIL for such blocks, and uses one core per
    call), 2 threads against 1. Sampled between the serving samples, it shows how much of the
    second core other work on the machine left over."""

    BLOCK = bytes(64 * 1024)

    def __init__(self, sample_s):
        t0 = time.perf_counter()
        self._hash(20)
        self.calls = int(max(sample_s / 2 / ((time.perf_counter() - t0) / 20), 20))
        self.stats = {1: report.Stats(), 2: report.Stats()}

    def _hash(self, n):
        for _ in range(n):
            hashlib.sha256(self.BLOCK).digest()

    def sample(self, threads):
        pool = [threading.Thread(target=self._hash, args=(self.calls,)) for _ in range(threads)]
        t0 = time.perf_counter()
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        self.stats[threads].add(threads * self.calls / (time.perf_counter() - t0))


def measure_serving(servings, runs, probe=None, ceiling=None):
    """Samples of every library and worker count in turn (after the probe's and the
    ceiling's), `runs` times."""
    for _ in range(runs):
        for reference in (probe, ceiling):
            if reference:
                reference.sample(1)
                reference.sample(2)
        for serving in servings:
            for config in serving.configs:
                serving.sample(config)


def serving_answers(answers, serving, device):
    name = serving.server.name
    answers.add(f"{name} {device}, sequential ({DISTINCT_REQUESTS} requests) against NumPy float64",
                serving.sequential_diff, TOLERANCE)
    kinds = {"pool": "pool workers", "threads": "plain threads", "eval": "threads only evaluating"}
    how = "; ".join(f"{kinds[k]} " + ", ".join(str(w) for kk, w in serving.configs if kk == k)
                    for k in kinds if any(kk == k for kk, _ in serving.configs))
    label = f"{name} {device}, every answer of every sample ({how})"
    answers.add(label + " against NumPy float64", max(serving.diff.values()), TOLERANCE)
    answers.add(label + f" against {name}'s sequential answers", max(serving.same.values()), SAME_TOLERANCE)


# ---- report ----


def versions():
    torch_version = torch.__version__ if torch is not None else "not installed (python3-torch)"
    return f"braid {mx.__version__}, torch {torch_version}, NumPy {np.__version__}, {report.python_version()}"


def header(title, date, load_before, load_after, runs, method):
    cores = os.cpu_count() or 1
    lines = [f"# {title}", ""]
    lines.append(f"- date: {date}")
    lines.append(f"- machine: {report.cpu_model()}, {cores} hardware threads")
    torch_threads = f", torch intra-op {torch.get_num_threads()} (torch.set_num_threads)" if torch is not None else ""
    lines.append(f"- threads: braid pool {THREADS} (BRAID_NUM_THREADS){torch_threads}")
    lines.append(f"- versions: {versions()}")
    lines.append(f"- load average (1/5/15 min): {load_before} at start, {load_after} at end")
    lines.append(f"- method: median of {runs} samples per figure; {method}")
    return "\n".join(lines) + "\n"


def write_plot(path, points):
    if not path:
        return
    with open(path, "w") as f:
        f.write("# label value target (higher is better except for 'a', where lower is)\n")
        for label, value, target in points:
            f.write(f'"{label}" {value} {target}\n')


def run_cpu(args):
    cores = os.cpu_count() or 1
    load_before, date, loaded_before = report.load_average(), report.utc_now(), report.busy(cores)
    print(f"bench_python: CPU, {args.runs} samples per figure...", file=sys.stderr)
    print("  a. tiny-add chain", file=sys.stderr)
    braid_a, torch_a, wrong_chains = figure_a(args.runs, args.chains)

    print("  b. MLP serving from a ThreadPoolExecutor (and plain threads), 1 and 2 workers", file=sys.stderr)
    values, inputs = model_values(), request_inputs()
    reference = numpy_reference(values, inputs)
    servings = [Serving(BraidServer(values, inputs, CPU_STREAMS), (1, 2), reference, args.sample_s, True)]
    if torch is not None:
        servings.append(Serving(TorchServer(values, inputs, "cpu"), (1, 2), reference, args.sample_s, True))
    probe = MachineProbe(args.sample_s / 4)
    ceiling = ExecutorCeiling(eval_seconds_per_request(servings[0].server), args.sample_s)
    measure_serving(servings, args.runs, probe, ceiling)
    for s in servings + [ceiling]:
        s.close()
    load_after = report.load_average()

    na = "n/a"
    b, t = servings[0], servings[1] if torch is not None else None
    rows, plot = [], []
    ratio_a = braid_a.median() / torch_a.median() if torch_a else None
    rows.append(["a", f"tiny-add chain: {CHAIN_LEN:,} x ({TINY_ELEMS} float32 + 1.0), built and evaluated from Python, "
                 "us/op", report.fmt(braid_a.median(), 3), report.fmt(torch_a.median(), 3) if torch_a else na,
                 report.fmt(ratio_a, 2) if ratio_a else na, "braid/torch <= 1.00",
                 report.verdict(ratio_a <= 1.0) if ratio_a else na])
    if ratio_a:
        plot.append(("a: us/op vs torch", ratio_a, 1.0))

    def throughput_rows(kind, prefix, what):
        for w in (1, 2):
            bm = b.stats[(kind, w)].median()
            tm = t.stats[(kind, w)].median() if t else None
            rows.append([f"{prefix}{w}", f"{what}, {w} worker{'s' if w > 1 else ''}"
                         f"{', each on its own stream' if w > 1 else ''}: requests/s", report.fmt(bm, 0),
                         report.fmt(tm, 0) if t else na, report.fmt(bm / tm, 2) if t else na, "", ""])

    def scaling(serving, kind):
        return serving.stats[(kind, 2)].median() / serving.stats[(kind, 1)].median()

    throughput_rows("pool", "b", "MLP 256-512-10, requests of 8 rows, served by a ThreadPoolExecutor")
    bs, ts = scaling(b, "pool"), scaling(t, "pool") if t else None
    rows.append(["b", "scaling of b: 2 workers / 1 worker", report.fmt(bs, 2), report.fmt(ts, 2) if t else na,
                 report.fmt(bs / ts, 2) if t else na, "braid >= 1.70", report.verdict(bs >= 1.7)])
    plot.append(("b: 2 workers / 1", bs, 1.7))
    throughput_rows("threads", "p", "the same requests served by plain threads, each looping over its share (no executor)")
    ps, pts = scaling(b, "threads"), scaling(t, "threads") if t else None
    rows.append(["p", "scaling of p: 2 threads / 1 thread", report.fmt(ps, 2), report.fmt(pts, 2) if t else na,
                 report.fmt(ps / pts, 2) if t else na, "reference", ""])
    for w in (1, 2):
        rows.append([f"e{w}", f"braid only: graphs of the same requests built beforehand, {w} thread"
                     f"{'s' if w > 1 else ''} only evaluating them (`mx.eval` per request; no Python runs "
                     "meanwhile): requests/s", report.fmt(b.stats[("eval", w)].median(), 0), "", "", "", ""])
    es = scaling(b, "eval")
    rows.append(["e", "scaling of e: 2 threads / 1 thread", report.fmt(es, 2), "", "", "reference", ""])
    best = ceiling.stats[2].median() / ceiling.stats[1].median()
    rows.append(["x", "the executor's ceiling: b's pools answering requests that are each one GIL-free call as "
                 f"long as braid's evaluation of a request on 1 thread ({ceiling.seconds_per_request * 1e6:.0f} us: "
                 "SHA-256 of a block), no other Python; 2 workers / 1", report.fmt(best, 2), "", "",
                 "reference", ""])
    machine = probe.stats[2].median() / probe.stats[1].median()
    rows.append(["m", "the machine meanwhile: SHA-256 of 64 KiB blocks from 2 plain threads / 1 (GIL released, "
                 "no braid, no torch; 2.00 means the second core was free)", report.fmt(machine, 2), "", "",
                 "reference", ""])

    answers = report.Answers()
    answers.add(f"a. every chain's first element equals {CHAIN_LEN} (chains wrong)", float(wrong_chains), 0.0)
    for s in servings:
        serving_answers(answers, s, "CPU")

    out = [header("braid.core against PyTorch from Python, CPU", date, load_before, load_after, args.runs,
                  f"a sample is {args.chains} chains (a), or {b.requests} requests for braid"
                  + (f" and {t.requests} for torch" if t else "")
                  + f" (b, p: about {args.sample_s:g} s on 1 worker); the samples of the sides alternate; "
                  "ratios are of medians, and the spread table has them sample by sample")]
    if loaded_before or report.busy(cores):
        out.append("- note: the machine is shared: a load average (1, 5 or 15 minutes) was over half its hardware "
                   "threads at the start or the end, so other work ran on it before or during this run (figure m "
                   "shows how much of the second core was left meanwhile); the figures, the 2-worker ones most, "
                   "vary between runs more than their spread here shows\n")
    out.append("- braid: `y = y + 1.0` then `mx.eval(y)` (a); per request `mx.array(x)`, "
               "`mx.maximum(mx.addmm(b1, x, w1), zero)`, `mx.addmm(b2, h, w2)` under `with mx.stream(s)`, "
               "`mx.eval(y)`, `np.asarray(y)` (b, p); each worker's stream made at import with "
               "`mx.new_stream(mx.cpu)`\n")
    out.append("- torch: eager under `torch.inference_mode()` (entered on each worker), `torch.set_num_threads("
               f"{THREADS})`; `y = y + 1.0` (a); per request `torch.from_numpy(x)`, `torch.addmm(b1, x, w1).relu_()`, "
               "`torch.addmm(b2, h, w2)`, `.numpy()` (b, p)\n")
    out.append("- both: (b) a `concurrent.futures.ThreadPoolExecutor` answering a backlog: `pool.submit(serve, r)` "
               "for every request while the workers wait at a gate, then the gate opens and the clock runs until "
               "`concurrent.futures.wait` returns; (p) `threading.Thread`s, timed from their start to the last join; "
               f"weights from NumPy's default_rng({SEED}), the same values in both libraries\n\n")
    out.append(report.table(["#", "figure", "braid", "torch", "braid / torch", "target", "result"], "llrrrll", rows))
    out.append("\nSpread, median (min .. max) over the samples:\n\n")
    spread_rows = [["a. us/op", report.spread(braid_a, 3), report.spread(torch_a, 3) if torch_a else na]]
    for kind, prefix, unit in (("pool", "b", "workers"), ("threads", "p", "threads"), ("eval", "e", "threads")):
        peer = t if t and kind != "eval" else None
        for w in (1, 2):
            spread_rows.append([f"{prefix}{w}. requests/s", report.spread(b.stats[(kind, w)], 0),
                                report.spread(peer.stats[(kind, w)], 0) if peer else ""])
        spread_rows.append([f"{prefix}. 2 {unit} / 1, sample by sample",
                            report.spread(report.quotients(b.stats[(kind, 2)], b.stats[(kind, 1)]), 2),
                            report.spread(report.quotients(peer.stats[(kind, 2)], peer.stats[(kind, 1)]), 2)
                            if peer else ""])
    spread_rows.append(["x. 2 workers / 1, sample by sample",
                        report.spread(report.quotients(ceiling.stats[2], ceiling.stats[1]), 2), ""])
    spread_rows.append(["m. 2 threads / 1, sample by sample",
                        report.spread(report.quotients(probe.stats[2], probe.stats[1]), 2), ""])
    out.append(report.table(["figure", "braid", "torch"], "lll", spread_rows))
    out.append("\n" + answers.markdown("answer (tolerance on max abs diff)"))
    print("".join(out), end="")
    write_plot(args.plot_data, plot)
    return answers.wrong()


def run_gpu(args):
    if not mx.is_available(mx.gpu):
        print("bench_python.py --device gpu: braid.core has no GPU here (mx.is_available(mx.gpu) is False); "
              "nothing to measure")
        return 0
    load_before, date = report.load_average(), report.utc_now()
    torch_cuda = torch is not None and torch.cuda.is_available()
    if torch_cuda:
        torch.backends.cuda.matmul.allow_tf32 = False  # float32 products in float32, as braid computes them
    braid_workers, torch_workers = (1, 8), (1, 2, 4, 8)
    gpu_streams = [mx.new_stream(mx.gpu) for _ in range(max(braid_workers))]  # one per worker, made once
    print(f"bench_python: GPU, {args.runs} samples per figure...", file=sys.stderr)
    values, inputs = model_values(), request_inputs()
    reference = numpy_reference(values, inputs)
    servings = [Serving(BraidServer(values, inputs, gpu_streams), braid_workers, reference, args.sample_s)]
    if torch_cuda:
        servings.append(Serving(TorchServer(values, inputs, "cuda"), torch_workers, reference, args.sample_s))
    measure_serving(servings, args.runs)
    for s in servings:
        s.close()
    load_after = report.load_average()

    na = "n/a"
    b = servings[0]
    t = servings[1] if torch_cuda else None
    rows, plot = [], []
    for w in braid_workers:
        rows.append([f"c{w}", f"braid, {w} worker{'s, each' if w > 1 else ''} on its own GPU stream: requests/s",
                     report.fmt(b.stats[("pool", w)].median(), 0), "", "", "", ""])
    best = None
    if t:
        for w in torch_workers:
            rows.append([f"t{w}", f"torch, {w} worker{'s, each' if w > 1 else ''} on its own CUDA stream: requests/s",
                         "", report.fmt(t.stats[("pool", w)].median(), 0), "", "", ""])
        best = max(torch_workers, key=lambda w: t.stats[("pool", w)].median())
    top = b.stats[("pool", max(braid_workers))].median()
    ratio = top / t.stats[("pool", best)].median() if t else None
    rows.append(["c", f"braid {max(braid_workers)} workers / torch's best ({best} worker{'s' if best and best > 1 else ''})"
                 if t else f"braid {max(braid_workers)} workers / torch's best", report.fmt(top, 0),
                 report.fmt(t.stats[("pool", best)].median(), 0) if t else na, report.fmt(ratio, 2) if t else na,
                 "braid / torch >= 2.00", report.verdict(ratio >= 2.0) if t else na])
    if t:
        plot.append(("c: 8 workers vs torch's best", ratio, 2.0))

    answers = report.Answers()
    for s in servings:
        serving_answers(answers, s, "GPU")

    gpu_name = torch.cuda.get_device_name(0) if torch_cuda else "unknown (torch without CUDA)"
    out = [header("braid.core against PyTorch from Python, GPU serving", date, load_before, load_after, args.runs,
                  f"a sample serves {b.requests} requests for braid" + (f" and {t.requests} for torch" if t else "")
                  + f" (about {args.sample_s:g} s on 1 worker); the samples of the sides alternate")]
    out.append(f"- GPU: {gpu_name}\n")
    out.append("- braid: weights copied to the GPU and evaluated before serving; per request `mx.array(x)`, "
               "`mx.maximum(mx.addmm(b1, x, w1), zero)`, `mx.addmm(b2, h, w2)` under `with mx.stream(s)`, "
               "`mx.eval(y)`, `np.asarray(y)`; worker i's stream is `mx.new_stream(mx.gpu)`, made once before the pools\n")
    out.append("- torch: eager under `torch.inference_mode()`, TF32 off; weights on the GPU and "
               "`torch.cuda.synchronize()` before serving; each worker makes its own `torch.cuda.Stream()` and "
               "serves under `with torch.cuda.stream(s)`: `torch.from_numpy(x).to('cuda')`, `torch.addmm`, `relu_`, "
               "`torch.addmm`, `.cpu().numpy()` (a copy on the worker's stream that waits for it)\n")
    out.append("- both: a `ThreadPoolExecutor` answering a backlog: `pool.submit(serve, r)` for every request "
               "while the workers wait at a gate, then the gate opens and the clock runs until "
               f"`concurrent.futures.wait` returns; weights from NumPy's default_rng({SEED})\n\n")
    out.append(report.table(["#", "figure", "braid", "torch", "braid / torch", "target", "result"], "llrrrll", rows))
    out.append("\nSpread, median (min .. max) over the samples, requests/s:\n\n")
    spread_rows = [[f"braid, {w} worker{'s' if w > 1 else ''}", report.spread(b.stats[("pool", w)], 0)] for w in braid_workers]
    if t:
        spread_rows += [[f"torch, {w} worker{'s' if w > 1 else ''}", report.spread(t.stats[("pool", w)], 0)] for w in torch_workers]
    out.append(report.table(["figure", "requests/s"], "ll", spread_rows))
    out.append("\n" + answers.markdown("answer (tolerance on max abs diff)"))
    print("".join(out), end="")
    write_plot(args.plot_data, plot)
    return answers.wrong()


def main():
    parser = argparse.ArgumentParser(description="braid.core against PyTorch from Python")
    parser.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    parser.add_argument("--runs", type=int, default=9, help="samples per figure (default 9)")
    parser.add_argument("--quick", action="store_true", help="3 short samples: a smoke test, not a measurement")
    parser.add_argument("--plot-data", default="", help="write the ratios and targets for gnuplot here")
    args = parser.parse_args()
    args.runs = max(1, args.runs)
    args.chains, args.sample_s = 20, 0.5
    if args.quick:
        args.runs, args.chains, args.sample_s = 3, 5, 0.1
    if torch is not None:
        torch.set_num_threads(THREADS)
    wrong = run_gpu(args) if args.device == "gpu" else run_cpu(args)
    return 0 if wrong == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
