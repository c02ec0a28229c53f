"""Prints bench/torch's comparison: per size, gloo's and the backend's median
time and their ratio, the DDP step, and issue 19's targets (reported, not
asserted). usage: summary.py RESULTS.csv
"""
import csv
import sys
from collections import defaultdict


def main(path):
    table = defaultdict(dict)  # (collective, bytes) -> {impl: median_us}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            collective = row["variant"].split("/", 1)[0]
            table[(collective, int(row["bytes"]))][row["impl"]] = float(row["median_us"])
    impls = sorted({impl for medians in table.values() for impl in medians} - {"gloo", "compute", "null"})
    if len(impls) != 1:
        sys.exit(f"summary.py: expected gloo and one other backend in {path}, found {impls}")
    ours = impls[0]
    across_hosts = "@" in open(path).read()
    print(f"{'':10} {'KiB':>8} {'gloo us':>11} {ours + ' us':>14} {'gloo/' + ours:>16}")
    ratios = {}
    for (collective, nbytes), medians in sorted(table.items()):
        if "gloo" not in medians or ours not in medians:
            continue
        ratios[(collective, nbytes)] = ratio = medians["gloo"] / medians[ours]
        print(f"{collective:10} {nbytes // 1024:>8} {medians['gloo']:11.1f} {medians[ours]:14.1f} {ratio:15.2f}x")
    # The DDP step's two floors, in the same run: what each backend adds to them.
    floors = [("compute", "without DDP", "gloo over it"),
              ("null", "on a backend that moves nothing", "the best ratio any backend could reach under DDP here is")]
    for (collective, nbytes), medians in sorted(table.items()):
        if collective != "ddp_step" or "gloo" not in medians or ours not in medians:
            continue
        for impl, what, ratio_text in floors:
            if impl in medians:
                floor = medians[impl]
                print(f"ddp_step {what} {floor / 1000:.1f} ms: gloo adds {(medians['gloo'] - floor) / 1000:.1f} ms, "
                      f"{ours} {(medians[ours] - floor) / 1000:.1f} ms; {ratio_text} {medians['gloo'] / floor:.2f}x")
        # Each backend's all-reduces of the buckets alone, on top of null's step.
        buckets = table.get(("ddp_buckets", nbytes), {})
        for impl in ("gloo", ours):
            if "null" in medians and impl in buckets:
                alone = medians["null"] + buckets[impl]
                print(f"ddp_step on null plus {impl}'s bucket all-reduces alone ({buckets[impl] / 1000:.1f} ms) "
                      f"{alone / 1000:.1f} ms: {impl}'s step if they cost what they cost alone and overlapped "
                      f"nothing; its step is {medians[impl] / 1000:.1f} ms, gloo / that {medians['gloo'] / alone:.2f}x")
    allreduce = {n: r for (c, n), r in ratios.items() if c == "allreduce"}
    ddp = [r for (c, _), r in ratios.items() if c == "ddp_step"]
    if across_hosts:
        targets = [("at least as fast as gloo at every size", bool(allreduce) and min(allreduce.values()) >= 1.0)]
    else:
        targets = [("all_reduce 4 KiB >= 3x", allreduce.get(4096, 0) >= 3.0),
                   ("all_reduce 64 MiB >= 3x", allreduce.get(64 << 20, 0) >= 3.0),
                   ("DDP step >= 1.5x", bool(ddp) and ddp[0] >= 1.5)]
    for what, met in targets:
        print(f"target: {what}: {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
