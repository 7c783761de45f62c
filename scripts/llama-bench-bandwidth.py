#!/usr/bin/env python3
# llama-bench-bandwidth.py: generation speed as a share of the machine's read
# bandwidth, for llama.cpp's llama-bench on a ggml library (this one or
# upstream's), with the bandwidth measured in the same run.
#
#   scripts/llama-bench-bandwidth.py --llama-bench PATH [--lib DIR] --bench-matmul PATH
#                                    [-n 64] [-r 2] [--rounds 3] [-t 2] [--no-mmap] [--paired]
#                                    MODEL.gguf...
#   scripts/llama-bench-bandwidth.py --llama-bench PATH [--lib DIR] --in-process [...] MODEL.gguf...
#
# For each model, --rounds times (3 by default): llama-bench -p 0 -n N -r R
# (its JSON output) between two measures of the read bandwidth
# (bench-matmul --bandwidth, this tree's bench, the same threads); the measure
# after one round is the one before the next. The host's bandwidth can move by
# half within minutes on a shared machine, so each round is set against the
# measures that bracket it, never against a best-of taken elsewhere.
#
# The weights a token reads are every tensor of the file but the token
# embedding (a generated token reads one of its rows),
# unless the model has no output matrix (then the embedding is the output
# layer and is read whole). The tensors' sizes come from the GGUF header: the
# distance between consecutive data offsets (the last one to the end of the
# file), so no table of types is needed.
#
# Prints per round: tokens/s, ms/token, weight MB per token, their GB/s, the
# bandwidth measured before and after (the higher is the reference) and the
# share of it; then per model the median speed and the lowest, lower quartile,
# median, upper quartile and highest share. --lib DIR is put first on LD_LIBRARY_PATH for llama-bench.
#
# --paired: each measure is the median of 8 passes in the fastest pattern
# (bench-matmul --read-passes 8, a quarter of a second) instead of the best
# pass of all patterns, and a round's reference is the mean of the two
# measures that bracket it; the summary gives the median share and its
# quartiles. A best pass is a high outlier on a shared host (on the 2-core
# Zen 3 host the median pass is 15-25% below it), so the plain mode's shares
# err low; the paired one sets a run against what a plain read got around it,
# as ggml-run --bench --profile pairs each token with a read. Use more rounds
# (9 or more) and -r 1 with it: more pairs, each shorter.
# --in-process: no bench-matmul; llama-bench runs with GGML_CPU_PROFILE=paired
# (this library's CPU backend: src/ggml-cpu/cpu-profile.h), which has the
# backend's own pool read 64 MiB per thread right after every graph and sets
# each graph, with llama.cpp's own work before it, against that read; a round
# reports the medians of its graphs (tokens/s from the median time per token,
# the reads left out; the share's quartiles over its graphs). The closest
# pairing there is (each token against the read right after it, as ggml-run
# --bench --profile pairs its own); only for a library that prints it.
# --no-mmap has llama-bench read the weights into memory it allocates (-mmp 0)
# instead of mapping the file: the bandwidth bench reads freshly allocated
# memory, and on a virtual machine the page-cache pages of a file written long
# ago can read slower (on the 2-core build host, a Q8_0 model mapped from its
# old file generated 94-101 tokens/s, from a fresh copy 107-108, read into
# memory 110-112). Nothing is written.

import argparse
import json
import os
import re
import struct
import subprocess
import sys

GGUF_SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
GGUF_STRING, GGUF_ARRAY = 8, 9


def read_gguf_tensors(path):
    """[(name, offset)] of the tensors and the absolute start of the data section."""
    with open(path, "rb") as f:
        data = f.read(64 << 20)  # the header of any model fits
    pos = 0

    def take(fmt):
        nonlocal pos
        vals = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return vals[0] if len(vals) == 1 else vals

    def take_str():
        nonlocal pos
        n = take("Q")
        s = data[pos:pos + n].decode("utf-8", "replace")
        pos += n
        return s

    def skip_value(t):
        nonlocal pos
        if t in GGUF_SCALAR:
            pos += GGUF_SCALAR[t]
        elif t == GGUF_STRING:
            take_str()
        elif t == GGUF_ARRAY:
            et, n = take("I"), take("Q")
            if et in GGUF_SCALAR:
                pos += GGUF_SCALAR[et] * n
            else:
                for _ in range(n):
                    skip_value(et)
        else:
            raise ValueError("%s: unknown GGUF value type %d" % (path, t))

    if data[:4] != b"GGUF":
        raise ValueError("%s: not a GGUF file" % path)
    pos = 4
    version, n_tensors, n_kv = take("I"), take("Q"), take("Q")
    if version < 2:
        raise ValueError("%s: GGUF version %d is not read here" % (path, version))
    alignment = 32
    for _ in range(n_kv):
        key, t = take_str(), take("I")
        if key == "general.alignment" and t == 4:
            alignment = take("I")
        else:
            skip_value(t)
    tensors = []
    for _ in range(n_tensors):
        name, nd = take_str(), take("I")
        pos += 8 * nd
        take("I")  # type
        tensors.append((name, take("Q")))
    data_start = (pos + alignment - 1) // alignment * alignment
    return tensors, data_start


def weight_bytes_per_token(path):
    tensors, data_start = read_gguf_tensors(path)
    end = os.path.getsize(path) - data_start
    by_offset = sorted(tensors, key=lambda t: t[1])
    sizes = {}
    for i, (name, off) in enumerate(by_offset):
        nxt = by_offset[i + 1][1] if i + 1 < len(by_offset) else end
        sizes[name] = nxt - off
    names = set(sizes)
    total = sum(sizes.values())
    if "output.weight" in names and "token_embd.weight" in names:
        total -= sizes["token_embd.weight"]
    return total


def bandwidth(bench_matmul, threads, paired=False):
    opt = ["--read-passes", "8"] if paired else ["--bandwidth"]
    out = subprocess.run([bench_matmul] + opt + ["-t", str(threads)], capture_output=True, text=True, check=True).stdout
    m = re.search(r"read bandwidth ([0-9.]+) GB/s", out)
    if m is None:
        raise RuntimeError("bench-matmul --bandwidth printed no bandwidth:\n" + out)
    return float(m.group(1))


def run_llama_bench(llama_bench, lib, model, n_gen, reps, threads, no_mmap, extra_env=None):
    """llama-bench -p 0 -n N (JSON output): the finished process"""
    env = dict(os.environ)
    env.update(extra_env or {})
    if lib:
        env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    cmd = [llama_bench, "-m", model, "-p", "0", "-n", str(n_gen), "-r", str(reps), "-t", str(threads), "-o", "json"]
    if no_mmap:
        cmd += ["-mmp", "0"]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), res.stderr[-2000:]))
    return res


def llama_bench_tg(llama_bench, lib, model, n_gen, reps, threads, no_mmap):
    res = run_llama_bench(llama_bench, lib, model, n_gen, reps, threads, no_mmap)
    rows = json.loads(res.stdout)
    tg = [r for r in rows if r.get("n_gen", 0) > 0 and r.get("n_prompt", 0) == 0]
    if not tg:
        raise RuntimeError("llama-bench printed no generation row")
    return float(tg[0]["avg_ts"]), float(tg[0].get("stddev_ts", 0.0))


def llama_bench_in_process(llama_bench, lib, model, n_gen, reps, threads, no_mmap):
    """llama-bench with GGML_CPU_PROFILE=paired: (ms per token, weight MB per token, read GB/s, share, q1, q3),
    medians over the graphs of the CPU backend that computed the most"""
    res = run_llama_bench(llama_bench, lib, model, n_gen, reps, threads, no_mmap, {"GGML_CPU_PROFILE": "paired"})
    best = None
    for m in re.finditer(r"paired: (\d+) graphs.*?\n"
                         r"  the read after each: ([0-9.]+) GB/s.*?weights ([0-9.]+) MB a graph \(median\), "
                         r"([0-9.]+) ms a graph with the program's work before it.*?\n"
                         r".*?\n"
                         r"  each graph with the program's work before it: the weights at ([0-9.]+)% of the read after it "
                         r"\(median; quartiles ([0-9.]+)-([0-9.]+)%\)", res.stderr):
        n = int(m.group(1))
        if best is None or n > best[0]:
            best = (n, float(m.group(4)), float(m.group(3)), float(m.group(2)), float(m.group(5)),
                    float(m.group(6)), float(m.group(7)))
    if best is None:
        raise RuntimeError("%s: the library printed no paired profile (GGML_CPU_PROFILE=paired is this tree's "
                           "CPU backend's; use --paired for another library)" % llama_bench)
    return best[1:]


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def quartiles(xs):
    """the lower and upper quartiles: the medians of the lower and upper halves"""
    xs = sorted(xs)
    h = len(xs) // 2
    if h == 0:
        return xs[0], xs[0]
    return median(xs[:h]), median(xs[len(xs) - h:])


def main():
    ap = argparse.ArgumentParser(description="generation speed as a share of the read bandwidth, for llama-bench")
    ap.add_argument("--llama-bench", required=True)
    ap.add_argument("--lib", default="")
    ap.add_argument("--bench-matmul", default="", help="this tree's bench-matmul (the read measures; not with --in-process)")
    ap.add_argument("-n", type=int, default=64)
    ap.add_argument("-r", type=int, default=2, help="llama-bench repetitions per round")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of bandwidth, llama-bench, bandwidth per model")
    ap.add_argument("-t", type=int, default=2)
    ap.add_argument("--no-mmap", action="store_true", help="llama-bench -mmp 0: the weights in allocated memory")
    ap.add_argument("--paired", action="store_true",
                    help="measures: the median of 8 read passes; reference: the mean of the two around a round")
    ap.add_argument("--in-process", action="store_true",
                    help="each token against a read right after it, in llama-bench (GGML_CPU_PROFILE=paired)")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    if a.rounds < 1 or a.r < 1 or a.n < 1 or a.t < 1:
        ap.error("-n, -r, -t and --rounds must be at least 1")
    if a.in_process and a.paired:
        ap.error("--in-process and --paired are two ways of pairing: choose one")
    if not a.in_process and not a.bench_matmul:
        ap.error("--bench-matmul is needed (but with --in-process)")
    progs = [("--llama-bench", a.llama_bench)] + ([] if a.in_process else [("--bench-matmul", a.bench_matmul)])
    for opt, path in progs:
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            ap.error("%s %s: no such program (not a file that can be run)" % (opt, path))
    for model in a.models:
        if not os.path.isfile(model):
            ap.error("%s: no such model file" % model)

    print("%-34s %5s %9s %8s %9s %8s %15s %7s" % ("model", "round", "tokens/s", "ms/tok", "MB/tok", "GB/s", "read GB/s b/a", "share"))
    summary = []
    for model in a.models:
        wb = weight_bytes_per_token(model)
        shares, speeds = [], []
        if a.in_process:
            for rnd in range(a.rounds):
                ms, mb, read, share, q1, q3 = llama_bench_in_process(a.llama_bench, a.lib, model, a.n, a.r, a.t, a.no_mmap)
                ts = 1e3 / ms
                shares.append(share)
                speeds.append(ts)
                # MB/tok as the backend counted it (operands in weight buffers)
                print("%-34s %5d %9.2f %8.3f %9.2f %8.2f %7.1f %-7s %6.1f%% (graphs' quartiles %.1f-%.1f%%)" % (
                    os.path.basename(model), rnd + 1, ts, ms, mb, mb * ts * 1e-3, read, "", share, q1, q3))
                sys.stdout.flush()
            q1, q3 = quartiles(shares)
            summary.append((os.path.basename(model), median(speeds), min(shares), q1, median(shares), q3, max(shares)))
            continue
        bw_prev = bandwidth(a.bench_matmul, a.t, a.paired)
        for rnd in range(a.rounds):
            ts, sd = llama_bench_tg(a.llama_bench, a.lib, model, a.n, a.r, a.t, a.no_mmap)
            bw_next = bandwidth(a.bench_matmul, a.t, a.paired)
            gbs = wb * ts * 1e-9
            # plain: the higher of the two best passes that bracket this
            # round (a share never flattered by a slow phase of the host);
            # paired: the mean of the two medians around it
            ref = 0.5 * (bw_prev + bw_next) if a.paired else max(bw_prev, bw_next)
            share = 100.0 * gbs / ref
            shares.append(share)
            speeds.append(ts)
            print("%-34s %5d %9.2f %8.3f %9.2f %8.2f %7.1f/%-7.1f %6.1f%%" % (
                os.path.basename(model), rnd + 1, ts, 1e3 / ts, wb * 1e-6, gbs, bw_prev, bw_next, share))
            sys.stdout.flush()
            bw_prev = bw_next
        q1, q3 = quartiles(shares)
        summary.append((os.path.basename(model), median(speeds), min(shares), q1, median(shares), q3, max(shares)))
    print()
    print("%-34s %9s %39s" % ("model", "tokens/s", "share min/quartile/median/quartile/max"))
    for name, ts, lo, q1, med, q3, hi in summary:
        print("%-34s %9.2f %7.1f%%/%6.1f%%/%6.1f%%/%6.1f%%/%6.1f%%" % (name, ts, lo, q1, med, q3, hi))


if __name__ == "__main__":
    main()
