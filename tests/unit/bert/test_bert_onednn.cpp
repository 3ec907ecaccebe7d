// bert's direct oneDNN paths: the int8 GEMM against the same arithmetic done by hand (per-row
// input scales, int32 sums, per-channel weight scales), over row counts that use the full tile,
// the small tile and a zero-padded last tile; and the batched attention product against
// LibTorch's matmul on the strided (transposed) views attention hands it.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "bert/kernels/batched_matmul.h"
#include "bert/kernels/int8_gemm.h"
#include "bert/kernels/quantized_linear.h"
#include "bert/model/attention.h"

namespace newscls::bert {
namespace {

// y = (round(x / s_row) * s_row) (W_q * s_col)^T + b, in double.
torch::Tensor by_hand(const torch::Tensor& x, const Int8Rows& w, const torch::Tensor& bias) {
  const torch::Tensor xd = x.to(torch::kFloat64);
  torch::Tensor s_row = xd.abs().amax(1, true) / 127.0;
  s_row = torch::where(s_row > 0, s_row, torch::ones_like(s_row));
  const torch::Tensor xq = torch::round(xd / s_row);
  const torch::Tensor sums = xq.matmul(w.values.to(torch::kFloat64).t());
  return sums * s_row * w.scales.to(torch::kFloat64).unsqueeze(0) + bias.to(torch::kFloat64);
}

TEST(BertOnednn, Int8GemmMatchesTheArithmeticByHandOnEveryTileShape) {
  torch::manual_seed(11);
  const Int8Rows w = quantize_rows(torch::randn({40, 24}));
  const torch::Tensor bias = torch::randn({40});
  const Int8Gemm gemm(w, bias);
  const std::int64_t tile = Int8Gemm::kTileRows;
  for (const std::int64_t rows : std::vector<std::int64_t>{1, 31, 32, 33, tile, tile + 45}) {
    torch::Tensor x = torch::randn({rows, 24}) * 3.0;
    x[0].zero_();  // an all-zero row: scale 1, output = bias
    const torch::Tensor got = gemm.forward(x).to(torch::kFloat64);
    const torch::Tensor want = by_hand(x, w, bias);
    ASSERT_EQ(got.sizes(), want.sizes());
    // Integer sums are exact; only the f32 rescaling rounds.
    EXPECT_LE((got - want).abs().max().item<double>(), 1e-5 * want.abs().max().item<double>()) << rows << " rows";
    EXPECT_TRUE(torch::allclose(got[0], bias.to(torch::kFloat64), 0, 1e-6));
  }
}

TEST(BertOnednn, Int8GemmKeepsLeadingDimsAndRefusesAWrongWidth) {
  const Int8Gemm gemm(quantize_rows(torch::randn({8, 6})), torch::Tensor());
  EXPECT_EQ(gemm.forward(torch::randn({2, 3, 6})).sizes(), (std::vector<std::int64_t>{2, 3, 8}));
  EXPECT_ANY_THROW(gemm.forward(torch::randn({2, 5})));
}

TEST(BertOnednn, BatchedMatmulEqualsTorchOnStridedViews) {
  torch::manual_seed(12);
  // (B, T, H, d) viewed as (B, H, T, d), as split_heads does.
  const torch::Tensor q = torch::randn({9, 7, 4, 16}).transpose(1, 2);
  const torch::Tensor k = torch::randn({9, 7, 4, 16}).transpose(1, 2);
  torch::NoGradGuard no_grad;
  const torch::Tensor k_t = k.transpose(-2, -1);
  ASSERT_TRUE(batched_matmul_applies(q, k_t));
  const torch::Tensor scores = batched_matmul(q, k_t);
  EXPECT_TRUE(scores.is_contiguous());
  EXPECT_TRUE(torch::allclose(scores, torch::matmul(q, k_t), 1e-5, 1e-5));
  // Written through the strides of a transposed view: (B, T, H, d) storage.
  const torch::Tensor weights = torch::softmax(scores, -1);
  torch::Tensor out = torch::empty({9, 7, 4, 16});
  batched_matmul_into(weights, k, out.transpose(1, 2));
  EXPECT_TRUE(torch::allclose(out.transpose(1, 2), torch::matmul(weights, k), 1e-5, 1e-5));
}

TEST(BertOnednn, BatchedMatmulStaysOutOfTheWayOfGradientsAndSingleTitles) {
  const torch::Tensor a = torch::randn({40, 3, 4}, torch::requires_grad());
  const torch::Tensor b = torch::randn({40, 4, 5});
  EXPECT_FALSE(batched_matmul_applies(a, b));  // training keeps LibTorch's autograd matmul
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(batched_matmul_applies(a, b));
  EXPECT_FALSE(batched_matmul_applies(a.to(torch::kFloat64), b.to(torch::kFloat64)));
  EXPECT_FALSE(batched_matmul_applies(a.narrow(0, 0, 4), b.narrow(0, 0, 4)));  // one title's 4 heads
}

// Stacked Q/K/V twins quantise the input once: each row's scale depends on the row only and
// int32 sums are exact, so the outputs equal the three separate GEMMs', full and first-only.
TEST(BertOnednn, StackedInt8ProjectionsEqualSeparateOnes) {
  torch::manual_seed(13);
  MultiHeadAttention attention(32, 4, 0.0, std::make_shared<MaskRng>(1));
  attention->eval();
  select_int8_engine("onednn");
  std::map<std::string, Int8Rows> q8;
  for (const auto& p : attention->named_parameters()) {
    if (p.value().dim() == 2) q8.emplace(p.key(), quantize_rows(p.value()));
  }
  attach_int8_linears(*attention, q8);
  const torch::Tensor x = torch::randn({5, 9, 32});
  const AttentionMask mask = make_attention_mask(torch::rand({5, 9}) > 0.2, 9, false);
  c10::InferenceMode guard;
  const torch::Tensor separate = attention->forward(x, mask).output;
  const torch::Tensor separate_first = attention->forward(x, mask, /*first_only=*/true).output;
  attention->stack_int8_projections();
  EXPECT_TRUE(torch::allclose(attention->forward(x, mask).output, separate, 1e-6, 1e-6));
  EXPECT_TRUE(torch::allclose(attention->forward(x, mask, true).output, separate_first, 1e-6, 1e-6));
}

}  // namespace
}  // namespace newscls::bert
