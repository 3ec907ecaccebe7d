// Fuzzes the tfidf-rf forest payload (forest.bin, magic "NCRF"): RandomForest::load on a
// file holding the input either throws ModelFormatError or gives a forest whose every
// index was checked, so that predicting any row stays inside its arrays (one row at a
// time and in batches, with the same result).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "newscls/core/binary_io.h"
#include "newscls/core/error.h"
#include "tfidf_rf/forest.h"

namespace {

constexpr char kForestMagic[4] = {'N', 'C', 'R', 'F'};
void predict_some_rows(const newscls::tfidf_rf::RandomForest& forest) {
  if (forest.num_trees() == 0) return;
  const auto k = static_cast<std::size_t>(forest.num_classes());
  const auto last = static_cast<std::int32_t>(forest.num_features() == 0 ? 0 : forest.num_features() - 1);
  // Features beyond num_features() read as absent, so any index is fair.
  const std::vector<newscls::tfidf_rf::SparseRow> rows = {
      {}, {{0, 1.0f}}, {{0, 1e30f}, {last, 0.5f}}, {{last, -1.0f}, {last + 1, 2.0f}, {0x7fffffff, 1.0f}}};
  std::vector<float> probs(k), batch(rows.size() * k);
  forest.predict_proba_batch(rows.data(), rows.size(), batch.data());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    forest.predict_proba(rows[i], probs.data());
    for (std::size_t c = 0; c < k; ++c) {
      const float a = probs[c], b = batch[i * k + c];
      NEWSCLS_FUZZ_CHECK(std::isnan(a) == std::isnan(b));
      if (std::isfinite(a) && std::isfinite(b)) NEWSCLS_FUZZ_CHECK(std::fabs(a - b) <= 1e-4f * (1.0f + std::fabs(a)));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = newscls::fuzz::write_input("forest.bin", data, size);
  try {
    newscls::PayloadReader r(path, kForestMagic, newscls::tfidf_rf::RandomForest::kPayloadVersion);
    const newscls::tfidf_rf::RandomForest forest = newscls::tfidf_rf::RandomForest::load(r);
    r.expect_end();
    NEWSCLS_FUZZ_CHECK(forest.num_classes() > 0);
    predict_some_rows(forest);
  } catch (const newscls::ModelFormatError&) {
  }
  return 0;
}
