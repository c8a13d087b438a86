#!/usr/bin/env python3
"""Baselines a user would pick instead of simtlab's kernels, measured with CUDA events.

Prints one JSON object: torch.sum GB/s at 2^28 f32, cuBLAS SGEMM TFLOP/s at 4096^3 (TF32 off),
and device-to-device copy GB/s (the bandwidth roofline for memory-bound kernels).
"""
import json
import sys

import torch


def timed(fn, warmup=5, iters=20):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    times.sort()
    return times[len(times) // 2]


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda}

    n = 1 << 28
    x = torch.rand(n, device="cuda", dtype=torch.float32)
    t = timed(lambda: torch.sum(x))
    out["sum_2p28"] = {"seconds": t, "gb_per_s": n * 4 / t / 1e9}

    y = torch.empty_like(x)
    t = timed(lambda: y.copy_(x))
    out["copy_2p28"] = {"seconds": t, "gb_per_s": 2 * n * 4 / t / 1e9}
    del x, y

    m = 4096
    a = torch.rand(m, m, device="cuda", dtype=torch.float32)
    b = torch.rand(m, m, device="cuda", dtype=torch.float32)
    t = timed(lambda: torch.matmul(a, b))
    out["sgemm_4096"] = {"seconds": t, "tflops": 2 * m**3 / t / 1e12, "tf32": torch.backends.cuda.matmul.allow_tf32}

    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
