#include "report/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "newscls/core/utf8.h"

namespace newscls::report {
namespace {

const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948"};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// White to dark blue; share in 0..1.
std::string heat_colour(double share) {
  const int r = static_cast<int>(247 - share * (247 - 8));
  const int g = static_cast<int>(251 - share * (251 - 48));
  const int b = static_cast<int>(255 - share * (255 - 107));
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", r, g, b);
  return buf;
}

std::string text(double x, double y, const std::string& s, const std::string& extra = "") {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" " + extra + ">" + xml_escape(s) + "</text>\n";
}

std::string rect(double x, double y, double w, double h, const std::string& fill) {
  return "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" + num(h) + "\" fill=\"" +
         fill + "\" stroke=\"#ffffff\"/>\n";
}

std::string svg_open(double w, double h) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(w) + "\" height=\"" + num(h) + "\" viewBox=\"0 0 " +
         num(w) + " " + num(h) +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
}

std::string line(double x1, double y1, double x2, double y2, const std::string& extra) {
  return "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" + num(y2) + "\" " + extra +
         "/>\n";
}

// A square plot area with axes from 0 to 1 (y from y_min) and ticks every 0.2 or 0.1.
struct UnitPlot {
  double left = 60, top = 50, size = 320, y_min = 0;
  double x(double v) const { return left + size * v; }
  double y(double v) const { return top + size * (1 - (v - y_min) / (1 - y_min)); }
  std::string axes(const std::string& x_label, const std::string& y_label) const {
    std::string svg =
        line(x(0), y(y_min), x(1), y(y_min), "stroke=\"#333\"") + line(x(0), y(y_min), x(0), y(1), "stroke=\"#333\"");
    for (int k = 0; k <= 5; ++k) {
      const double v = k / 5.0, w = y_min + (1 - y_min) * k / 5.0;
      svg += text(x(v), y(y_min) + 16, num(v * 100) + "%", "text-anchor=\"middle\" font-size=\"10\"");
      svg += text(x(0) - 6, y(w) + 4, num(w * 100) + "%", "text-anchor=\"end\" font-size=\"10\"");
    }
    svg += text(x(0.5), y(y_min) + 34, x_label, "text-anchor=\"middle\"");
    svg += "<text transform=\"rotate(-90 14 " + num(y((1 + y_min) / 2)) + ")\" x=\"14\" y=\"" +
           num(y((1 + y_min) / 2)) + "\" text-anchor=\"middle\">" + xml_escape(y_label) + "</text>\n";
    return svg;
  }
};

}  // namespace

std::string reliability_svg(const CalibrationMetrics& c, const std::string& title) {
  const UnitPlot plot;
  std::string svg = svg_open(plot.left + plot.size + 40, plot.top + plot.size + 60);
  svg += text(10, 20, title, "font-size=\"15\" font-weight=\"bold\"");
  char sub[96];
  std::snprintf(sub, sizeof sub, "ECE %.4f   NLL %.4f   Brier %.4f   (%zu titles)", c.ece, c.nll, c.brier, c.count);
  svg += text(plot.left, 38, sub, "fill=\"#555\"");
  svg += plot.axes("confidence (top score)", "accuracy");
  for (const ReliabilityBin& b : c.bins) {
    if (b.count == 0) continue;
    const double w = plot.size * (b.upper - b.lower);
    svg += rect(plot.x(b.lower), plot.y(b.accuracy), w, plot.y(0) - plot.y(b.accuracy), kPalette[0]);
    svg += "<title>" +
           xml_escape(num(b.lower * 100) + "-" + num(b.upper * 100) + "%: " + std::to_string(b.count) +
                      " titles, confidence " + num(b.mean_confidence * 100) + "%, accuracy " + num(b.accuracy * 100) +
                      "%") +
           "</title>\n";
    svg += line(plot.x(b.lower), plot.y(b.mean_confidence), plot.x(b.upper), plot.y(b.mean_confidence),
                "stroke=\"#e15759\" stroke-width=\"2\"");
  }
  svg += line(plot.x(0), plot.y(0), plot.x(1), plot.y(1), "stroke=\"#999\" stroke-dasharray=\"4 3\"");
  svg += text(plot.x(0.02), plot.y(0.95), "bars: accuracy; red: mean confidence", "font-size=\"10\" fill=\"#555\"");
  return svg + "</svg>\n";
}

std::string risk_coverage_svg(const std::vector<CurveSeries>& series, const std::string& title) {
  double lowest = 1;
  for (const CurveSeries& s : series) {
    for (const CoveragePoint& p : s.points) lowest = std::min(lowest, p.accuracy);
  }
  UnitPlot plot;
  plot.y_min = std::clamp(std::floor(lowest * 10) / 10, 0.0, 0.9);
  std::string svg = svg_open(plot.left + plot.size + 160, plot.top + plot.size + 60);
  svg += text(10, 20, title, "font-size=\"15\" font-weight=\"bold\"");
  svg += text(plot.left, 38, "the most confident titles answered first", "fill=\"#555\"");
  svg += plot.axes("coverage (share of titles answered)", "accuracy on the answered titles");
  for (std::size_t s = 0; s < series.size(); ++s) {
    std::string points;
    for (const CoveragePoint& p : series[s].points)
      points += num(plot.x(p.coverage)) + "," + num(plot.y(p.accuracy)) + " ";
    svg += "<polyline fill=\"none\" stroke=\"" + std::string(kPalette[s % 6]) + "\" stroke-width=\"2\" points=\"" +
           points + "\"/>\n";
    svg += rect(plot.x(1) + 16, plot.top + 20 * s, 14, 14, kPalette[s % 6]);
    svg += text(plot.x(1) + 36, plot.top + 20 * s + 12, series[s].name);
  }
  return svg + "</svg>\n";
}

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (std::string_view ch : split_utf8_chars(s)) {
    const auto first = static_cast<unsigned char>(ch[0]);
    // XML allows neither bytes that are not UTF-8 (a folder's Latin-1 name) nor most control
    // characters: either would make the whole figure unreadable.
    if (ch.size() > 1 ? !is_valid_utf8(ch)
                      : first >= 0x80 || (first < 0x20 && first != '\t' && first != '\n' && first != '\r')) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      continue;
    }
    switch (first) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string confusion_svg(const Metrics& m, const std::string& title) {
  std::vector<std::string> columns = m.labels;
  if (m.unknown > 0) columns.push_back("unknown");
  const double cell = 44, left = 120, top = 120;
  const double width = left + cell * columns.size() + 20, height = top + cell * m.labels.size() + 40;
  std::string svg = svg_open(width, height);
  svg += text(10, 20, title, "font-size=\"15\" font-weight=\"bold\"");
  svg += text(left, 40, "columns: predicted label; rows: true label; colour: share of the row", "fill=\"#555\"");
  // Of many classes most cells are 0: those are left to one background (1,000 classes drew
  // a million cells, 209 MB).
  constexpr std::size_t kMaxDenseClasses = 50;
  const bool sparse = m.labels.size() > kMaxDenseClasses;
  if (sparse) svg += rect(left, top, cell * columns.size(), cell * m.labels.size(), heat_colour(0));
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const double x = left + cell * c + cell / 2, y = top - 8;
    svg += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" transform=\"rotate(-45 " + num(x) + " " + num(y) + ")\">" +
           xml_escape(columns[c]) + "</text>\n";
  }
  for (std::size_t r = 0; r < m.labels.size(); ++r) {
    std::size_t row_total = 0;
    for (std::size_t v : m.confusion[r]) row_total += v;
    const double y = top + cell * r;
    svg += text(8, y + cell / 2 + 4, m.labels[r]);
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const std::size_t count = m.confusion[r][c];
      if (sparse && count == 0) continue;
      const double share = row_total == 0 ? 0 : double(count) / double(row_total);
      svg += rect(left + cell * c, y, cell, cell, heat_colour(share));
      svg += "<title>" + xml_escape(m.labels[r] + " -> " + columns[c] + ": " + std::to_string(count)) + "</title>\n";
      svg += text(left + cell * c + cell / 2, y + cell / 2 + 4, std::to_string(count),
                  std::string("text-anchor=\"middle\" fill=\"") + (share > 0.5 ? "#ffffff" : "#222222") + "\"");
    }
  }
  return svg + "</svg>\n";
}

std::string grouped_bars_svg(const std::vector<std::string>& categories, const std::vector<BarSeries>& series,
                             const std::string& title) {
  const double bar = 12, gap = 10, left = 120, plot = 420;
  const double group = bar * series.size() + gap;
  const double legend = 20.0 * series.size();
  const double height = 50 + group * categories.size() + legend + 30;
  std::string svg = svg_open(left + plot + 80, height);
  svg += text(10, 20, title, "font-size=\"15\" font-weight=\"bold\"");
  for (std::size_t c = 0; c < categories.size(); ++c) {
    const double y0 = 40 + group * c;
    svg += text(8, y0 + group / 2, categories[c]);
    for (std::size_t s = 0; s < series.size(); ++s) {
      const double v = c < series[s].values.size() ? std::clamp(series[s].values[c], 0.0, 1.0) : 0.0;
      const double y = y0 + bar * s;
      svg += rect(left, y, plot * v, bar - 1, kPalette[s % 6]);
      svg += text(left + plot * v + 4, y + bar - 2, num(v * 100) + "%", "font-size=\"10\"");
    }
  }
  const double ly = 40 + group * categories.size() + 10;
  for (std::size_t s = 0; s < series.size(); ++s) {
    svg += rect(left, ly + 20 * s, 14, 14, kPalette[s % 6]);
    svg += text(left + 20, ly + 20 * s + 12, series[s].name);
  }
  return svg + "</svg>\n";
}

}  // namespace newscls::report
