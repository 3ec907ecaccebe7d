// Load generator for `newscls serve`: C clients, each on one keep-alive connection, post
// T titles per request to /v1/classify for S seconds, as fast as answers come back.
// Prints one JSON line: requests, titles, errors, titles/s, requests/s, latency p50/p99.
//
//   serve_loadgen --port 8080 --titles titles.txt --clients 16 --per-request 32 --seconds 10
// Built by scripts/bench/bench_serve.sh (g++ with pkg-config cpp-httplib).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string host = "127.0.0.1", titles_file, model;
  int port = 8080, clients = 16, per_request = 32;
  double seconds = 10, warmup = 1;
};

struct ClientResult {
  long requests = 0, titles = 0, errors = 0;
  std::vector<double> latencies_ms;
  std::string first_error;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--host") o.host = v;
    else if (k == "--port") o.port = std::stoi(v);
    else if (k == "--titles") o.titles_file = v;
    else if (k == "--model") o.model = v;
    else if (k == "--clients") o.clients = std::stoi(v);
    else if (k == "--per-request") o.per_request = std::stoi(v);
    else if (k == "--seconds") o.seconds = std::stod(v);
    else if (k == "--warmup") o.warmup = std::stod(v);
    else { std::fprintf(stderr, "serve_loadgen: unknown option %s\n", k.c_str()); std::exit(2); }
  }
  if (o.titles_file.empty()) { std::fprintf(stderr, "serve_loadgen: --titles FILE is required\n"); std::exit(2); }
  return o;
}

// 64 request bodies per client, cut from the titles file in turn.
std::vector<std::string> make_bodies(const std::vector<std::string>& titles, const Options& o, int client) {
  std::vector<std::string> bodies;
  std::size_t next = static_cast<std::size_t>(client) * 7919;
  for (int b = 0; b < 64; ++b) {
    nlohmann::json j = {{"titles", nlohmann::json::array()}};
    for (int t = 0; t < o.per_request; ++t) j["titles"].push_back(titles[next++ % titles.size()]);
    if (!o.model.empty()) j["model"] = o.model;
    bodies.push_back(j.dump());
  }
  return bodies;
}

void run_client(const Options& o, const std::vector<std::string>& bodies, Clock::time_point measure_from,
                Clock::time_point until, ClientResult& r) {
  httplib::Client cli(o.host, o.port);
  cli.set_keep_alive(true);
  cli.set_tcp_nodelay(true);  // headers and body are separate writes
  cli.set_read_timeout(30, 0);
  for (std::size_t i = 0; Clock::now() < until; ++i) {
    const auto start = Clock::now();
    auto res = cli.Post("/v1/classify", bodies[i % bodies.size()], "application/json");
    const auto end = Clock::now();
    if (start < measure_from) continue;
    ++r.requests;
    if (!res || res->status != 200) {
      ++r.errors;
      if (r.first_error.empty()) r.first_error = res ? std::to_string(res->status) + " " + res->body : httplib::to_string(res.error());
      continue;
    }
    r.titles += o.per_request;
    r.latencies_ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
}

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  std::vector<std::string> titles;
  std::ifstream in(o.titles_file);
  for (std::string line; std::getline(in, line);) titles.push_back(line.substr(0, line.find('\t')));
  if (titles.empty()) { std::fprintf(stderr, "serve_loadgen: no titles in %s\n", o.titles_file.c_str()); return 2; }
  std::vector<ClientResult> results(static_cast<std::size_t>(o.clients));
  std::vector<std::thread> threads;
  const auto begin = Clock::now();
  const auto measure_from = begin + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.warmup));
  const auto until = measure_from + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  for (int c = 0; c < o.clients; ++c) {
    threads.emplace_back([&, c, bodies = make_bodies(titles, o, c)] { run_client(o, bodies, measure_from, until, results[static_cast<std::size_t>(c)]); });
  }
  for (auto& t : threads) t.join();
  ClientResult all;
  for (ClientResult& r : results) {
    all.requests += r.requests;
    all.titles += r.titles;
    all.errors += r.errors;
    if (all.first_error.empty()) all.first_error = r.first_error;
    all.latencies_ms.insert(all.latencies_ms.end(), r.latencies_ms.begin(), r.latencies_ms.end());
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - measure_from).count();
  nlohmann::json out = {{"clients", o.clients}, {"per_request", o.per_request}, {"seconds", seconds},
                        {"requests", all.requests}, {"titles", all.titles}, {"errors", all.errors},
                        {"titles_per_s", all.titles / seconds}, {"requests_per_s", all.requests / seconds},
                        {"p50_ms", percentile(all.latencies_ms, 0.50)}, {"p99_ms", percentile(all.latencies_ms, 0.99)}};
  if (!all.first_error.empty()) out["first_error"] = all.first_error.substr(0, 300);
  std::printf("%s\n", out.dump().c_str());
  return all.errors == 0 ? 0 : 1;
}
