#include "serve/api.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "newscls/core/json_parse.h"
#include "newscls/core/utf8.h"
#include "newscls/workflow/predict_output.h"

namespace newscls::serve {
namespace {

ApiError bad_request(const std::string& code, const std::string& message) { return ApiError(400, code, message); }

nlohmann::json parse_json(std::string_view body, const RequestLimits& limits) {
  if (body.empty()) throw bad_request("empty_body", "the request body is empty; send a JSON object");
  if (!is_valid_utf8(body)) throw bad_request("invalid_utf8", "the request body is not valid UTF-8");
  if (json_nesting_depth(body, limits.max_depth) > limits.max_depth) {
    throw bad_request("too_deep", "JSON nested deeper than " + std::to_string(limits.max_depth) + " levels");
  }
  try {
    // A key given twice would be read last-wins: which "titles" the client meant is unknown.
    return parse_json_unique_keys(body, [](const std::string& key) {
      throw bad_request("duplicate_key", "the key \"" + key + "\" is given twice");
    });
  } catch (const nlohmann::json::parse_error& e) {
    throw bad_request("malformed_json", std::string("malformed JSON: ") + e.what());
  }
}

std::vector<std::string> read_titles(const nlohmann::json& j, const RequestLimits& limits) {
  const auto it = j.find("titles");
  if (it == j.end()) throw bad_request("missing_titles", "\"titles\" is required: a list of strings");
  if (!it->is_array()) throw bad_request("wrong_type", "\"titles\" must be a list of strings");
  if (it->empty()) throw bad_request("empty_titles", "\"titles\" is empty; send at least one title");
  if (it->size() > limits.max_titles) {
    throw ApiError(413, "too_many_titles",
                   std::to_string(it->size()) + " titles, more than the limit of " + std::to_string(limits.max_titles) +
                       " per request");
  }
  std::vector<std::string> titles;
  titles.reserve(it->size());
  for (const nlohmann::json& t : *it) {
    if (!t.is_string()) {
      throw bad_request("wrong_type", "\"titles\"[" + std::to_string(titles.size()) + "] is not a string");
    }
    titles.push_back(t.get<std::string>());
  }
  return titles;
}

int read_top_k(const nlohmann::json& j) {
  const auto it = j.find("top_k");
  if (it == j.end()) return 3;
  if (!it->is_number_integer() || *it < 1 || *it > kMaxTopK) {
    throw bad_request("wrong_type", "\"top_k\" must be an integer from 1 to " + std::to_string(kMaxTopK));
  }
  return it->get<int>();
}

std::string read_model(const nlohmann::json& j) {
  const auto it = j.find("model");
  if (it == j.end()) return "";
  if (!it->is_string()) throw bad_request("wrong_type", "\"model\" must be a string");
  return it->get<std::string>();
}

}  // namespace

int json_nesting_depth(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if (c == ']' || c == '}') {
      depth = std::max(0, depth - 1);
    }
  }
  return deepest;
}

ClassifyRequest parse_classify_request(std::string_view body, const RequestLimits& limits) {
  const nlohmann::json j = parse_json(body, limits);
  if (!j.is_object()) throw bad_request("wrong_type", "the request body must be a JSON object");
  for (const auto& item : j.items()) {
    if (item.key() != "titles" && item.key() != "top_k" && item.key() != "model") {
      throw bad_request("unknown_key", "unknown key \"" + item.key() + "\" (known: titles, top_k, model)");
    }
  }
  ClassifyRequest request;
  request.titles = read_titles(j, limits);
  request.top_k = read_top_k(j);
  request.model = read_model(j);
  return request;
}

std::string error_body(const std::string& code, const std::string& message) {
  const nlohmann::json j = {{"error", {{"code", code}, {"message", message}}}};
  // A message may quote bytes of a bad request: replace, never fail, on invalid UTF-8.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string classify_body(const std::string& model_json, const std::vector<Prediction>& predictions,
                          const std::vector<std::string>& labels, const std::vector<std::string>& stage_names,
                          int top_k) {
  // The writer of `newscls predict`, so both give the same numbers and fields.
  PredictionFormatter formatter(labels, PredictionFormat::kJsonl, top_k);
  formatter.set_stage_names(stage_names);
  std::string out = "{\"model\":" + model_json + ",\"results\":[";
  out.reserve(predictions.size() * (64 + 48 * static_cast<std::size_t>(top_k)));
  for (std::size_t i = 0; i < predictions.size(); ++i) {
    if (i) out += ',';
    formatter.append_result_object(out, predictions[i]);
  }
  out += "]}";
  return out;
}

}  // namespace newscls::serve
