// newscls error hierarchy.
//
// Every failure a user can cause or meet is thrown as a newscls::Error whose what()
// is a single line a person can act on: the file and line of a bad input
// ("data/train.txt:12: label 42 out of range 0..9"), the config key at fault, the found
// and supported version of a model file, or the HTTP status of a failed request.
// Only apps/newscls/main.cpp catches everything; it prints "error: <what()>" and exits 1.
//
//   throw DataError(path, line, "missing tab between title and label");
//   throw ConfigError("n_trees", "must be a positive integer");
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace newscls {

enum class ErrorKind { kData, kConfig, kModelFormat, kIo, kHttp, kUsage, kInterrupted };

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// A bad line in an input file; line is 1-based, 0 when the whole file is at fault.
class DataError : public Error {
 public:
  DataError(const std::string& path, std::size_t line, const std::string& message);
  const std::string& path() const { return path_; }
  std::size_t line() const { return line_; }

 private:
  std::string path_;
  std::size_t line_;
};

class ConfigError : public Error {
 public:
  ConfigError(const std::string& key, const std::string& message);
};

// A model bundle or payload that cannot be used: missing, truncated, corrupt, too new.
class ModelFormatError : public Error {
 public:
  ModelFormatError(const std::string& path, const std::string& message);
};

class IoError : public Error {
 public:
  IoError(const std::string& path, const std::string& message);
};

class HttpError : public Error {
 public:
  HttpError(int status, const std::string& message);
  int status() const { return status_; }

 private:
  int status_;
};

// Wrong use of the command line that CLI11 itself cannot see (exit code 2).
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(ErrorKind::kUsage, message) {}
};

// SIGINT or SIGTERM arrived; thrown from a cancellation point (see interrupt.h).
class InterruptedError : public Error {
 public:
  InterruptedError() : Error(ErrorKind::kInterrupted, "interrupted") {}
};

}  // namespace newscls
