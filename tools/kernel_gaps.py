#!/usr/bin/env python3
"""Median idle gap between back-to-back GPU kernels on one stream in PyTorch profiler (Kineto) traces: the source
of the GPU catalogue's kernel_overhead (docs/models.md "Compute"). Gaps of 20 us or more are host stalls, not
launch overhead, and are left out. Usage: tools/kernel_gaps.py TRACE.json.gz..."""
import gzip
import json
import statistics
import sys

for path in sys.argv[1:]:
    with (gzip.open(path) if path.endswith(".gz") else open(path)) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "kernel"]
    streams = {}
    for e in events:
        streams.setdefault(e["args"].get("stream"), []).append((e["ts"], e["dur"]))
    gaps = []
    for kernels in streams.values():
        kernels.sort()
        gaps += [b[0] - (a[0] + a[1]) for a, b in zip(kernels, kernels[1:]) if 0 <= b[0] - (a[0] + a[1]) < 20]
    print(f"{path}: {len(events)} kernels, {len(gaps)} back-to-back gaps, median {statistics.median(gaps)} us")
