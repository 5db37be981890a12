"""Benchmark: projection SDPA (fused and math backends) against torch's standard SDPA.

For each sequence length L (= S), causal or not, with or without an exponential decay, this
times the forward pass and the forward+backward pass and measures the extra peak memory of
one call, for

* ``fused``  ``tssdpa.projection_sdpa(..., backend="fused")``
* ``math``   ``tssdpa.projection_sdpa(..., backend="math")`` (explicit O(L·S) distances)
* ``std``    ``torch.nn.functional.scaled_dot_product_attention`` on the same q, k, v. With a
  decay, it gets the same additive bias ``|i-j|·log γ`` (``-inf`` above the diagonal when
  causal) as a float ``attn_mask``, built inside the timed call exactly as the projection
  operator builds its own, so the comparison is like for like.
* ``plain``  standard SDPA with no decay bias (only ``is_causal``), shown beside the decay rows.

On CUDA both projection calls pass ``validate=False``, as the layers' forward does.

Ratios ``fused/std`` and ``math/std`` come from the same run, on the same inputs.

Memory. CUDA: ``torch.cuda.max_memory_allocated()`` after ``reset_peak_memory_stats()``,
minus the memory allocated before the call. CPU: ``tracemalloc`` cannot see torch's
allocations, so memory is measured in a fresh subprocess per configuration (times in a second
one, with glibc's default allocator settings), whose glibc mmap threshold is
pinned at 128 KiB (``MALLOC_MMAP_THRESHOLD_``), so every tensor larger than that is its own
mapping and goes back to the OS when freed; before each measured call the kernel's peak-RSS
counter is reset (``echo 5 > /proc/self/clear_refs``) and the extra peak is
``VmHWM`` after the call minus ``VmRSS`` before it. This counts the output, autograd saved
tensors, gradients and kernel scratch, i.e. everything the call added to the resident set.

Run ``python experiments/bench_attention.py --quick`` for a smoke run (< 1 min), or without
``--quick`` for the full sweep; the Markdown report goes to ``docs/results/attention_bench.md``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "docs" / "results" / "attention_bench.md"

CPU_TIME_TARGET = 1.3  # fused / standard, CPU, every configuration
CUDA_TIME_TARGET = 1.1  # fused / standard, CUDA, L >= CUDA_TARGET_MIN_L
CUDA_TARGET_MIN_L = 4096
LINEAR_MEMORY_MAX_RATIO = 2.5  # peak(2L) / peak(L): 2 if linear in L, 4 if quadratic
IIR_GOAL_L = 8192  # causal decay / timestamps against plain causal std at this L:
IIR_MEMORY_TARGET = 3.0  # extra peak memory, fused / plain
IIR_TIME_TARGET = 1.5  # time, fused / plain (decay, with skipping at --decay-tol)
IIR_LINEAR_MIN_L = 2048  # IIR memory linear in L from here to --iir-max-len

# Live (B·H, L, S) float32 tensors the math backend keeps at its peak (distances, squared
# distances / logits, softmax, and their gradients in the backward pass): used to skip it.
MATH_LIVE_LS_TENSORS = 6

MAX_REPEATS = 25  # timed repeats for short calls (see --repeats for the minimum)
MIN_TIMED_S = 0.5  # aim for about this much timed work per implementation and mode


# --------------------------------------------------------------------------- worker side


def _rss_kib() -> tuple[int, int] | None:
    """(VmRSS, VmHWM) of this process in KiB, or None off Linux."""
    try:
        text = Path("/proc/self/status").read_text()
    except OSError:
        return None
    vals = {}
    for line in text.splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            vals[line.split(":")[0]] = int(line.split()[1])
    return vals.get("VmRSS"), vals.get("VmHWM")


def _reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _make_callables(torch, cfg: dict):
    """{impl: fn(q, k, v) -> out} for one configuration."""
    import torch.nn.functional as F

    from tssdpa import projection_sdpa

    causal, decay, tau, sigma = cfg["causal"], cfg["decay"], cfg.get("tau"), cfg["sigma"]
    L = cfg["L"]
    times = None
    kw = dict(is_causal=causal, decay=decay)
    if tau is not None:
        # irregular sampling: steps uniform in (0, 2), mean 1 (the same times in every process)
        g = torch.Generator().manual_seed(1)
        times = (torch.rand(L, generator=g, dtype=torch.float64) * 2).cumsum(0)
        kw = dict(is_causal=causal, tau=tau, timestamps=times)

    def std_bias(device, dtype):
        lag = torch.arange(L, device=device)[:, None] - torch.arange(L, device=device)[None, :]
        if tau is not None:
            t = times.to(device)
            bias = -(t[:, None] - t[None, :]).abs().to(dtype) / tau
        else:
            bias = lag.abs().to(dtype) * math.log(decay)
        if causal:
            bias = bias.masked_fill(lag < 0, float("-inf"))
        return bias

    # On CUDA the calls skip the value scans, as the layers' forward does: each scan reads a
    # scalar back to the host, a stream sync per call that standard SDPA does not pay.
    kw["validate"] = cfg["device"] != "cuda"

    def fused(q, k, v):
        return projection_sdpa(
            q, k, v, sigma=sigma, backend="fused", decay_tol=cfg["decay_tol"], **kw
        )

    def math_(q, k, v):
        return projection_sdpa(q, k, v, sigma=sigma, backend="math", **kw)

    def plain(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def std(q, k, v):
        if decay is None and tau is None:
            return plain(q, k, v)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=std_bias(q.device, q.dtype))

    table = {"std": std, "fused": fused, "math": math_, "plain": plain}
    return {name: table[name] for name in cfg["impls"]}


def _worker(cfg: dict) -> dict:
    import torch

    torch.set_num_threads(cfg["threads"])
    torch.manual_seed(0)
    device = torch.device(cfg["device"])
    dtype = getattr(torch, cfg["dtype"])
    cuda = device.type == "cuda"
    B, H, L, D = cfg["batch"], cfg["heads"], cfg["L"], cfg["head_dim"]
    q, k, v = (torch.randn(B, H, L, D, device=device, dtype=dtype) for _ in range(3))
    grad_out = torch.randn(B, H, L, D, device=device, dtype=dtype)
    fns = _make_callables(torch, cfg)

    def sync():
        if cuda:
            torch.cuda.synchronize(device)

    def run(fn, mode):
        if mode == "fwd":
            with torch.no_grad():
                out = fn(q, k, v)
            del out
        else:
            qq, kk, vv = (t.detach().requires_grad_(True) for t in (q, k, v))
            out = fn(qq, kk, vv)
            out.backward(grad_out)
            del out, qq, kk, vv

    def timed(fn, mode) -> float:
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            sync()
            start.record()
            run(fn, mode)
            end.record()
            sync()
            return start.elapsed_time(end)
        t0 = time.perf_counter()
        run(fn, mode)
        return (time.perf_counter() - t0) * 1e3

    def peak_mib(fn, mode) -> float | None:
        sync()
        if cuda:
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats(device)
            base = torch.cuda.memory_allocated(device)
            run(fn, mode)
            sync()
            return (torch.cuda.max_memory_allocated(device) - base) / 2**20
        before = _rss_kib()
        if before is None or not _reset_peak_rss():
            return None
        before = _rss_kib()
        run(fn, mode)
        after = _rss_kib()
        return max(0, after[1] - before[0]) / 1024

    # Initialise thread pools, kernels and lazy state on a tiny problem first, so the memory
    # measurements below see the call, not one-time setup.
    small = {**cfg, "L": 16}
    for fn in _make_callables(torch, small).values():
        qs, ks, vs = (t[..., :16, :].contiguous() for t in (q, k, v))
        with torch.no_grad():
            fn(qs, ks, vs)
        qs.requires_grad_(True)
        fn(qs, ks, vs).sum().backward()
    sync()

    res = {name: {} for name in fns}
    for mode in ("fwd", "fwdbwd"):
        if cfg.get("measure", "both") != "time":
            for name, fn in fns.items():
                res[name][f"{mode}_mib"] = peak_mib(fn, mode)
        if cfg.get("measure", "both") == "memory":
            continue
        # Warm-up, then time the implementations round-robin, so that load from other
        # processes on a shared machine hits all of them alike. Short calls get more repeats
        # (up to MAX_REPEATS, about MIN_TIMED_S of timed work per implementation).
        first = {}
        for name, fn in fns.items():
            for _ in range(cfg["warmup"]):
                run(fn, mode)
            first[name] = timed(fn, mode)
        n = cfg["repeats"]
        if cfg["adaptive"]:
            slowest = max(first.values()) / 1e3
            n = max(n, min(MAX_REPEATS, math.ceil(MIN_TIMED_S / max(slowest, 1e-6))))
        times = {name: [] for name in fns}
        for _ in range(n):
            for name, fn in fns.items():
                times[name].append(timed(fn, mode))
        for name in fns:
            res[name][f"{mode}_ms"] = statistics.median(times[name])
            res[name][f"{mode}_n"] = n
    return res


# --------------------------------------------------------------------------- driver side


def _device_name(device: str) -> str:
    import torch

    if device == "cuda":
        return torch.cuda.get_device_name(0)
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _math_bytes(args, L: int) -> int:
    return MATH_LIVE_LS_TENSORS * args.batch * args.heads * L * L * 4


def _case_cfg(args, device: str, L: int, causal: bool, iir: str | None) -> dict:
    """One configuration; ``iir``: None, "decay" (gamma per step) or "tau" (timestamps)."""
    impls = ["std", "fused"]
    if _math_bytes(args, L) <= args.mem_cap_gib * 2**30:
        impls.append("math")
    if iir is not None:
        impls.append("plain")
        if 2 * args.batch * args.heads * L * L * 4 > args.mem_cap_gib * 2**30:
            impls.remove("std")  # its (L, S) bias and weights would not fit: plain only
    return {
        "device": device,
        "L": L,
        "causal": causal,
        "decay": args.decay if iir == "decay" else None,
        "tau": args.tau if iir == "tau" else None,
        "decay_tol": args.decay_tol,
        "impls": impls,
        "batch": args.batch,
        "heads": args.heads,
        "head_dim": args.head_dim,
        "sigma": math.sqrt(args.head_dim),
        "dtype": args.dtype,
        "threads": args.threads,
        "repeats": args.repeats,
        "warmup": args.warmup,
        "adaptive": not args.quick,
    }


def _worker_run(args, cfgs: list[dict], pinned: bool) -> list[dict]:
    env = dict(os.environ)
    env.pop("MALLOC_MMAP_THRESHOLD_", None)
    if pinned:
        env["MALLOC_MMAP_THRESHOLD_"] = "131072"  # fixed threshold: big blocks are mmapped
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", json.dumps(cfgs)],
        capture_output=True,
        text=True,
        env=env,
        timeout=args.case_timeout * len(cfgs),
    )
    if proc.returncode != 0:
        raise RuntimeError(f"worker failed for {cfgs}:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _run_cases(args, cfgs: list[dict]) -> list[dict]:
    """Run configurations in fresh subprocesses (see the module docstring for why). On the
    CPU, memory is measured in one with the mmap threshold pinned and time in another with
    glibc's default: the pinned threshold makes every allocation above 128 KiB a fresh mapping
    (page faults on each), which would charge code that allocates per block for an artefact of
    the memory measurement."""
    if all(c["device"] == "cpu" for c in cfgs):
        mem = _worker_run(args, [{**c, "measure": "memory"} for c in cfgs], pinned=True)
        tim = _worker_run(args, [{**c, "measure": "time"} for c in cfgs], pinned=False)
        results = [
            {name: {**m.get(name, {}), **t.get(name, {})} for name in t} for m, t in zip(mem, tim)
        ]
    else:
        results = _worker_run(args, cfgs, pinned=True)
    for cfg, res in zip(cfgs, results):
        for name in ("math", "std"):
            if name not in cfg["impls"]:
                res[name] = None  # skipped (memory)
    return results


def _fmt(x: float | None, nd: int = 1) -> str:
    return "n/a" if x is None else f"{x:.{nd}f}"


def _ratio(a: dict | None, b: dict | None, key: str) -> float | None:
    if not a or not b or a.get(key) is None or not b.get(key):
        return None
    return a[key] / b[key]


def _rstr(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}x"


def _iir(c: dict) -> str | None:
    return "decay" if c["decay"] is not None else ("tau" if c.get("tau") is not None else None)


def _case_label(c: dict) -> tuple[str, str, str, str]:
    iir = _iir(c)
    return (
        c["device"],
        str(c["L"]),
        "yes" if c["causal"] else "no",
        "-"
        if iir is None
        else (f"gamma={c['decay']:g}" if iir == "decay" else f"tau={c['tau']:g}"),
    )


def _time_table(cases: list[dict]) -> list[str]:
    head = (
        "| device | L | causal | IIR | std fwd ms | plain fwd ms | fused fwd ms | math fwd ms | "
        "**fused/std fwd** | **fused/plain fwd** | std f+b ms | plain f+b ms | fused f+b ms | "
        "math f+b ms | **fused/std f+b** | **fused/plain f+b** |"
    )
    lines = [head, "|" + "---|" * 16]
    for c in cases:
        r = c["res"]
        s, f, m, pl = r.get("std"), r["fused"], r.get("math"), r.get("plain")
        row = [*_case_label(c)]
        for mode in ("fwd", "fwdbwd"):
            key = f"{mode}_ms"
            row += [
                "skipped (memory)" if s is None else _fmt(s[key]),
                "= std" if pl is None else _fmt(pl[key]),
                _fmt(f[key]),
                "skipped (memory)" if m is None else _fmt(m[key]),
                _rstr(_ratio(f, s, key)),
                _rstr(_ratio(f, pl or s, key)),
            ]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def _mem_table(cases: list[dict]) -> list[str]:
    head = (
        "| device | L | causal | IIR | std fwd MiB | plain fwd MiB | fused fwd MiB | "
        "math fwd MiB | std f+b MiB | plain f+b MiB | fused f+b MiB | math f+b MiB |"
    )
    lines = [head, "|" + "---|" * 12]
    for c in cases:
        r = c["res"]
        row = [*_case_label(c)]
        for mode in ("fwd", "fwdbwd"):
            key = f"{mode}_mib"
            for name in ("std", "plain", "fused", "math"):
                x = r.get(name)
                if name == "plain" and x is None and _iir(c) is None:
                    row.append("= std")
                else:
                    row.append("skipped (memory)" if x is None else _fmt(x[key]))
        lines.append("| " + " | ".join(row) + " |")
    return lines


def _linear_pairs(sel: list[dict], impl: str, mode: str, min_l: int = 0):
    """(L, peak(2L)/peak(L) of impl, same ratio of plain causal std) over consecutive L."""
    by_l = {c["L"]: c for c in sel}
    pairs = []
    for c in sorted(sel, key=lambda c: c["L"]):
        c2 = by_l.get(2 * c["L"])
        if c["L"] < min_l or c2 is None or not c["res"][impl][mode]:
            continue
        ref = "plain" if c["res"].get("plain") else "std"
        r_ref = c2["res"][ref][mode] / max(c["res"][ref][mode] or 1e-9, 1e-9)
        pairs.append((c["L"], c2["res"][impl][mode] / c["res"][impl][mode], r_ref))
    return pairs


def _worst_ratio(sel: list[dict], ref: str, mode: str, target: float):
    """fused / ``ref`` in ``mode`` over the cases ``sel``: ``(all within target, number
    within, number measured, worst ratio, its case, median)``, or None if none measured."""
    rs = [(c, _ratio(c["res"]["fused"], c["res"].get(ref), mode)) for c in sel]
    rs = [(c, r) for c, r in rs if r is not None]
    if not rs:
        return None
    worst_c, worst = max(rs, key=lambda t: t[1])
    n_in = sum(r <= target for _, r in rs)
    median = statistics.median(r for _, r in rs)
    return n_in == len(rs), n_in, len(rs), worst, worst_c, median


def _targets(cases: list[dict], devices: list[str], args) -> list[str]:
    out = []

    def verdict(ok: bool) -> str:
        return "PASS" if ok else "MISS"

    # 1. CPU time, no IIR: fused / std at every L, causal and not.
    cpu = [c for c in cases if c["device"] == "cpu"]
    for label, sel, ref in (
        ("no IIR, vs std", [c for c in cpu if _iir(c) is None], "std"),
        ("decay, vs std with the same bias (information)", [c for c in cpu if _iir(c)], "std"),
    ):
        for mode, name in (("fwd_ms", "fwd"), ("fwdbwd_ms", "fwd+bwd")):
            got = _worst_ratio(sel, ref, mode, CPU_TIME_TARGET)
            if got is None:
                continue
            ok, n_in, n, worst, worst_c, median = got
            out.append(
                f"- {verdict(ok)} CPU fused/std {name} <= {CPU_TIME_TARGET}x "
                f"({label}): {n_in}/{n} within; worst {worst:.2f}x at "
                f"L={worst_c['L']}, causal={worst_c['causal']}; median {median:.2f}x"
            )
    # 2. IIR at the goal length: memory and time against plain causal std.
    for dev in devices:
        goal = [c for c in cases if c["device"] == dev and c["causal"] and _iir(c)]
        goal = [c for c in goal if c["L"] == IIR_GOAL_L]
        if not goal:
            out.append(f"- NOT MEASURED {dev} IIR goals: no causal IIR row at L={IIR_GOAL_L}")
        for c in goal:
            f, pl = c["res"]["fused"], c["res"]["plain"]
            what = f"{dev} causal {_iir(c)} L={IIR_GOAL_L}"
            for mode, name in (("fwd_mib", "fwd"), ("fwdbwd_mib", "fwd+bwd")):
                r = _ratio(f, pl, mode)
                out.append(
                    f"- {verdict(r is not None and r <= IIR_MEMORY_TARGET)} {what} extra peak "
                    f"memory fused/plain std {name} <= {IIR_MEMORY_TARGET}x: {_rstr(r)} "
                    f"({_fmt(f[mode])} vs {_fmt(pl[mode])} MiB)"
                )
            for mode, name in (("fwd_ms", "fwd"), ("fwdbwd_ms", "fwd+bwd")):
                r = _ratio(f, pl, mode)
                ok = r is not None and r <= IIR_TIME_TARGET
                tag = verdict(ok) if _iir(c) == "decay" else "INFO"
                out.append(
                    f"- {tag} {what} time fused/plain std {name} <= {IIR_TIME_TARGET}x "
                    f"(decay_tol={args.decay_tol:g}): {_rstr(r)}"
                )
    # 3. CUDA time at long L.
    gpu = [c for c in cases if c["device"] == "cuda" and c["L"] >= CUDA_TARGET_MIN_L]
    if "cuda" not in devices:
        out.append(
            f"- NOT MEASURED CUDA fused/std <= {CUDA_TIME_TARGET}x at L >= "
            f"{CUDA_TARGET_MIN_L}: no CUDA device in this run"
        )
    elif gpu:
        for mode, name in (("fwd_ms", "fwd"), ("fwdbwd_ms", "fwd+bwd")):
            got = _worst_ratio(gpu, "std", mode, CUDA_TIME_TARGET)
            if got is None:
                continue
            ok, n_in, n, worst, worst_c, _ = got
            out.append(
                f"- {verdict(ok)} CUDA fused/std {name} <= {CUDA_TIME_TARGET}x at L >= "
                f"{CUDA_TARGET_MIN_L}: {n_in}/{n} within; worst {worst:.2f}x "
                f"at L={worst_c['L']}, causal={worst_c['causal']}, IIR={_iir(worst_c)}"
            )
    # 4. Linear memory: no IIR (all L), and causal decay / timestamps from IIR_LINEAR_MIN_L.
    for dev in devices:
        groups = [(f"no IIR, causal={causal}", None, causal, 0) for causal in (False, True)]
        groups += [(f"causal {k}", k, True, IIR_LINEAR_MIN_L) for k in ("decay", "tau")]
        for label, kind, causal, min_l in groups:
            sel = [
                c for c in cases if c["device"] == dev and _iir(c) == kind and c["causal"] == causal
            ]
            for mode, name in (("fwd_mib", "fwd"), ("fwdbwd_mib", "fwd+bwd")):
                pairs = _linear_pairs(sel, "fused", mode, min_l)
                if not pairs:
                    out.append(
                        f"- NOT MEASURED {dev} fused peak memory linear in L ({label}, {name}): "
                        "need L and 2L"
                    )
                    continue
                ok = all(r <= LINEAR_MEMORY_MAX_RATIO for _, r, _ in pairs)
                desc = ", ".join(f"{L}->{2 * L}: {r:.2f} (std {rs:.2f})" for L, r, rs in pairs)
                out.append(
                    f"- {verdict(ok)} {dev} fused peak memory linear in L ({label}, {name}; "
                    f"peak(2L)/peak(L) <= {LINEAR_MEMORY_MAX_RATIO}, linear = 2, quadratic = 4): "
                    f"{desc}"
                )
    return out


def _parse(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: L in {256, 512}, 1 repeat, 1 warm-up, one subprocess",
    )
    p.add_argument(
        "--lengths",
        type=int,
        nargs="+",
        default=None,
        help="sequence lengths (default: powers of 2 from 256 to 8192)",
    )
    p.add_argument(
        "--cpu-max-len",
        type=int,
        default=4096,
        help="cap on L for the CPU sweep (the 8192 row alone takes longer than the "
        "rest of the sweep on 2 cores); 0 = no cap",
    )
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--head-dim", type=int, default=64)
    p.add_argument("--decay", type=float, default=0.99, help="gamma of the decay rows")
    p.add_argument(
        "--tau",
        type=float,
        default=20.0,
        help="time constant of the timestamp rows (irregular steps of mean 1)",
    )
    p.add_argument(
        "--decay-tol",
        type=float,
        default=1e-6,
        help="projection_sdpa(decay_tol=) of the fused IIR rows (0 = exact, nothing skipped)",
    )
    p.add_argument(
        "--iir-max-len",
        type=int,
        default=16384,
        help="causal decay / timestamp rows also run at powers of 2 from "
        f"{IIR_LINEAR_MIN_L} to this L (0 = none beyond the sweep)",
    )
    p.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    p.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="minimum timed repeats (median reported); short calls get more, up to "
        f"{MAX_REPEATS} (~{MIN_TIMED_S} s of timed work); --quick: exactly 1",
    )
    p.add_argument("--warmup", type=int, default=1, help="untimed warm-up calls per mode")
    p.add_argument(
        "--threads",
        type=int,
        default=len(os.sched_getaffinity(0)),
        help="torch.set_num_threads (default: all cores available)",
    )
    p.add_argument(
        "--mem-cap-gib",
        type=float,
        default=4.0,
        help="skip the math backend where its (B·H, L, S) tensors would exceed this",
    )
    p.add_argument(
        "--devices",
        nargs="+",
        default=None,
        choices=["cpu", "cuda"],
        help="default: cpu, plus cuda when torch.cuda.is_available()",
    )
    p.add_argument("--case-timeout", type=float, default=1800.0, help="seconds per configuration")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="Markdown report path")
    p.add_argument("--no-write", action="store_true", help="print only, write no report")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = _parse(argv)
    if args.worker:
        print(json.dumps([_worker(cfg) for cfg in json.loads(args.worker)]))
        return 0

    import torch

    if args.quick:
        args.lengths = args.lengths or [256, 512]
        args.repeats, args.warmup = 1, 1
    lengths = sorted(args.lengths or [2**i for i in range(8, 14)])
    devices = args.devices or (["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"])
    if "cuda" in devices and not torch.cuda.is_available():
        raise SystemExit("--devices cuda given but torch.cuda.is_available() is False")

    notes = []
    cpu_lengths = lengths
    if "cpu" in devices and args.cpu_max_len and max(lengths) > args.cpu_max_len:
        cpu_lengths = [L for L in lengths if L <= args.cpu_max_len]
        notes.append(
            f"CPU sweep capped at L <= {args.cpu_max_len} (--cpu-max-len, the default): on a "
            "2-core machine the full sweep takes well over 10 minutes; dropped "
            f"{[L for L in lengths if L > args.cpu_max_len]} on CPU. Pass --cpu-max-len 0 for "
            "the full range."
        )
    t_start = time.time()
    load_before = os.getloadavg()
    # The sweep: every L, causal or not, without and with the decay; then causal decay and
    # timestamp rows at powers of 2 from IIR_LINEAR_MIN_L to --iir-max-len (the IIR goals).
    plan = []
    for dev in devices:
        sweep = cpu_lengths if dev == "cpu" else lengths
        plan += [(dev, L, causal, iir) for L in sweep for iir in (None, "decay") for causal in
                 (False, True)]  # fmt: skip
        top = args.iir_max_len
        iir_lengths = [2**i for i in range(11, 20) if IIR_LINEAR_MIN_L <= 2**i <= top]
        plan += [(dev, L, True, iir) for iir in ("decay", "tau") for L in iir_lengths]
    seen, groups = set(), []
    for item in plan:
        if item not in seen:
            seen.add(item)
            groups.append(_case_cfg(args, *item))
    # One fresh subprocess per configuration; --quick runs them all in one subprocess (the
    # peak-RSS reset still isolates the calls) to save the interpreter start-ups.
    groups = [groups] if args.quick else [[cfg] for cfg in groups]
    cases = []
    for group in groups:
        t0 = time.time()
        results = _run_cases(args, group)
        for cfg, res in zip(group, results):
            c = {k: cfg[k] for k in ("device", "L", "causal", "decay", "tau")}
            c.update(res=res, wall_s=(time.time() - t0) / len(group))
            cases.append(c)
            f, ref = res["fused"], res.get("plain") or res.get("std")
            print(
                f"[{' '.join(_case_label(c))}] fused/{'plain' if res.get('plain') else 'std'} "
                f"fwd {_rstr(_ratio(f, ref, 'fwd_ms'))} f+b {_rstr(_ratio(f, ref, 'fwdbwd_ms'))}"
                f"  ({c['wall_s']:.1f} s)",
                file=sys.stderr,
                flush=True,
            )
    wall = time.time() - t_start
    load_after = os.getloadavg()
    if cpu_lengths and cpu_lengths != lengths and "cpu" in devices:
        top = [c for c in cases if c["device"] == "cpu" and c["L"] == max(cpu_lengths)]
        est = 4 * sum(c["wall_s"] for c in top)  # attention time is ~quadratic in L
        notes.append(
            f"Estimated extra time for CPU L={2 * max(cpu_lengths)}: up to "
            f"~{est / 60:.0f} min (4x the wall time of the L={max(cpu_lengths)} "
            "configurations; less where the math backend is skipped)."
        )
    skipped = sorted({c["L"] for c in cases if c["res"].get("math") is None})
    if skipped:
        notes.append(
            f"math backend skipped (memory) at L in {skipped}: {MATH_LIVE_LS_TENSORS} live "
            f"(B·H, L, S) float32 tensors would exceed --mem-cap-gib {args.mem_cap_gib:g}."
        )

    cmd = "python " + " ".join(
        shlex.quote(a)
        for a in [
            str(Path(sys.argv[0]).resolve().relative_to(ROOT))
            if Path(sys.argv[0]).resolve().is_relative_to(ROOT)
            else sys.argv[0],
            *sys.argv[1:],
        ]
    )
    dev_names = ", ".join(f"{d}: {_device_name(d)}" for d in devices)
    md = [
        "# Attention benchmark: projection SDPA vs torch SDPA",
        "",
        "Generated by `experiments/bench_attention.py`; do not edit by hand.",
        "",
        f"- Command: `{cmd}`",
        f"- Date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- torch {torch.__version__}, Python {platform.python_version()}",
        f"- Devices: {dev_names}",
        f"- CPU threads: {args.threads} (torch.set_num_threads) of {os.cpu_count()} cores",
        f"- Shapes: q, k, v (B={args.batch}, H={args.heads}, L, D={args.head_dim}), L = S, "
        f"{args.dtype}; projection sigma = sqrt(D) = {math.sqrt(args.head_dim):g}; "
        f"decay gamma = {args.decay:g}; timestamps: steps uniform in (0, 2), tau = "
        f"{args.tau:g}; fused IIR rows with decay_tol = {args.decay_tol:g}",
        f"- Timing: median of >= {args.repeats} repeats (short calls: more, up to "
        f"{1 if args.quick else MAX_REPEATS}) after {args.warmup} warm-up call(s) per mode, the "
        "implementations of a configuration timed round-robin in one process; fwd under "
        "torch.no_grad(), f+b = forward + backward(grad) on leaf inputs",
        f"- Wall time of the sweep: {wall / 60:.1f} min; load average before / after: "
        f"{' '.join(f'{x:.2f}' for x in load_before)} / "
        f"{' '.join(f'{x:.2f}' for x in load_after)}",
        "",
        "**Caveat:** the CPU numbers come from a shared machine (other engineers run test suites "
        "on the same cores), so absolute times are noisy; the ratios are measured back to back "
        "in one process on the same inputs and are the figures to read.",
        "",
        "Columns: `std` = `torch.nn.functional.scaled_dot_product_attention`, with the IIR "
        "rows given the same bias `|i-j|·log(gamma)` or `-|t_i-t_j|/tau` (and `-inf` above the "
        "diagonal when causal) as a float `attn_mask` built inside the timed call (skipped where "
        "it would exceed --mem-cap-gib); `plain` = standard SDPA with no bias (only `is_causal`), "
        "the reference of the IIR goals; `fused` / `math` = `tssdpa.projection_sdpa(..., "
        "backend=...)`; the fused IIR rows run the blockwise path "
        "(`tssdpa.ops.blockwise`). A ratio < 1 means projection is faster.",
        "",
        "## Time (ms)",
        "",
        *_time_table(cases),
        "",
        "## Extra peak memory of one call (MiB)",
        "",
        "CUDA: `torch.cuda.max_memory_allocated()` minus the allocation before the call. CPU: "
        "each configuration runs in a fresh subprocess with `MALLOC_MMAP_THRESHOLD_=131072` "
        "(tensors above 128 KiB are separate mappings, returned to the OS when freed); the "
        "kernel's peak-RSS counter is reset (`/proc/self/clear_refs` <- 5) right before the call "
        "and the figure is VmHWM after minus VmRSS before. It includes the output, autograd "
        "saved tensors, gradients and kernel scratch; inputs are not counted. Resolution is a "
        "few pages, so figures below ~1 MiB are mostly noise. Times are measured in a separate "
        "subprocess with glibc's default allocator settings (the pinned threshold makes every "
        "allocation above 128 KiB a fresh mapping, which slows code that allocates per block).",
        "",
        *_mem_table(cases),
        "",
        "## Targets",
        "",
        *_targets(cases, devices, args),
        "",
    ]
    if notes:
        md += ["## Notes", "", *(f"- {n}" for n in notes), ""]
    text = "\n".join(md)
    print(text)
    if not args.no_write:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        print(f"\nwrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
