// Head pruning for `newscls compress --method prune` (Michel, Levy and Neubig 2019, "Are
// Sixteen Heads Really Better than One?").
//
// Importance of head h: the mean over dev batches of |dL/dxi_h|, where xi is a per-head mask
// of ones multiplying each head's output, normalised per layer (divided by the layer's L2
// norm). Heads are then removed physically: their Q/K/V rows and output-projection columns
// are sliced away, so layers may keep different head counts (Architecture::heads_per_layer).
//
//   std::vector<torch::Tensor> masks = head_masks(arch, all_heads(arch));
//   HeadScores s = gradient_importance(model, masks, dev);
//   ClassifierModel smaller = remove_heads(model, arch, kept, classes, rng, &pruned_arch);
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "bert/model/encoder.h"
#include "bert/train/training.h"
#include "newscls/core/family.h"

namespace newscls::bert {

// Per layer, the indices (into the layer's current heads, ascending) of the heads kept.
using HeadsKept = std::vector<std::vector<std::int64_t>>;
// Per layer, one score per current head.
using HeadScores = std::vector<std::vector<double>>;

HeadsKept all_heads(const Architecture& arch);
// One float tensor per layer: 1 at kept heads, 0 at the others.
std::vector<torch::Tensor> head_masks(const Architecture& arch, const HeadsKept& kept);

struct ScoredTitles {
  const Encoded* titles = nullptr;
  const std::vector<int>* labels = nullptr;
  int batch_size = 256;
};

// Michel et al.'s importance at `masks`, normalised per layer. Runs in eval mode.
HeadScores gradient_importance(ClassifierModel model, const std::vector<torch::Tensor>& masks,
                               const ScoredTitles& data);
// Accuracy with the heads scaled by `masks` (empty: none).
double masked_accuracy(ClassifierModel model, const std::vector<torch::Tensor>& masks, const ScoredTitles& data);

// A new model with only the kept heads of each layer, every other tensor copied. Its
// architecture (heads_per_layer set) goes to *pruned.
ClassifierModel remove_heads(ClassifierModel model, const Architecture& arch, const HeadsKept& kept,
                             std::int64_t num_classes, std::shared_ptr<MaskRng> rng, Architecture* pruned);

// Figures: a layers x heads importance heatmap (removed heads crossed out), and dev accuracy
// against the number of heads removed, the chosen count marked.
std::string importance_heatmap_svg(const HeadScores& importance, const HeadsKept& kept, const std::string& title);
std::string prune_curve_svg(const std::vector<double>& accuracy, std::size_t chosen, const std::string& title);

// prune_bundle itself is declared in bert/compress.h. Its settings with "_doc" strings; an unknown --set key is refused
// naming it.
nlohmann::json prune_defaults();

}  // namespace newscls::bert
