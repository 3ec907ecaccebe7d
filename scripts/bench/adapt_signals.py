#!/usr/bin/env python3
"""Signals that need no label of the feed, for choosing adaptation settings (with dev).

For each candidate bundle: its dev accuracy (the calibration's evaluation of dev, in the
manifest), the share of feed titles it answers with a calibrated score of 0.9 or more, its
agreement on the feed with each referee bundle (models of other families, trained apart; they
share the training data's biases, so agreement also rewards the same mistakes), and its reverse
validation (Zhong et al. 2010): a fasttext trained on the feed's titles alone, labelled by the
candidate, scored on dev. Labels that describe the feed well teach a model that still reads
THUCNews; the figure needs no label of the feed. Never reads the cross-domain sample.

  scripts/bench/adapt_signals.py --data /path/to/thucnews --feed FEED --referee runs/bert \
      --candidates runs/fasttext a/ft b/ft

--data (or the NEWSCLS_DATA environment variable; one of them required): the folder of the full
THUCNews data (train/dev/test.txt, class.txt). --feed (required): the unlabelled feed, titles of
another outlet one a line (toutiao_feed.txt).
"""
import argparse
import json
import os
import subprocess


def predict(binary, bundle, feed, threads):
    out = subprocess.run([binary, "--log-level", "warn", "predict", "--model-dir", bundle, "--input", feed,
                          "--format", "tsv", "--threads", str(threads)], capture_output=True, text=True, check=True)
    rows = [line.split("\t") for line in out.stdout.splitlines()]
    return [(r[1], float(r[2]) if r[2] else 0.0) for r in rows]


def reverse_validation(binary, data, feed, labels, work, threads):
    """Dev accuracy of a fasttext trained on the feed labelled by `labels` (test set = dev)."""
    import shutil
    classes = open(os.path.join(data, "class.txt"), encoding="utf-8").read().split("\n")
    ids = {name: i for i, name in enumerate(classes)}
    os.makedirs(work, exist_ok=True)
    titles = open(feed, encoding="utf-8").read().splitlines()
    with open(os.path.join(work, "train.txt"), "w", encoding="utf-8") as f:
        for title, (label, _) in zip(titles, labels):
            if label in ids and title.strip():
                f.write(f"{title}\t{ids[label]}\n")
    for name in ("dev.txt", "class.txt"):
        shutil.copy(os.path.join(data, name), os.path.join(work, name))
    shutil.copy(os.path.join(data, "dev.txt"), os.path.join(work, "test.txt"))
    subprocess.run([binary, "--log-level", "warn", "train", "--model", "fasttext", "--data", work, "--out",
                    os.path.join(work, "model"), "--threads", str(threads), "--set", "calibrate=false"],
                   capture_output=True, check=True)
    return json.load(open(os.path.join(work, "model", "metrics.json")))["accuracy"]


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(root, "build/apps/newscls/newscls"))
    ap.add_argument("--feed", required=True)
    ap.add_argument("--referee", action="append", default=[])
    ap.add_argument("--candidates", nargs="+", required=True)
    ap.add_argument("--threads", type=int, default=2)
    data_env = os.environ.get("NEWSCLS_DATA") or None
    ap.add_argument("--data", default=data_env, required=data_env is None,
                    help="the folder of the full THUCNews data (train/dev/test.txt, class.txt; default: $NEWSCLS_DATA, one of them is required)")
    ap.add_argument("--work", default="/tmp/newscls-adapt-signals")
    args = ap.parse_args()
    referees = {r: predict(args.bin, r, args.feed, args.threads) for r in args.referee}
    print("candidate dev_acc confident_share reverse_dev " + " ".join("agree:" + r for r in args.referee))
    for bundle in args.candidates:
        manifest = json.load(open(os.path.join(bundle, "manifest.json")))
        dev = manifest["training"].get("calibration", {}).get("dev_accuracy", float("nan"))
        mine = predict(args.bin, bundle, args.feed, args.threads)
        confident = sum(score >= 0.9 for _, score in mine) / len(mine)
        agree = [sum(a[0] == b[0] for a, b in zip(mine, referees[r])) / len(mine) for r in args.referee]
        reverse = reverse_validation(args.bin, args.data, args.feed, mine, os.path.join(args.work, "reverse"), args.threads)
        print(f"{bundle} {dev:.4f} {confident:.4f} {reverse:.4f} " + " ".join(f"{a:.4f}" for a in agree))


if __name__ == "__main__":
    main()
