#include "workflow/calibration.h"

#include <algorithm>
#include <cmath>

#include "newscls/core/bundle.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "newscls/workflow/registry.h"

namespace newscls {
namespace {

// log q_k up to the shared normaliser, for one row.
void scaled_logits(const std::vector<float>& probs, const Temperature& t, std::vector<double>& out) {
  out.resize(probs.size());
  for (std::size_t k = 0; k < probs.size(); ++k) out[k] = std::log(std::max<double>(probs[k], t.floor)) / t.temperature;
}

double log_sum_exp(const std::vector<double>& v) {
  const double top = *std::max_element(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += std::exp(x - top);
  return top + std::log(sum);
}

// Golden-section search of the NLL over log T (the NLL is unimodal in 1/T for fixed logits).
Temperature best_temperature_for_floor(const std::vector<int>& truth, const std::vector<std::vector<float>>& probs,
                                       double floor) {
  const double golden = (std::sqrt(5.0) - 1) / 2;
  double lo = std::log(0.02), hi = std::log(50.0);
  auto nll_at = [&](double log_t) { return temperature_nll(truth, probs, {std::exp(log_t), floor}); };
  double a = hi - golden * (hi - lo), b = lo + golden * (hi - lo);
  double fa = nll_at(a), fb = nll_at(b);
  for (int i = 0; i < 40; ++i) {
    if (fa < fb) {
      hi = b, b = a, fb = fa;
      a = hi - golden * (hi - lo), fa = nll_at(a);
    } else {
      lo = a, a = b, fa = fb;
      b = lo + golden * (hi - lo), fb = nll_at(b);
    }
  }
  return {std::exp((lo + hi) / 2), floor};
}

class TemperatureClassifier : public Classifier {
 public:
  TemperatureClassifier(std::unique_ptr<Classifier> inner, const Temperature& t) : inner_(std::move(inner)), t_(t) {}
  std::string family() const override { return inner_->family(); }
  void configure(const nlohmann::json& config) override { inner_->configure(config); }
  nlohmann::json config() const override { return inner_->config(); }
  nlohmann::json train(const TrainContext& ctx) override { return inner_->train(ctx); }
  std::vector<Prediction> predict_batch(const std::vector<std::string>& titles) override {
    std::vector<Prediction> out = inner_->predict_batch(titles);
    for (Prediction& p : out) {
      if (p.probs.empty()) continue;
      apply_temperature(p.probs, t_);
      const int stage = p.stage;
      p = prediction_from_probs(std::move(p.probs));
      p.stage = stage;
    }
    return out;
  }
  std::size_t preferred_batch_size() const override { return inner_->preferred_batch_size(); }
  void set_threads(int threads) override { inner_->set_threads(threads); }
  void tolerate_outages() override { inner_->tolerate_outages(); }
  double endpoint_paused_s() const override { return inner_->endpoint_paused_s(); }
  void save(BundleWriter& bundle) const override { inner_->save(bundle); }
  void load(const Bundle& bundle) override { inner_->load(bundle); }
  nlohmann::json run_stats() const override { return inner_->run_stats(); }
  void reset_run_stats() override { inner_->reset_run_stats(); }
  std::size_t eval_limit() const override { return inner_->eval_limit(); }
  std::vector<Embedding> embed(const std::vector<std::string>& titles) override { return inner_->embed(titles); }
  void dump_attention(const std::vector<std::string>& titles, std::size_t first_index, const std::string& out_dir,
                      const ProbsAdjust& adjust) override {
    const Temperature t = t_;
    inner_->dump_attention(titles, first_index, out_dir, [t, &adjust](std::vector<float>& probs) {
      apply_temperature(probs, t);
      if (adjust) adjust(probs);
    });
  }

 private:
  std::unique_ptr<Classifier> inner_;
  Temperature t_;
};

}  // namespace

void apply_temperature(std::vector<float>& probs, const Temperature& t) {
  if (probs.empty()) return;
  std::vector<double> logits;
  scaled_logits(probs, t, logits);
  const double norm = log_sum_exp(logits);
  for (std::size_t k = 0; k < probs.size(); ++k) probs[k] = static_cast<float>(std::exp(logits[k] - norm));
}

double temperature_nll(const std::vector<int>& truth, const std::vector<std::vector<float>>& probs,
                       const Temperature& t) {
  double sum = 0;
  std::size_t n = 0;
  std::vector<double> logits;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    if (probs[i].empty() || truth[i] < 0 || static_cast<std::size_t>(truth[i]) >= probs[i].size()) continue;
    scaled_logits(probs[i], t, logits);
    sum += log_sum_exp(logits) - logits[truth[i]];
    ++n;
  }
  return n == 0 ? 0.0 : sum / static_cast<double>(n);
}

Temperature fit_temperature(const std::vector<int>& truth, const std::vector<std::vector<float>>& probs) {
  if (truth.size() != probs.size())
    throw Error(ErrorKind::kData, "calibration: truth and probabilities differ in length");
  Temperature best;
  double best_nll = temperature_nll(truth, probs, best);
  for (double floor : {1e-12, 1e-6, 1e-4, 1e-3, 1e-2}) {
    const Temperature t = best_temperature_for_floor(truth, probs, floor);
    const double nll = temperature_nll(truth, probs, t);
    if (nll < best_nll) best = t, best_nll = nll;
  }
  return best;
}

bool is_workflow_override(const std::string& assignment) {
  return assignment.rfind(std::string(kCalibrateKey) + "=", 0) == 0;
}

CalibrateSetting calibrate_setting(const std::vector<std::string>& overrides) {
  CalibrateSetting setting = CalibrateSetting::kAuto;
  for (const std::string& o : overrides) {
    if (!is_workflow_override(o)) continue;
    const std::string value = o.substr(std::string(kCalibrateKey).size() + 1);
    if (value != "true" && value != "false")
      throw ConfigError("calibrate", "expects true or false, got '" + value + "'");
    setting = value == "true" ? CalibrateSetting::kOn : CalibrateSetting::kOff;
  }
  return setting;
}

CalibrateSetting calibrate_setting(const std::string& config_file, const std::vector<std::string>& overrides) {
  CalibrateSetting setting = CalibrateSetting::kAuto;
  const nlohmann::json file = config_file.empty() ? nlohmann::json::object() : read_config_file(config_file);
  if (file.contains(kCalibrateKey)) {
    if (!file[kCalibrateKey].is_boolean()) {
      throw ConfigError(kCalibrateKey,
                        "expects true or false, got " + file[kCalibrateKey].dump() + " (in " + config_file + ")");
    }
    setting = file[kCalibrateKey].get<bool>() ? CalibrateSetting::kOn : CalibrateSetting::kOff;
  }
  const CalibrateSetting set = calibrate_setting(overrides);
  return set == CalibrateSetting::kAuto ? setting : set;  // --set has no "auto": absent
}

void refuse_calibrate_setting(const std::string& family, CalibrateSetting setting) {
  if (setting == CalibrateSetting::kAuto || !find_family(family).calibrated_by_members()) return;
  throw ConfigError(kCalibrateKey, "a " + family +
                                       " answers with its members' calibrated probabilities and fits none "
                                       "of its own: train or calibrate the member instead (eval --fit-calibration)");
}

bool calibrated_by_facts(const nlohmann::json& training) {
  return training.contains(kCalibrationFact) || training.value("calibrated", false);
}

const char* to_string(CalibrateSetting setting) {
  switch (setting) {
    case CalibrateSetting::kOn: return "true";
    case CalibrateSetting::kOff: return "false";
    case CalibrateSetting::kAuto: break;
  }
  return "auto";
}

std::unique_ptr<Classifier> with_temperature(std::unique_ptr<Classifier> model, const Temperature& t) {
  return std::make_unique<TemperatureClassifier>(std::move(model), t);
}

bool bundle_temperature(const Bundle& bundle, Temperature& out) {
  const nlohmann::json& training = bundle.manifest().training;
  const auto it = training.find(kCalibrationFact);
  if (it == training.end()) return false;
  const nlohmann::json& c = *it;
  const auto number = [&](const char* key) { return c.is_object() && c.contains(key) && c[key].is_number(); };
  // The fit searches T in [0.02, 50]; a far larger T would flatten every answer to a tie.
  if (!number("temperature") || !number("floor") || !(c["temperature"].get<double>() > 0) ||
      !(c["temperature"].get<double>() <= kMaxTemperature) ||
      !(c["floor"].get<double>() > 0 && c["floor"].get<double>() < 1)) {
    throw ModelFormatError(manifest_path(bundle.dir()),
                           "training.calibration needs a temperature in (0, 100] and a floor in (0, 1)");
  }
  const double t = c["temperature"].get<double>(), floor = c["floor"].get<double>();
  out = {t, floor};
  return true;
}

}  // namespace newscls
