#!/usr/bin/env bash
# Installs what newscls needs from Debian 12's archive, idempotently: nothing is fetched
# when every package is already there. `--bench` adds the peers the benchmarks compare with;
# the options may come in any order.
set -euo pipefail

packages=(
  build-essential cmake pkg-config python3
  libtorch-dev libsentencepiece-dev libcli11-dev libspdlog-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libcurl4-openssl-dev libsqlite3-dev libutf8proc-dev
  # Bundle checksums: SHA-256 from libcrypto (it uses the CPU's SHA extensions).
  libssl-dev
  # `newscls serve`: cpp-httplib, built by Debian as a shared library (with OpenSSL, zlib, Brotli).
  libcpp-httplib-dev
  # Distributed bert training: LibTorch's c10d links libgloo; its headers come from here.
  libgloo-dev
  # bert's int8 GEMM calls oneDNN directly (the same 2.6 library LibTorch links).
  libdnnl-dev
  # LibTorch uses the system BLAS; OpenBLAS is about 10x faster than the reference BLAS. bert's
  # inference runtime calls its sgemm through cblas.h (libblas-dev).
  libopenblas0-pthread libblas-dev
  # Tests: /usr/bin/time measures peak memory (test_hostile_predict_memory_slow), strace
  # checks the fsync order of a bundle commit (test_bundle_durability), curl talks to
  # `newscls serve` (test_serve_*).
  time strace curl
)
# `--fuzz` adds clang and its libFuzzer runtime for scripts/fuzz.sh, `--format` clang-format
# for scripts/check_format.sh.
for arg in "$@"; do
  case "$arg" in
    --bench) packages+=(fasttext python3-sklearn python3-jieba python3-torch python3-numpy) ;;
    --fuzz) packages+=(clang libclang-rt-14-dev) ;;
    --format) packages+=(clang-format) ;;
    -h | --help)
      echo "usage: scripts/setup.sh [--bench] [--fuzz] [--format]: installs the Debian packages newscls needs (and the benchmarks' peers, the fuzzers' clang, clang-format)"
      exit 0 ;;
    *) echo "setup: unknown argument '$arg' (--bench, --fuzz, --format or --help)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
echo "setup: installing ${missing[*]}"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
