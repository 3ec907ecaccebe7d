// `newscls attention`: a bundle's attention weights of each input title dumped as i.json,
// i.npy and i.html into a folder (families with attention, Family::has_attention). The folder
// may not lie inside a bundle, except as the outermost bundle's attention/ folder.
//
//   AttentionRequest r; r.model_dir = "runs/bert"; r.input = "titles.txt"; r.out_dir = "dumps";
//   std::size_t dumped = run_attention(r);
#pragma once

#include <cstddef>
#include <string>

namespace newscls {

struct AttentionRequest {
  std::string model_dir, input, out_dir;  // input: titles, one a line ("-" = stdin)
  std::size_t limit = 0;                  // only the first N titles; 0 = all
  int threads = 1;                        // resolved (>= 1): the app turns --threads 0 into the core count
};

// Returns the number of titles dumped (the folder holds these dumps alone).
std::size_t run_attention(const AttentionRequest& request);

}  // namespace newscls
