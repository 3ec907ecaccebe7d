#include "newscls/core/error.h"

namespace newscls {
namespace {

std::string located(const std::string& path, std::size_t line, const std::string& message) {
  if (line == 0) return path + ": " + message;
  return path + ":" + std::to_string(line) + ": " + message;
}

}  // namespace

DataError::DataError(const std::string& path, std::size_t line, const std::string& message)
    : Error(ErrorKind::kData, located(path, line, message)), path_(path), line_(line) {}

ConfigError::ConfigError(const std::string& key, const std::string& message)
    : Error(ErrorKind::kConfig, "config key '" + key + "': " + message) {}

ModelFormatError::ModelFormatError(const std::string& path, const std::string& message)
    : Error(ErrorKind::kModelFormat, path + ": " + message) {}

IoError::IoError(const std::string& path, const std::string& message) : Error(ErrorKind::kIo, path + ": " + message) {}

HttpError::HttpError(int status, const std::string& message)
    : Error(ErrorKind::kHttp, status > 0 ? "HTTP " + std::to_string(status) + ": " + message : message),
      status_(status) {}

}  // namespace newscls
