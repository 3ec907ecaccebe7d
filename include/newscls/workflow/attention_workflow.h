// Attention dumps: `newscls attention` (a bundle's attention weights of each input title dumped
// as i.json, i.npy and i.html into a folder, for families with attention, Family::has_attention;
// the folder may not lie inside a bundle, except as the outermost bundle's attention/ folder),
// and the dumps eval --dump-attention and the pipeline's report write.
//
//   AttentionRequest r; r.model_dir = "runs/bert"; r.input = "titles.txt"; r.out_dir = "dumps";
//   std::size_t dumped = run_attention(r);
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "newscls/core/classifier.h"

namespace newscls {

struct AttentionRequest {
  std::string model_dir, input, out_dir;  // input: titles, one a line ("-" = stdin)
  std::size_t limit = 0;                  // only the first N titles; 0 = all
  int threads = 1;                        // resolved (>= 1): the app turns --threads 0 into the core count
};

// Returns the number of titles dumped (the folder holds these dumps alone).
std::size_t run_attention(const AttentionRequest& request);

// The model's attention dumps of titles into dir as 0..n-1.{json,npy,html}; the dumps of an
// earlier, longer list there are removed, so the folder holds this list's alone.
void dump_attention_into(Classifier& model, const std::vector<std::string>& titles, const std::string& dir);
// Before any work: UsageError or IoError when a dump of n titles into dir would replace a file
// no earlier dump wrote, or a folder.
void refuse_dump_over_others(const std::string& dir, std::size_t n);

}  // namespace newscls
