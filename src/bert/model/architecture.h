// The shape of a bert encoder, and the hashed n-gram buckets its embeddings read, without
// LibTorch: the training encoder (encoder.h) and the inference runtime (runtime/) share them,
// so both compute the same buckets and head counts.
//
//   Architecture arch{vocab_size, 2, 256, 4, 512, 64, 0.1, 0.1, 32768};
//   std::int64_t heads = layer_heads(arch, 1);
//   ngram_buckets_of_row(ids, t, arch.vocab_size, arch.bigram_buckets, 2, out);  // out[t]
#pragma once

#include <cstdint>
#include <vector>

namespace newscls::bert {

struct Architecture {
  std::int64_t vocab_size = 0;
  // Defaults live in the config (bert/options.cpp), not here.
  std::int64_t layers = 0, hidden = 0, heads = 0, ff = 0, max_len = 0;
  double dropout = 0, attention_dropout = 0;
  std::int64_t bigram_buckets = 0;   // 0: no character-bigram embedding
  std::int64_t trigram_buckets = 0;  // 0: no character-trigram embedding
  // Imported BERT checkpoints (Hugging Face) add these; their neutral values keep own bundles,
  // written before the keys existed, loading unchanged.
  std::int64_t positions = 0;        // rows of the position table; 0: max_len
  std::int64_t type_vocab_size = 0;  // 0: no token-type table; else row 0 (segment A) is added
  double layer_norm_eps = 1e-12;
  bool pooler = true;  // the tanh pooler over [CLS]; an imported MLM encoder may lack it
  // Heads of each layer after pruning (each hidden/heads wide); empty: `heads` in every layer.
  std::vector<std::int64_t> heads_per_layer = {};
};

// Heads of layer `layer`: heads_per_layer[layer] when given, else heads.
std::int64_t layer_heads(const Architecture& arch, std::int64_t layer);

// The hashed bucket of the `order` characters starting at each of the t positions of one row of
// ids, into out[0..t); 0 where any of them is special ([PAD], [CLS], [SEP], [MASK], [UNK]), so a
// masked character hides its n-grams too. buckets >= 2, order >= 2.
void ngram_buckets_of_row(const std::int64_t* ids, std::int64_t t, std::int64_t vocab_size, std::int64_t buckets,
                          int order, std::int64_t* out);

}  // namespace newscls::bert
