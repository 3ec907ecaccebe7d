#include "llm/llm_classifier.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <unordered_map>
#include <utility>

#include <spdlog/spdlog.h>

#include "llm/api_key.h"
#include "llm/llm.h"
#include "llm/reply_parser.h"
#include "newscls/core/atomic_file.h"
#include "newscls/core/data.h"
#include "newscls/core/error.h"

namespace newscls::llm {
namespace {

constexpr const char* kPromptPayload = "prompt.json";
constexpr const char* kPromptFormat = "newscls-llm-prompt";
constexpr int kPromptFormatVersion = 1;
// Titles with no answer in a row after which an endpoint tolerated down is paused: as many as
// stop a run that does not tolerate it (the engine's own count, within one call).
const std::size_t kFailedInARow = static_cast<std::size_t>(EngineOptions{}.max_consecutive_failures);

nlohmann::json prompt_to_json(const Prompt& p) {
  nlohmann::json labels = nlohmann::json::array();
  for (const LabelName& name : p.names()) labels.push_back({{"en", name.en}, {"zh", name.zh}});
  nlohmann::json examples = nlohmann::json::array();
  for (const FewShotExample& ex : p.few_shot()) examples.push_back({{"title", ex.title}, {"label", ex.label}});
  return {{"format", kPromptFormat},
          {"format_version", kPromptFormatVersion},
          {"prompt_version", p.version()},
          {"json_mode", p.json_mode()},
          {"labels", labels},
          {"system", p.system()},
          {"few_shot", examples}};
}

Prompt prompt_from_json(const nlohmann::json& j, const std::string& path) {
  try {
    if (j.at("format").get<std::string>() != kPromptFormat) throw ModelFormatError(path, "not an llm prompt");
    const int version = j.at("format_version").get<int>();
    if (version > kPromptFormatVersion) {
      throw ModelFormatError(path, "prompt format version " + std::to_string(version) +
                                       " is newer than the supported " + std::to_string(kPromptFormatVersion));
    }
    std::vector<LabelName> names;
    for (const auto& label : j.at("labels")) {
      names.push_back(make_label_name(label.at("en").get<std::string>(), label.at("zh").get<std::string>()));
    }
    std::vector<FewShotExample> examples;
    for (const auto& ex : j.at("few_shot")) {
      examples.push_back({ex.at("title").get<std::string>(), ex.at("label").get<int>()});
    }
    return Prompt::restore(std::move(names), j.at("json_mode").get<bool>(), j.at("prompt_version").get<std::string>(),
                           j.at("system").get<std::string>(), std::move(examples));
  } catch (const nlohmann::json::exception& e) {
    throw ModelFormatError(path, std::string("bad prompt payload: ") + e.what());
  } catch (const ConfigError& e) {
    throw ModelFormatError(path, e.what());
  }
}

}  // namespace

void LlmClassifier::configure(const nlohmann::json& config) {
  config_ = parse_settings(config);
  config_json_ = effective_llm_config(config);
  engine_.reset();
  cache_.reset();
  cache_opened_ = false;
  if (prompt_) adopt_prompt(*prompt_);
}

nlohmann::json LlmClassifier::train(const TrainContext& ctx) {
  if (!ctx.labels) throw UsageError("llm: training needs the label set");
  std::vector<FewShotExample> examples;
  if (config_.few_shot > 0) {
    if (!ctx.train) throw UsageError("llm: few_shot needs the training split");
    examples = draw_few_shot(*ctx.train, ctx.labels->size(), config_.few_shot, ctx.seed);
  }
  adopt_prompt(Prompt::build(label_names_for(*ctx.labels), config_.request.json_mode, std::move(examples)));
  // A relative cache path is the one named from here: stored as such, a bundle used from another
  // folder made a new, empty cache there and paid for every answer again.
  if (!config_.cache_path.empty() && config_.cache_enabled() &&
      std::filesystem::path(config_.cache_path).is_relative()) {
    config_.cache_path = std::filesystem::absolute(config_.cache_path).lexically_normal().string();
    config_json_["cache_path"] = config_.cache_path;
    spdlog::info("llm: the response cache is {} (stored so in the bundle)", config_.cache_path);
  }
  spdlog::info("llm: prompt {} with {} few-shot examples; no weights to train", prompt().version(),
               prompt().few_shot().size());
  return {{"weights", "none"},
          {"prompt_version", prompt().version()},
          {"few_shot_examples", prompt().few_shot().size()},
          {"train_seconds", 0.0}};
}

void LlmClassifier::adopt_prompt(Prompt prompt) {
  prompt_ = std::move(prompt);
  config_.request.json_mode = prompt_->json_mode();
}

const Prompt& LlmClassifier::prompt() const {
  if (!prompt_) throw UsageError("llm: model is neither trained nor loaded");
  return *prompt_;
}

std::size_t LlmClassifier::preferred_batch_size() const {
  // Big enough that the tail of a batch (retries waiting out their backoff) is short
  // next to the time the batch keeps every slot busy.
  return std::max<std::size_t>(512, static_cast<std::size_t>(config_.concurrency) * 64);
}

void LlmClassifier::save(BundleWriter& bundle) const {
  write_json_atomic(bundle.payload_path(kPromptPayload), prompt_to_json(prompt()));
}

void LlmClassifier::load(const Bundle& bundle) {
  const std::string path = bundle.payload_path(kPromptPayload);
  const auto parsed = nlohmann::json::parse(read_file(path), nullptr, false);
  if (parsed.is_discarded()) throw ModelFormatError(path, "not valid JSON");
  Prompt p = prompt_from_json(parsed, path);
  if (p.names().size() != bundle.manifest().labels.size()) {
    throw ModelFormatError(path, "prompt has " + std::to_string(p.names().size()) + " labels, the manifest " +
                                     std::to_string(bundle.manifest().labels.size()));
  }
  adopt_prompt(std::move(p));
}

ResponseCache* LlmClassifier::cache() {
  if (!cache_opened_ && config_.cache_enabled()) {
    const std::string path = resolve_cache_path(config_.cache_path);
    // A cache not made yet answers nothing: without a key the run is refused before the file is.
    if (!std::filesystem::exists(path)) resolve_api_key(config_.api_key_env, config_.base_url);
    cache_ = std::make_unique<ResponseCache>(path);
    spdlog::info("llm: response cache {}", cache_->path());
  }
  cache_opened_ = true;
  return cache_.get();
}

RequestEngine& LlmClassifier::engine() {
  if (engine_) return *engine_;
  const ApiKey key = resolve_api_key(config_.api_key_env, config_.base_url);
  fatal_context_ = {config_.chat_url(), config_.request.model,
                    key.source.empty() ? key_variables(config_.api_key_env) : key.source, key.value};
  EngineOptions options;
  options.url = config_.chat_url();
  options.headers = {"Authorization: Bearer " + key.value};
  options.concurrency = config_.concurrency;
  options.rpm = config_.rpm;
  options.timeout_s = config_.timeout_s;
  options.max_retries = config_.max_retries;
  options.backoff_base_s = config_.backoff_base_s;
  options.backoff_max_s = config_.backoff_max_s;
  options.retry_after_max_s = config_.retry_after_max_s;
  options.bypass_proxy = is_loopback_url(config_.base_url);
  engine_ = std::make_unique<RequestEngine>(std::move(options));
  return *engine_;
}

Prediction LlmClassifier::prediction_for(const std::string& content) {
  Prediction p;
  p.label = parse_reply(content, prompt().names(), prompt().json_mode());
  if (p.label == kUnknownLabel) {
    ++stats_.unknown_replies;
    return p;
  }
  p.score = 1.0f;
  p.probs.assign(prompt().names().size(), 0.0f);
  p.probs[static_cast<std::size_t>(p.label)] = 1.0f;
  return p;
}

std::vector<Prediction> LlmClassifier::predict_batch(const std::vector<std::string>& titles) {
  prompt();  // throws UsageError when neither trained nor loaded
  stats_.titles += titles.size();
  std::vector<Prediction> out(titles.size());
  std::vector<Pending> pending;
  std::unordered_map<std::string, std::size_t> pending_of_key;
  ResponseCache* responses = nullptr;
  bool from_cache = false;
  for (std::size_t row = 0; row < titles.size(); ++row) {
    if (is_blank_title(titles[row])) {
      ++stats_.empty_titles;
      continue;
    }
    responses = cache();  // opened on the first title that is not blank: blanks need neither cache nor key
    std::string body = build_request_body(config_.request, prompt().messages(titles[row]));
    std::string key = cache_key(config_.base_url, body);
    if (auto it = pending_of_key.find(key); it != pending_of_key.end()) {
      pending[it->second].rows.push_back(row);
      ++stats_.duplicate_titles;
      continue;
    }
    if (responses) {
      if (auto hit = responses->get(key)) {
        out[row] = prediction_for(hit->content);
        ++stats_.cache_hits;
        answered_any_ = from_cache = true;  // the same request was answered before
        continue;
      }
    }
    pending_of_key.emplace(key, pending.size());
    pending.push_back({std::move(key), std::move(body), {row}, titles[row]});
  }
  if (pending.empty()) return out;
  if (probe_due_ && !endpoint_paused()) {
    // The pause is over: one title, asked once, tells whether the endpoint is back.
    ask({pending.front()}, out, from_cache, /*max_retries=*/0);
    pending.erase(pending.begin());
  }
  if (endpoint_paused()) {
    for (const Pending& p : pending) fail(p, out);
  } else if (!pending.empty()) {
    ask(pending, out, from_cache);
  }
  return out;
}

void LlmClassifier::fail(const Pending& pending, std::vector<Prediction>& out) {
  stats_.failed_titles += pending.rows.size();
  for (std::size_t row : pending.rows) out[row].failed = true;
}

bool LlmClassifier::endpoint_paused() const { return endpoint_paused_s() > 0; }

double LlmClassifier::endpoint_paused_s() const {
  if (!tolerate_outages_) return 0;
  return std::max(0.0, std::chrono::duration<double>(paused_until_ - std::chrono::steady_clock::now()).count());
}

void LlmClassifier::pause_if_down(const std::string& why) {
  if (!tolerate_outages_ || failed_in_a_row_ < kFailedInARow) return;
  if (probe_due_) {
    spdlog::warn("llm: {} still gives no answer ({}); asking it nothing for another {:g} s", config_.chat_url(), why,
                 config_.backoff_max_s);
  } else {
    spdlog::warn(
        "llm: {} titles in a row got no answer from {} (last: {}); asking it nothing for {:g} s "
        "(backoff_max_s): their titles fail at once, then one title tells whether it is back",
        failed_in_a_row_, config_.chat_url(), why, config_.backoff_max_s);
  }
  paused_until_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                         std::chrono::duration<double>(config_.backoff_max_s));
  probe_due_ = true;
  failed_in_a_row_ = kFailedInARow - 1;  // the probe's failure pauses it again
}

void LlmClassifier::endpoint_answered() {
  failed_in_a_row_ = 0;
  probe_due_ = false;
}

void LlmClassifier::ask(const std::vector<Pending>& pending, std::vector<Prediction>& out, bool answered,
                        int max_retries) {
  RequestEngine& requests = engine();
  spdlog::debug("llm: asking {} for {} titles, {} in flight", config_.chat_url(), pending.size(), config_.concurrency);
  std::vector<std::string> bodies;
  bodies.reserve(pending.size());
  for (const Pending& p : pending) bodies.push_back(p.body);
  ResponseCache* responses = cache();

  // Whether the endpoint is answering: a reply, a refusal of one title or a cached answer in this
  // call says so, and the titles that still got nothing are failed titles, not an outage.
  bool answered_now = answered;
  std::vector<char> settled(pending.size(), 0);
  // Why each title's last reply was unusable, when it was a 2xx whose body was malformed: the
  // engine knows only its status, and "HTTP 200 after 6 attempt(s)" reads as if 200 failed.
  std::vector<std::string> malformed(pending.size());
  std::vector<int> attempts(pending.size(), 0);
  std::vector<char> refused_job(pending.size(), 0);
  auto on_result = [&](std::size_t job, const HttpResult& result) {
    ++attempts[job];
    malformed[job].clear();
    switch (classify(result)) {
      case Outcome::kRetryable: return Verdict::kRetry;
      case Outcome::kFatal:
        if (!answered_any_ || !refuses_one_request(result)) throw fatal_error(result, fatal_context_);
        answered_now = true;
        endpoint_answered();
        refused_job[job] = 1;
        spdlog::warn("llm: the server refused the title '{}' ({}: {}); it is predicted unknown and not cached",
                     pending[job].title, describe(result), server_said(result, fatal_context_));
        return Verdict::kGiveUp;
      case Outcome::kSuccess: break;
    }
    ChatReply reply;
    std::string why;
    if (!parse_chat_reply(result.body, reply, why)) {
      spdlog::debug("llm: malformed reply ({}), retrying", why);
      malformed[job] = "a malformed reply (" + why + ")";
      return Verdict::kRetry;
    }
    answered_any_ = answered_now = true;
    endpoint_answered();
    settled[job] = 1;
    stats_.usage += reply.usage;
    stats_.latencies_ms.push_back(result.latency_ms);
    // An empty reply is no answer to keep: a rerun asks again rather than reading it back.
    if (responses && !is_blank_title(reply.content)) responses->put(pending[job].key, reply);
    for (std::size_t row : pending[job].rows) out[row] = prediction_for(reply.content);
    return Verdict::kDone;
  };
  std::size_t given_up = 0;
  std::string last_failure;
  // A title given up on, or left unasked when the engine stopped. A refusal is the server's
  // answer for it (asking again would not help); anything else is no answer at all.
  auto unanswered = [&](std::size_t job) {
    if (refused_job[job]) {
      stats_.refused_titles += pending[job].rows.size();
      return false;
    }
    fail(pending[job], out);
    ++given_up;
    ++failed_in_a_row_;
    return true;
  };
  auto on_give_up = [&](std::size_t job, std::string why) {
    settled[job] = 1;
    if (!malformed[job].empty()) why = malformed[job] + " after " + std::to_string(attempts[job]) + " attempt(s)";
    spdlog::warn("llm: giving up on the title '{}': {}", pending[job].title, why);
    if (unanswered(job)) last_failure = why;
  };
  try {
    requests.run(bodies, on_result, on_give_up, counters_, max_retries);
  } catch (const EndpointDownError& e) {
    if (!tolerate_outages_) throw;
    // The engine stopped asking: the titles it had not settled got no answer either.
    for (std::size_t job = 0; job < pending.size(); ++job) {
      if (!settled[job]) unanswered(job);
    }
    if (last_failure.empty()) last_failure = e.what();
    failed_in_a_row_ = std::max(failed_in_a_row_, kFailedInARow);  // the engine's own count, whatever came before
  }
  pause_if_down(last_failure);
  // A server that answered nothing of this call (down, wrong port; or gone since an earlier
  // batch) is an error, not titles to answer "unknown", unless the caller judges failed titles.
  if (!answered_now && given_up > 0 && !tolerate_outages_) {
    throw HttpError(0, "no answer from " + config_.chat_url() + ": all " + std::to_string(given_up) +
                           " requests failed (last: " + last_failure + ")");
  }
}

nlohmann::json LlmClassifier::run_stats() const {
  RunStats stats = stats_;
  stats.requests_sent = counters_.requests_sent;
  stats.retries = counters_.retries;
  nlohmann::json j = stats.to_json(config_.prices);
  j["base_url"] = config_.base_url;
  j["model"] = config_.request.model;
  if (prompt_) j["prompt_version"] = prompt_->version();
  j["concurrency"] = config_.concurrency;
  return j;
}

void LlmClassifier::reset_run_stats() {
  stats_ = RunStats{};
  counters_ = EngineCounters{};
}

std::unique_ptr<Classifier> make_classifier() { return std::make_unique<LlmClassifier>(); }

nlohmann::json default_config() { return settings_table().documented(); }

}  // namespace newscls::llm
