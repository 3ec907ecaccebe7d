// The safetensors reader: honest files of every float dtype read back exactly, and each kind
// of hostile file is refused with one line naming the file, never a crash.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "hf/safetensors.h"
#include "newscls/core/error.h"
#include "test_hf_support.h"

namespace newscls {
namespace {

using hf::DType;
using hf::SafetensorsFile;
using testing::safetensors_image;
using testing::StTensor;

std::string write_image(const std::string& name, const std::string& image) {
  return testing::write_text(testing::scratch_dir() + "/" + name, image);
}

// Opening the file must fail with a ModelFormatError whose one line names the file and
// contains `expected`.
void expect_refused(const std::string& image, const std::string& expected) {
  const std::string path = write_image("hostile.safetensors", image);
  try {
    SafetensorsFile::open(path);
    ADD_FAILURE() << "accepted a file that should fail with: " << expected;
  } catch (const ModelFormatError& e) {
    EXPECT_TRUE(testing::one_line_naming(e.what(), path)) << e.what();
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

std::string header_of(const std::string& name, const std::string& dtype, const std::string& shape,
                      const std::string& offsets) {
  return "{\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":" + offsets + "}}";
}

TEST(HfSafetensors, ReadsEveryFloatDtypeExactly) {
  // 1.0, -2.0, 65504 (largest half), 2^-24 (smallest subnormal half), +inf, -0.
  const std::string f16 = std::string("\x00\x3C\x00\xC0\xFF\x7B\x01\x00\x00\x7C\x00\x80", 12);
  const std::string bf16 = std::string("\x80\x3F\x00\xC0", 4);  // 1.0, -2.0
  const double d = 0.1;
  std::string f64(8, '\0');
  std::memcpy(f64.data(), &d, 8);
  const std::string path = write_image("ok.safetensors", safetensors_image({testing::f32_tensor("a", {2, 3}),
                                                                            {"h", "F16", {6}, f16},
                                                                            {"b", "BF16", {2}, bf16},
                                                                            {"d", "F64", {1}, f64},
                                                                            {"ids", "I64", {1}, std::string(8, '\0')},
                                                                            {"empty", "F32", {0, 4}, ""}}));
  const SafetensorsFile file = SafetensorsFile::open(path);
  EXPECT_EQ(file.metadata().at("format"), "pt");
  EXPECT_EQ(file.tensors().size(), 6u);
  EXPECT_EQ(file.find("a")->shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(file.read_floats(*file.find("a")), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  const std::vector<float> h = file.read_floats(*file.find("h"));
  EXPECT_EQ(h[0], 1.0f);
  EXPECT_EQ(h[1], -2.0f);
  EXPECT_EQ(h[2], 65504.0f);
  EXPECT_EQ(h[3], std::ldexp(1.0f, -24));
  EXPECT_EQ(h[4], std::numeric_limits<float>::infinity());
  EXPECT_TRUE(h[5] == 0.0f && std::signbit(h[5]));
  EXPECT_EQ(file.read_floats(*file.find("b")), (std::vector<float>{1.0f, -2.0f}));
  EXPECT_EQ(file.read_floats(*file.find("d")), (std::vector<float>{static_cast<float>(d)}));
  EXPECT_TRUE(file.read_floats(*file.find("empty")).empty());
  EXPECT_EQ(file.find("missing"), nullptr);
  // An integer tensor is indexed but not readable as floats.
  EXPECT_THROW(file.read_floats(*file.find("ids")), ModelFormatError);
}

TEST(HfSafetensors, HalfConversionCoversNanAndSubnormals) {
  EXPECT_TRUE(std::isnan(hf::half_to_float(0x7E00)));
  EXPECT_EQ(hf::half_to_float(0x0400), std::ldexp(1.0f, -14));     // smallest normal
  EXPECT_EQ(hf::half_to_float(0x03FF), std::ldexp(1023.0f, -24));  // largest subnormal
  EXPECT_EQ(hf::half_to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(hf::bfloat16_to_float(0x7F80), std::numeric_limits<float>::infinity());
}

TEST(HfSafetensors, HeaderPaddedWithSpacesIsAccepted) {
  const std::string header = header_of("w", "F32", "[1]", "[0,4]") + "      ";
  const std::string path = write_image("pad.safetensors", safetensors_image(header, std::string(4, '\0')));
  EXPECT_EQ(SafetensorsFile::open(path).tensors().size(), 1u);
}

TEST(HfSafetensors, RefusesTruncatedFiles) {
  const std::string good = safetensors_image({testing::f32_tensor("w", {4, 4})});
  expect_refused("", "too short");
  expect_refused(good.substr(0, 5), "too short");
  expect_refused(good.substr(0, 20), "runs past the end");
  expect_refused(good.substr(0, good.size() - 1), "fall outside");
}

TEST(HfSafetensors, RefusesHeaderThatLiesAboutSizes) {
  expect_refused(testing::u64_le(std::numeric_limits<std::uint64_t>::max()) + "{}", "runs past the end");
  expect_refused(safetensors_image(header_of("w", "F32", "[2,2]", "[0,12]"), std::string(16, '\0')), "span 12 bytes");
  expect_refused(safetensors_image(header_of("w", "F32", "[2,2]", "[0,32]"), std::string(16, '\0')), "fall outside");
  expect_refused(safetensors_image(header_of("w", "F32", "[2,2]", "[8,4]"), std::string(16, '\0')), "fall outside");
  expect_refused(
      safetensors_image(header_of("w", "F32", "[4294967296,4294967296,16]", "[0,16]"), std::string(16, '\0')),
      "impossibly large");
  expect_refused(safetensors_image(header_of("w", "F32", "[-1]", "[0,4]"), std::string(4, '\0')),
                 "non-negative integer");
  expect_refused(safetensors_image(header_of("w", "F32", "[1]", "[0]"), std::string(4, '\0')), "two integers");
}

TEST(HfSafetensors, RefusesOverlapUnknownDtypeDuplicatesAndNonObjects) {
  const std::string two = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                          R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  expect_refused(safetensors_image(two, std::string(12, '\0')), "overlap");
  expect_refused(safetensors_image(header_of("w", "F7", "[1]", "[0,4]"), std::string(4, '\0')), "unknown dtype 'F7'");
  const std::string dup = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                          R"("w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  expect_refused(safetensors_image(dup, std::string(8, '\0')), "twice");
  expect_refused(safetensors_image("[1,2,3]", ""), "not a JSON object");
  expect_refused(safetensors_image("{\"w\": 5}", ""), "not a JSON object");
  expect_refused(safetensors_image("{\"w\": {\"dtype\": \"F32\"", ""), "not valid JSON");
  expect_refused(safetensors_image("{\"w\": {\"dtype\": \"F32\", \"shape\": [1]}}", ""), "no data_offsets");
  expect_refused(safetensors_image("{\"__metadata__\": {\"format\": 1}}", ""), "not a string");
  expect_refused(safetensors_image(std::string("{\"\xff\": 1}"), ""), "not valid JSON");
}

TEST(HfSafetensors, MissingFileIsAnIoErrorNamingIt) {
  const std::string path = testing::scratch_dir() + "/absent.safetensors";
  try {
    SafetensorsFile::open(path);
    FAIL();
  } catch (const IoError& e) {
    EXPECT_TRUE(testing::one_line_naming(e.what(), path)) << e.what();
  }
}

TEST(HfSafetensors, RealCheckpointsOpen) {
  const std::string dir = testing::hf_fixture("");
  for (const char* model : {"bert-tiny-cls", "bert-tiny-mlm"}) {
    const SafetensorsFile file = SafetensorsFile::open(dir + model + "/model.safetensors");
    const DType expected = std::string(model) == "bert-tiny-cls" ? DType::kF32 : DType::kF16;
    for (const auto& [name, info] : file.tensors()) {
      EXPECT_EQ(info.dtype, expected) << name;
      for (float v : file.read_floats(info)) ASSERT_TRUE(std::isfinite(v)) << name;
    }
  }
}

}  // namespace
}  // namespace newscls
