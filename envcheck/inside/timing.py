"""How bench times a kernel, in the target interpreter (torch passed in): for the bench child.

kernel_time follows the method of Triton's do_bench (triton/testing.py, Triton 3.x): L2 flushed before every
repetition by zeroing a 256 MB buffer, CUDA events around each repetition, the median of repetitions back to back,
in rounds of 25 ms until the median is known within 0.5% (PRECISION). The GPU is timed in its sustained state: an
H200 under a 4096^3 GEMM drops from its 1980 MHz boost clock to 1830-1890 MHz within about 100 ms (nvidia-smi every
100 ms: throttle reason sw-power-cap), and a time taken before that is 7-11% faster than one taken after
(tests/data/bench/README.md). So the first row of a shape is warmed up with 150 ms of flushed calls, and the bench
child times a shape's rows back to back once all of them are compiled, which keeps the GPU in that state: what a
running model and do_bench see. When the host launches a call more slowly than the GPU runs it (a Python launch path
on a small GEMM), back-to-back events would time the host: then each batch of repetitions is queued behind a GPU
sleep kernel (torch.cuda._sleep) long enough that the host has queued the whole batch before the GPU starts it,
nvbench's "blocking kernel", and the batch is redone with a longer sleep when the sleep ended first. Which case
applies is decided by ten calls queued behind a sleep, the host's launch time measured where nothing can slow it.
The host's cost shows separately, in call_ms (wall time per call, back to back) and host_ms (CPU time to launch one
call); do_bench_ms is triton.testing.do_bench on the same compiled function, right after, as a check.

Standard library only at module level, Python 3.8 syntax (copied into the run folder as envcheck_timing.py).
"""

from __future__ import annotations

import time

FLUSH_BYTES = 256 * 1000 * 1000  # do_bench's L2 flush buffer: 256 MB, several times any L2
WARMUP_MS = 5.0  # the warm-up of a row that needs no sustained clock (do_bench's default is 25 ms): caches, lazy loads
SUSTAIN_MS = 150.0  # the warm-up of a GPU-bound call: an H200 under a 4096^3 GEMM leaves its boost clock in ~100 ms
MAX_WARMUP_REPS = 4000
PROBE_REPS = 10  # calls queued behind a sleep to measure the host's launch time
PROBE_SLEEP_MS = 5.0  # PROBE_REPS launches of 0.5 ms each queue before the GPU starts them
REP_MS = 25.0  # a round of repetitions back to back (do_bench's default is 100 ms: see PRECISION)
MIN_REPS = 10
# A round is enough once the median is known within 0.5% (one standard error of a median, 1.2533 sigma / sqrt(n),
# sigma ~ IQR / 1.349) or the spread is under the noise target: the verdicts' noise is 1% at least (bench/noise.py),
# so more repetitions would refine what the rule cannot see. The decode rows behind a blocking kernel (spread ~3.4%,
# a property of their times) stop at ~40 repetitions instead of running to the time cap.
PRECISION = 0.005
MAX_REPS = 2000
HOST_FAST = 0.5  # the host launches faster than the device runs: host time per repetition under half of device's
BATCH_MS = 20.0  # device time one batch behind a sleep kernel aims at (when the host is the slower one)
MAX_BATCH = 50  # reps queued behind one sleep: well under the launch queue
MAX_SLEEP_MS = 250.0
CALL_ROUND_S = 0.005  # a round of call_time: 50 calls of a 0.1 ms decode GEMM, 10 of a large one
DO_BENCH = {"warmup": 2, "rep": 10}  # the cross-check's own warm-up and repetitions (ms): the GPU is warm already


def quantile(sorted_values, q):
    """Linear-interpolated quantile of an ascending list (numpy's default)."""
    if not sorted_values:
        raise ValueError("no values")
    position = (len(sorted_values) - 1) * q
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def summarize(samples):
    """Median, quartiles, minimum and spread ((q75 - q25) / median) of timing samples in ms."""
    values = sorted(samples)
    median = quantile(values, 0.5)
    q25, q75 = quantile(values, 0.25), quantile(values, 0.75)
    return {
        "median": median,
        "q25": q25,
        "q75": q75,
        "min": values[0],
        "spread": (q75 - q25) / median if median > 0 else None,
        "reps": len(values),
    }


def _events(torch, count):
    return [torch.cuda.Event(enable_timing=True) for _ in range(count)]


def calibrate_sleep(torch):
    """Cycles of torch.cuda._sleep per millisecond on this GPU now."""
    torch.cuda._sleep(1000000)
    start, end = _events(torch, 2)
    start.record()
    torch.cuda._sleep(20000000)
    end.record()
    end.synchronize()
    return 20000000 / max(start.elapsed_time(end), 1e-3)


def queue_batch(torch, call, flush, count, sleep_ms, cycles_per_ms):
    """count flushed calls queued behind a sleep kernel of sleep_ms, each between two CUDA events: (device ms of
    each call, host ms to queue one, whether the sleep was still running when the last was queued: then the GPU
    never waited for the host and the events time the device only)."""
    starts, ends = _events(torch, count), _events(torch, count)
    gate = torch.cuda.Event()
    torch.cuda._sleep(int(sleep_ms * cycles_per_ms))
    gate.record()
    queued = time.perf_counter()
    for i in range(count):
        flush.zero_()
        starts[i].record()
        call()
        ends[i].record()
    host_ms = (time.perf_counter() - queued) / count * 1e3
    ahead = not gate.query()
    ends[-1].synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)], host_ms, ahead


def median_error(summary):
    """One standard error of the median, relative to it: 1.2533 sigma / sqrt(n), sigma ~ IQR / 1.349."""
    return 1.2533 * (summary["q75"] - summary["q25"]) / 1.349 / summary["median"] / summary["reps"] ** 0.5


def kernel_time(torch, call, flush, cycles_per_ms, cap_s, target, sustained=False):
    """Device time of call() in ms, L2 flushed before each repetition (the method: see the module docstring).

    Five flushed calls give the device time of one repetition (do_bench's estimate); ten more, queued behind a sleep
    kernel, the host's time to launch one, measured where nothing else can slow it down. When the host launches
    faster than the device runs, the GPU is first kept busy for SUSTAIN_MS (it leaves its boost clock within about
    100 ms of full load: what a running model and do_bench see), unless it is `sustained` already (the bench child
    times a shape's rows back to back), then repetitions go back to back for REP_MS at a time, as under do_bench,
    behind a short sleep so that the host starts ahead. When the host is the slower one, batches of at most MAX_BATCH
    wait behind a sleep kernel until all of the batch is queued (nvbench's blocking kernel), so that the events time
    the device only; a batch whose sleep ended before the host finished queueing is redone with a longer sleep.
    Rounds repeat until the median is known within PRECISION or the spread is under the target, or cap_s is spent."""
    for _ in range(3):
        flush.zero_()
        call()
    torch.cuda.synchronize()
    start, end = _events(torch, 2)
    start.record()
    for _ in range(5):  # do_bench's estimate
        flush.zero_()
        call()
    end.record()
    end.synchronize()
    estimate = max(start.elapsed_time(end) / 5, 1e-3)
    _, host_per_rep, _ = queue_batch(torch, call, flush, PROBE_REPS, PROBE_SLEEP_MS, cycles_per_ms)
    host_fast = host_per_rep < HOST_FAST * estimate
    warmup_ms = SUSTAIN_MS if host_fast and not sustained else WARMUP_MS
    warmup_reps = max(1, min(MAX_WARMUP_REPS, int(warmup_ms / estimate)))
    for _ in range(warmup_reps):
        flush.zero_()
        call()

    samples, rounds, redone, gaps = [], 0, 0, False
    factor = 2.0
    began = time.perf_counter()
    while True:
        if host_fast:
            count = max(MIN_REPS, min(MAX_REPS, int(REP_MS / estimate)))
            sleep_ms = 4 * host_per_rep + 0.1
        else:
            count = max(3, min(MAX_BATCH, int(BATCH_MS / estimate)))
            sleep_ms = min(MAX_SLEEP_MS, factor * count * host_per_rep + 0.5)
        batch, host_ms, ahead = queue_batch(torch, call, flush, count, sleep_ms, cycles_per_ms)
        rounds += 1
        if not host_fast:
            host_per_rep = max(host_per_rep, host_ms)
            if not ahead and sleep_ms < MAX_SLEEP_MS and redone < 4:
                redone += 1
                factor *= 2
                continue
            gaps = gaps or not ahead
        samples.extend(batch)
        summary = summarize(samples)
        if len(samples) >= MIN_REPS and summary["spread"] is not None and (
                summary["spread"] <= target or median_error(summary) <= PRECISION):
            break
        if time.perf_counter() - began >= cap_s:
            break
    summary.update(mode="back-to-back" if host_fast else "blocking", rounds=rounds, redone=redone, gaps=gaps,
                   host_launch_ms=host_per_rep, warmup_reps=warmup_reps, estimate_ms=estimate)
    return summary


def call_time(torch, call):
    """(wall ms per call, CPU ms to launch one call, spread of the wall time over the rounds): calls back to back,
    no flush, median of three rounds of about CALL_ROUND_S each (sized by a first round of three calls)."""
    count, walls, hosts = 3, [], []
    for round_ in range(4):
        torch.cuda.synchronize()
        began = time.perf_counter()
        for _ in range(count):
            call()
        queued = time.perf_counter()
        torch.cuda.synchronize()
        done = time.perf_counter()
        if round_ == 0:
            count = max(3, min(500, int(CALL_ROUND_S / max((done - began) / count, 1e-6))))
            continue
        walls.append((done - began) / count * 1e3)
        hosts.append((queued - began) / count * 1e3)
    walls.sort()
    return walls[1], sorted(hosts)[1], (walls[2] - walls[0]) / walls[1]


def device_kernels(torch, call):
    """The kernel names the CUDA profiler sees during one call (memory copies and sets left out)."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        call()
        torch.cuda.synchronize()
    names = []
    for event in prof.events():
        if event.device_type == DeviceType.CUDA and "Memset" not in event.name and "Memcpy" not in event.name:
            if event.name not in names:
                names.append(event.name[:300])
    return names[:6]


METHOD = (
    "triton.testing.do_bench's method (L2 flushed by zeroing 256 MB before each repetition, CUDA events, median of "
    "rounds of 25 ms of repetitions back to back) in the GPU's sustained clock (a 150 ms warm-up before a shape's "
    "first row, its rows timed back to back after all of them compiled); where the host launches more slowly than "
    "the GPU runs, nvbench's blocking kernel (each batch queued behind torch.cuda._sleep, redone if the host fell "
    "behind); repeated until the median is known within 0.5% or (q75-q25)/median is under the noise target, or the "
    "time cap"
)
