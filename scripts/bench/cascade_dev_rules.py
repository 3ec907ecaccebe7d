#!/usr/bin/env python3
"""Dev-only analysis behind issue 17's second round (no test, no cross-domain figure here).

Reads `newscls predict --top-k 10` jsonl files of dev.txt (calibrated probabilities) and prints
  1. abstention: dev accuracy on the 90% (80%) most confident titles for several confidence
     signals of single fasttext bundles and of the average of k of them (different seeds);
  2. fasttext -> bert: dev accuracy of the rules for the titles fasttext sends on, at the
     thresholds answering 95%, 92.5%, 90%, 85%, 75% of dev.

Usage: cascade_dev_rules.py DEV_TXT CLASS_TXT BERT_JSONL FASTTEXT_JSONL [FASTTEXT_JSONL...]
(the first fasttext file is the one the cascade rules use; the others are more seeds).
"""
import json
import sys


def load_probs(path, labels):
    out = []
    for line in open(path, encoding="utf-8"):
        v = [0.0] * len(labels)
        for e in json.loads(line)["top_k"]:
            v[labels.index(e["label"])] = e["score"]
        out.append(v)
    return out


def argmax(v):
    return max(range(len(v)), key=v.__getitem__)


def acc_at(signal, correct, coverage):
    order = sorted(range(len(signal)), key=lambda i: -signal[i])
    k = int(round(len(order) * coverage))
    return sum(correct[i] for i in order[:k]) / k


def combine(rule, f, b):
    if rule == "bert":
        return argmax(b)
    if rule == "product":
        return argmax([x * y for x, y in zip(f, b)])
    if rule == "mean":
        return argmax([x + y for x, y in zip(f, b)])
    top2 = sorted(range(len(f)), key=lambda k: -f[k])[:2]  # "top2": bert only within fasttext's top 2
    return argmax(b) if argmax(b) in top2 else argmax(f)


def main():
    dev, classes, bert_path, ft_paths = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    labels = [l.strip() for l in open(classes, encoding="utf-8") if l.strip()]
    y = [int(l.rstrip("\n").split("\t")[1]) for l in open(dev, encoding="utf-8")]
    fts = [load_probs(p, labels) for p in ft_paths]
    bert = load_probs(bert_path, labels)
    n = len(y)
    print("## abstention signals on dev (accuracy on the most confident 90% / 80%)")
    for k in sorted({1, min(3, len(fts)), len(fts)}):
        avg = [[sum(f[i][c] for f in fts[:k]) / k for c in range(len(labels))] for i in range(n)]
        correct = [argmax(v) == t for v, t in zip(avg, y)]
        signals = {"top score": [max(v) for v in avg],
                   "margin top1-top2": [sorted(v)[-1] - sorted(v)[-2] for v in avg]}
        if k > 1:
            signals["votes + top score"] = [sum(argmax(f[i]) == argmax(avg[i]) for f in fts[:k]) + max(avg[i])
                                            for i in range(n)]
        for name, s in signals.items():
            print(f"k={k} {name}: accuracy {sum(correct) / n:.4f}, @90% {acc_at(s, correct, 0.9):.4f},"
                  f" @80% {acc_at(s, correct, 0.8):.4f}")
    print("\n## fasttext -> bert on dev: accuracy by rule for the titles sent on")
    ft = fts[0]
    scores = sorted(max(f) for f in ft)
    for q in (2, 3, 4, 6, 10):
        t = scores[n * q // 40]
        row = []
        for rule in ("bert", "product", "mean", "top2"):
            ok = sum((argmax(f) if max(f) >= t else combine(rule, f, b)) == c for f, b, c in zip(ft, bert, y))
            row.append(f"{rule} {ok / n:.4f}")
        sent = sum(max(f) < t for f in ft) / n
        print(f"sent on {sent:.3f} (threshold {t:.4f}): " + ", ".join(row))


if __name__ == "__main__":
    main()
