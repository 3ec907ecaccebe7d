// The fitted TF-IDF vocabulary: its terms sorted by bytes (so unique, ids in that order) end to
// end in one byte block with their offsets, as the tfidf.bin payload stores them, and a hash
// index from term to id. The blocks are built in memory or are a loaded payload's; the index
// is built on construction, one allocation of 4-byte slots (1 MB for 150,000 terms): no string
// is copied at load, where a table of std::strings and 16-byte slots took 13 MB.
//
//   Vocabulary v({"a", "b", "c"});
//   v.find("b");   // 1, or -1 when absent
//   v.term(2);     // "c"
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "newscls/core/binary_io.h"

namespace newscls::tfidf_rf {

class Vocabulary {
 public:
  Vocabulary() : Vocabulary(std::vector<std::string>{}) {}
  // sorted_terms: sorted by bytes and unique (the caller's promise).
  explicit Vocabulary(const std::vector<std::string>& sorted_terms);
  // offsets: size() + 1 non-decreasing offsets into bytes, the first 0 and the last
  // bytes.size(); the terms they delimit sorted and unique (the caller checks both).
  Vocabulary(PayloadArray<std::uint32_t> offsets, PayloadArray<char> bytes);

  std::size_t size() const { return offsets_.size() - 1; }
  std::string_view term(std::size_t id) const {
    return {bytes_.data() + offsets_[id], offsets_[id + 1] - offsets_[id]};
  }
  // -1 when the term is not in the vocabulary.
  std::int32_t find(std::string_view term) const;
  // The terms as strings, in id order (a copy; for tests and small vocabularies).
  std::vector<std::string> terms() const;

  const PayloadArray<std::uint32_t>& offsets() const { return offsets_; }
  const PayloadArray<char>& bytes() const { return bytes_; }

 private:
  void build_index();

  PayloadArray<std::uint32_t> offsets_;
  PayloadArray<char> bytes_;
  // Open addressing over a power-of-two table at most two thirds full: id + 1, or 0 for empty.
  std::vector<std::uint32_t> slots_;
  std::size_t mask_ = 0;
};

}  // namespace newscls::tfidf_rf
