#!/usr/bin/python3
"""Draws the all-reduce comparison from a bench/compare CSV.

usage: bench/plot.py RESULTS.csv OUT.png

Left: bus bandwidth against message size; right: median time. One bold line
per implementation (its best variant at each size), thin lines for every
variant, dashed horizontal lines for the ucx_perftest and memcpy references.
Where the CSV's mode column labels rows with the machine's speed mode
(bench/compare probes it around every launch), each implementation gets a
bold line per mode: solid for fast, dashed for slow, dotted for launches
during which the mode changed.
A bench/compare --hosts CSV (variants ending "@HxN" or "@HxN:RATE") is drawn
the same way, with ucx_perftest's tag_bw between two hosts as the reference
and the link bound (every host receives 2(H-1)/H of the message at tag_bw's
rate) as a dashed black line on both sides.
"""
import csv
import re
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")  # files only: no display on the benchmark machines
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"distribute": "tab:red", "gloo": "tab:blue", "openmpi": "tab:green", "intelmpi": "tab:brown",
          "oneccl": "tab:olive"}
LINESTYLES = {"": "-", "fast": "-", "slow": "--", "mixed": ":", "unknown": "-."}
REFERENCES = {"ucx_perftest": "tab:purple", "memcpy": "tab:gray"}


def human(nbytes):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes // scale} {unit}"
    return f"{nbytes} B"


def load(path):
    variants = defaultdict(dict)  # ((impl, mode), variant) -> {bytes: row}
    references = {}  # (impl, variant) -> its row of the largest size
    nprocs = set()
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            impl, variant = row["impl"], row["variant"]
            if impl == "ucx_exchange":
                # The TCP variants' transport ceiling: in the summary table, not
                # among the lines of every transport.
                continue
            if impl == "ucx_perftest" and variant.startswith("tag_lat"):
                continue  # a latency, no bandwidth ceiling
            if impl in REFERENCES:
                # The largest size is the ceiling for large messages.
                key = (impl, variant)
                if key not in references or int(row["bytes"]) > int(references[key]["bytes"]):
                    references[key] = row
                continue
            collective = variant.split("/", 1)[0] if "/" in variant else "allreduce"
            if collective != "allreduce":
                continue
            variants[((impl, row.get("mode") or ""), variant)][int(row["bytes"])] = row
            nprocs.add(row["nprocs"])
    return variants, references, nprocs


def hosts_layout(variants):
    """(hosts, ranks per host, rate) of a --hosts run, or None for one host."""
    for _, variant in variants:
        found = re.search(r"@(\d+)x(\d+)(?::(\S+))?$", variant)
        if found:
            return int(found.group(1)), int(found.group(2)), found.group(3)
    return None


def draw_link_bound(bw_ax, time_ax, references, layout, sizes):
    """The least time any all-reduce needs across the hosts' links."""
    rates = [float(row["busbw_GBps"]) for (impl, variant), row in references.items()
             if impl == "ucx_perftest" and variant.startswith("tag_bw")]
    if not rates:
        return
    hosts, per_host, _ = layout
    ranks = hosts * per_host
    share = 2 * (hosts - 1) / hosts  # of the message every host must receive
    rate = max(rates)
    bw_ax.axhline(rate / share * 2 * (ranks - 1) / ranks, color="black", linestyle="--", linewidth=1.2,
                  label=f"link bound ({share:.2f} x size at {rate:.2f} GB/s)")
    large = [s for s in sizes if s >= 262144]
    time_ax.plot(large, [share * s / (rate * 1e3) for s in large], color="black", linestyle="--",
                 linewidth=1.2, label="link bound")


def best_per_size(variants, impl):
    best = {}
    for (who, _), rows in variants.items():
        if who != impl:
            continue
        for size, row in rows.items():
            if size not in best or float(row["median_us"]) < float(best[size]["median_us"]):
                best[size] = row
    return dict(sorted(best.items()))


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    variants, references, nprocs = load(argv[1])
    if not variants:
        sys.stderr.write(f"plot.py: no all-reduce rows in {argv[1]}\n")
        return 1

    fig, (bw_ax, time_ax) = plt.subplots(1, 2, figsize=(15, 6))
    impls = sorted({impl for impl, _ in variants}, key=lambda i: (i[0] != "distribute", i))
    for impl in impls:
        name, mode = impl
        color = COLORS.get(name, "tab:orange")
        style = LINESTYLES.get(mode, "-")
        label = f"{name}, {mode} mode" if mode else name
        for (who, _), rows in sorted(variants.items()):
            if who != impl:
                continue
            sizes = sorted(rows)
            bw_ax.plot(sizes, [float(rows[s]["busbw_GBps"]) for s in sizes], color=color,
                       alpha=0.18, linewidth=0.8, linestyle=style)
            time_ax.plot(sizes, [float(rows[s]["median_us"]) for s in sizes], color=color,
                         alpha=0.18, linewidth=0.8, linestyle=style)
        best = best_per_size(variants, impl)
        sizes = list(best)
        bw_ax.plot(sizes, [float(best[s]["busbw_GBps"]) for s in sizes], color=color, linestyle=style,
                   linewidth=2.2, marker="o", label=f"{label} (best variant per size)")
        time_ax.plot(sizes, [float(best[s]["median_us"]) for s in sizes], color=color, linestyle=style,
                     linewidth=2.2, marker="o", label=label)

    for (impl, _), row in references.items():
        bw_ax.axhline(float(row["busbw_GBps"]), color=REFERENCES[impl], linestyle="--",
                      linewidth=1.2,
                      label=f"{impl} {row['variant']} {human(int(row['bytes']))}: "
                            f"{float(row['busbw_GBps']):.2f} GB/s")

    all_sizes = sorted({s for rows in variants.values() for s in rows})
    layout = hosts_layout(variants)
    if layout:
        draw_link_bound(bw_ax, time_ax, references, layout, all_sizes)
    for ax in (bw_ax, time_ax):
        ax.set_xscale("log", base=2)
        ax.set_xticks(all_sizes)
        ax.set_xticklabels([human(s) for s in all_sizes], rotation=45)
        ax.set_xlabel("message size (bytes per rank)")
        ax.grid(True, which="major", alpha=0.3)
    bw_ax.set_yscale("log")
    bw_ax.set_ylabel("bus bandwidth, GB/s (algbw x 2(n-1)/n)")
    time_ax.set_yscale("log")
    time_ax.set_ylabel("median time per all-reduce, us")
    bw_ax.legend(fontsize=8, loc="lower right")
    time_ax.legend(fontsize=8, loc="upper left")
    ranks = "/".join(sorted(nprocs))
    where = "on one host"
    if layout:
        where = f"on {layout[0]} emulated hosts x {layout[1]}" + (f", links shaped to {layout[2]}" if layout[2] else "")
    fig.suptitle(f"all-reduce, float32 sum, {ranks} processes {where} (thin lines: every variant)")
    fig.tight_layout()
    fig.savefig(argv[2], dpi=110)
    print(f"plot: wrote {argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
