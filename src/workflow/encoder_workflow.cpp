#include "newscls/workflow/encoder_workflow.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include <spdlog/spdlog.h>

#include "newscls/core/atomic_file.h"
#include "newscls/core/bundle.h"
#include "newscls/core/data.h"
#include "newscls/core/error.h"
#include "newscls/core/interrupt.h"
#include "newscls/core/parallel.h"
#include "newscls/workflow/registry.h"

namespace newscls {

nlohmann::json import_checkpoint(const ImportContext& request) {
  for (const std::string& name : known_families()) {
    const Family& family = find_family(name);
    if (family.imports(request.format)) return family.import_checkpoint(request);
  }
  throw UsageError("no model family imports " + request.format + " checkpoints");
}

namespace {

void append_embedding(std::string& text, std::size_t index, const std::string& title, const Embedding& e) {
  nlohmann::json j{{"index", index}, {"title", title}, {"cls", e.cls}};
  if (!e.pooler.empty()) j["pooler"] = e.pooler;
  text += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

std::size_t run_embed(const EmbedRequest& r) {
  auto model = load_classifier(r.model_dir);
  model->set_threads(given_thread_count(r.threads));
  refuse_output_over_input(r.output, r.input);
  refuse_output_over_bundle("--output", r.output, r.model_dir);
  refuse_folder_spelling("--output", r.output);
  TitleReader reader(r.input);
  const std::string folder = r.output == "-" ? "" : std::filesystem::path(r.output).parent_path().string();
  if (!folder.empty()) make_directories(folder);  // as predict and eval --out do
  AtomicOutputFile out(r.output);
  constexpr std::size_t kBatch = 256;
  std::vector<std::string> batch;
  std::string title, text;
  std::size_t total = 0;
  for (bool more = true; more;) {
    batch.clear();
    while (batch.size() < kBatch && (more = reader.next(title))) batch.push_back(title);
    if (batch.empty()) break;
    check_interrupted();
    const std::vector<Embedding> vectors = model->embed(batch);
    text.clear();
    for (std::size_t i = 0; i < batch.size(); ++i) append_embedding(text, total + i, batch[i], vectors[i]);
    out.write(text);
    total += batch.size();
  }
  out.commit();
  spdlog::info("embedded {} titles from {}", total, reader.path());
  return total;
}

}  // namespace newscls
