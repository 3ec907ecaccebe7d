#!/usr/bin/env python3
"""Dev-derived title sets for judging robustness on text unlike THUCNews's, built from dev only.

  sub20   20% of each title's non-space characters replaced by random training characters
  joined  each dev title joined by "，" to another dev title of its class
  q       "？" appended
  half_q  the first half of each title, "？" appended

Writes OUT/dev_{sub20,joined,q,half_q}.txt (title<TAB>label_id, dev's order and labels).
docs/BENCHMARKS.md's later fasttext sets were made with --seed 7; its other dev-derived figures
came from an earlier scratch script with another draw, so their sub20 and joined differ a little.

  scripts/bench/make_dev_proxies.py --data /path/to/thucnews --out /tmp/proxy --seed 7

--data (required): the folder of the full THUCNews data (train/dev/test.txt, class.txt).
"""
import argparse
import os
import random


def read(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").rsplit("\t", 1) for line in f if line.strip()]


def write(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for title, label in rows:
            f.write(f"{title}\t{label}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    train = read(os.path.join(args.data, "train.txt"))
    dev = read(os.path.join(args.data, "dev.txt"))
    chars = [c for title, _ in train for c in title if not c.isspace()]
    os.makedirs(args.out, exist_ok=True)

    def substitute(title):
        return "".join(rng.choice(chars) if not c.isspace() and rng.random() < 0.2 else c for c in title)

    write(os.path.join(args.out, "dev_sub20.txt"), [(substitute(t), l) for t, l in dev])
    by_class = {}
    for title, label in dev:
        by_class.setdefault(label, []).append(title)
    write(os.path.join(args.out, "dev_joined.txt"), [(t + "，" + rng.choice(by_class[l]), l) for t, l in dev])
    write(os.path.join(args.out, "dev_q.txt"), [(t + "？", l) for t, l in dev])
    write(os.path.join(args.out, "dev_half_q.txt"), [(t[:max(1, len(t) // 2)] + "？", l) for t, l in dev])


if __name__ == "__main__":
    main()
