#!/usr/bin/python3
"""Peer for bench_tfidf_rf.sh: scikit-learn's RandomForestClassifier over jieba-word TF-IDF.

The classic stage 1 that newscls tfidf-rf is measured against. Needs Debian's
python3-sklearn and python3-jieba, which install for /usr/bin/python3. Prints one JSON
line: accuracy, macro_f1, vectorise/fit/train seconds and the feature count.
"""
import argparse
import json
import logging
import time

import jieba
from sklearn.ensemble import RandomForestClassifier
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import accuracy_score, f1_score


def read_split(path):
    titles, labels = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            title, label = line.rstrip("\r\n").rsplit("\t", 1)
            titles.append(title)
            labels.append(int(label))
    return titles, labels


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", required=True, help="directory with train.txt and test.txt")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    jieba.setLogLevel(logging.WARNING)

    train_titles, train_labels = read_split(f"{args.data}/train.txt")
    test_titles, test_labels = read_split(f"{args.data}/test.txt")

    start = time.perf_counter()
    vectorizer = TfidfVectorizer(tokenizer=jieba.lcut, token_pattern=None, lowercase=True)
    x_train = vectorizer.fit_transform(train_titles)
    vectorise_seconds = time.perf_counter() - start
    forest = RandomForestClassifier(n_estimators=args.trees, n_jobs=args.jobs, random_state=args.seed)
    forest.fit(x_train, train_labels)
    train_seconds = time.perf_counter() - start

    predicted = forest.predict(vectorizer.transform(test_titles))
    print(json.dumps({
        "accuracy": accuracy_score(test_labels, predicted),
        "macro_f1": f1_score(test_labels, predicted, average="macro"),
        "vectorise_seconds": vectorise_seconds,
        "fit_seconds": train_seconds - vectorise_seconds,
        "train_seconds": train_seconds,
        "n_features": x_train.shape[1],
    }))


if __name__ == "__main__":
    main()
