#!/usr/bin/python3
"""Peers for bench_tfidf_rf.sh: scikit-learn's RandomForestClassifier over TF-IDF features.

--features jieba (default): the course's classic stage 1, jieba words, TfidfVectorizer's
defaults, RandomForestClassifier's defaults (min_samples_leaf 1, sqrt features per split).

--features char: the features and forest settings that were newscls tfidf-rf's defaults until
2026-12-01 (commit 56dd0ff), so that, with newscls run at the same settings (bench_tfidf_rf.sh
max_features=50000 max_features_per_split=sqrt l2_normalize=true), the comparison is of the
forest code alone: the title normalised as newscls does (full-width ASCII
to half-width, U+3000 to a space, ASCII lowercase, whitespace runs folded, trimmed), character
1-2-grams (grams that are only a space dropped), min_df 2, at most 50,000 features (the most
frequent), sublinear tf, smoothed idf, L2 rows; min_samples_leaf 3, sqrt features per split.

Needs Debian's python3-sklearn (and python3-jieba for --features jieba), which install for
/usr/bin/python3. Prints one JSON line: dev and test accuracy and macro-F1, vectorise/fit/train
seconds (wall and process CPU) and the feature count.
"""
import argparse
import json
import logging
import re
import time

from sklearn.ensemble import RandomForestClassifier
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import accuracy_score, f1_score

_SPACES = re.compile(r"\s+")


def read_split(path):
    titles, labels = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            title, label = line.rstrip("\r\n").rsplit("\t", 1)
            titles.append(title)
            labels.append(int(label))
    return titles, labels


def normalize_title(title):
    """newscls's normalize_title (include/newscls/text/normalize.h)."""
    chars = []
    for c in title:
        code = ord(c)
        if 0xFF01 <= code <= 0xFF5E:
            c = chr(code - 0xFEE0)
        elif code == 0x3000:
            c = " "
        if "A" <= c <= "Z":
            c = c.lower()
        chars.append(c)
    return _SPACES.sub(" ", "".join(chars)).strip()


def char_grams(title, n_min=1, n_max=2):
    """newscls's char_ngrams: contiguous grams, those consisting only of spaces dropped."""
    chars = normalize_title(title)
    grams = []
    for i in range(len(chars)):
        for n in range(n_min, n_max + 1):
            gram = chars[i:i + n]
            if len(gram) == n and gram.strip():
                grams.append(gram)
    return grams


def make_model(features, trees, jobs, seed):
    if features == "jieba":
        import jieba
        jieba.setLogLevel(logging.WARNING)
        vectorizer = TfidfVectorizer(tokenizer=jieba.lcut, token_pattern=None, lowercase=True)
        forest = RandomForestClassifier(n_estimators=trees, n_jobs=jobs, random_state=seed)
    else:
        vectorizer = TfidfVectorizer(analyzer=char_grams, min_df=2, max_features=50000,
                                     sublinear_tf=True, smooth_idf=True, norm="l2")
        forest = RandomForestClassifier(n_estimators=trees, n_jobs=jobs, random_state=seed,
                                        min_samples_leaf=3, max_features="sqrt")
    return vectorizer, forest


def scores(forest, vectorizer, titles, labels):
    predicted = forest.predict(vectorizer.transform(titles))
    return accuracy_score(labels, predicted), f1_score(labels, predicted, average="macro")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", required=True, help="directory with train.txt, dev.txt, test.txt")
    parser.add_argument("--features", choices=("jieba", "char"), default="jieba")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    train_titles, train_labels = read_split(f"{args.data}/train.txt")
    vectorizer, forest = make_model(args.features, args.trees, args.jobs, args.seed)

    wall0, cpu0 = time.perf_counter(), time.process_time()
    x_train = vectorizer.fit_transform(train_titles)
    wall1 = time.perf_counter()
    forest.fit(x_train, train_labels)
    # process_time misses the joblib worker threads' CPU only if they were processes; with
    # n_jobs threads (sklearn's forest uses threads) it counts them.
    wall2, cpu2 = time.perf_counter(), time.process_time()

    result = {"features": args.features, "trees": args.trees, "jobs": args.jobs,
              "vectorise_seconds": wall1 - wall0, "fit_seconds": wall2 - wall1,
              "train_seconds": wall2 - wall0, "train_cpu_seconds": cpu2 - cpu0,
              "n_features": x_train.shape[1]}
    for split in ("dev", "test"):
        titles, labels = read_split(f"{args.data}/{split}.txt")
        result[f"{split}_accuracy"], result[f"{split}_macro_f1"] = scores(forest, vectorizer,
                                                                          titles, labels)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
