#include "pipeline/report.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include <spdlog/spdlog.h>

#include "newscls/core/atomic_file.h"
#include "newscls/workflow/attention_workflow.h"
#include "newscls/workflow/eval_workflow.h"
#include "newscls/workflow/registry.h"
#include "pipeline/stage_facts.h"
#include "report/svg.h"

namespace newscls {
namespace {

using report::xml_escape;

struct Disagreement {
  std::size_t index = 0;
  int distinct = 0, wrong = 0;
  std::string title, truth;
  std::vector<std::string> predicted;  // one per stage with predictions ("" when absent)
};

std::string fmt_double(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// Decimal units, as compression.json's bundle_mb: one bundle, one size.
std::string human_bytes(std::uintmax_t bytes) {
  if (bytes >= 1000000) return fmt_double(bytes / 1e6, 1) + " MB";
  return fmt_double(bytes / 1e3, 1) + " KB";
}

double number_at(const nlohmann::json& j, const nlohmann::json::json_pointer& p) {
  return j.contains(p) && j.at(p).is_number() ? j.at(p).get<double>() : -1;
}

std::string cost_text(const StageFacts& s) {
  const nlohmann::json& stats = s.metrics.value("run_stats", nlohmann::json::object());
  if (stats.contains("cost_usd") && stats["cost_usd"].is_number())
    return "$" + fmt_double(stats["cost_usd"].get<double>(), 4);
  return "-";
}

// One row per stage: the numbers both report.md and report.html show.
std::vector<std::string> table_row(const StageFacts& s) {
  const std::string why = !s.problem.empty() ? s.problem : s.has_metrics ? "" : s.result.reason;
  const std::string status = to_string(s.result.status) + (why.empty() ? "" : ": " + why);
  if (!s.has_metrics) return {s.result.stage, status, "-", "-", "-", "-", "-", "-", "-"};
  // A compression stage's cost is its compression, not the training its metrics carry over.
  const double train_s = s.compression.is_object() ? number_at(s.compression, "/compress_seconds"_json_pointer)
                                                   : number_at(s.metrics, "/training/train_seconds"_json_pointer);
  return {s.result.stage,
          status,
          fmt_double(s.metrics.value("accuracy", 0.0), 4),
          fmt_double(s.metrics.value("macro_f1", 0.0), 4),
          s.metrics.contains("ece") ? fmt_double(s.metrics.value("ece", 0.0), 4) : "-",
          train_s < 0 ? "-" : fmt_double(train_s, 1),
          fmt_double(s.metrics.value("titles_per_second", 0.0), 0),
          human_bytes(s.bundle_bytes),
          cost_text(s)};
}

const std::vector<std::string> kColumns = {
    "stage", "status", "accuracy", "macro-F1", "ECE", "train (compress) s", "predict titles/s", "bundle", "cost"};

// What the main table's columns measure, under it in both reports.
constexpr const char* kColumnsNote =
    "Accuracy, macro-F1 and ECE (15 equal-width bins, of the calibrated scores where the stage is calibrated) are "
    "on the test split. Train (compress) s: wall seconds of training, or for a compression stage of compressing. "
    "Predict "
    "titles/s: the rate of the test evaluation inside the process (the model alone, batched; no start-up or file "
    "reading, so `newscls predict` end to end is slower). Bundle: the payloads' size on disk. Cost: the LLM "
    "requests' estimated cost in USD, where a stage makes any.";

const std::vector<std::string> kCompressionColumns = {
    "stage",        "method",        "parameters",    "bundle MB",        "dev accuracy",
    "dev macro-F1", "test accuracy", "test macro-F1", "predict titles/s", "settings"};

// "before -> after" of compression.json's figure at `pointer`, with the after/before ratio
// when asked for.
std::string before_after(const nlohmann::json& c, const std::string& pointer, int decimals, bool ratio) {
  const nlohmann::json::json_pointer p(pointer);
  const double b = number_at(c.value("before", nlohmann::json::object()), p);
  const double a = number_at(c.value("after", nlohmann::json::object()), p);
  if (b < 0 || a < 0) return "-";
  std::string text = fmt_double(b, decimals) + " -> " + fmt_double(a, decimals);
  if (ratio && b > 0) text += " (x" + fmt_double(a / b, 2) + ")";
  return text;
}

// One row per compression stage, from its compression.json.
std::vector<std::vector<std::string>> compression_rows(const std::vector<StageFacts>& stages) {
  std::vector<std::vector<std::string>> rows;
  for (const StageFacts& s : stages) {
    const nlohmann::json& c = s.compression;
    if (!c.is_object()) continue;
    rows.push_back({s.result.stage, c.value("method", std::string("-")), before_after(c, "/parameters", 0, false),
                    before_after(c, "/bundle_mb", 2, true), before_after(c, "/dev/accuracy", 4, false),
                    before_after(c, "/dev/macro_f1", 4, false), before_after(c, "/test/accuracy", 4, false),
                    before_after(c, "/test/macro_f1", 4, false), before_after(c, "/predict_titles_per_s", 0, true),
                    c.value("settings", nlohmann::json::object()).dump()});
  }
  return rows;
}

std::vector<Disagreement> disagreements(const std::vector<StageFacts>& stages, std::size_t top) {
  std::set<std::size_t> indices;
  for (const StageFacts& s : stages) {
    for (const auto& [i, p] : s.predictions) indices.insert(i);
  }
  std::vector<Disagreement> out;
  for (std::size_t i : indices) {
    Disagreement d;
    d.index = i;
    std::set<std::string> distinct;
    for (const StageFacts& s : stages) {
      auto it = s.predictions.find(i);
      // Row i of another test set (a stage folder from another run) is not this title's answer.
      const bool same = it != s.predictions.end() && (d.title.empty() || it->second.title == d.title);
      d.predicted.push_back(same ? it->second.predicted : "");
      if (!same) continue;
      d.title = it->second.title, d.truth = it->second.truth;
      distinct.insert(it->second.predicted);
      d.wrong += it->second.predicted != it->second.truth;
    }
    d.distinct = static_cast<int>(distinct.size());
    if (d.distinct > 1) out.push_back(d);
  }
  std::stable_sort(out.begin(), out.end(), [](const Disagreement& a, const Disagreement& b) {
    return a.distinct != b.distinct ? a.distinct > b.distinct : a.wrong > b.wrong;
  });
  if (out.size() > top) out.resize(top);
  return out;
}

std::string per_class_f1_svg(const std::vector<StageFacts>& stages) {
  std::vector<std::string> classes;
  std::vector<report::BarSeries> series;
  for (const StageFacts& s : stages) {
    if (!s.has_metrics) continue;
    report::BarSeries bars{s.result.stage, {}};
    const nlohmann::json& per_class = s.metrics["per_class"];
    if (classes.empty()) {
      for (const auto& name : s.metrics["confusion"]["rows"]) classes.push_back(name.get<std::string>());
    }
    for (const std::string& c : classes)
      bars.values.push_back(per_class.contains(c) ? per_class[c].value("f1", 0.0) : 0.0);
    series.push_back(bars);
  }
  return series.empty() ? "" : report::grouped_bars_svg(classes, series, "Per-class F1 on test");
}

bool stage_has_attention(const StageFacts& s) {
  try {
    return find_family(s.result.stage).has_attention();
  } catch (const std::exception&) {
    return false;
  }
}

// Writes attention heatmaps of a few titles from the first stage whose family has attention
// weights; returns the html files written.
std::vector<std::string> stage_attention(const std::vector<StageFacts>& stages, const std::vector<Disagreement>& picks,
                                         std::size_t n) {
  auto source = std::find_if(stages.begin(), stages.end(),
                             [](const StageFacts& s) { return s.has_metrics && stage_has_attention(s); });
  if (source == stages.end() || n == 0) return {};
  std::vector<std::string> titles;
  for (const Disagreement& d : picks) {
    if (titles.size() < n) titles.push_back(d.title);
  }
  for (auto it = source->predictions.begin(); titles.size() < n && it != source->predictions.end(); ++it) {
    titles.push_back(it->second.title);
  }
  const std::string dir = source->dir + "/attention";
  try {
    dump_attention_into(*load_classifier(source->dir), titles, dir);
  } catch (const std::exception& e) {
    spdlog::warn("report: no attention heatmaps: {}", e.what());
    return {};
  }
  std::vector<std::string> files;
  for (std::size_t i = 0; i < titles.size(); ++i) files.push_back(dir + "/" + std::to_string(i) + ".html");
  return files;
}

// The reliability bins of a stage's metrics.json (count 0 when it has none).
CalibrationMetrics calibration_of(const StageFacts& s) {
  CalibrationMetrics c;
  if (!s.has_metrics || !s.metrics.contains("reliability")) return c;
  c.ece = s.metrics.value("ece", 0.0);
  c.nll = s.metrics.value("nll", 0.0);
  c.brier = s.metrics.value("brier", 0.0);
  c.count = s.metrics.value("count", std::size_t{0});
  for (const auto& b : s.metrics["reliability"]) {
    c.bins.push_back({b.value("lower", 0.0), b.value("upper", 0.0), b.value("count", std::size_t{0}),
                      b.value("mean_confidence", 0.0), b.value("accuracy", 0.0)});
  }
  return c;
}

// One line per stage: accuracy on the titles answered when the least confident are left out.
std::string risk_coverage_of(const std::vector<StageFacts>& stages) {
  std::vector<report::CurveSeries> series;
  for (const StageFacts& s : stages) {
    if (!s.has_metrics || !s.metrics.contains("risk_coverage")) continue;
    report::CurveSeries line{s.result.stage, {}};
    for (const auto& p : s.metrics["risk_coverage"])
      line.points.push_back({p.value("coverage", 0.0), p.value("accuracy", 0.0)});
    series.push_back(line);
  }
  return series.empty() ? "" : report::risk_coverage_svg(series, "Risk-coverage on test");
}

// A table cell of user text (titles, labels, reasons): a "|" would open a column, and "<" and
// "&" would be read as HTML by Markdown renderers (">" alone is not, and "->" stays readable).
std::string md_cell(const std::string& text) {
  static const std::map<char, std::string> kEscapes = {{'|', "\\|"}, {'<', "&lt;"}, {'&', "&amp;"}, {'\n', " "}};
  std::string out;
  for (char c : text) {
    const auto it = kEscapes.find(c);
    out += it == kEscapes.end() ? std::string(1, c) : it->second;
  }
  return out;
}

std::string md_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::string md = "|";
  for (const std::string& c : header) md += " " + c + " |";
  md += "\n|";
  for (std::size_t i = 0; i < header.size(); ++i) md += "---|";
  md += "\n";
  for (const auto& row : rows) {
    md += "|";
    for (const std::string& cell : row) md += " " + md_cell(cell) + " |";
    md += "\n";
  }
  return md;
}

std::string markdown(const std::vector<StageFacts>& stages, const std::vector<Disagreement>& picks,
                     const std::vector<std::string>& attention, const std::string& run_dir, const std::string& split) {
  std::string md = "# newscls pipeline report\n\nRun folder: `" + run_dir + "`. " + split + "\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const StageFacts& s : stages) rows.push_back(table_row(s));
  md += md_table(kColumns, rows);
  md += std::string("\n") + kColumnsNote + "\n";
  const std::vector<std::vector<std::string>> compressed = compression_rows(stages);
  if (!compressed.empty()) {
    md += "\n## Compression\n\nBefore -> after; titles/s of `predict` on the same dev titles in one run.\n\n" +
          md_table(kCompressionColumns, compressed);
  }
  md +=
      "\nFigures: per-class F1 and confusion heatmaps are in `report.html`; each stage's own heatmap is "
      "`<stage>/confusion.svg`. Calibration: ECE on test (15 bins) after the stage's temperature scaling; "
      "reliability diagrams are `<stage>/reliability.svg` and in `report.html`; the risk-coverage curve of every "
      "stage (accuracy on the titles answered when the least confident are left unanswered) is "
      "`risk_coverage.svg`.\n\n## Titles the stages disagree on most\n\n| title | true |";
  for (const StageFacts& s : stages) md += " " + md_cell(s.result.stage) + " |";
  md += "\n|---|---|";
  for (std::size_t i = 0; i < stages.size(); ++i) md += "---|";
  md += "\n";
  for (const Disagreement& d : picks) {
    md += "| " + md_cell(d.title) + " | " + md_cell(d.truth) + " |";
    for (const std::string& p : d.predicted) md += " " + (p.empty() ? "-" : md_cell(p)) + " |";
    md += "\n";
  }
  if (!attention.empty()) {
    md += "\n## Attention heatmaps\n\n";
    for (const std::string& f : attention)
      md += "- [" + std::filesystem::path(f).filename().string() + "](" +
            std::filesystem::relative(f, run_dir).string() + ")\n";
  }
  return md;
}

std::string html_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::string h = "<table><tr>";
  for (const std::string& c : header) h += "<th>" + xml_escape(c) + "</th>";
  h += "</tr>\n";
  for (const auto& row : rows) {
    h += "<tr>";
    for (const std::string& c : row) h += "<td>" + xml_escape(c) + "</td>";
    h += "</tr>\n";
  }
  return h + "</table>\n";
}

std::string html(const std::vector<StageFacts>& stages, const std::vector<Disagreement>& picks,
                 const std::vector<std::string>& attention, const std::string& run_dir, const std::string& split) {
  std::string h =
      "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>newscls report</title><style>"
      "body{font-family:sans-serif;margin:24px;max-width:1200px}table{border-collapse:collapse;margin:12px 0}"
      "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}th{background:#f0f0f0}"
      ".figs{display:flex;flex-wrap:wrap;gap:16px}iframe{width:100%;height:720px;border:1px solid #ccc}"
      "</style></head><body>\n<h1>newscls pipeline report</h1>\n<p>Run folder: <code>" +
      xml_escape(run_dir) + "</code>. " + xml_escape(split) + "</p>\n";
  std::vector<std::vector<std::string>> rows;
  for (const StageFacts& s : stages) rows.push_back(table_row(s));
  h += html_table(kColumns, rows);
  h += "<p>" + xml_escape(kColumnsNote) + "</p>\n";
  h += "<p>Calibration: reliability diagrams are below and in <code>&lt;stage&gt;/reliability.svg</code>; the "
       "risk-coverage curve shows each stage's accuracy on the titles it answers when the least confident are left "
       "unanswered.</p>\n";
  const std::vector<std::vector<std::string>> compressed = compression_rows(stages);
  if (!compressed.empty()) {
    h += "<h2>Compression</h2>\n<p>Before -&gt; after; titles/s of <code>predict</code> on the same dev titles in one "
         "run (compression.json).</p>\n" +
         html_table(kCompressionColumns, compressed);
  }
  h += "<h2>Per-class F1</h2>\n" + per_class_f1_svg(stages);
  h += "<h2>Calibration: reliability diagrams on test</h2>\n<div class=\"figs\">\n";
  for (const StageFacts& s : stages) {
    const CalibrationMetrics c = calibration_of(s);
    if (c.count > 0) h += "<div>" + report::reliability_svg(c, s.result.stage + " on test") + "</div>\n";
  }
  h += "</div>\n<h2>Risk-coverage</h2>\n" + risk_coverage_of(stages);
  h += "<h2>Confusion heatmaps</h2>\n<div class=\"figs\">\n";
  for (const StageFacts& s : stages) {
    if (!s.confusion_svg.empty()) h += "<div>" + s.confusion_svg + "</div>\n";
  }
  h += "</div>\n<h2>Titles the stages disagree on most</h2>\n";
  std::vector<std::string> header = {"title", "true"};
  for (const StageFacts& s : stages) header.push_back(s.result.stage);
  rows.clear();
  for (const Disagreement& d : picks) {
    std::vector<std::string> row = {d.title, d.truth};
    for (const std::string& p : d.predicted) row.push_back(p.empty() ? "-" : p);
    rows.push_back(row);
  }
  h += html_table(header, rows);
  if (!attention.empty()) {
    h += "<h2>Attention heatmaps</h2>\n";
    for (const std::string& f : attention) {
      h += "<iframe srcdoc=\"" + xml_escape(read_file(f)) + "\"></iframe>\n";
    }
  }
  return h + "</body></html>\n";
}

// Where the figures come from: a --train run without --test has no test split.
std::string split_sentence(const PipelineRequest& request) {
  if (!request.files.given() || !request.files.test.empty()) return "Metrics are on the test split.";
  return "Metrics are on the dev split: no --test file was given, and the dev split also chose the calibration.";
}

}  // namespace

void write_pipeline_report(const PipelineSummary& summary, const PipelineRequest& request) {
  std::vector<StageFacts> stages;
  for (const StageResult& r : summary.stages) stages.push_back(read_stage_facts(r, summary.run_dir));
  const std::vector<Disagreement> picks = disagreements(stages, 15);
  const std::vector<std::string> attention = stage_attention(stages, picks, request.attention_titles);
  const std::string curve = risk_coverage_of(stages);
  AtomicFileSet files;  // a full disk leaves the earlier report whole, not half of each
  if (!curve.empty())
    files.add(summary.run_dir + "/risk_coverage.svg", curve);
  else
    files.drop(summary.run_dir + "/risk_coverage.svg");
  const std::string split = split_sentence(request) + (summary.data_note.empty() ? "" : " " + summary.data_note);
  files.add(summary.run_dir + "/report.md", markdown(stages, picks, attention, summary.run_dir, split));
  files.add(summary.run_dir + "/report.html", html(stages, picks, attention, summary.run_dir, split));
  files.commit();
  spdlog::info("report: {}/report.html and report.md", summary.run_dir);
}

}  // namespace newscls
