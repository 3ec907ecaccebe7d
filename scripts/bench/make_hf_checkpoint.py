#!/usr/bin/env python3
"""Writes a random Hugging Face BERT checkpoint (config.json, model.safetensors, vocab.txt) of
any size, laid out as transformers saves BertForSequenceClassification, with the standard
library alone: safetensors is an 8-byte little-endian header length, a JSON header and the
raw tensors. Values are N(0, 0.02) drawn once and tiled (the numbers do not matter for speed).

  make_hf_checkpoint.py OUT_DIR --vocab vocab.txt [--layers 12 --hidden 768 --heads 12
                        --ff 3072 --positions 512 --labels 10 --dtype F16]
"""
import argparse
import json
import os
import random
import shutil
import struct


def tensors(a, vocab_size):
    h, ff = a.hidden, a.ff
    out = [("bert.embeddings.word_embeddings.weight", [vocab_size, h]),
           ("bert.embeddings.position_embeddings.weight", [a.positions, h]),
           ("bert.embeddings.token_type_embeddings.weight", [2, h]),
           ("bert.embeddings.LayerNorm.weight", [h]), ("bert.embeddings.LayerNorm.bias", [h])]
    for i in range(a.layers):
        p = "bert.encoder.layer.%d." % i
        for name, shape in [("attention.self.query", [h, h]), ("attention.self.key", [h, h]),
                            ("attention.self.value", [h, h]), ("attention.output.dense", [h, h]),
                            ("intermediate.dense", [ff, h]), ("output.dense", [h, ff])]:
            out += [(p + name + ".weight", shape), (p + name + ".bias", [shape[0]])]
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            out += [(p + norm + ".weight", [h]), (p + norm + ".bias", [h])]
    out += [("bert.pooler.dense.weight", [h, h]), ("bert.pooler.dense.bias", [h])]
    if a.labels:
        out += [("classifier.weight", [a.labels, h]), ("classifier.bias", [a.labels])]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--vocab", required=True)
    for key, default in [("layers", 12), ("hidden", 768), ("heads", 12), ("ff", 3072),
                         ("positions", 512), ("labels", 10)]:
        ap.add_argument("--" + key, type=int, default=default)
    ap.add_argument("--dtype", choices=["F16", "F32"], default="F16")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    shutil.copy(a.vocab, os.path.join(a.out, "vocab.txt"))
    vocab_size = sum(1 for _ in open(a.vocab, encoding="utf-8"))
    width = 2 if a.dtype == "F16" else 4
    rng = random.Random(1)
    block = struct.pack("<%d%s" % (1 << 16, "e" if width == 2 else "f"),
                        *(rng.gauss(0, 0.02) for _ in range(1 << 16)))
    header, offset = {}, 0
    specs = tensors(a, vocab_size)
    for name, shape in specs:
        n = width
        for d in shape:
            n *= d
        header[name] = {"dtype": a.dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)  # the tensors start 8-aligned, as safetensors writes them
    with open(os.path.join(a.out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head)
        for name, shape in specs:
            n = header[name]["data_offsets"][1] - header[name]["data_offsets"][0]
            reps = n // len(block) + 1
            f.write((block * reps)[:n])
    config = {"architectures": ["BertForSequenceClassification"], "model_type": "bert",
              "hidden_act": "gelu", "hidden_size": a.hidden, "num_hidden_layers": a.layers,
              "num_attention_heads": a.heads, "intermediate_size": a.ff,
              "max_position_embeddings": a.positions, "type_vocab_size": 2,
              "vocab_size": vocab_size, "layer_norm_eps": 1e-12, "pad_token_id": 0}
    if a.labels:
        config["id2label"] = {str(i): "label_%d" % i for i in range(a.labels)}
    json.dump(config, open(os.path.join(a.out, "config.json"), "w"), indent=2)


if __name__ == "__main__":
    main()
