#!/usr/bin/env python3
# llama-bench-bandwidth.py: generation speed as a share of the machine's read
# bandwidth, for llama.cpp's llama-bench on a ggml library (this one or
# upstream's), with the bandwidth measured in the same run.
#
#   scripts/llama-bench-bandwidth.py --llama-bench PATH [--lib DIR] --bench-matmul PATH
#                                    [-n 64] [-r 2] [-t 2] [--no-mmap] MODEL.gguf...
#
# For each model, in this order: the read bandwidth (bench-matmul --bandwidth,
# this tree's bench, 2 threads), llama-bench -p 0 -n N (its JSON output),
# the read bandwidth again. The weights a token reads are every tensor of the
# file but the token embedding (a generated token reads one of its rows),
# unless the model has no output matrix (then the embedding is the output
# layer and is read whole). The tensors' sizes come from the GGUF header: the
# distance between consecutive data offsets (the last one to the end of the
# file), so no table of types is needed.
#
# Prints per model: tokens/s, ms/token, weight MB per token, their GB/s, the
# bandwidth measured before and after (the higher is the reference) and the
# share of it. --lib DIR is put first on LD_LIBRARY_PATH for llama-bench.
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


def bandwidth(bench_matmul, threads):
    out = subprocess.run([bench_matmul, "--bandwidth", "-t", str(threads)], capture_output=True, text=True, check=True).stdout
    m = re.search(r"read bandwidth ([0-9.]+) GB/s", out)
    if m is None:
        raise RuntimeError("bench-matmul --bandwidth printed no bandwidth:\n" + out)
    return float(m.group(1))


def llama_bench_tg(llama_bench, lib, model, n_gen, reps, threads, no_mmap):
    env = dict(os.environ)
    if lib:
        env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    cmd = [llama_bench, "-m", model, "-p", "0", "-n", str(n_gen), "-r", str(reps), "-t", str(threads), "-o", "json"]
    if no_mmap:
        cmd += ["-mmp", "0"]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), res.stderr[-2000:]))
    rows = json.loads(res.stdout)
    tg = [r for r in rows if r.get("n_gen", 0) > 0 and r.get("n_prompt", 0) == 0]
    if not tg:
        raise RuntimeError("llama-bench printed no generation row")
    return float(tg[0]["avg_ts"]), float(tg[0].get("stddev_ts", 0.0))


def main():
    ap = argparse.ArgumentParser(description="generation speed as a share of the read bandwidth, for llama-bench")
    ap.add_argument("--llama-bench", required=True)
    ap.add_argument("--lib", default="")
    ap.add_argument("--bench-matmul", required=True)
    ap.add_argument("-n", type=int, default=64)
    ap.add_argument("-r", type=int, default=2)
    ap.add_argument("-t", type=int, default=2)
    ap.add_argument("--no-mmap", action="store_true", help="llama-bench -mmp 0: the weights in allocated memory")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()

    print("%-34s %9s %8s %9s %8s %15s %7s" % ("model", "tokens/s", "ms/tok", "MB/tok", "GB/s", "read GB/s b/a", "share"))
    for model in a.models:
        wb = weight_bytes_per_token(model)
        bw0 = bandwidth(a.bench_matmul, a.t)
        ts, sd = llama_bench_tg(a.llama_bench, a.lib, model, a.n, a.r, a.t, a.no_mmap)
        bw1 = bandwidth(a.bench_matmul, a.t)
        gbs = wb * ts * 1e-9
        ref = max(bw0, bw1)
        print("%-34s %9.2f %8.3f %9.2f %8.2f %7.1f/%-7.1f %6.1f%%" % (
            os.path.basename(model), ts, 1e3 / ts, wb * 1e-6, gbs, bw0, bw1, 100.0 * gbs / ref))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
