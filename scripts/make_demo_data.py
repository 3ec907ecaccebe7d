#!/usr/bin/env python3
"""Draws the committed demo set, data/demo/, from the full THUCNews title set and a feed.

usage: scripts/make_demo_data.py THUCNEWS_DIR FEED_FILE [--out data/demo] [--seed 20261207]

A stratified sample: 300 train titles a class, 50 dev and 100 test titles a class, each split
drawn from the split of the same name and shuffled (so any prefix of a file mixes the classes);
1,000 feed lines drawn at random, unlabelled as in the feed. Lines are copied byte for byte
(U+FFFD included). SOURCE.md records the seed and each file's sha256.
"""
import argparse
import hashlib
import os
import random
from collections import defaultdict

PER_CLASS = {"train": 300, "dev": 50, "test": 100}
FEED_LINES = 1000


def read_lines(path):
    with open(path, "rb") as f:
        return [line for line in f.read().split(b"\n") if line.strip()]


def stratified(lines, per_class, rng):
    by_label = defaultdict(list)
    for line in lines:
        by_label[line.rsplit(b"\t", 1)[1]].append(line)
    drawn = []
    for label in sorted(by_label, key=int):
        drawn += rng.sample(by_label[label], per_class)
    rng.shuffle(drawn)
    return drawn


def write(path, lines):
    with open(path, "wb") as f:
        f.write(b"".join(line + b"\n" for line in lines))


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("thucnews", help="folder with train.txt, dev.txt, test.txt, class.txt")
    ap.add_argument("feed", help="unlabelled titles, one per line")
    ap.add_argument("--out", default="data/demo")
    ap.add_argument("--seed", type=int, default=20261207)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    counts = {}
    for split, n in PER_CLASS.items():
        lines = stratified(read_lines(os.path.join(a.thucnews, split + ".txt")), n, rng)
        write(os.path.join(a.out, split + ".txt"), lines)
        counts[split] = len(lines)
    with open(os.path.join(a.thucnews, "class.txt"), "rb") as src:
        classes = src.read()
    with open(os.path.join(a.out, "class.txt"), "wb") as dst:
        dst.write(classes)  # as the original: no final newline
    feed = rng.sample(read_lines(a.feed), FEED_LINES)
    write(os.path.join(a.out, "feed.txt"), feed)
    counts["feed"] = len(feed)
    for name in ("train", "dev", "test", "class", "feed"):
        path = os.path.join(a.out, name + ".txt")
        print(f"{name}.txt\t{counts.get(name, len(classes.split(chr(10).encode())))}\t{sha256(path)}")


if __name__ == "__main__":
    main()
