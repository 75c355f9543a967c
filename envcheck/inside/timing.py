"""How bench times a kernel, in the target interpreter (torch passed in): for the bench child.

The method of Triton's do_bench (triton/testing.py, Triton 3.x): L2 flushed before every repetition by zeroing a 256
MB buffer, CUDA events around each repetition, the median of repetitions back to back, in rounds (REP_MS) until
stoprule.py says the row's figure is enough. The GPU is timed in its sustained state: an H200 under a 4096^3 GEMM
drops from its 1980 MHz boost clock to 1830-1890 MHz within about 100 ms (nvidia-smi every 100 ms: throttle reason
sw-power-cap), and a time taken before that is 7-11% faster than one taken after (tests/data/bench/README.md). So
the first row of a shape that the GPU runs back to back is warmed up with 150 ms of flushed calls, and the bench
child times such rows of a shape one after another once all of them are compiled, which keeps the GPU in that
state: what a running model and do_bench see. When the host launches a call more slowly than the GPU runs it (a
Python launch path on a small GEMM), back-to-back events would time the host: then each batch of repetitions is
queued behind a GPU sleep kernel (torch.cuda._sleep) long enough that the host has queued the whole batch before the
GPU starts it, nvbench's "blocking kernel", and the batch is redone with a longer sleep when the sleep ended first.
Which case applies is decided by up to ten calls queued behind a sleep (start), the host's launch time measured where
nothing can slow it. The host's cost shows separately, in call_ms (wall time per call, back to back) and host_ms (CPU
time to launch one call); where the calls run back to back, do_bench_ms is triton.testing.do_bench on the same
compiled function, right after, as a check (where the host is the slower one, do_bench would time the launch path,
which call_ms shows).

Standard library only at module level, Python 3.8 syntax (copied into the run folder as envcheck_timing.py).
"""

from __future__ import annotations

import time

FLUSH_BYTES = 256 * 1000 * 1000  # do_bench's L2 flush buffer: 256 MB, several times any L2
WARM_CALLS = 3  # flushed calls before the probe: caches, lazy loads; their time sizes the probe
WARMUP_MS = 5.0  # the warm-up of a row that needs no sustained clock (do_bench's default is 25 ms)
SUSTAIN_MS = 150.0  # the warm-up of a GPU-bound call: an H200 under a 4096^3 GEMM leaves its boost clock in ~100 ms
MAX_WARMUP_REPS = 4000
PROBE_REPS = 10  # calls queued behind a sleep to measure the host's launch time,
MIN_PROBE_REPS = 3  # fewer where they would keep the device busy for more than PROBE_MS
PROBE_MS = 10.0
PROBE_SLEEP_MS = 5.0  # at most: PROBE_REPS launches of 0.5 ms each queue before the GPU starts them
# A round of repetitions back to back (do_bench's default is 100 ms): 10 ms is 25 repetitions of a 0.4 ms GEMM, the
# minimum of 10 of a 1 ms one; a row whose figure is not enough after its first round gets more (stoprule.py).
REP_MS = 10.0
MIN_REPS = 10
MAX_REPS = 2000
HOST_FAST = 0.5  # the host launches faster than the device runs: host time per repetition under half of device's
BATCH_MS = 20.0  # device time one batch behind a sleep kernel aims at (when the host is the slower one)
MAX_BATCH = 25  # reps queued behind one sleep: well under the launch queue
MAX_SLEEP_MS = 250.0
SLEEP_FACTOR = 1.5  # a batch's sleep: this many times the host's time to queue it (doubled on each redo)
CALL_ROUND_S = 0.005  # a round of call_time: 50 calls of a 0.1 ms decode GEMM, 3 of a 1.4 ms one, 1 of a 5 ms one
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
    never waited for the host and the events time the device only, device ms from the first call's start to the last
    one's end: the flushes between them included)."""
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
    return [s.elapsed_time(e) for s, e in zip(starts, ends)], host_ms, ahead, starts[0].elapsed_time(ends[-1])


class RowTiming:
    """One row's timing under way: how its call is timed (back to back or behind a sleep), what it has given so far,
    and why it stopped. bench_child.py times a shape's rows with start, sustain and one_round, and asks
    stoprule.reason after each round."""

    def __init__(self, call, estimate, host_per_rep, probe_reps):
        self.call = call
        self.estimate = estimate  # device ms of one flushed repetition (the host's gaps in it where it is slower)
        self.host_per_rep = host_per_rep  # host ms to queue one flushed repetition
        self.host_fast = host_per_rep < HOST_FAST * estimate
        self.probe_reps = probe_reps
        self.samples, self.rounds, self.redone, self.gaps = [], 0, 0, False
        self.warmup_reps, self.spent_s, self.factor, self.stop = 0, 0.0, SLEEP_FACTOR, None

    def again(self, call):
        """The same function timed anew (the repeat): its method is known, its samples start empty."""
        timing = RowTiming(call, self.estimate, self.host_per_rep, 0)
        timing.host_fast = self.host_fast
        return timing

    def summary(self):
        found = summarize(self.samples)
        found.update(mode="back-to-back" if self.host_fast else "blocking", rounds=self.rounds, redone=self.redone,
                     gaps=self.gaps, host_launch_ms=self.host_per_rep, warmup_reps=self.warmup_reps,
                     estimate_ms=self.estimate, probe_reps=self.probe_reps, stop=self.stop)
        return found


def start(torch, call, flush, cycles_per_ms):
    """How call() is to be timed: WARM_CALLS flushed calls (their time sizes the probe), then up to PROBE_REPS queued
    behind a sleep kernel, which give the host's time to launch one, measured where nothing else can slow it down,
    and the device time of a flushed repetition (do_bench's estimate; the host's gaps in it where it is slower)."""
    began, ended = _events(torch, 2)
    began.record()
    queued = time.perf_counter()
    for _ in range(WARM_CALLS):
        flush.zero_()
        call()
    host_ms = (time.perf_counter() - queued) / WARM_CALLS * 1e3
    ended.record()
    ended.synchronize()
    rough = max(began.elapsed_time(ended) / WARM_CALLS, 1e-3)
    count = max(MIN_PROBE_REPS, min(PROBE_REPS, int(PROBE_MS / rough)))
    sleep_ms = min(PROBE_SLEEP_MS, 2 * count * host_ms + 0.5)  # twice the time the warm calls took to queue
    _, host_per_rep, _, span = queue_batch(torch, call, flush, count, sleep_ms, cycles_per_ms)
    return RowTiming(call, max(span / count, 1e-3), host_per_rep, count)


def sustain(timing, flush, loaded_ms):
    """The warm-up before a row's rounds, where the host launches faster than the device runs: flushed calls until
    the GPU has run SUSTAIN_MS of work with no pause (`loaded_ms`: what it has run just before: other rows, the
    probes), WARMUP_MS at least. Behind a sleep kernel, one call: the GPU idles between its batches anyway, and the
    probe ran it."""
    warmup_ms = max(WARMUP_MS, SUSTAIN_MS - loaded_ms) if timing.host_fast else 0.0
    reps = max(1, min(MAX_WARMUP_REPS, int(warmup_ms / timing.estimate)))
    for _ in range(reps):
        flush.zero_()
        timing.call()
    timing.warmup_reps += reps


def busy_ms(timing):
    """Device ms of flushed calls start ran for the row (its warm-up calls and probe)."""
    return (WARM_CALLS + timing.probe_reps) * timing.estimate


def one_round(torch, timing, flush, cycles_per_ms):
    """One round of repetitions added to the row's samples. Where the host launches faster than the device runs,
    REP_MS of them back to back (at least MIN_REPS), behind a short sleep so that the host starts ahead; where the
    host is the slower one, a batch of at most MAX_BATCH behind a sleep kernel long enough that all of it is queued
    before the GPU starts (nvbench's blocking kernel), so that the events time the device only; a batch whose sleep
    ended before the host finished queueing is redone with a longer sleep."""
    began = time.perf_counter()
    while True:
        if timing.host_fast:
            count = max(MIN_REPS, min(MAX_REPS, int(REP_MS / timing.estimate)))
            sleep_ms = 4 * timing.host_per_rep + 0.1
        else:
            count = max(3, min(MAX_BATCH, int(BATCH_MS / timing.estimate)))
            sleep_ms = min(MAX_SLEEP_MS, timing.factor * count * timing.host_per_rep + 0.5)
        batch, host_ms, ahead, _ = queue_batch(torch, timing.call, flush, count, sleep_ms, cycles_per_ms)
        timing.rounds += 1
        if not timing.host_fast:
            timing.host_per_rep = max(timing.host_per_rep, host_ms)
            if not ahead and sleep_ms < MAX_SLEEP_MS and timing.redone < 4:
                timing.redone += 1
                timing.factor *= 2
                continue
            timing.gaps = timing.gaps or not ahead
        timing.samples.extend(batch)
        break
    timing.spent_s += time.perf_counter() - began


def call_time(torch, call):
    """(wall ms per call, CPU ms to launch one call, spread of the wall time over the rounds): calls back to back,
    no flush, median of three rounds of about CALL_ROUND_S each, one call at least (sized by a first round of
    three calls)."""
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
            count = max(1, min(500, int(CALL_ROUND_S / max((done - began) / count, 1e-6))))
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
    "rounds of 10 ms of repetitions back to back) in the GPU's sustained clock (warmed up until it has run 150 ms of "
    "work with no pause, a shape's such rows timed one after another after all of them compiled); where the host "
    "launches more "
    "slowly than the GPU runs, nvbench's blocking kernel (each batch queued behind torch.cuda._sleep, redone if the "
    "host fell behind); repeated until (q75-q25)/median is under the noise target, or the median is known within "
    "0.5%, or every comparison with the shape's other rows is decided beyond the noise by 3 standard errors, or the "
    "time cap"
)
