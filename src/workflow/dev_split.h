// A dev set drawn from the training titles when no dev file is given.
#pragma once

#include <cstdint>
#include <string>

#include "newscls/core/data.h"

namespace newscls {

// Moves round(fraction x its titles) of each class with at least 2 titles (at least 1 of
// them, and never the last) from train into the returned dev set, chosen with seed; both keep
// their file order and line numbers. dev.path is "<train path> (dev split)". DataError when
// nothing can be drawn (every class has a single title).
Dataset split_off_dev(Dataset& train, int num_labels, double fraction, std::uint64_t seed);

// sha256 of the dev set's line numbers, one a line: which titles it drew, in a few bytes.
std::string dev_lines_sha256(const Dataset& dev);

}  // namespace newscls
