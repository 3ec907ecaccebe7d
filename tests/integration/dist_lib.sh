# Helpers for the distributed bert tests: a free loopback port and the weights of a bundle.

# A TCP port nobody listens on now (the kernel's pick, released at once).
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# max_weight_diff A B: the largest absolute difference between the weights.bin tensors of two
# bert bundles (same names and shapes required).
max_weight_diff() {
  python3 - "$1/weights.bin" "$2/weights.bin" <<'PY'
import struct, sys
def tensors(path):
    raw = open(path, "rb").read()
    assert raw[:4] == b"NCBW", path
    pos = 8
    def u(fmt):
        nonlocal pos
        v = struct.unpack_from("<" + fmt, raw, pos)[0]
        pos += struct.calcsize(fmt)
        return v
    out = {}
    for _ in range(u("Q")):
        name = raw[pos + 8:pos + 8 + u("Q")].decode()
        pos += len(name.encode())
        dims = [u("Q") for _ in range(u("I"))]
        count = u("Q")
        out[name] = (dims, struct.unpack_from(f"<{count}f", raw, pos))
        pos += 4 * count
    return out
a, b = tensors(sys.argv[1]), tensors(sys.argv[2])
assert a.keys() == b.keys(), "different tensors"
worst = 0.0
for name in a:
    assert a[name][0] == b[name][0], name
    worst = max([worst] + [abs(x - y) for x, y in zip(a[name][1], b[name][1])])
print(f"{worst:.3g}")
PY
}

# tiny_setup: a scratch dir with a 400-title slice; sets dir, launch (train_distributed.sh) and
# tiny (a 20-step train command line of a tiny bert with dropout off and a 512-row bigram table).
tiny_setup() {
  dir=$(scratch)
  make_slice "$dir/data" 400 10
  launch="$NEWSCLS_SOURCE_DIR/scripts/train_distributed.sh"
  export NEWSCLS_BIN NEWSCLS_DIST_LOGS="$dir/logs"
  tiny=(train --model bert --data "$dir/data" --threads 1 --seed 5 --set layers=1 --set hidden=32
        --set heads=2 --set ff=64 --set max_len=32 --set dropout=0 --set attention_dropout=0
        --set bigram_buckets=512 --set pretrain_epochs=0 --set epochs=1 --set max_steps=20 --set calibrate=false)
}
