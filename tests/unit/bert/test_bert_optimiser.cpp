// The lazy AdamW of sparse embedding tables must match dense AdamW whenever every row is
// touched, clip jointly with the dense parameters, and survive a checkpoint round trip.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

#include "bert/train/optimiser.h"
#include "newscls/core/error.h"
#include "unit/test_support.h"

namespace newscls::bert {
namespace {

// An embedding table (with sparse gradients or not) and a dense layer.
struct Toy : torch::nn::Module {
  Toy(const std::string& table_name, bool sparse) {
    torch::manual_seed(3);
    table = register_module(table_name, torch::nn::Embedding(torch::nn::EmbeddingOptions(6, 4).sparse(sparse)));
    linear = register_module("linear", torch::nn::Linear(4, 2));
  }
  torch::Tensor loss(const torch::Tensor& ids) { return linear(table(ids)).pow(2).sum(); }
  torch::nn::Embedding table{nullptr};
  torch::nn::Linear linear{nullptr};
};

void train_steps(Toy& toy, Optimiser& opt, int steps, double clip) {
  for (int i = 0; i < steps; ++i) {
    // Every row appears, some twice, so duplicate rows must be summed.
    torch::Tensor ids = torch::tensor(std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 2, 4}, torch::kInt64);
    opt.zero_grad();
    toy.loss(ids).backward();
    opt.step(0.01 * (i + 1), clip);
  }
}

void expect_same_weights(Toy& a, Toy& b, double tol) {
  EXPECT_LE((a.table->weight - b.table->weight).abs().max().item<double>(), tol);
  EXPECT_LE((a.linear->weight - b.linear->weight).abs().max().item<double>(), tol);
}

TEST(BertOptimiser, SparseTableMatchesDenseAdamWWhenEveryRowIsTouched) {
  Toy sparse_toy("any_name", true), dense_toy("any_name", false);
  ASSERT_EQ(sparse_gradient_weights(sparse_toy), std::set<std::string>{"any_name.weight"});
  ASSERT_TRUE(sparse_gradient_weights(dense_toy).empty());
  for (double clip : {0.0, 0.5}) {
    Toy dense("token_embedding", false), sparse("bigram_embedding", true);
    expect_same_weights(dense, sparse, 0.0);
    Optimiser dense_opt(dense, 0.01, 0.1), sparse_opt(sparse, 0.01, 0.1);
    train_steps(dense, dense_opt, 5, clip);
    train_steps(sparse, sparse_opt, 5, clip);
    EXPECT_GT((dense.table->weight - Toy("x", false).table->weight).abs().max().item<double>(), 1e-3)
        << "the weights moved";
    expect_same_weights(dense, sparse, 1e-6);
  }
}

TEST(BertOptimiser, UntouchedSparseRowsStayPut) {
  Toy toy("bigram_embedding", true);
  const torch::Tensor before = toy.table->weight.clone();
  Optimiser opt(toy, 0.01, 0.1);
  opt.zero_grad();
  toy.loss(torch::tensor(std::vector<std::int64_t>{1, 1, 3}, torch::kInt64)).backward();
  opt.step(0.01, 1.0);
  const torch::Tensor moved = (toy.table->weight - before).abs().sum(1);
  EXPECT_GT(moved[1].item<float>(), 0.0f);
  EXPECT_GT(moved[3].item<float>(), 0.0f);
  for (int row : {0, 2, 4, 5}) EXPECT_EQ(moved[row].item<float>(), 0.0f) << "row " << row;
}

TEST(BertOptimiser, CheckpointRoundTripContinuesIdentically) {
  const std::string dir = testing::scratch_dir();
  Toy straight("bigram_embedding", true), resumed("bigram_embedding", true);
  Optimiser straight_opt(straight, 0.01, 0.1);
  train_steps(straight, straight_opt, 3, 1.0);
  straight_opt.save(dir);
  {
    torch::NoGradGuard no_grad;
    resumed.table->weight.copy_(straight.table->weight);
    resumed.linear->weight.copy_(straight.linear->weight);
    resumed.linear->bias.copy_(straight.linear->bias);
  }
  Optimiser resumed_opt(resumed, 0.01, 0.1);
  resumed_opt.load(dir);
  train_steps(straight, straight_opt, 2, 1.0);
  train_steps(resumed, resumed_opt, 2, 1.0);
  expect_same_weights(straight, resumed, 0.0);
}

// A damaged optimizer.pt gave LibTorch's "PytorchStreamReader failed reading zip archive" and
// a C++ stack trace, naming no file.
TEST(BertOptimiser, DamagedCheckpointNamesItsFile) {
  const std::string dir = testing::scratch_dir();
  Toy toy("bigram_embedding", true);
  Optimiser opt(toy, 0.01, 0.1);
  train_steps(toy, opt, 1, 1.0);
  opt.save(dir);
  std::filesystem::resize_file(dir + "/optimizer.pt", 100);
  try {
    opt.load(dir);
    FAIL() << "a truncated optimizer.pt was read";
  } catch (const ModelFormatError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(dir + "/optimizer.pt: truncated or corrupt (", 0), 0u) << what;
    EXPECT_EQ(what.find("frame #"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace newscls::bert
