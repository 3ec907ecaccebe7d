#include "tfidf_rf/vocabulary.h"

#include <functional>
#include <stdexcept>
#include <utility>

namespace newscls::tfidf_rf {
namespace {

std::size_t slot_of(std::string_view term, std::size_t mask) {
  std::uint64_t h = std::hash<std::string_view>{}(term);
  h = (h ^ (h >> 29)) * 0xBF58476D1CE4E5B9ULL;  // spreads the low bits the mask keeps
  return static_cast<std::size_t>(h >> 32 ^ h) & mask;
}

}  // namespace

Vocabulary::Vocabulary(const std::vector<std::string>& sorted_terms) {
  std::vector<std::uint32_t> offsets{0};
  std::string bytes;
  for (const std::string& t : sorted_terms) {
    bytes += t;
    if (bytes.size() > UINT32_MAX) throw std::length_error("vocabulary: over 4 GB of terms");
    offsets.push_back(static_cast<std::uint32_t>(bytes.size()));
  }
  offsets_ = std::move(offsets);
  bytes_ = std::vector<char>(bytes.begin(), bytes.end());
  build_index();
}

Vocabulary::Vocabulary(PayloadArray<std::uint32_t> offsets, PayloadArray<char> bytes)
    : offsets_(std::move(offsets)), bytes_(std::move(bytes)) {
  build_index();
}

void Vocabulary::build_index() {
  std::size_t capacity = 16;
  while (2 * capacity < 3 * size()) capacity *= 2;
  slots_.assign(capacity, 0);
  mask_ = capacity - 1;
  for (std::size_t id = 0; id < size(); ++id) {
    std::size_t s = slot_of(term(id), mask_);
    while (slots_[s] != 0) s = (s + 1) & mask_;
    slots_[s] = static_cast<std::uint32_t>(id + 1);
  }
}

std::int32_t Vocabulary::find(std::string_view t) const {
  for (std::size_t s = slot_of(t, mask_);; s = (s + 1) & mask_) {
    const std::uint32_t slot = slots_[s];
    if (slot == 0) return -1;
    if (term(slot - 1) == t) return static_cast<std::int32_t>(slot - 1);
  }
}

std::vector<std::string> Vocabulary::terms() const {
  std::vector<std::string> out;
  out.reserve(size());
  for (std::size_t id = 0; id < size(); ++id) out.emplace_back(term(id));
  return out;
}

}  // namespace newscls::tfidf_rf
