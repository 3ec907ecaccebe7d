// `newscls compress --method quantize`: a bert bundle whose Linear layers run int8 GEMMs
// (kernels/quantized_linear.h) and whose tables are stored as int8 rows, written in the int8
// payload (model/int8_payload.h: its byte layout, and how loading it dequantises).
//
//   nlohmann::json facts = quantize_bundle(request);
//   Int8Layout layout = int8_layout_for(*model, strip_docs(quantize_defaults()));
#pragma once

#include <set>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "bert/model/int8_payload.h"
#include "newscls/core/bundle.h"
#include "newscls/core/family.h"

namespace newscls::bert {

// The method's settings with "_doc" strings.
nlohmann::json quantize_defaults();
// The int8 tensors for these settings: every Linear weight, and the embedding tables when
// "embeddings" is true.
Int8Layout int8_layout_for(const torch::nn::Module& model, const nlohmann::json& settings);
nlohmann::json quantize_bundle(const CompressContext& request);

}  // namespace newscls::bert
