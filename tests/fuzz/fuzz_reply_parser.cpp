// Fuzzes the LLM reply parser with arbitrary replies (first byte: JSON mode on or off).
// parse_reply must return a class id or kUnknownLabel, the same for the same reply, and
// the exact class name (English or Chinese) must map to its class.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.h"
#include "llm/label_names.h"
#include "llm/reply_parser.h"
#include "newscls/core/data.h"
#include "newscls/core/metrics.h"

namespace {

const std::vector<newscls::llm::LabelName>& names() {
  static const auto* n = new std::vector<newscls::llm::LabelName>(
      newscls::llm::label_names_for(newscls::LabelSet{{"finance", "realty", "stocks", "education", "science", "society",
                                                       "politics", "sports", "game", "entertainment"}}));
  return *n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool json_mode = (data[0] & 1) != 0;
  const std::string_view reply(reinterpret_cast<const char*>(data + 1), size - 1);
  const int id = newscls::llm::parse_reply(reply, names(), json_mode);
  NEWSCLS_FUZZ_CHECK(id == newscls::kUnknownLabel || (id >= 0 && id < static_cast<int>(names().size())));
  NEWSCLS_FUZZ_CHECK(newscls::llm::parse_reply(reply, names(), json_mode) == id);
  for (std::size_t i = 0; i < names().size(); ++i) {
    if (reply == names()[i].en || reply == names()[i].zh) NEWSCLS_FUZZ_CHECK(id == static_cast<int>(i));
  }
  return 0;
}
