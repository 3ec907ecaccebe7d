// Text put into the SVG figures and the HTML report.
#include <gtest/gtest.h>

#include "report/svg.h"

namespace newscls::report {
namespace {

TEST(Svg, EscapedTextIsAlwaysValidXml) {
  EXPECT_EQ(xml_escape("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
  EXPECT_EQ(xml_escape("财经\tok"), "财经\tok");
  // A folder named in Latin-1, and a control byte: each was copied raw, and the figure was no XML.
  EXPECT_EQ(xml_escape("bad\xffname\x01"), "bad\xEF\xBF\xBDname\xEF\xBF\xBD");
}

}  // namespace
}  // namespace newscls::report
