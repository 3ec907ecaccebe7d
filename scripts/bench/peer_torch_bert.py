#!/usr/bin/python3
"""PyTorch-Python peer of newscls's bert for the throughput comparison in bench_bert.sh.

The identical architecture: character vocabulary (min count 2, [PAD] [UNK] [CLS] [SEP]
[MASK] first), token + position embeddings, LayerNorm, torch.nn.TransformerEncoder
(post-LN, GELU), a tanh pooler on [CLS] and a linear classifier; AdamW, batches bucketed
by length with dynamic padding, the key padding mask on every layer. Prints one JSON line.

  /usr/bin/python3 peer_torch_bert.py --data DIR --steps 60 --threads 2
"""
import argparse
import json
import random
import time
import unicodedata

import torch
from torch import nn

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def normalize(title):
    out = []
    for ch in title:
        c = ord(ch)
        if 0xFF01 <= c <= 0xFF5E:
            ch = chr(c - 0xFEE0)
        elif c == 0x3000:
            ch = " "
        out.append(ch.lower() if ch.isascii() else ch)
    return " ".join("".join(out).split())


def read(path):
    titles, labels = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            t, l = line.rstrip("\n").rsplit("\t", 1)
            titles.append(normalize(t))
            labels.append(int(l))
    return titles, labels


class Model(nn.Module):
    def __init__(self, vocab, layers, hidden, heads, ff, max_len, classes, dropout):
        super().__init__()
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_len, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)
        self.drop = nn.Dropout(dropout)
        layer = nn.TransformerEncoderLayer(hidden, heads, ff, dropout, activation="gelu",
                                           batch_first=True, norm_first=False, layer_norm_eps=1e-12)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.pooler = nn.Linear(hidden, hidden)
        self.classifier = nn.Linear(hidden, classes)

    def forward(self, ids, pad):
        pos = torch.arange(ids.size(1)).unsqueeze(0)
        x = self.drop(self.norm(self.tok(ids) + self.pos(pos)))
        x = self.encoder(x, src_key_padding_mask=pad)
        return self.classifier(self.drop(torch.tanh(self.pooler(x[:, 0]))))


def batches(lengths, batch_size, rng):
    order = list(range(len(lengths)))
    if rng is not None:
        rng.shuffle(order)
        pool = batch_size * 50
        order = [i for s in range(0, len(order), pool)
                 for i in sorted(order[s:s + pool], key=lambda i: lengths[i])]
    else:
        order.sort(key=lambda i: lengths[i])
    out = [order[s:s + batch_size] for s in range(0, len(order), batch_size)]
    if rng is not None:
        rng.shuffle(out)
    return out


def tensors(encoded, rows):
    t = max(len(encoded[r]) for r in rows)
    ids = torch.zeros(len(rows), t, dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, :len(encoded[r])] = torch.tensor(encoded[r])
    return ids, ids == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ff", type=int, default=1024)
    ap.add_argument("--max-len", type=int, default=64)
    ap.add_argument("--predict-titles", type=int, default=2000)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    titles, labels = read(args.data + "/train.txt")
    counts = {}
    for t in titles:
        for ch in t:
            counts[ch] = counts.get(ch, 0) + 1
    chars = sorted((c for c in counts if counts[c] >= 2), key=lambda c: (-counts[c], c.encode()))
    vocab = {tok: i for i, tok in enumerate(SPECIAL + chars[:8000 - len(SPECIAL)])}
    enc = [[2] + [vocab.get(ch, 1) for ch in t][:args.max_len - 2] + [3] for t in titles]
    model = Model(len(vocab), args.layers, args.hidden, args.heads, args.ff, args.max_len, 10, 0.1)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)
    loss_fn = nn.CrossEntropyLoss()
    rng = random.Random(1)
    model.train()
    done = 0
    seconds = 0.0
    cpu = 0.0
    for step, rows in enumerate(batches([len(e) for e in enc], args.batch_size, rng)):
        if step >= args.steps:
            break
        start = time.perf_counter()
        cpu_start = time.process_time()
        ids, pad = tensors(enc, rows)
        y = torch.tensor([labels[r] for r in rows])
        loss = loss_fn(model(ids, pad), y)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        seconds += time.perf_counter() - start
        cpu += time.process_time() - cpu_start
        done += len(rows)
    model.eval()
    test_titles, _ = read(args.data + "/test.txt")
    test = [[2] + [vocab.get(ch, 1) for ch in t][:args.max_len - 2] + [3]
            for t in test_titles[:args.predict_titles]]
    start = time.perf_counter()
    if not test:
        test = [[2, 3]]
    with torch.inference_mode():
        for rows in batches([len(e) for e in test], 256, None):
            ids, pad = tensors(test, rows)
            model(ids, pad).softmax(1)
    predict_seconds = time.perf_counter() - start
    print(json.dumps({"peer": "pytorch-python", "torch": torch.__version__, "threads": args.threads,
                      "steps": min(args.steps, step), "train_titles_per_s": done / seconds,
                      "train_titles_per_cpu_s": done / cpu,
                      "predict_titles_per_s": len(test) / predict_seconds, "last_loss": loss.item()}))


if __name__ == "__main__":
    main()
