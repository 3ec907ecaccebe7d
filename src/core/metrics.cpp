#include "newscls/core/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "newscls/core/error.h"
#include "newscls/core/utf8.h"

namespace newscls {
namespace {

double ratio(std::size_t num, std::size_t den) { return den == 0 ? 0.0 : double(num) / double(den); }

ClassMetrics class_metrics(const Metrics& m, int c) {
  const int k = static_cast<int>(m.labels.size());
  std::size_t true_positive = m.confusion[c][c], predicted = 0, actual = 0;
  for (int other = 0; other < k; ++other) predicted += m.confusion[other][c];
  for (std::size_t v : m.confusion[c]) actual += v;  // the unknown column counts as a miss
  ClassMetrics out;
  out.support = actual;
  out.predicted = predicted;
  out.precision = ratio(true_positive, predicted);
  out.recall = ratio(true_positive, actual);
  const double sum = out.precision + out.recall;
  out.f1 = sum == 0 ? 0.0 : 2 * out.precision * out.recall / sum;
  return out;
}

std::size_t shown_width(char32_t cp) { return cp >= 0x1100 ? 2 : 1; }  // CJK takes two columns

// Pads a UTF-8 string to a display width.
std::string pad(const std::string& s, std::size_t width) {
  std::size_t shown = 0;
  for (char32_t cp : decode_utf8(s)) shown += shown_width(cp);
  return s + std::string(width > shown ? width - shown : 0, ' ');
}

// The whole characters of s that fit in width columns (cutting bytes split a character).
std::string cut(const std::string& s, std::size_t width) {
  std::u32string kept;
  std::size_t shown = 0;
  for (char32_t cp : decode_utf8(s)) {
    if (shown + shown_width(cp) > width) break;
    shown += shown_width(cp);
    kept += cp;
  }
  return encode_utf8(kept);
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

Metrics compute_metrics(const std::vector<int>& truth, const std::vector<int>& predicted, const LabelSet& labels) {
  if (truth.size() != predicted.size())
    throw Error(ErrorKind::kData, "metrics: truth and predictions differ in length");
  const int k = labels.size();
  Metrics m;
  m.labels = labels.names;
  m.count = truth.size();
  m.confusion.assign(k, std::vector<std::size_t>(k + 1, 0));
  std::size_t correct = 0;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    const int t = truth[i], p = predicted[i];
    if (t < 0 || t >= k) throw Error(ErrorKind::kData, "metrics: true label out of range");
    const int column = (p >= 0 && p < k) ? p : k;
    ++m.confusion[t][column];
    if (column == k) ++m.unknown;
    if (p == t) ++correct;
  }
  m.accuracy = ratio(correct, m.count);
  for (int c = 0; c < k; ++c) {
    m.per_class.push_back(class_metrics(m, c));
    const ClassMetrics& cm = m.per_class.back();
    if (cm.support == 0 && cm.predicted == 0) continue;
    ++m.macro_classes;
    m.macro_precision += cm.precision;
    m.macro_recall += cm.recall;
    m.macro_f1 += cm.f1;
  }
  if (m.macro_classes > 0) {
    m.macro_precision /= m.macro_classes;
    m.macro_recall /= m.macro_classes;
    m.macro_f1 /= m.macro_classes;
  }
  return m;
}

CalibrationMetrics compute_calibration(const std::vector<int>& truth, const std::vector<std::vector<float>>& probs,
                                       int bins) {
  if (truth.size() != probs.size())
    throw Error(ErrorKind::kData, "calibration: truth and probabilities differ in length");
  if (bins < 1) throw Error(ErrorKind::kData, "calibration: at least one bin");
  CalibrationMetrics c;
  c.count = truth.size();
  if (c.count == 0) return c;
  std::vector<double> confidence_sum(bins, 0), correct(bins, 0);
  std::vector<std::size_t> counts(bins, 0);
  for (std::size_t i = 0; i < truth.size(); ++i) {
    const std::vector<float>& p = probs[i];
    const auto top = std::max_element(p.begin(), p.end());
    const double confidence = top == p.end() ? 0.0 : *top;
    const bool right = top != p.end() && top - p.begin() == truth[i];
    // A NaN (a model with a damaged weight) would index outside the bins.
    const int bin = std::isfinite(confidence) ? std::clamp(static_cast<int>(confidence * bins), 0, bins - 1) : 0;
    ++counts[bin];
    confidence_sum[bin] += confidence;
    correct[bin] += right ? 1 : 0;
    const double p_true = truth[i] >= 0 && static_cast<std::size_t>(truth[i]) < p.size() ? p[truth[i]] : 0.0;
    c.nll -= std::log(std::max(p_true, kNllFloor));
    double brier = p.empty() ? 1.0 : 0.0;
    for (std::size_t k = 0; k < p.size(); ++k)
      brier += std::pow(p[k] - (static_cast<int>(k) == truth[i] ? 1.0 : 0.0), 2);
    c.brier += brier;
  }
  const double n = static_cast<double>(c.count);
  c.nll /= n;
  c.brier /= n;
  for (int b = 0; b < bins; ++b) {
    ReliabilityBin rb{double(b) / bins, double(b + 1) / bins, counts[b], 0, 0};
    if (counts[b] > 0) {
      rb.mean_confidence = confidence_sum[b] / counts[b];
      rb.accuracy = correct[b] / counts[b];
      c.ece += counts[b] / n * std::fabs(rb.accuracy - rb.mean_confidence);
    }
    c.bins.push_back(rb);
  }
  return c;
}

double printed_score(float score) {
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, score, std::chars_format::general, 6).ptr;
  double shown = score;
  std::from_chars(buf, end, shown);  // as a double: "0.9" is 0.9, where the float 0.9f is below it
  return shown;
}

bool below_min_score(float score, double min_score) { return !(printed_score(score) >= min_score); }

SelectiveMetrics compute_selective(const std::vector<int>& truth, const std::vector<int>& predicted,
                                   const std::vector<float>& scores, double min_score) {
  if (truth.size() != predicted.size() || truth.size() != scores.size()) {
    throw Error(ErrorKind::kData, "selective metrics: inputs differ in length");
  }
  SelectiveMetrics s;
  s.min_score = min_score;
  s.count = truth.size();
  std::size_t correct = 0;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    if (below_min_score(scores[i], min_score) || predicted[i] < 0) continue;  // below the bar, or no class named
    ++s.answered;
    if (predicted[i] == truth[i]) ++correct;
  }
  s.coverage = ratio(s.answered, s.count);
  s.accuracy_answered = ratio(correct, s.answered);
  return s;
}

std::vector<CoveragePoint> risk_coverage(const std::vector<int>& truth, const std::vector<int>& predicted,
                                         const std::vector<float>& scores, int points) {
  if (truth.size() != predicted.size() || truth.size() != scores.size()) {
    throw Error(ErrorKind::kData, "risk-coverage: inputs differ in length");
  }
  // A title given no class is never answered (as in compute_selective): the curve ends below
  // full coverage by their share.
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    if (predicted[i] >= 0) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  std::vector<CoveragePoint> curve;
  if (order.empty() || points < 1) return curve;
  std::vector<std::size_t> correct_before(order.size() + 1, 0);
  for (std::size_t i = 0; i < order.size(); ++i) {
    correct_before[i + 1] = correct_before[i] + (predicted[order[i]] == truth[order[i]] ? 1 : 0);
  }
  for (int k = 1; k <= points; ++k) {
    const std::size_t upto = std::max<std::size_t>(1, order.size() * k / points);
    // A cut through titles of one score takes its share of their correct answers, not the
    // first ones in file order: the curve must not change when the file's lines are shuffled.
    const float cut = scores[order[upto - 1]];
    std::size_t tie_begin = upto - 1, tie_end = upto;
    while (tie_begin > 0 && scores[order[tie_begin - 1]] == cut) --tie_begin;
    while (tie_end < order.size() && scores[order[tie_end]] == cut) ++tie_end;
    const double tied_correct = double(correct_before[tie_end] - correct_before[tie_begin]) * double(upto - tie_begin) /
                                double(tie_end - tie_begin);
    curve.push_back({double(upto) / truth.size(), (double(correct_before[tie_begin]) + tied_correct) / double(upto)});
  }
  return curve;
}

nlohmann::json to_json(const Metrics& m) {
  nlohmann::json per_class = nlohmann::json::object();
  for (std::size_t c = 0; c < m.per_class.size(); ++c) {
    const ClassMetrics& cm = m.per_class[c];
    per_class[m.labels[c]] = {
        {"precision", cm.precision}, {"recall", cm.recall}, {"f1", cm.f1}, {"support", cm.support}};
  }
  std::vector<std::string> columns = m.labels;
  columns.push_back("unknown");
  nlohmann::json j = {{"count", m.count},
                      {"accuracy", m.accuracy},
                      {"macro_precision", m.macro_precision},
                      {"macro_recall", m.macro_recall},
                      {"macro_f1", m.macro_f1},
                      {"macro_classes", m.macro_classes},
                      {"unknown", m.unknown},
                      {"per_class", per_class},
                      {"confusion", {{"rows", m.labels}, {"columns", columns}, {"matrix", m.confusion}}},
                      {"wall_seconds", m.wall_seconds},
                      {"titles_per_second", m.titles_per_second}};
  if (m.calibration.count > 0) {
    j["ece"] = m.calibration.ece;
    j["nll"] = m.calibration.nll;
    j["brier"] = m.calibration.brier;
    nlohmann::json bins = nlohmann::json::array();
    for (const ReliabilityBin& b : m.calibration.bins) {
      bins.push_back({{"lower", b.lower},
                      {"upper", b.upper},
                      {"count", b.count},
                      {"mean_confidence", b.mean_confidence},
                      {"accuracy", b.accuracy}});
    }
    j["reliability"] = bins;
  }
  return j;
}

std::string format_metrics_table(const Metrics& m) {
  std::string out;
  out += "titles " + std::to_string(m.count) + "   accuracy " + fixed(m.accuracy, 4) + "   macro P/R/F1 " +
         fixed(m.macro_precision, 4) + " / " + fixed(m.macro_recall, 4) + " / " + fixed(m.macro_f1, 4);
  if (m.macro_classes < static_cast<int>(m.labels.size())) {
    out += " (over the " + std::to_string(m.macro_classes) + " classes present)";
  }
  out += "\n";
  out += "wall " + fixed(m.wall_seconds, 2) + " s   " + fixed(m.titles_per_second, 0) + " titles/s";
  if (m.unknown > 0) out += "   unknown replies " + std::to_string(m.unknown);
  if (m.calibration.count > 0) {
    out += "\nECE " + fixed(m.calibration.ece, 4) + "   NLL " + fixed(m.calibration.nll, 4) + "   Brier " +
           fixed(m.calibration.brier, 4);
  }
  out += "\n\n" + pad("class", 15) + "precision  recall     f1         support\n";
  for (std::size_t c = 0; c < m.per_class.size(); ++c) {
    const ClassMetrics& cm = m.per_class[c];
    out += pad(m.labels[c], 15) + pad(fixed(cm.precision, 4), 11) + pad(fixed(cm.recall, 4), 11) +
           pad(fixed(cm.f1, 4), 11) + std::to_string(cm.support) + "\n";
  }
  // A row of 7-character cells per class: past a few dozen classes no terminal shows it.
  constexpr std::size_t kMaxPrintedClasses = 20;
  if (m.labels.size() > kMaxPrintedClasses) {
    return out + "\nconfusion: " + std::to_string(m.labels.size()) +
           " classes, too many to print: see metrics.json and confusion.svg\n";
  }
  const bool show_unknown = m.unknown > 0;
  out += "\nconfusion (rows = true, columns = predicted)\n" + pad("", 15);
  for (std::size_t c = 0; c < m.labels.size(); ++c) out += pad(cut(m.labels[c], 6), 7);
  if (show_unknown) out += "unknown";
  out += "\n";
  for (std::size_t r = 0; r < m.labels.size(); ++r) {
    out += pad(m.labels[r], 15);
    for (std::size_t c = 0; c < m.labels.size(); ++c) out += pad(std::to_string(m.confusion[r][c]), 7);
    if (show_unknown) out += std::to_string(m.confusion[r].back());
    out += "\n";
  }
  return out;
}

}  // namespace newscls
