// The HTTP API's bodies, apart from any HTTP library: parsing a classify request with its
// limits, and writing results, model descriptions and errors as JSON.
//
// Results carry the numbers `newscls predict --format jsonl` writes for the same bundle
// (label, label_id, score, top_k; scores as %.6g), without the title.
//
//   ClassifyRequest r = parse_classify_request(body, {1024, 64});   // throws ApiError
//   std::string out = classify_body(model_json_name, predictions, labels, r.top_k);
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "newscls/core/classifier.h"

namespace newscls::serve {

// An error a client caused (or 503 when the server cannot take the request now).
class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string code, const std::string& message)
      : std::runtime_error(message), status_(status), code_(std::move(code)) {}
  int status() const { return status_; }
  const std::string& code() const { return code_; }

 private:
  int status_;
  std::string code_;
};

struct ClassifyRequest {
  std::vector<std::string> titles;
  int top_k = 3;
  std::string model;  // empty: the only model loaded
};

struct RequestLimits {
  std::size_t max_titles = 1024;
  int max_depth = 64;  // nesting of arrays and objects, checked before parsing
};

constexpr int kMaxTopK = 1000;  // as `newscls predict --top-k`

// 400 for malformed JSON, invalid UTF-8, too deep nesting, wrong types, unknown or duplicate
// keys (in any object) or an empty list; 413 for more titles than limits.max_titles.
ClassifyRequest parse_classify_request(std::string_view body, const RequestLimits& limits);

// Deepest nesting of [ and { outside strings in text (valid JSON or not); counting stops
// once it passes limit, so a hostile body costs one linear scan.
int json_nesting_depth(std::string_view text, int limit);

// {"error":{"code":...,"message":...}}
std::string error_body(const std::string& code, const std::string& message);

// {"model":<name>,"results":[{"label":...,"label_id":n,"score":p,"top_k":[...]},...]}
// model_json is the model's name already written as a JSON string; stage_names name a
// cascade's members (newscls::stage_names).
std::string classify_body(const std::string& model_json, const std::vector<Prediction>& predictions,
                          const std::vector<std::string>& labels, const std::vector<std::string>& stage_names,
                          int top_k);

}  // namespace newscls::serve
