#include <algorithm>
#include <filesystem>
#include <future>

#include <spdlog/spdlog.h>

#include "cascade/cascade.h"
#include "cascade/settings.h"
#include "newscls/core/atomic_file.h"
#include "newscls/core/bundle.h"
#include "newscls/core/classifier_loader.h"
#include "newscls/core/data.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "newscls/core/request_stats.h"
#include "newscls/core/sha256.h"

namespace fs = std::filesystem;

namespace newscls::cascade {
namespace {

constexpr const char* kPayload = "cascade.json";

// Copies a member bundle's manifest and payloads (what loading it needs) into dest.
void copy_bundle(const std::string& source, const std::string& dest) {
  const Bundle bundle = Bundle::open(source);
  make_directories(dest);
  fs::copy_file(manifest_path(source), manifest_path(dest), fs::copy_options::overwrite_existing);
  for (const auto& [name, sha] : bundle.manifest().payloads) {
    const fs::path target = fs::path(dest) / name;
    if (target.has_parent_path()) make_directories(target.parent_path().string());
    fs::copy_file(bundle.payload_path(name), target, fs::copy_options::overwrite_existing);
  }
}

// A member copy must be the one the cascade was trained with: each member bundle verifies its
// own payloads, but a whole member swapped for another valid bundle would pass that. (Bundles
// from before the hash was recorded are taken as they are.)
void check_member_manifest(const std::string& payload_path, const nlohmann::json& member, const std::string& dir) {
  if (!member.contains("manifest_sha256")) return;
  const std::string manifest = manifest_path(dir);
  if (!fs::exists(manifest)) throw ModelFormatError(payload_path, "member " + dir + " has no " + kManifestFile);
  if (sha256_file_hex(manifest) != member.at("manifest_sha256").get<std::string>()) {
    throw ModelFormatError(payload_path, "member " + member.at("dir").get<std::string>() +
                                             ": manifest.json is not the one this cascade was trained with");
  }
}

// A member given as a bare name that is no directory here (the pipeline's "fasttext") is looked
// for next to the bundle being trained: the pipeline's run folder. Bundle::open judges what is found.
std::string resolve_member(const std::string& dir, const std::string& work_dir) {
  if (fs::exists(dir)) return dir;
  const fs::path sibling = fs::path(work_dir).parent_path() / dir;
  if (!work_dir.empty() && fs::exists(sibling)) return sibling.string();
  throw ConfigError("members", "'" + dir + "' is no trained bundle (nor next to the output folder): train it first, " +
                                   "or set members=DIR,DIR[,DIR]");
}

// The cascade copies its members into its bundle: one at --out would be replaced by it.
void refuse_output_over_members(const std::vector<std::string>& dirs, const std::string& out_dir) {
  for (const std::string& dir : dirs) {
    if (!out_dir.empty() && folders_overlap(out_dir, dir)) {
      throw UsageError("--out " + out_dir + " would replace the member " + dir +
                       ": write the cascade to another folder");
    }
  }
}

void check_distinct(const std::vector<std::string>& dirs) {
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    for (std::size_t k = 0; k < i; ++k) {
      std::error_code ec;
      if (fs::equivalent(dirs[i], dirs[k], ec)) throw ConfigError("members", dirs[i] + " is listed twice");
    }
  }
}

// A member's folder as cascade.json names it: inside the bundle ("members/0"), never above it.
std::string member_dir(const Bundle& bundle, const std::string& path, const std::string& name) {
  const fs::path p(name);
  const bool inside = p.is_relative() && !p.empty() && std::none_of(p.begin(), p.end(), [](const fs::path& part) {
                        return part == ".." || part == ".";
                      });
  if (!inside) throw ModelFormatError(path, "member folder '" + name + "' is not inside the bundle");
  return bundle.dir() + "/" + name;
}

// A member's model; after the first, loaded in the background when the bundle is loaded
// (LibTorch's start-up overlaps with the first member's work) and waited for on first use.
struct Member {
  std::string dir, family;
  bool calibrated = false;  // its bundle has a temperature of its own
  std::unique_ptr<Classifier> model;
  std::future<std::unique_ptr<Classifier>> loading;
};

class CascadeClassifier final : public Classifier {
 public:
  CascadeClassifier() { configure(default_config()); }
  std::string family() const override { return "cascade"; }

  void configure(const nlohmann::json& config) override {
    check_config_keys(config, settings_table().defaults(), "cascade");
    nlohmann::json c = settings_table().defaults();
    merge_config(c, config, "cascade config");
    product_ = parse_settings(c).combine == "product";
    config_ = c;
  }
  nlohmann::json config() const override { return config_; }

  nlohmann::json train(const TrainContext& ctx) override;
  std::vector<Prediction> predict_batch(const std::vector<std::string>& titles) override;
  std::size_t preferred_batch_size() const override {
    return members_.empty() ? 1024 : members_.front().model->preferred_batch_size();
  }
  void load_every_member() {
    for (std::size_t m = 0; m < members_.size(); ++m) model(m);
  }
  void set_threads(int threads) override {
    threads_ = threads;
    for (Member& m : members_) {
      if (m.model) m.model->set_threads(threads);  // a member still loading gets them in model()
    }
  }
  void tolerate_outages() override {
    tolerate_outages_ = true;
    adopt_loaded_members();
  }
  void save(BundleWriter& bundle) const override;
  void load(const Bundle& bundle) override;
  nlohmann::json run_stats() const override;
  void reset_run_stats() override;
  double endpoint_paused_s() const override;

 private:
  void open_members(const std::vector<std::string>& dirs, const std::vector<std::string>* labels,
                    bool in_background = false);
  Classifier& model(std::size_t m);
  void adopt(Classifier& member, std::size_t index) const;
  void adopt_loaded_members() const;  // those still loading are adopted in model()
  MemberAnswers answers_on(Member& m, const Dataset& dev, std::vector<std::vector<float>>& joint) const;
  bool product() const { return product_; }

  nlohmann::json config_;
  bool product_ = true;
  std::vector<Member> members_;
  std::vector<double> thresholds_;
  std::vector<std::size_t> answered_;
  int threads_ = 1;
  bool tolerate_outages_ = false;
  bool choosing_thresholds_ = false;
};

// Every member's bundle is opened (and verified) here; with in_background the models after
// the first are loaded on other threads.
void CascadeClassifier::open_members(const std::vector<std::string>& dirs, const std::vector<std::string>* labels,
                                     bool in_background) {
  members_.clear();
  for (const std::string& dir : dirs) {
    Bundle bundle = Bundle::open(dir);
    if (labels != nullptr && bundle.manifest().labels != *labels) {
      throw ConfigError("members", dir + " was trained on other labels than the data");
    }
    if (bundle.manifest().family == "cascade") {
      throw ConfigError("members", dir + " is a cascade itself: list its members instead");
    }
    Member m{dir, bundle.manifest().family, bundle.manifest().training.contains(kCalibrationFact), nullptr, {}};
    if (in_background && !members_.empty()) {
      m.loading = std::async(std::launch::async, [b = std::move(bundle)] { return load_member_classifier(b); });
    } else {
      m.model = load_member_classifier(bundle);
    }
    members_.push_back(std::move(m));
  }
  adopt_loaded_members();  // now that which member is last is known
  answered_.assign(members_.size(), 0);
}

Classifier& CascadeClassifier::model(std::size_t m) {
  Member& member = members_[m];
  if (!member.model) {
    member.model = member.loading.get();  // rethrows the loading thread's error
    adopt(*member.model, m);
  }
  return *member.model;
}

// A title whose LLM requests all failed is sent on from a member before the last, as an unknown
// answer is; from the last, with combine=product, it gets the earlier members' product. So an
// LLM outage never stops the cascade's predictions, but with combine=last the last member's
// failed title stays failed, and whoever asked the cascade judges it as it would the LLM's own.
// Thresholds are never chosen through an outage: on dev a member keeps its own rule.
void CascadeClassifier::adopt(Classifier& member, std::size_t index) const {
  member.set_threads(threads_);
  const bool last = index + 1 == members_.size();
  if (!choosing_thresholds_ && (product() || !last || tolerate_outages_)) member.tolerate_outages();
}

void CascadeClassifier::adopt_loaded_members() const {
  for (std::size_t m = 0; m < members_.size(); ++m) {
    if (members_[m].model) adopt(*members_[m].model, m);
  }
}

// joint: per dev title, the product of the earlier members' probabilities (combine=product).
MemberAnswers CascadeClassifier::answers_on(Member& m, const Dataset& dev,
                                            std::vector<std::vector<float>>& joint) const {
  MemberAnswers a;
  joint.resize(dev.size());
  const std::size_t batch = std::max<std::size_t>(1, m.model->preferred_batch_size());
  for (std::size_t begin = 0; begin < dev.size(); begin += batch) {
    const std::size_t end = std::min(dev.size(), begin + batch);
    const std::vector<std::string> titles(dev.titles.begin() + begin, dev.titles.begin() + end);
    const std::vector<Prediction> p = m.model->predict_batch(titles);
    for (std::size_t k = 0; k < p.size(); ++k) {
      // predict_batch sends an unknown answer on whatever the threshold: below every candidate.
      a.scores.push_back(p[k].label == kUnknownLabel ? -1.0f : p[k].score);
      a.alone_correct += p[k].label == dev.labels[begin + k] ? 1 : 0;
      std::vector<float>& j = joint[begin + k];
      multiply_into(j, p[k].probs);
      const int answer = product() && !j.empty() ? prediction_from_probs(j).label : p[k].label;
      a.correct.push_back(answer == dev.labels[begin + k]);
    }
  }
  return a;
}

// Each member's family; a family that occurs twice (fasttext -> bert-quantize -> bert) is told
// apart by the member's folder name, since predict's "stage" is all a user sees.
nlohmann::json member_stage_names(const std::vector<Member>& members) {
  nlohmann::json names = nlohmann::json::array();
  for (const Member& m : members) {
    const bool repeated =
        std::count_if(members.begin(), members.end(), [&](const Member& o) { return o.family == m.family; }) > 1;
    const std::string folder = std::filesystem::path(without_trailing_slashes(m.dir)).filename().string();
    std::string name = repeated ? m.family + " (" + folder + ")" : m.family;
    if (std::find(names.begin(), names.end(), name) != names.end()) name += " #" + std::to_string(names.size() + 1);
    names.push_back(name);
  }
  return names;
}

// With combine=product every member's probabilities count, so a weak first member can pull
// the cascade below a member on its own: said, since no threshold can fix it.
void warn_if_below_a_member(const ThresholdChoice& choice, const std::vector<MemberAnswers>& dev,
                            const nlohmann::json& names, std::size_t n) {
  for (std::size_t m = 0; m < dev.size(); ++m) {
    if (dev[m].alone_correct <= choice.correct) continue;
    spdlog::warn(
        "cascade: dev accuracy {:.4f} is below {}'s alone ({:.4f}); try --set combine=last, or that member alone",
        double(choice.correct) / double(std::max<std::size_t>(1, n)), names[m].get<std::string>(),
        double(dev[m].alone_correct) / double(std::max<std::size_t>(1, n)));
    return;
  }
}

nlohmann::json CascadeClassifier::train(const TrainContext& ctx) {
  const std::string list = config_["members"].get<std::string>();
  std::vector<std::string> dirs = split_members(list);
  if (dirs.size() < 2 || dirs.size() > 3)
    throw ConfigError("members", "expected 2 or 3 bundle directories, comma-separated");
  if (std::count(list.begin(), list.end(), ',') + 1 != static_cast<std::ptrdiff_t>(dirs.size())) {
    throw ConfigError("members", "an empty entry in '" + list + "'");
  }
  for (std::string& dir : dirs) dir = resolve_member(dir, ctx.work_dir);
  check_distinct(dirs);
  refuse_output_over_members(dirs, ctx.out_dir);
  choosing_thresholds_ = true;
  open_members(dirs, &ctx.labels->names);
  std::vector<MemberAnswers> dev;
  std::vector<std::vector<float>> joint;
  nlohmann::json facts;
  for (Member& m : members_) {
    spdlog::info("cascade: {} ({}) on dev", m.dir, m.family);
    dev.push_back(answers_on(m, *ctx.dev, joint));
  }
  choosing_thresholds_ = false;
  adopt_loaded_members();  // the test evaluation is a prediction like any
  facts["stages"] = member_stage_names(members_);
  const ThresholdChoice choice = choose_thresholds(dev, config_["last_share"].get<double>(),
                                                   config_["candidates"].get<int>(), config_["slack"].get<double>());
  warn_if_below_a_member(choice, dev, facts["stages"], ctx.dev->size());
  thresholds_ = choice.thresholds;
  nlohmann::json shares = nlohmann::json::array();
  for (std::size_t a : choice.answered) shares.push_back(double(a) / std::max<std::size_t>(1, ctx.dev->size()));
  facts["thresholds"] = thresholds_;
  facts["dev_accuracy"] = double(choice.correct) / std::max<std::size_t>(1, ctx.dev->size());
  facts["dev_shares"] = shares;
  facts["members"] = dirs;
  // The members' calibrations apply (no second fit): calibrated when each member is.
  facts["calibrated"] = true;
  for (std::size_t m = 0; m < members_.size(); ++m) {
    if (members_[m].calibrated) continue;
    facts["calibrated"] = false;
    facts[kUncalibratedMembersKey].push_back(facts["stages"][m]);
    spdlog::info("cascade: member {} has no calibration; the cascade uses its scores as they are",
                 facts["stages"][m].get<std::string>());
  }
  // The calls made on dev are the choice's cost; the test figures count the test run alone.
  const nlohmann::json spent = run_stats();
  facts["selection"] = {{"requests_sent", spent["requests_sent"]}, {"cost_usd", spent["cost_usd"]}};
  reset_run_stats();
  spdlog::info("cascade thresholds {} give dev accuracy {:.4f}, shares {}", nlohmann::json(thresholds_).dump(),
               facts["dev_accuracy"].get<double>(), shares.dump());
  return facts;
}

std::vector<Prediction> CascadeClassifier::predict_batch(const std::vector<std::string>& titles) {
  std::vector<Prediction> out(titles.size());
  std::vector<std::size_t> pending(titles.size());
  for (std::size_t i = 0; i < pending.size(); ++i) pending[i] = i;
  std::vector<std::vector<float>> joint(titles.size());  // combine=product: the earlier members' product
  std::vector<int> decided(titles.size(), -1);           // the last member whose probabilities joint holds
  for (std::size_t m = 0; m < members_.size() && !pending.empty(); ++m) {
    std::vector<std::string> batch;
    for (std::size_t i : pending) batch.push_back(titles[i]);
    std::vector<Prediction> p = model(m).predict_batch(batch);
    std::vector<std::size_t> next;
    const bool last = m + 1 == members_.size();
    for (std::size_t k = 0; k < pending.size(); ++k) {
      const std::size_t i = pending[k];
      if (!p[k].probs.empty()) decided[i] = static_cast<int>(m);
      if (!last && (p[k].label == kUnknownLabel || p[k].score < thresholds_[m])) {
        if (product()) multiply_into(joint[i], p[k].probs);
        next.push_back(i);
        continue;
      }
      Prediction& answer = out[i];
      if (product() && !joint[i].empty()) {
        // An unknown last answer (no probabilities) leaves the earlier members' product: the
        // title is theirs, and so is the stage, as when thresholds were chosen on dev.
        multiply_into(joint[i], p[k].probs);
        answer = prediction_from_probs(std::move(joint[i]));
        answer.stage = decided[i];
      } else {
        answer = std::move(p[k]);
        answer.stage = static_cast<int>(m);
      }
      ++answered_[answer.stage];
    }
    pending.swap(next);
  }
  return out;
}

void CascadeClassifier::save(BundleWriter& bundle) const {
  nlohmann::json j = {{"thresholds", thresholds_}, {"members", nlohmann::json::array()}};
  for (std::size_t m = 0; m < members_.size(); ++m) {
    const std::string name = "members/" + std::to_string(m);
    copy_bundle(members_[m].dir, bundle.file_path(name));
    // The member's manifest holds its payloads' hashes, so hashing it covers the whole copy.
    const std::string manifest_sha = sha256_file_hex(manifest_path(bundle.file_path(name)));
    j["members"].push_back({{"dir", name}, {"family", members_[m].family}, {"manifest_sha256", manifest_sha}});
  }
  write_json_atomic(bundle.payload_path(kPayload), j);
}

void CascadeClassifier::load(const Bundle& bundle) {
  const std::string path = bundle.payload_path(kPayload);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path));
    thresholds_ = j.at("thresholds").get<std::vector<double>>();
    std::vector<std::string> dirs;
    for (const auto& m : j.at("members")) {
      dirs.push_back(member_dir(bundle, path, m.at("dir").get<std::string>()));
      check_member_manifest(path, m, dirs.back());
    }
    if (dirs.size() < 2 || thresholds_.size() + 1 != dirs.size())
      throw ModelFormatError(path, "members and thresholds do not match");
    // Bundles from before `combine` existed chose their thresholds for the last member alone.
    if (!bundle.manifest().config.contains("combine")) config_["combine"] = "last", product_ = false;
    open_members(dirs, &bundle.manifest().labels, /*in_background=*/true);
  } catch (const nlohmann::json::exception& e) {
    throw ModelFormatError(path, e.what());
  } catch (const ConfigError& e) {
    throw ModelFormatError(path, e.what());
  }
}

// The members' request counts, summed, beside their own (what train, eval, predict and serve
// read of any model that sends requests); a count no member keeps is left out.
nlohmann::json CascadeClassifier::run_stats() const {
  nlohmann::json j = {{"members", nlohmann::json::array()}, {"requests_sent", 0}, {"cost_usd", 0.0}};
  for (std::size_t m = 0; m < members_.size(); ++m) {
    // A member still loading has answered nothing.
    const nlohmann::json stats = members_[m].model ? members_[m].model->run_stats() : nlohmann::json::object();
    j["members"].push_back({{"family", members_[m].family}, {"answered", answered_[m]}, {"run_stats", stats}});
    j["cost_usd"] = j["cost_usd"].get<double>() + stats.value("cost_usd", 0.0);
    for (const char* key : kRequestCounts) {
      if (stats.contains(key)) j[key] = j.value(key, 0LL) + stats[key].get<long long>();
    }
  }
  return j;
}

double CascadeClassifier::endpoint_paused_s() const {
  double longest = 0;
  for (const Member& m : members_) {
    if (m.model) longest = std::max(longest, m.model->endpoint_paused_s());  // one still loading has asked nothing
  }
  return longest;
}

void CascadeClassifier::reset_run_stats() {
  for (Member& m : members_) {
    if (m.model) m.model->reset_run_stats();  // one still loading has counted nothing
  }
  answered_.assign(members_.size(), 0);
}

}  // namespace

std::unique_ptr<Classifier> make_classifier() { return std::make_unique<CascadeClassifier>(); }

void load_every_member(Classifier& cascade) { dynamic_cast<CascadeClassifier&>(cascade).load_every_member(); }

std::vector<std::string> split_members(const std::string& list) {
  std::vector<std::string> out;
  for (std::string& item : split_fields(list, ',')) {
    if (!item.empty()) out.push_back(std::move(item));
  }
  return out;
}

std::string replace_members(const std::string& list, const std::vector<std::string>& bundles) {
  for (const std::string& bundle : bundles) {
    if (bundle.find(',') != std::string::npos) {
      throw UsageError("cascade: member folder '" + bundle + "' holds a comma, which separates members; " +
                       "choose a path without one");
    }
  }
  std::string out;
  std::size_t next = 0, begin = 0;
  while (true) {
    const std::size_t end = std::min(list.find(',', begin), list.size());
    const std::string item = list.substr(begin, end - begin);
    out += item.empty() || next >= bundles.size() ? item : bundles[next++];
    if (end == list.size()) return out;
    out += ',';
    begin = end + 1;
  }
}

std::string unavailable_reason(const nlohmann::json& config) {
  if (config.value("members", std::string()).empty()) {
    return "no members: set members=DIR,DIR[,DIR] (trained bundles, cheapest first)";
  }
  return {};
}

}  // namespace newscls::cascade
