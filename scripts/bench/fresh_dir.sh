# Sourced by the benches that clear a work folder before a run. Its name comes from the
# environment (WORK), which may name anything: some sites export WORK as a whole file system.
# So only a missing or empty folder, or one a newscls bench made (it holds the marker below),
# is cleared.
bench_marker=.newscls-bench

# fresh_dir DIR: DIR emptied and marked, or exit 2 naming it.
fresh_dir() {
  if [[ -L $1 || (-e $1 && ! -d $1) ]] || [[ -d $1 && ! -f $1/$bench_marker && -n $(ls -A "$1" 2>/dev/null) ]]; then
    echo "$(basename "$0"): $1 is not a folder a newscls bench made (nor empty): name another" >&2
    exit 2
  fi
  rm -rf "$1" && mkdir -p "$1" && : >"$1/$bench_marker"
}
