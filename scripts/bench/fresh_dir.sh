# Sourced by the benches that clear a folder before a run. Its name comes from the
# environment (WORK, OUT), which may name anything: some sites export WORK as a whole file
# system. So only a missing or empty folder, or one a newscls bench made (it holds the marker
# below), is cleared; for an output bundle, also a newscls bundle (as compress --out would
# replace it).
bench_marker=.newscls-bench

# fresh_dir DIR: DIR emptied and marked, or exit 2 naming it.
fresh_dir() {
  refuse_foreign_dir "$1" "$1/$bench_marker"
  rm -rf "$1" && mkdir -p "$1" && : >"$1/$bench_marker"
}

# fresh_bundle_dir DIR: DIR removed (the bench writes a bundle there), or exit 2 naming it.
fresh_bundle_dir() {
  refuse_foreign_dir "$1" "$1/manifest.json"
  rm -rf "$1"
}

refuse_foreign_dir() {  # DIR FILE-THAT-MAKES-IT-OURS
  [[ -e $1 && ! -e $2 && -n $(ls -A "$1" 2>/dev/null) ]] || return 0
  echo "$(basename "$0"): $1 is not empty and was not made by a newscls bench: name another folder" >&2
  exit 2
}
