// An open-addressing hash index from term strings to dense ids 0..size()-1, in order of
// insertion. Faster than std::unordered_map<std::string, int> for millions of short
// n-gram lookups: one flat probe array holding the full 64-bit hash of each term.
//
//   TermIndex index;
//   std::int32_t id = index.find_or_add("新闻");
//   index.find("体育");   // -1 when absent
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace newscls::tfidf_rf {

class TermIndex {
 public:
  TermIndex() { rehash(1024); }

  std::int32_t find(std::string_view term) const {
    const std::uint64_t h = hash(term);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.id < 0) return -1;
      if (s.hash == h && terms_[static_cast<std::size_t>(s.id)] == term) return s.id;
    }
  }

  std::int32_t find_or_add(std::string_view term) {
    const std::uint64_t h = hash(term);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.id < 0) {
        s = {h, static_cast<std::int32_t>(terms_.size())};
        terms_.emplace_back(term);
        if (terms_.size() * 2 > slots_.size()) rehash(slots_.size() * 2);
        return static_cast<std::int32_t>(terms_.size() - 1);
      }
      if (s.hash == h && terms_[static_cast<std::size_t>(s.id)] == term) return s.id;
    }
  }

  std::size_t size() const { return terms_.size(); }
  const std::vector<std::string>& terms() const { return terms_; }

 private:
  struct Slot {
    std::uint64_t hash;
    std::int32_t id;  // -1: empty
  };

  static std::uint64_t hash(std::string_view term) {
    std::uint64_t h = std::hash<std::string_view>{}(term);
    return (h ^ (h >> 29)) * 0xBF58476D1CE4E5B9ULL;
  }

  void rehash(std::size_t n) {
    slots_.assign(n, Slot{0, -1});
    mask_ = n - 1;
    for (std::size_t id = 0; id < terms_.size(); ++id) {
      const std::uint64_t h = hash(terms_[id]);
      std::size_t i = h & mask_;
      while (slots_[i].id >= 0) i = (i + 1) & mask_;
      slots_[i] = {h, static_cast<std::int32_t>(id)};
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::vector<std::string> terms_;
};

}  // namespace newscls::tfidf_rf
