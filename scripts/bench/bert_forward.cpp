// Micro-bench of a plugin family's predict_batch, the call `newscls serve`'s batcher makes:
// titles/s at each batch size, loaded the way serve loads it (plugin_loader.cpp sets
// OPENBLAS_CORETYPE before the plugin, set_threads(1) as with --threads on these cores).
// Rounds alternate over the batch sizes so that a noisy machine slows all of them alike;
// the median round of each size is reported. Prints one JSON line per batch size.
//
//   bert_forward --plugin build/src/bert/libnewscls_bert.so --family bert \
//     --bundle /path/to/bert --titles titles.txt --batches 1,32 --rounds 7 --seconds 1
// Built by scripts/bench/bench_bert_forward.sh.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <time.h>

#include "newscls/core/bundle.h"
#include "workflow/plugin_loader.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string plugin, family, bundle, titles_file, label = "run";
  std::vector<std::size_t> batches{1, 32};
  int rounds = 7, threads = 1;
  double seconds = 1;
};

std::vector<std::size_t> parse_sizes(const std::string& text) {
  std::vector<std::size_t> sizes;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) sizes.push_back(std::stoul(item));
  return sizes;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--plugin") o.plugin = v;
    else if (k == "--family") o.family = v;
    else if (k == "--bundle") o.bundle = v;
    else if (k == "--titles") o.titles_file = v;
    else if (k == "--label") o.label = v;
    else if (k == "--batches") o.batches = parse_sizes(v);
    else if (k == "--rounds") o.rounds = std::stoi(v);
    else if (k == "--threads") o.threads = std::stoi(v);
    else if (k == "--seconds") o.seconds = std::stod(v);
    else { std::fprintf(stderr, "bert_forward: unknown option %s\n", k.c_str()); std::exit(2); }
  }
  if (o.plugin.empty() || o.family.empty() || o.bundle.empty() || o.titles_file.empty()) {
    std::fprintf(stderr, "bert_forward: --plugin, --family, --bundle and --titles are required\n");
    std::exit(2);
  }
  return o;
}

struct Round {
  double wall_ms = 0, cpu_ms = 0;  // per title
};

// CPU time of the whole process (OpenBLAS's threads included): on a shared machine it
// counts the work, where wall time also counts the waits for a core.
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// One round: batches of `size` consecutive titles for `seconds`.
Round run_round(newscls::Classifier& model, const std::vector<std::string>& titles, std::size_t size,
                double seconds, std::size_t& next) {
  std::vector<std::string> batch(size);
  std::size_t done = 0;
  const auto start = Clock::now();
  const double cpu_start = process_cpu_seconds();
  double elapsed = 0;
  while (elapsed < seconds) {
    for (std::string& t : batch) t = titles[next++ % titles.size()];
    if (model.predict_batch(batch).size() != size) std::abort();
    done += size;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  }
  const auto n = static_cast<double>(done);
  return {elapsed * 1000.0 / n, (process_cpu_seconds() - cpu_start) * 1000.0 / n};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The first column of each line (a title file or a data file).
std::vector<std::string> read_titles(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) out.push_back(line.substr(0, line.find('\t')));
  if (out.empty()) {
    std::fprintf(stderr, "bert_forward: no titles in %s\n", path.c_str());
    std::exit(1);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const std::vector<std::string> titles = read_titles(o.titles_file);

  const newscls::Bundle bundle = newscls::Bundle::open(o.bundle);
  const newscls::Family& family = newscls::load_family_plugin(o.family, o.plugin);
  std::unique_ptr<newscls::Classifier> model = family.make_classifier();
  model->configure(bundle.manifest().config);
  model->load(bundle);
  model->set_threads(o.threads);

  std::size_t next = 0;
  for (std::size_t size : o.batches) run_round(*model, titles, size, 0.2, next);  // warm-up
  std::vector<std::vector<double>> wall(o.batches.size()), cpu(o.batches.size());
  for (int r = 0; r < o.rounds; ++r) {
    for (std::size_t i = 0; i < o.batches.size(); ++i) {
      const Round round = run_round(*model, titles, o.batches[i], o.seconds, next);
      wall[i].push_back(round.wall_ms);
      cpu[i].push_back(round.cpu_ms);
    }
  }
  for (std::size_t i = 0; i < o.batches.size(); ++i) {
    const double ms = median(wall[i]);
    std::printf("{\"label\": \"%s\", \"batch\": %zu, \"ms_per_title\": %.4f, \"titles_per_s\": %.1f, "
                "\"cpu_ms_per_title\": %.4f, \"rounds\": %d}\n",
                o.label.c_str(), o.batches[i], ms, 1000.0 / ms, median(cpu[i]), o.rounds);
  }
  return 0;
}
