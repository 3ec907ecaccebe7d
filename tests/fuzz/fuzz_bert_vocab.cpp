// Fuzzes the bert character vocabulary payload (vocab.bin, magic "NCBV"): CharVocab::load on
// a file holding the input either throws ModelFormatError or gives a vocabulary whose
// encodings hold only its own ids, framed by [CLS] and [SEP], within max_len.
#include <cstdint>
#include <string>
#include <vector>

#include "bert/tokens/vocab.h"
#include "fuzz_support.h"
#include "newscls/core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = newscls::fuzz::write_input("vocab.bin", data, size);
  try {
    const newscls::bert::CharVocab vocab = newscls::bert::CharVocab::load(path);
    NEWSCLS_FUZZ_CHECK(vocab.size() >= newscls::bert::kNumSpecial);
    for (const char* title : {"", "体育新闻 NBA", "\xef\xbf\xbd", "ａｂｃ abc 123"}) {
      for (std::int64_t max_len : {2, 5, 64}) {
        const std::vector<std::int64_t> ids = vocab.encode(title, max_len);
        NEWSCLS_FUZZ_CHECK(ids.size() >= 2 && static_cast<std::int64_t>(ids.size()) <= max_len);
        NEWSCLS_FUZZ_CHECK(ids.front() == newscls::bert::kCls && ids.back() == newscls::bert::kSep);
        for (std::int64_t id : ids) NEWSCLS_FUZZ_CHECK(id >= 0 && id < vocab.size());
        NEWSCLS_FUZZ_CHECK(vocab.tokens_of(ids).size() == ids.size());
      }
    }
  } catch (const newscls::ModelFormatError&) {
  }
  return 0;
}
