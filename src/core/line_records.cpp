// The formats of one record per line: TSV, fastText, JSON Lines.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/record_source.h"
#include "newscls/core/error.h"
#include "newscls/core/json_parse.h"
#include "newscls/core/utf8.h"

namespace newscls {
namespace {

// Skips blank lines; false at the end of the file.
bool next_line(InputFile& in, std::string& line, std::size_t& number) {
  while (true) {
    number = in.line();
    if (!in.read_line(line)) return false;
    if (!is_blank_title(line)) return true;
  }
}

class TsvSource : public RecordSource {
 public:
  explicit TsvSource(InputFile& in) : in_(in) {}
  bool next(RawRecord& r) override {
    if (!next_line(in_, line_, r.line)) return false;
    const std::size_t tab = line_.rfind('\t');  // a title may hold a tab; a label never does
    if (tab == std::string::npos) {
      r.problem = "no tab between title and label";
      return true;
    }
    r.text.assign(line_, 0, tab);
    r.label.assign(line_, tab + 1, std::string::npos);
    return true;
  }

 private:
  InputFile& in_;
  std::string line_;
};

class FastTextSource : public RecordSource {
 public:
  explicit FastTextSource(InputFile& in) : in_(in) {}
  bool next(RawRecord& r) override {
    if (!next_line(in_, line_, r.line)) return false;
    static const std::string kPrefix = "__label__";
    if (line_.compare(0, kPrefix.size(), kPrefix) != 0) {
      r.problem = "no __label__NAME at the start of the line";
      return true;
    }
    const std::size_t end = std::min(line_.find_first_of(" \t"), line_.size());
    r.label.assign(line_, kPrefix.size(), end - kPrefix.size());
    const std::size_t text = std::min(line_.find_first_not_of(" \t", end), line_.size());
    r.text.assign(line_, text, std::string::npos);
    if (r.text.compare(0, kPrefix.size(), kPrefix) == 0)
      r.problem = "more than one __label__: newscls gives a title one class";
    return true;
  }

 private:
  InputFile& in_;
  std::string line_;
};

// A JSON value as a label: a string, or a whole number written in decimal.
bool label_from_json(const nlohmann::json& value, std::string& label) {
  if (value.is_string())
    label = value.get<std::string>();
  else if (value.is_number_integer())
    label = value.dump();
  else
    return false;
  return true;
}

std::string short_parse_error(const std::string& what) {
  const std::size_t at = what.find("] ");  // "[json.exception.parse_error.101] parse error at ..."
  return quoted_for_message(at == std::string::npos ? what : what.substr(at + 2), 160);
}

class JsonlSource : public RecordSource {
 public:
  JsonlSource(InputFile& in, const FormatOptions& options) : in_(in), options_(options) {}
  bool next(RawRecord& r) override {
    if (!next_line(in_, line_, r.line)) return false;
    if (first_ && line_[line_.find_first_not_of(" \t")] == '[') {  // not blank: a first visible byte
      throw DataError(in_.path(), r.line, "a JSON array; newscls reads JSON Lines, one object per line");
    }
    first_ = false;
    nlohmann::json j;
    try {
      j = parse_json_unique_keys(
          line_, [](const std::string& key) { throw std::invalid_argument("key \"" + key + "\" appears twice"); });
    } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e999
      r.problem = "not a JSON object: " + short_parse_error(e.what()) + " (JSON Lines: one whole object per line)";
      return true;
    } catch (const std::invalid_argument& e) {  // a key given twice
      r.problem = e.what();
      return true;
    }
    r.problem = fields_of(j, r);
    return true;
  }

 private:
  std::string fields_of(const nlohmann::json& j, RawRecord& r) const {
    if (!j.is_object()) return "not a JSON object";
    const auto text = j.find(options_.text_column), label = j.find(options_.label_column);
    if (text == j.end()) return "no \"" + options_.text_column + "\" key (name the title's key with --text-column)";
    if (label == j.end()) return "no \"" + options_.label_column + "\" key (name the label's key with --label-column)";
    if (!text->is_string()) return "\"" + options_.text_column + "\" is not a string";
    r.text = text->get<std::string>();
    if (!label_from_json(*label, r.label))
      return "\"" + options_.label_column + "\" is neither a string nor a whole number";
    return {};
  }

  InputFile& in_;
  FormatOptions options_;
  std::string line_;
  bool first_ = true;
};

}  // namespace

std::unique_ptr<RecordSource> make_tsv_source(InputFile& in) { return std::make_unique<TsvSource>(in); }
std::unique_ptr<RecordSource> make_fasttext_source(InputFile& in) { return std::make_unique<FastTextSource>(in); }
std::unique_ptr<RecordSource> make_jsonl_source(InputFile& in, const FormatOptions& options) {
  return std::make_unique<JsonlSource>(in, options);
}

}  // namespace newscls
