#include "newscls/core/binary_io.h"
#include "tfidf_rf/payloads.h"

namespace newscls::tfidf_rf {
namespace {

constexpr char kMagic[4] = {'N', 'C', 'S', 'P'};
constexpr std::uint32_t kVersion = 1;

}  // namespace

void save_subword(const std::string& path, const SubwordTokenizer& tokenizer) {
  PayloadWriter w(path, kMagic, kVersion);
  w.str(tokenizer.serialized());
  w.finish();
}

SubwordTokenizer load_subword(const std::string& path) {
  PayloadReader r(path, kMagic, kVersion);
  std::string bytes = r.str();
  r.expect_end();
  return SubwordTokenizer::from_serialized(bytes, path);
}

}  // namespace newscls::tfidf_rf
