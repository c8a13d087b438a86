#!/usr/bin/env python3
"""Turns the outputs of benches/gpu_multi.sh (directories where its multi.tar was unpacked) into
the multi-GPU tables (markdown), and says which of the issue's targets each run meets
(seconds exclude the start heuristic): a fixed tree (a search no limit stopped) of 20 s or more
on one GPU 1.9x on 2 GPUs or ranks and 3.6x on 4, against the one-GPU run of the same turn;
every fixed tree the same node count on every device count; a time-limited run's node rate
0.9x per GPU against the one-GPU rate of the same instance; the sharded `reproduce --quick`
merged without error. A target with no run to show it is said to be missing. Where a run had
more devices or ranks than the host had GPUs (devices.json), they shared GPUs: its label says so
and no target applies to it.

    python3 benches/multi_table.py DIR [DIR ...]
"""
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

# the speed-ups the issue asks of a fixed tree, by device count, and how long that tree must
# last on one GPU (ta023 LB1 with UB = optimum: 26.6 s when the issue was written, 22.4 s now;
# the short trees of the `solve` part are shown without targets)
TARGET = {2: 1.9, 4: 3.6}
LONG_TREE = 20.0

# solve() in gpu_multi.sh names a run INSTANCE-d<DEVICES><its arguments>[-run<K>]
NAME = re.compile(r"(ta\d+)-d(r?)(\d+)(.*?)(?:-run(\d+))?")


def spaced(n):
    return f"{n:,}".replace(",", " ")


def shown(ratio, target):
    """A speed-up, with three decimals where two would round it up to a target it misses."""
    return f"{ratio:.2f}×" if ratio >= target else f"{ratio:.3f}×, < {target:g}×"


def shared(count, gpus):
    """Whether `count` devices or ranks had fewer GPUs than that (None: not known)."""
    return gpus is not None and gpus < count


def devices_label(ranks, count, gpus=None):
    """`gpus`: the GPUs of the run's host, where fewer than `count` (the devices shared them)."""
    if shared(count, gpus):
        return f"{count} {'MPI ranks' if ranks else 'devices'} on {gpus} GPU{'s' if gpus > 1 else ''}"
    return f"{count} {'MPI ranks' if ranks else 'GPUs' if count > 1 else 'GPU'}"


def host_gpus(d):
    """The GPUs gpu_multi.sh found on its host (distinct PCI buses), or None without devices.json."""
    try:
        adapters = json.loads((Path(d) / "devices.json").read_text())
    except (OSError, ValueError):
        return None
    return len({a.get("pci_bus") or a.get("index") for a in adapters if a.get("device_type") != "Cpu"}) or None


def load(dirs):
    """(instance, arguments) -> {(ranks, count): {turn: result}}, and the fewest GPUs of the
    directories' hosts (None where none says)"""
    groups = defaultdict(lambda: defaultdict(dict))
    gpus = [g for g in map(host_gpus, dirs) if g is not None]
    for d in dirs:
        for path in sorted(Path(d).glob("ta*.json")):
            m = NAME.fullmatch(path.stem)
            if not m:
                continue
            instance, ranks, count, args, turn = m.groups()
            try:
                result = json.loads(path.read_text())
            except ValueError as e:
                print(f"<!-- {path}: not JSON ({e}) -->")
                continue
            result["seconds_searching"] = result["seconds"] - result.get("heuristic_seconds", 0.0)
            groups[(instance, args)][(ranks == "r", int(count))][int(turn or 1)] = result
    return groups, min(gpus, default=None)


def whole(by_devices):
    """Whether every run of a group searched its whole tree (a fixed tree: no limit stopped it)."""
    return all(r.get("stopped") is None for runs in by_devices.values() for r in runs.values())


def fixed_trees(groups, gpus):
    """A table per fixed tree: seconds per turn, speed-up against one GPU of the same turn."""
    missed, long_tree = [], False
    for (instance, args), by_devices in sorted(groups.items()):
        if not whole(by_devices):
            continue
        columns = sorted(by_devices, key=lambda k: (k[0], k[1]))
        turns = sorted({t for runs in by_devices.values() for t in runs})
        print(f"\n**{instance}**{f' (`{args}`)' if args else ''}, the whole tree\n")
        print("| turn | " + " | ".join(devices_label(*c, gpus) for c in columns) + " |")
        print("| --- |" + " --- |" * len(columns))
        nodes = {r["nodes"] for runs in by_devices.values() for r in runs.values()}
        for turn in turns:
            one = by_devices.get((False, 1), {}).get(turn) or next(iter(by_devices.get((False, 1), {}).values()), None)
            cells = []
            for ranks, count in columns:
                r = by_devices[(ranks, count)].get(turn)
                if r is None:
                    cells.append("")
                    continue
                cell = f"{r['seconds_searching']:.2f} s"
                if one is not None and count > 1:
                    ratio = one["seconds_searching"] / r["seconds_searching"]
                    long_tree |= one["seconds_searching"] >= LONG_TREE
                    target = TARGET.get(count, 0.0) if one["seconds_searching"] >= LONG_TREE and not shared(count, gpus) else 0.0
                    cell += f" ({shown(ratio, target)})"
                    if ratio < target:
                        missed.append(f"{instance} {devices_label(ranks, count, gpus)}, turn {turn}: {shown(ratio, target)}")
                cells.append(cell)
            print(f"| {turn} | " + " | ".join(cells) + " |")
        if len(nodes) == 1:
            print(f"\nNode counts: {spaced(nodes.pop())} in every run.")
        else:
            print(f"\nNode counts differ: {sorted(nodes)}.")
            missed.append(f"{instance}: node counts differ")
    if not long_tree:
        missed.append(f"no fixed tree of {LONG_TREE:g} s or more on one GPU beside more devices (the `tree` part)")
    return missed


def rates(groups, gpus):
    """Node rates of the time-limited runs, against one GPU's rate on the same instance."""
    missed = []
    by_instance = defaultdict(list)
    for (instance, args), by_devices in groups.items():
        if whole(by_devices):
            continue
        for (ranks, count), runs in by_devices.items():
            for r in runs.values():
                by_instance[instance].append((ranks, count, args, r))
    for instance, runs in sorted(by_instance.items()):
        ones = [r for ranks, count, _, r in runs if count == 1 and not ranks]
        one = max((r["nodes"] / r["seconds_searching"] for r in ones), default=None)
        print(f"\n**{instance}**, node rate over a time limit\n")
        print("| devices | time limit | nodes | M nodes/s | against 1 GPU |")
        print("| --- | --- | --- | --- | --- |")
        for ranks, count, args, r in sorted(runs, key=lambda x: (x[0], x[1])):
            rate = r["nodes"] / r["seconds_searching"]
            against = ""
            if one and count > 1:
                ratio, target = rate / one, 0.0 if shared(count, gpus) else 0.9 * count
                against = shown(ratio, target)
                if ratio < target:
                    missed.append(f"{instance} {devices_label(ranks, count, gpus)}: {against}")
            limit = re.search(r"timelimit(\d+)", args)
            print(f"| {devices_label(ranks, count, gpus)} | {limit.group(1) + ' s' if limit else ''} | {spaced(r['nodes'])} | {rate / 1e6:.2f} | {against} |")
    return missed


def reproduce(dirs):
    missed, shown_any = [], False
    for d in map(Path, dirs):
        summary = d / "summary.tsv"
        lines = [l.split("\t") for l in summary.read_text().splitlines()] if summary.exists() else []
        timed = {l[0]: l for l in lines if l and l[0].startswith("reproduce-quick")}
        if not timed:
            continue
        shown_any = True
        print(f"\n`reproduce --quick`, whole and sharded ({d})\n")
        for what, line in timed.items():
            print(f"- {what}: {line[1]}, {line[5] if len(line) > 5 else '?'}")
        merge = d / "merge.log"
        merged = merge.exists() and "merge exit 0" in merge.read_text()
        print(f"- the shards' reports merged: {'yes' if merged else 'no (merge.log)'}")
        if not merged:
            missed.append(f"{d}: the shards did not merge")
    if not shown_any:
        missed.append("no `reproduce` part")
    return missed


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    groups, gpus = load(sys.argv[1:])
    if not groups:
        sys.exit(f"no gpu_multi.sh results (ta*.json) in {' '.join(sys.argv[1:])}")
    missed = fixed_trees(groups, gpus) + rates(groups, gpus) + reproduce(sys.argv[1:])
    print("\nTargets: " + ("every one met." if not missed else "missed: " + "; ".join(missed) + "."))


main()
