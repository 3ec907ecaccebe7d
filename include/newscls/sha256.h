// SHA-256 of files and strings, as lowercase hex; used for bundle payload checksums.
#pragma once

#include <string>
#include <string_view>

namespace newscls {

std::string sha256_hex(std::string_view data);
// Throws IoError when the file cannot be read.
std::string sha256_file_hex(const std::string& path);

}  // namespace newscls
