// Self-contained SVG figures drawn by newscls itself (no plotting library, no network):
// the confusion heatmap written by eval, and the charts of the pipeline report.
//
//   write_file_atomic(dir + "/confusion.svg", confusion_svg(metrics, "tfidf-rf on test"));
#pragma once

#include <string>
#include <vector>

#include "newscls/core/metrics.h"

namespace newscls::report {

std::string xml_escape(const std::string& s);

// Rows = true label, columns = predicted (plus "unknown" when any); cells coloured by
// the share of the row, with counts printed.
std::string confusion_svg(const Metrics& m, const std::string& title);

// Grouped horizontal bars: one group per category, one bar per series (values in 0..1).
struct BarSeries {
  std::string name;
  std::vector<double> values;
};
std::string grouped_bars_svg(const std::vector<std::string>& categories, const std::vector<BarSeries>& series,
                             const std::string& title);

// Reliability diagram: per bin of top score, the accuracy (bars) against the diagonal of perfect
// calibration, with the bin counts; the ECE in the subtitle.
std::string reliability_svg(const CalibrationMetrics& c, const std::string& title);

// Lines of accuracy on the answered titles against coverage (0..1), one per series.
struct CurveSeries {
  std::string name;
  std::vector<CoveragePoint> points;
};
std::string risk_coverage_svg(const std::vector<CurveSeries>& series, const std::string& title);

}  // namespace newscls::report
