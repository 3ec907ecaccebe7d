// Fuzzes the fasttext payload (fasttext.bin, magic "NCFT"): load_engine on a file holding
// the input either throws ModelFormatError or gives an engine that predicts any title with
// one probability per label, touching only its own tables.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fasttext/engine.h"
#include "fuzz_support.h"
#include "newscls/core/error.h"

namespace {

constexpr int kLabels = 3;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = newscls::fuzz::write_input("fasttext.bin", data, size);
  newscls::fasttext::Engine engine;
  try {
    engine = newscls::fasttext::load_engine(path, kLabels);
  } catch (const newscls::ModelFormatError&) {
    return 0;
  }
  NEWSCLS_FUZZ_CHECK(engine.num_labels == kLabels);
  NEWSCLS_FUZZ_CHECK(engine.table.size() == static_cast<std::size_t>(engine.rows()) * kLabels);
  NEWSCLS_FUZZ_CHECK(engine.row_weights.empty() ||
                     engine.row_weights.size() == static_cast<std::size_t>(engine.rows()));
  newscls::fasttext::Predictor predictor(engine);
  for (const char* title : {"", "a", "体育新闻 nba", "\xef\xbf\xbd\xef\xbf\xbd", "aaaaaaaaaaaaaaaaaaaaaaaa"}) {
    const std::vector<float>& probs = predictor.probs(title);
    NEWSCLS_FUZZ_CHECK(probs.size() == static_cast<std::size_t>(kLabels));
  }
  return 0;
}
