// The two figures of head pruning, as self-contained SVG.
#include <algorithm>
#include <set>

#include <spdlog/fmt/fmt.h>

#include "bert/compress/prune.h"
#include "report/svg.h"

namespace newscls::bert {
namespace {

std::string svg_open(int width, int height, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>"
      "<text x=\"10\" y=\"20\" font-size=\"14\">{2}</text>",
      width, height, report::xml_escape(title));
}

// White (0) to dark blue (1).
std::string blue(double v) {
  v = std::clamp(v, 0.0, 1.0);
  return fmt::format("rgb({},{},{})", static_cast<int>(255 - 247 * v), static_cast<int>(255 - 207 * v),
                     static_cast<int>(255 - 148 * v));
}

}  // namespace

std::string importance_heatmap_svg(const HeadScores& importance, const HeadsKept& kept, const std::string& title) {
  std::size_t heads = 0;
  for (const auto& layer : importance) heads = std::max(heads, layer.size());
  const int cell_w = 64, cell_h = 40, left = 70, top = 50;
  const int width = left + cell_w * static_cast<int>(heads) + 20;
  const int height = top + cell_h * static_cast<int>(importance.size()) + 40;
  std::string s = svg_open(std::max(width, 360), height, title);
  for (std::size_t h = 0; h < heads; ++h) {
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">head {}</text>", left + cell_w * h + cell_w / 2,
                     top - 6, h + 1);
  }
  for (std::size_t l = 0; l < importance.size(); ++l) {
    const int y = top + cell_h * static_cast<int>(l);
    s +=
        fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">layer {}</text>", left - 6, y + cell_h / 2 + 4, l + 1);
    const std::set<std::int64_t> alive(kept.at(l).begin(), kept.at(l).end());
    for (std::size_t h = 0; h < importance[l].size(); ++h) {
      const int x = left + cell_w * static_cast<int>(h);
      const double v = importance[l][h];
      s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#ccc\"/>", x, y, cell_w,
                       cell_h, blue(v));
      s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\">{:.3f}</text>", x + cell_w / 2,
                       y + cell_h / 2 + 4, v > 0.6 ? "white" : "black", v);
      if (alive.count(static_cast<std::int64_t>(h)) == 0) {
        s += fmt::format("<path d=\"M{} {}L{} {}M{} {}L{} {}\" stroke=\"#c00\" stroke-width=\"2\"/>", x + 4, y + 4,
                         x + cell_w - 4, y + cell_h - 4, x + cell_w - 4, y + 4, x + 4, y + cell_h - 4);
      }
    }
  }
  s +=
      fmt::format("<text x=\"10\" y=\"{}\">importance normalised per layer (L2); crossed: removed</text>", height - 12);
  return s + "</svg>\n";
}

std::string prune_curve_svg(const std::vector<double>& accuracy, std::size_t chosen, const std::string& title) {
  const int width = 480, height = 320, left = 60, right = 20, top = 40, bottom = 50;
  std::string s = svg_open(width, height, title);
  if (accuracy.empty()) return s + "</svg>\n";
  double lo = *std::min_element(accuracy.begin(), accuracy.end());
  double hi = *std::max_element(accuracy.begin(), accuracy.end());
  lo -= 0.01;
  hi += 0.01;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  const auto n = static_cast<double>(std::max<std::size_t>(accuracy.size() - 1, 1));
  auto px = [&](std::size_t k) { return left + plot_w * static_cast<double>(k) / n; };
  auto py = [&](double a) { return top + plot_h * (hi - a) / (hi - lo); };
  s += fmt::format("<path d=\"M{0} {1}V{2}H{3}\" stroke=\"black\" fill=\"none\"/>", left, top, top + plot_h,
                   left + plot_w);
  for (int i = 0; i <= 4; ++i) {
    const double a = lo + (hi - lo) * i / 4;
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:.3f}</text>", left - 4, py(a) + 4, a);
  }
  std::string line;
  for (std::size_t k = 0; k < accuracy.size(); ++k) {
    line += fmt::format("{}{:.1f} {:.1f}", k == 0 ? "M" : "L", px(k), py(accuracy[k]));
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>", px(k), top + plot_h + 16, k);
    s += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{} removed: {:.4f}</title></circle>", px(k),
        py(accuracy[k]), k == chosen ? "#c00" : "#1f4e9c", k, accuracy[k]);
  }
  s += "<path d=\"" + line + "\" stroke=\"#1f4e9c\" fill=\"none\"/>";
  if (chosen < accuracy.size()) {
    s += fmt::format("<path d=\"M{0:.1f} {1}V{2}\" stroke=\"#c00\" stroke-dasharray=\"4 3\"/>", px(chosen), top,
                     top + plot_h);
  }
  s += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">heads removed (least important first; red: chosen)</text>",
      left + plot_w / 2, height - 14);
  s += fmt::format("<text x=\"14\" y=\"{}\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">dev accuracy</text>",
                   top + plot_h / 2, top + plot_h / 2);
  return s + "</svg>\n";
}

}  // namespace newscls::bert
