// Shrinking a trained engine for a small bundle (quantize=true): the folded table is
// stored as int8 with one scale per row, and when even that exceeds the size budget the
// rows that can move a title's scores least (IDF weight x largest table entry) are
// dropped first. quantize_keep_rows sets the row count by hand.
//
//   nlohmann::json facts = quantize_engine(engine, settings);
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

#include "fasttext/engine.h"
#include "fasttext/settings.h"

namespace newscls::fasttext {

// Payload size the automatic row count aims at: the bar is 10 MB for the whole bundle,
// which also holds metrics.json, predictions.tsv (~0.9 MB on test) and confusion.svg.
constexpr std::size_t kQuantizedTargetBytes = 8'500'000;

// Stored bytes of one quantised row: int8 codes, f32 scale, u32 bucket, f32 weight.
std::size_t quantized_row_bytes(const Engine& engine);

// Prunes (when needed) and quantises engine in place; returns facts for the manifest.
nlohmann::json quantize_engine(Engine& engine, const Settings& settings);

}  // namespace newscls::fasttext
