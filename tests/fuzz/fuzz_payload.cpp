// Fuzzes PayloadReader with every field kind, two ways:
//  - read: the input is a payload file (magic "NCFZ", version <= 2); its bytes after the
//    header are read as a program: a u8 opcode picks the next field kind to read, until the
//    reader throws ModelFormatError or the end is checked;
//  - round trip (first byte 0xFF): the input is a program of fields to write with
//    PayloadWriter; reading them back must give the same values and end exactly.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "fuzz_support.h"
#include "newscls/core/binary_io.h"
#include "newscls/core/error.h"

namespace {

constexpr char kMagic[4] = {'N', 'C', 'F', 'Z'};
constexpr std::uint32_t kMaxVersion = 2;
constexpr int kKinds = 12;

// Reads one field of the given kind; false when the program is over.
bool read_field(newscls::PayloadReader& r, int kind, std::size_t file_size) {
  switch (kind) {
    case 0: r.u8(); break;
    case 1: r.u32(); break;
    case 2: r.u64(); break;
    case 3: r.i32(); break;
    case 4: r.f32(); break;
    case 5: r.f64(); break;
    case 6: NEWSCLS_FUZZ_CHECK(r.str().size() <= file_size); break;
    case 7: NEWSCLS_FUZZ_CHECK(r.f32_array().size() * 4 <= file_size); break;
    case 8: NEWSCLS_FUZZ_CHECK(r.i32_array().size() * 4 <= file_size); break;
    case 9: NEWSCLS_FUZZ_CHECK(r.u32_array().size() * 4 <= file_size); break;
    case 10: NEWSCLS_FUZZ_CHECK(r.count(2) * 2 <= file_size); break;
    default: r.expect_end(); return false;
  }
  return true;
}

void fuzz_read(const std::uint8_t* data, std::size_t size) {
  const std::string path = newscls::fuzz::write_input("payload.bin", data, size);
  try {
    newscls::PayloadReader r(path, kMagic, kMaxVersion);
    NEWSCLS_FUZZ_CHECK(size >= 8 && std::memcmp(data, kMagic, 4) == 0 && r.version() <= kMaxVersion);
    for (int steps = 0; steps < 10000; ++steps) {
      if (!read_field(r, r.u8() % kKinds, size)) break;
    }
  } catch (const newscls::ModelFormatError&) {
  }
}

// A tiny cursor over the fuzz input used to generate values to write.
struct Source {
  const std::uint8_t* p;
  std::size_t n;
  template <typename T>
  T take() {
    T v{};
    const std::size_t k = n < sizeof(T) ? n : sizeof(T);
    std::memcpy(&v, p, k);
    p += k;
    n -= k;
    return v;
  }
};

using Field = std::variant<std::uint8_t, std::uint32_t, std::uint64_t, std::int32_t, float, double, std::string,
                           std::vector<float>, std::vector<std::int32_t>, std::vector<std::uint32_t>>;

Field make_field(Source& s) {
  const std::size_t len = s.take<std::uint8_t>() % 16;
  switch (s.take<std::uint8_t>() % 10) {
    case 0: return s.take<std::uint8_t>();
    case 1: return s.take<std::uint32_t>();
    case 2: return s.take<std::uint64_t>();
    case 3: return s.take<std::int32_t>();
    case 4: return s.take<float>();
    case 5: return s.take<double>();
    case 6: {
      std::string v;
      for (std::size_t i = 0; i < len; ++i) v.push_back(s.take<char>());
      return v;
    }
    case 7: {
      std::vector<float> v;
      for (std::size_t i = 0; i < len; ++i) v.push_back(s.take<float>());
      return v;
    }
    case 8: {
      std::vector<std::int32_t> v;
      for (std::size_t i = 0; i < len; ++i) v.push_back(s.take<std::int32_t>());
      return v;
    }
    default: {
      std::vector<std::uint32_t> v;
      for (std::size_t i = 0; i < len; ++i) v.push_back(s.take<std::uint32_t>());
      return v;
    }
  }
}

struct Writer {
  newscls::PayloadWriter& w;
  void operator()(std::uint8_t v) { w.u8(v); }
  void operator()(std::uint32_t v) { w.u32(v); }
  void operator()(std::uint64_t v) { w.u64(v); }
  void operator()(std::int32_t v) { w.i32(v); }
  void operator()(float v) { w.f32(v); }
  void operator()(double v) { w.f64(v); }
  void operator()(const std::string& v) { w.str(v); }
  void operator()(const std::vector<float>& v) { w.f32_array(v); }
  void operator()(const std::vector<std::int32_t>& v) { w.i32_array(v); }
  void operator()(const std::vector<std::uint32_t>& v) { w.u32_array(v); }
};

template <typename T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

bool same_bits(const std::string& a, const std::string& b) { return a == b; }

struct Checker {
  newscls::PayloadReader& r;
  bool operator()(std::uint8_t v) { return r.u8() == v; }
  bool operator()(std::uint32_t v) { return r.u32() == v; }
  bool operator()(std::uint64_t v) { return r.u64() == v; }
  bool operator()(std::int32_t v) { return r.i32() == v; }
  bool operator()(float v) { return same_bits(r.f32(), v); }
  bool operator()(double v) { return same_bits(r.f64(), v); }
  bool operator()(const std::string& v) { return same_bits(r.str(), v); }
  bool operator()(const std::vector<float>& v) { return same_bits(r.f32_array(), v); }
  bool operator()(const std::vector<std::int32_t>& v) { return same_bits(r.i32_array(), v); }
  bool operator()(const std::vector<std::uint32_t>& v) { return same_bits(r.u32_array(), v); }
};

void fuzz_round_trip(const std::uint8_t* data, std::size_t size) {
  Source s{data, size};
  std::vector<Field> fields;
  while (s.n > 0 && fields.size() < 256) fields.push_back(make_field(s));
  const std::string path = newscls::fuzz::scratch_dir() + "/round_trip.bin";
  {
    newscls::PayloadWriter w(path, kMagic, 1);
    for (const Field& f : fields) std::visit(Writer{w}, f);
    w.finish();
  }
  newscls::PayloadReader r(path, kMagic, kMaxVersion);
  NEWSCLS_FUZZ_CHECK(r.version() == 1);
  for (const Field& f : fields) NEWSCLS_FUZZ_CHECK(std::visit(Checker{r}, f));
  r.expect_end();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 0 && data[0] == 0xFF) {
    fuzz_round_trip(data + 1, size - 1);
  } else {
    fuzz_read(data, size);
  }
  return 0;
}
