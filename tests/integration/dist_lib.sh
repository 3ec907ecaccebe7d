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
