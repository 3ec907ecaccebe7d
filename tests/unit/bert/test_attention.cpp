// The attention function against the lecture's worked example (section 4.4), its variance
// claim (4.5), masking (4.9) and the full encoder's padding invariance.
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "bert/model/attention.h"
#include "bert/model/encoder.h"
#include "bert/tokens/vocab.h"

namespace newscls::bert {
namespace {

torch::Tensor mat(std::vector<std::vector<float>> rows) {
  const auto r = static_cast<std::int64_t>(rows.size()), c = static_cast<std::int64_t>(rows[0].size());
  torch::Tensor t = torch::empty({r, c});
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j) t[i][j] = rows[i][j];
  return t;
}

void expect_close(const torch::Tensor& got, const torch::Tensor& want, double tol, const char* what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const double diff = (got - want).abs().max().item<double>();
  EXPECT_LE(diff, tol) << what << "\n got\n" << got << "\n want\n" << want;
}

struct Lecture {
  torch::Tensor q = mat({{1, 0, 1, 0}, {0, 1, 0, 1}, {1, 1, 0, 0}});
  torch::Tensor k = mat({{0, 1, 0, 1}, {1, 0, 1, 0}, {1, 1, 1, 1}});
  torch::Tensor v = mat({{1, 0}, {0, 2}, {2, 1}});
};

TEST(Attention, LectureScoresAndScaledScores) {
  Lecture l;
  expect_close(attention_scores(l.q, l.k, false), mat({{0, 2, 2}, {2, 0, 2}, {1, 1, 2}}), 1e-6, "S");
  expect_close(attention_scores(l.q, l.k, true), mat({{0, 1, 1}, {1, 0, 1}, {0.5, 0.5, 1}}), 1e-6, "S/2");
}

TEST(Attention, LectureWeightsAndOutput) {
  Lecture l;
  AttentionOutput r = scaled_dot_product_attention(l.q, l.k, l.v, AttentionMask{});
  expect_close(r.weights, mat({{0.1554, 0.4223, 0.4223}, {0.4223, 0.1554, 0.4223}, {0.2741, 0.2741, 0.4519}}), 5e-5,
               "A to 4 decimals");
  // The lecture multiplies weights already rounded to 4 decimals, so its O is off by up to
  // 1e-4 in the last place (o31 = 2 - 3a = 1.17780 exactly, printed 1.1779).
  expect_close(r.output, mat({{1.0000, 1.2669}, {1.2669, 0.7331}, {1.1779, 1.0001}}), 1.5e-4, "O as printed");
  const double e = std::exp(1.0), a = std::exp(0.5) / (2 * std::exp(0.5) + e), b = e / (1 + 2 * e);
  expect_close(r.output, mat({{1.0f, float(3 * b)}, {float(3 * b), float(2 - 3 * b)}, {float(2 - 3 * a), 1.0f}}), 1e-5,
               "O in closed form");
}

TEST(Attention, LectureUnscaledSoftmaxIsSharper) {
  Lecture l;
  AttentionOutput r = scaled_dot_product_attention(l.q, l.k, l.v, AttentionMask{}, /*scale=*/false);
  expect_close(r.weights, mat({{0.0634, 0.4683, 0.4683}, {0.4683, 0.0634, 0.4683}, {0.2119, 0.2119, 0.5761}}), 5e-5,
               "softmax(S)");
}

TEST(Attention, RowsSumToOneAndPaddedKeysGetExactlyZero) {
  torch::manual_seed(7);
  torch::Tensor q = torch::randn({3, 2, 5, 8}), k = torch::randn({3, 2, 5, 8}), v = torch::randn({3, 2, 5, 6});
  torch::Tensor valid = torch::tensor({1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0}, torch::kBool).view({3, 5});
  AttentionOutput r = scaled_dot_product_attention(q, k, v, make_attention_mask(valid, 5, false));
  expect_close(r.weights.sum(-1), torch::ones({3, 2, 5}), 1e-6, "row sums");
  EXPECT_EQ(r.weights.index({1, torch::indexing::Slice(), torch::indexing::Slice(), torch::indexing::Slice(3)})
                .abs()
                .max()
                .item<float>(),
            0.0f);
  EXPECT_EQ(r.weights.index({2, torch::indexing::Slice(), torch::indexing::Slice(), torch::indexing::Slice(1)})
                .abs()
                .max()
                .item<float>(),
            0.0f);
  // A single real key takes all the weight.
  expect_close(r.weights.index({2, torch::indexing::Slice(), torch::indexing::Slice(), 0}), torch::ones({2, 5}), 1e-6,
               "single key");
}

TEST(Attention, FullyMaskedRowsGiveZerosNotNaN) {
  torch::Tensor q = torch::randn({2, 1, 3, 4}, torch::requires_grad()), k = torch::randn({2, 1, 3, 4}),
                v = torch::randn({2, 1, 3, 4});
  torch::Tensor valid = torch::tensor({1, 1, 0, 0, 0, 0}, torch::kBool).view({2, 3});
  AttentionOutput r = scaled_dot_product_attention(q, k, v, make_attention_mask(valid, 3, false));
  EXPECT_FALSE(r.output.isnan().any().item<bool>());
  EXPECT_FALSE(r.weights.isnan().any().item<bool>());
  EXPECT_EQ(r.weights[1].abs().max().item<float>(), 0.0f);
  EXPECT_EQ(r.output[1].abs().max().item<float>(), 0.0f);
  expect_close(r.weights[0].sum(-1), torch::ones({1, 3}), 1e-6, "valid rows still sum to 1");
  r.output.sum().backward();
  EXPECT_TRUE(q.grad().isfinite().all().item<bool>());
}

TEST(Attention, KeyAndValueWidthsMayDiffer) {
  torch::Tensor q = torch::randn({2, 3, 4}), k = torch::randn({2, 5, 4}), v = torch::randn({2, 5, 7});
  AttentionOutput r = scaled_dot_product_attention(q, k, v, AttentionMask{});
  EXPECT_EQ(r.output.sizes(), torch::IntArrayRef({2, 3, 7}));
  EXPECT_EQ(r.weights.sizes(), torch::IntArrayRef({2, 3, 5}));
  AttentionOutput r4 =
      scaled_dot_product_attention(q.view({2, 1, 3, 4}), k.view({2, 1, 5, 4}), v.view({2, 1, 5, 7}), AttentionMask{});
  EXPECT_EQ(r4.output.sizes(), torch::IntArrayRef({2, 1, 3, 7}));
}

TEST(Attention, ScalingBringsScoreVarianceFromDkToOne) {
  torch::manual_seed(2024);
  const std::int64_t n = 20000;
  for (std::int64_t dk : {4, 16, 64, 256}) {
    torch::Tensor q = torch::randn({n, 1, dk}), k = torch::randn({n, 1, dk});
    const double raw = attention_scores(q, k, false).var().item<double>();
    const double scaled = attention_scores(q, k, true).var().item<double>();
    EXPECT_NEAR(raw / dk, 1.0, 0.06) << "Var(q.k) for d_k=" << dk;
    EXPECT_NEAR(scaled, 1.0, 0.06) << "Var(q.k/sqrt(d_k)) for d_k=" << dk;
  }
}

TEST(Attention, CausalMaskHidesTheFuture) {
  torch::manual_seed(3);
  const std::int64_t t = 5;
  torch::Tensor q = torch::randn({1, 2, t, 4}), k = torch::randn({1, 2, t, 4}), v = torch::randn({1, 2, t, 3});
  AttentionMask causal = make_attention_mask(torch::Tensor(), t, /*causal=*/true);
  AttentionOutput r = scaled_dot_product_attention(q, k, v, causal);
  EXPECT_EQ(r.weights.triu(1).abs().max().item<float>(), 0.0f);
  expect_close(r.weights.index({0, torch::indexing::Slice(), 0, 0}), torch::ones({2}), 1e-6, "first row");
  expect_close(r.weights.sum(-1), torch::ones({1, 2, t}), 1e-6, "row sums");
  // Changing the last two positions leaves outputs before them untouched.
  torch::Tensor k2 = k.clone(), v2 = v.clone();
  k2.index_put_({torch::indexing::Slice(), torch::indexing::Slice(), torch::indexing::Slice(3)}, 9.0);
  v2.index_put_({torch::indexing::Slice(), torch::indexing::Slice(), torch::indexing::Slice(3)}, -9.0);
  AttentionOutput r2 = scaled_dot_product_attention(q, k2, v2, causal);
  using torch::indexing::Slice;
  expect_close(r2.output.index({Slice(), Slice(), Slice(0, 3)}), r.output.index({Slice(), Slice(), Slice(0, 3)}), 1e-6,
               "past outputs");
  // Combined with padding: padded keys stay at zero weight.
  torch::Tensor valid = torch::tensor({1, 1, 1, 0, 0}, torch::kBool).view({1, t});
  AttentionOutput r3 = scaled_dot_product_attention(q, k, v, make_attention_mask(valid, t, true));
  EXPECT_EQ(r3.weights.index({Slice(), Slice(), Slice(), Slice(3)}).abs().max().item<float>(), 0.0f);
}

TEST(Attention, MultiHeadShapes) {
  auto rng = std::make_shared<MaskRng>(1);
  MultiHeadAttention mha(32, 4, 0.0, rng);
  AttentionOutput r = mha(torch::randn({2, 6, 32}), AttentionMask{});
  EXPECT_EQ(r.output.sizes(), torch::IntArrayRef({2, 6, 32}));
  EXPECT_EQ(r.weights.sizes(), torch::IntArrayRef({2, 4, 6, 6}));
}

// Multi-head attention computed one head at a time from the module's own weights, in double:
// head h uses rows [h*d, (h+1)*d) of the query, key and value maps, and its output fills
// columns [h*d, (h+1)*d) of the input to the output map. Returns (output, weights).
std::pair<torch::Tensor, torch::Tensor> per_head_reference(torch::nn::Module& mha, const torch::Tensor& x,
                                                           const torch::Tensor& key_valid, std::int64_t heads,
                                                           bool first_only) {
  auto w = [&](const std::string& name) { return mha.named_parameters()[name].detach().to(torch::kFloat64); };
  const torch::Tensor xd = x.to(torch::kFloat64);
  const std::int64_t batch = x.size(0), t = x.size(1), hidden = x.size(2), d = hidden / heads;
  const std::int64_t t_q = first_only ? 1 : t;
  torch::Tensor out = torch::empty({batch, t_q, hidden}, torch::kFloat64);
  torch::Tensor weights = torch::empty({batch, heads, t_q, t}, torch::kFloat64);
  const double inf = std::numeric_limits<double>::infinity();
  for (std::int64_t b = 0; b < batch; ++b) {
    torch::Tensor concat = torch::empty({t_q, hidden}, torch::kFloat64);
    for (std::int64_t h = 0; h < heads; ++h) {
      auto project = [&](const std::string& name, const torch::Tensor& in) {
        torch::Tensor wh = w(name + ".weight").slice(0, h * d, (h + 1) * d);
        torch::Tensor bh = w(name + ".bias").slice(0, h * d, (h + 1) * d);
        return torch::matmul(in, wh.t()) + bh;
      };
      torch::Tensor q = project("query", xd[b].slice(0, 0, t_q));            // (t_q, d)
      torch::Tensor k = project("key", xd[b]), v = project("value", xd[b]);  // (t, d)
      torch::Tensor scores = torch::matmul(q, k.t()) / std::sqrt(static_cast<double>(d));
      for (std::int64_t j = 0; j < t; ++j) {
        if (!key_valid[b][j].item<bool>()) scores.select(1, j).fill_(-inf);
      }
      torch::Tensor a = torch::softmax(scores, 1);
      weights[b][h] = a;
      concat.slice(1, h * d, (h + 1) * d) = torch::matmul(a, v);
    }
    out[b] = torch::matmul(concat, w("output.weight").t()) + w("output.bias");
  }
  return {out, weights};
}

TEST(Attention, MultiHeadSplitAndMergeEqualAPerHeadLoop) {
  torch::manual_seed(21);
  const std::int64_t heads = 4, hidden = 32;
  MultiHeadAttention mha(hidden, heads, 0.0, std::make_shared<MaskRng>(1));
  mha->eval();
  torch::NoGradGuard no_grad;
  // Biases start at zero; random ones make a misplaced bias slice visible.
  for (auto& p : mha->named_parameters()) p.value().copy_(torch::randn(p.value().sizes()) * 0.3);
  torch::Tensor x = torch::randn({3, 6, hidden});
  torch::Tensor valid =
      torch::tensor({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0}, torch::kBool).view({3, 6});
  const AttentionMask mask = make_attention_mask(valid, 6, false);
  for (bool first_only : {false, true}) {
    AttentionOutput got = mha(x, mask, first_only);
    auto [out, weights] = per_head_reference(*mha, x, valid, heads, first_only);
    expect_close(got.weights, weights.to(torch::kFloat32), 1e-5, first_only ? "[CLS] weights" : "weights");
    expect_close(got.output, out.to(torch::kFloat32), 1e-5, first_only ? "[CLS] output" : "output");
  }
}

void expect_invariant_to_appended_padding(std::int64_t ngram_buckets) {
  torch::manual_seed(11);
  // vocab, layers, hidden, heads, ff, max_len, dropouts, bigram and trigram buckets
  const Architecture arch{40, 2, 32, 4, 64, 16, 0.1, 0.1, ngram_buckets, ngram_buckets};
  ClassifierModel model(arch, 3, std::make_shared<MaskRng>(5));
  model->eval();
  torch::NoGradGuard no_grad;
  torch::Tensor ids = torch::tensor(std::vector<std::int64_t>{kCls, 7, 9, 11, 13, kSep}, torch::kInt64).view({1, 6});
  torch::Tensor valid = torch::ones({1, 6}, torch::kBool);
  torch::Tensor padded_ids = torch::cat({ids, torch::full({1, 5}, kPad, torch::kInt64)}, 1);
  torch::Tensor padded_valid = torch::cat({valid, torch::zeros({1, 5}, torch::kBool)}, 1);
  EncoderOutput a = model->encoder(ids, valid, true);
  EncoderOutput b = model->encoder(padded_ids, padded_valid, true);
  using torch::indexing::Slice;
  expect_close(b.hidden.index({Slice(), Slice(0, 6)}), a.hidden, 1e-5, "hidden at real positions");
  expect_close(model->head(b.hidden), model->head(a.hidden), 1e-5, "logits");
  for (const auto& w : b.weights) {
    EXPECT_EQ(w.index({Slice(), Slice(), Slice(), Slice(6)}).abs().max().item<float>(), 0.0f);
  }
}

TEST(Attention, EncoderIsInvariantToAppendedPadding) { expect_invariant_to_appended_padding(0); }

TEST(Attention, EncoderWithNgramsIsInvariantToAppendedPadding) { expect_invariant_to_appended_padding(64); }

TEST(Attention, ClsOnlyLastLayerEqualsTheFullPassAtCls) {
  torch::manual_seed(12);
  const Architecture arch{40, 3, 32, 4, 64, 16, 0.1, 0.1, /*bigram_buckets=*/64};
  Encoder encoder(arch, std::make_shared<MaskRng>(5));
  encoder->eval();
  torch::NoGradGuard no_grad;
  torch::Tensor ids =
      torch::tensor(std::vector<std::int64_t>{kCls, 7, 9, 11, kSep, kCls, 8, kSep, kPad, kPad}, torch::kInt64)
          .view({2, 5});
  torch::Tensor valid = ids != kPad;
  torch::Tensor full = encoder(ids, valid).hidden;
  torch::Tensor cls = encoder(ids, valid, /*keep_weights=*/false, /*cls_only=*/true).hidden;
  ASSERT_EQ(cls.sizes(), torch::IntArrayRef({2, 1, 32}));
  expect_close(cls, full.slice(1, 0, 1), 1e-5, "the [CLS] vector");
  EXPECT_EQ(encoder(ids, valid, /*keep_weights=*/true, /*cls_only=*/true).hidden.size(1), 5)
      << "kept weights need every position";
}

}  // namespace
}  // namespace newscls::bert
