// Text put into the SVG figures and the HTML report.
#include <gtest/gtest.h>

#include "newscls/core/metrics.h"
#include "report/svg.h"

namespace newscls::report {
namespace {

TEST(Svg, EscapedTextIsAlwaysValidXml) {
  EXPECT_EQ(xml_escape("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
  EXPECT_EQ(xml_escape("财经\tok"), "财经\tok");
  // A folder named in Latin-1, and a control byte: each was copied raw, and the figure was no XML.
  EXPECT_EQ(xml_escape("bad\xffname\x01"), "bad\xEF\xBF\xBDname\xEF\xBF\xBD");
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A class per cell of a 1,000-class matrix was a million cells (209 MB); past 50 classes the
// zero cells share one background, and the terminal table leaves the matrix to the files.
TEST(Svg, ConfusionOfManyClassesDrawsOnlyItsNonZeroCells) {
  const auto metrics_of = [](int classes) {
    LabelSet labels;
    std::vector<int> truth, predicted;
    for (int c = 0; c < classes; ++c) {
      labels.names.push_back("c" + std::to_string(c));
      truth.push_back(c);
      predicted.push_back(c == 0 ? 1 : c);
    }
    return compute_metrics(truth, predicted, labels);
  };
  const Metrics few = metrics_of(3), many = metrics_of(200);
  EXPECT_EQ(count_of(confusion_svg(few, "t"), "<title>"), 9u);
  EXPECT_EQ(count_of(confusion_svg(many, "t"), "<title>"), 200u);  // 199 right, 1 wrong
  EXPECT_NE(format_metrics_table(few).find("confusion (rows = true"), std::string::npos);
  EXPECT_NE(format_metrics_table(many).find("confusion: 200 classes, too many to print"), std::string::npos);
}

}  // namespace
}  // namespace newscls::report
