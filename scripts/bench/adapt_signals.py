#!/usr/bin/env python3
"""Signals that need no label of the feed, for choosing adaptation settings (with dev).

For each candidate bundle: its dev accuracy (the calibration's evaluation of dev, in the
manifest), the share of feed titles it answers with a calibrated score of 0.9 or more, and its
agreement on the feed with each referee bundle: models of other families, trained apart, whose
errors are not the candidate's, so that agreement rises when the candidate's accuracy on the
feed rises. Never reads the cross-domain sample.

  scripts/bench/adapt_signals.py --feed FEED --referee runs/bert --candidates runs/fasttext a/ft b/ft
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


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(root, "build/apps/newscls/newscls"))
    ap.add_argument("--feed", required=True)
    ap.add_argument("--referee", action="append", default=[])
    ap.add_argument("--candidates", nargs="+", required=True)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    referees = {r: predict(args.bin, r, args.feed, args.threads) for r in args.referee}
    print("candidate dev_acc confident_share " + " ".join("agree:" + r for r in args.referee))
    for bundle in args.candidates:
        manifest = json.load(open(os.path.join(bundle, "manifest.json")))
        dev = manifest["training"].get("calibration", {}).get("dev_accuracy", float("nan"))
        mine = predict(args.bin, bundle, args.feed, args.threads)
        confident = sum(score >= 0.9 for _, score in mine) / len(mine)
        agree = [sum(a[0] == b[0] for a, b in zip(mine, referees[r])) / len(mine) for r in args.referee]
        print(f"{bundle} {dev:.4f} {confident:.4f} " + " ".join(f"{a:.4f}" for a in agree))


if __name__ == "__main__":
    main()
