"""What the Python benchmarks share with bench/bench_report.h: samples with their spread, the
machine lines of a report, Markdown tables, PASS/MISS verdicts and counted wrong answers.
Standard library only, so that it imports before braid.core and torch are loaded."""

import os
import platform
import statistics
import sys
import time


def pool_threads():
    """One thread count for braid and its peer: BRAID_NUM_THREADS when it is a positive number,
    else the machine's (as braid's pool reads it). Sets the variable, so call it before
    braid.core starts its pool."""
    threads = os.cpu_count() or 1
    try:
        env = int(os.environ.get("BRAID_NUM_THREADS", ""))
        if env > 0:
            threads = env
    except ValueError:
        pass
    os.environ["BRAID_NUM_THREADS"] = str(threads)
    return threads


class Stats:
    def __init__(self, samples=None):
        self.samples = list(samples or [])

    def add(self, value):
        self.samples.append(value)

    def median(self):
        return statistics.median(self.samples) if self.samples else float("nan")

    def min(self):
        return min(self.samples)

    def max(self):
        return max(self.samples)

    def __bool__(self):
        return bool(self.samples)


def quotients(a, b):
    """Sample by sample a_i / b_i of two sides measured together (each pair saw one state of
    the machine)."""
    return Stats(x / y for x, y in zip(a.samples, b.samples))


def fmt(value, precision=2):
    return f"{value:.{precision}f}"


def spread(stats, precision=2):
    """'median (min .. max)'."""
    if not stats:
        return "n/a"
    return f"{fmt(stats.median(), precision)} ({fmt(stats.min(), precision)} .. {fmt(stats.max(), precision)})"


def verdict(ok):
    """A target met or missed, as measured: nothing is rounded in braid's favour."""
    return "PASS" if ok else "MISS"


def table(header, align, rows):
    """A Markdown table as a string; `align` holds one character per column, 'l' or 'r'."""
    lines = ["| " + " | ".join(header) + " |"]
    lines.append("|" + "".join("---:|" if a == "r" else "---|" for a in align) + "")
    for row in rows:
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines) + "\n"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_average():
    try:
        return " ".join("%.2f" % v for v in os.getloadavg())
    except OSError:
        return "unknown"


def busy(cores):
    """Whether a load average (1, 5 or 15 minutes) says other work shares the machine: over
    half of its hardware threads busy, the threshold bench/run.sh warns at."""
    try:
        return max(os.getloadavg()) > 0.5 * cores
    except OSError:
        return False


def utc_now():
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())


def python_version():
    return f"Python {platform.python_version()} ({sys.executable})"


class Answers:
    """Answers compared with a reference: each row is (what, max abs diff, tolerance). A wrong
    one makes every figure meaningless, so the report counts them and the program fails."""

    def __init__(self):
        self.rows = []

    def add(self, what, max_abs_diff, tolerance):
        self.rows.append((what, max_abs_diff, tolerance))

    def wrong(self):
        return sum(1 for _, diff, tol in self.rows if not diff <= tol)

    def markdown(self, header="answer"):
        rows = [(w, f"{d:.3g}", f"{t:.3g}", "ok" if d <= t else "WRONG") for w, d, t in self.rows]
        text = table([header, "max abs diff", "tolerance", ""], "lrrl", rows)
        wrong = self.wrong()
        return text + "\nAnswers checked: " + ("all correct" if wrong == 0 else f"{wrong} WRONG") + ".\n"
