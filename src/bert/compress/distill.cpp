// `newscls compress --method distill`: a smaller student bert trained on the teachers' soft
// labels (and optionally the --model-dir teacher's attention), with the teacher's tokenizer.
#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "bert/bert.h"
#include "bert/compress/attention_kl.h"
#include "bert/compress/compress.h"
#include "bert/compress/float_bert.h"
#include "bert/compress/quantize.h"
#include "bert/model/settings.h"
#include "bert/model/tensor_io.h"
#include "bert/tokens/title_tokenizer.h"
#include "bert/train/training.h"
#include "newscls/core/config.h"
#include "newscls/core/error.h"
#include "newscls/core/stopwatch.h"

namespace newscls::bert {
namespace {

constexpr int kUnlabelled = -100;  // a title of --unlabelled: soft labels only

struct DistillSettings {
  std::int64_t layers = 0, hidden = 0, heads = 0, ff = 0, max_steps = 0;
  std::string init;
  double temperature = 0, alpha = 0, attention_weight = 0, lr = 0;
  int epochs = 0, batch_size = 0;
};

DistillSettings parse_distill(const nlohmann::json& c) {
  DistillSettings s;
  s.layers = config_int(c, "layers", 1, 48);
  s.hidden = config_int(c, "hidden", 0, 4096);
  s.heads = config_int(c, "heads", 0, 64);
  s.ff = config_int(c, "ff", 0, 16384);
  s.init = config_string(c, "init");
  if (s.init != "auto" && s.init != "random" && s.init != "teacher") {
    throw ConfigError("init", "must be auto, random or teacher");
  }
  s.temperature = config_double(c, "temperature", 0.05, 100.0);
  s.alpha = config_double(c, "alpha", 0.0, 1.0);
  s.attention_weight = config_double(c, "attention_weight", 0.0, 1e4);
  s.epochs = static_cast<int>(config_int(c, "epochs", 1, 1000));
  s.lr = config_double(c, "lr", 1e-7, 1.0);
  s.batch_size = static_cast<int>(config_int(c, "batch_size", 1, 65536));
  s.max_steps = config_int(c, "max_steps", 0, 1LL << 40);
  return s;
}

// The student's options: the teacher's, with the settings' architecture and schedule.
Settings student_options(const FloatBert& t, const DistillSettings& s) {
  Settings o = t.options;
  o.arch.layers = s.layers;
  if (s.hidden > 0) o.arch.hidden = s.hidden;
  if (s.heads > 0) o.arch.heads = s.heads;
  if (s.ff > 0) o.arch.ff = s.ff;
  if (o.arch.hidden % o.arch.heads != 0) throw ConfigError("heads", "hidden must be a multiple of heads");
  o.epochs = s.epochs;
  o.lr = s.lr;
  o.batch_size = s.batch_size;
  o.max_steps = s.max_steps;
  o.freeze_layers = 0;
  o.arch.heads_per_layer.clear();  // a pruned teacher's head counts are no student's
  // A joined row's soft label would be its first title's alone: the student joins nothing.
  if (s.alpha > 0) o.join_prob = 0;
  return o;
}

bool teacher_init_fits(const Architecture& a, const Architecture& b) {
  return a.hidden == b.hidden && a.heads == b.heads && a.ff == b.ff && a.layers <= b.layers;
}

// Embeddings, the first layers, pooler and head copied from the teacher (same widths only).
void init_from_teacher(ClassifierModel& student, const FloatBert& t) {
  if (!teacher_init_fits(student->encoder->arch(), t.options.arch)) {
    throw ConfigError("init", "teacher init needs the teacher's hidden, heads and ff and at most its layers");
  }
  const NamedTensors from = named_state(*t.model);
  NamedTensors into = named_state(*student);
  torch::NoGradGuard no_grad;
  for (auto& [name, tensor] : into) {
    const auto it = std::find_if(from.begin(), from.end(), [&](const auto& f) { return f.first == name; });
    if (it != from.end() && it->second.sizes() == tensor.sizes()) tensor.copy_(it->second);
  }
}

torch::Tensor probs_tensor(const std::vector<std::vector<float>>& rows, std::int64_t classes) {
  torch::Tensor out = torch::empty({static_cast<std::int64_t>(rows.size()), classes});
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (static_cast<std::int64_t>(rows[i].size()) != classes) {
      throw UsageError("a teacher gave " + std::to_string(rows[i].size()) + " probabilities for " +
                       std::to_string(classes) + " classes");
    }
    out[static_cast<std::int64_t>(i)] = torch::tensor(rows[i]);
  }
  return out;
}

}  // namespace

namespace {

// Everything the per-step loss reads.
struct DistillLoss {
  DistillSettings s;
  torch::Tensor teacher_log_t;               // (N, C) softened teacher log-probabilities; undefined if alpha 0
  mutable ClassifierModel teacher{nullptr};  // for the attention term
  std::vector<std::int64_t> layer_map;       // student layer -> teacher layer

  torch::Tensor operator()(ClassifierModel& model, const Batch& batch) const {
    const bool attend = s.attention_weight > 0;
    EncoderOutput enc = model->encoder->forward(batch.ids, batch.key_valid, attend, /*cls_only=*/!attend);
    const torch::Tensor logits = model->head(enc.hidden);
    torch::Tensor total = torch::zeros({}, logits.options());
    if (s.alpha > 0) {
      const std::vector<std::int64_t> rows(batch.rows.begin(), batch.rows.end());
      const torch::Tensor soft = teacher_log_t.index_select(0, torch::tensor(rows, torch::kInt64));
      total = total + s.alpha * soft_label_kl(logits, soft, s.temperature);
    }
    const torch::Tensor labelled = batch.labels.ge(0);
    if (s.alpha < 1 && labelled.any().item<bool>()) {
      total =
          total + (1 - s.alpha) * torch::cross_entropy_loss(logits.index({labelled}), batch.labels.index({labelled}));
    }
    if (attend) total = total + s.attention_weight * attention_term(enc.weights, batch);
    return total;
  }

  torch::Tensor attention_term(const std::vector<torch::Tensor>& student, const Batch& batch) const {
    std::vector<torch::Tensor> teacher_weights;
    {
      torch::NoGradGuard no_grad;
      teacher_weights = teacher->encoder->forward(batch.ids, batch.key_valid, /*keep_weights=*/true).weights;
    }
    torch::Tensor sum = attention_kl(teacher_weights[layer_map[0]], student[0], batch.key_valid);
    for (std::size_t i = 1; i < student.size(); ++i) {
      sum = sum + attention_kl(teacher_weights[layer_map[i]], student[i], batch.key_valid);
    }
    return sum / static_cast<double>(student.size());
  }
};

template <typename T>
std::vector<T> joined(const std::vector<T>& a, const std::vector<T>& b) {
  std::vector<T> out(a);
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

// Teacher probabilities of the training (and unlabelled) titles, once, softened by T.
torch::Tensor soft_labels(const CompressContext& r, const std::vector<std::string>& titles, double temperature,
                          nlohmann::json& facts) {
  const Stopwatch watch;
  const torch::Tensor probs = probs_tensor(r.teacher_probs(titles), static_cast<std::int64_t>(r.labels->size()));
  facts["teacher_probs_seconds"] = watch.seconds();
  const torch::Tensor train_probs = probs.slice(0, 0, static_cast<std::int64_t>(r.train->size()));
  const torch::Tensor gold = torch::tensor(r.train->labels, torch::kInt64);
  facts["teachers_train_accuracy"] = train_probs.argmax(1).eq(gold).to(torch::kDouble).mean().item<double>();
  return soften_probabilities(probs, temperature);
}

void write_student(const CompressContext& r, const FloatBert& t, ClassifierModel& student, const Settings& o,
                   const nlohmann::json& facts) {
  nlohmann::json config = t.config;  // a key the teacher predates stays absent: the student has its neutral value too
  set_architecture(config, o.arch);
  config["epochs"] = o.epochs;
  config["lr"] = o.lr;
  config["batch_size"] = o.batch_size;
  config["max_steps"] = o.max_steps;
  config["freeze_layers"] = 0;
  config["join_prob"] = o.join_prob;
  BundleWriter writer(r.out_dir);
  t.tokenizer->save(writer, o.arch.vocab_size);
  save_tensors(writer.payload_path(kWeightsPayload), named_state(*student));
  Manifest manifest;
  manifest.family = family().name();
  manifest.labels = r.labels->names;
  manifest.config = config;
  manifest.training = facts;
  writer.commit(manifest);
}

}  // namespace

nlohmann::json distill_defaults() {
  nlohmann::json c;
  c["layers"] = 1;
  c["hidden"] = 0;
  c["heads"] = 0;
  c["ff"] = 0;
  c["init"] = "auto";
  c["temperature"] = 1.0;
  c["alpha"] = 0.5;
  c["attention_weight"] = 0.0;
  c["epochs"] = 6;
  c["lr"] = 5e-4;
  c["batch_size"] = 64;
  c["max_steps"] = 0;
  c["teacher_weights"] = "equal";
  c["_doc"] = {{"layers", "student encoder layers"},
               {"hidden", "student width; 0 = the teacher's"},
               {"heads", "student attention heads; 0 = the teacher's"},
               {"ff", "student feed-forward width; 0 = the teacher's"},
               {"init",
                "teacher: embeddings, first layers, pooler and head copied from the --model-dir teacher (needs its "
                "hidden, heads, ff); random: BERT init; auto (default): teacher when the widths allow. On dev (full "
                "data): 1x256 from the teacher 0.9098, 1x128 random 0.8943"},
               {"temperature",
                "T: the teachers' (calibrated) probabilities are softened as softmax(log p / T), the student's as "
                "softmax(z / T); on dev (8k-title subset, 1x128 student) T=1 alpha=0.5 reached 0.681 accuracy, T=2 "
                "alpha=0.7 0.593, hard labels 0.676"},
               {"alpha",
                "loss = alpha T^2 KL(teacher_T || student_T) + (1 - alpha) CE(hard labels); 0 = hard labels only (see "
                "temperature for the dev figures)"},
               {"attention_weight",
                "weight of KL(teacher attention row || student attention row), real keys and queries only, student "
                "layer i <- teacher layer floor((i+1) Lt / Ls) - 1, heads averaged when counts differ; 0 = off (saves "
                "the teacher forward per step)"},
               {"epochs",
                "student training epochs; the epoch with the best dev macro-F1 is kept (dev still rose at 6 for the "
                "default student)"},
               {"lr", "peak AdamW learning rate (warm-up, decay, clipping as the teacher's config)"},
               {"batch_size", "titles per optimiser step"},
               {"max_steps", "cap on optimiser steps, for smoke tests; 0 = no cap"},
               {"teacher_weights",
                "how the compress workflow averages the --teacher bundles' probabilities: equal, auto (the simplex "
                "grid point of step 0.05 with the best dev accuracy) or one number per teacher, e.g. 0.2,0.4,0.4"}};
  return c;
}

namespace {

DistillSettings settings_of(const CompressContext& r, nlohmann::json& used) {
  used = strip_docs(distill_defaults());
  for (const std::string& o : r.overrides) {
    apply_override(used, o);
    check_config_keys(used, distill_defaults(), "bert distill");
  }
  return parse_distill(used);
}

// The value of --set teacher_weights; "equal" when unset.
std::string teacher_weights_setting(const std::vector<std::string>& overrides) {
  std::string value = "equal";
  const std::string key = "teacher_weights=";
  for (const std::string& o : overrides) {
    if (o.rfind(key, 0) == 0) value = o.substr(key.size());
  }
  return value;
}

std::vector<double> parse_teacher_weights(const std::string& value, std::size_t teachers) {
  std::vector<double> w;
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t comma = std::min(value.find(',', start), value.size());
    const std::string number = value.substr(start, comma - start);
    std::size_t used = 0;
    try {
      w.push_back(std::stod(number, &used));
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != number.size()) {  // "1x" is no number, though stod reads its "1"
      throw ConfigError("teacher_weights", "expected equal, auto or one number per --teacher, got '" + value + "'");
    }
    start = comma + 1;
  }
  double sum = 0;
  for (double x : w) sum += x;
  const bool finite = std::all_of(w.begin(), w.end(), [](double x) { return std::isfinite(x); });
  if (w.size() != teachers || !finite || sum <= 0 || *std::min_element(w.begin(), w.end()) < 0) {
    throw ConfigError("teacher_weights", "needs " + std::to_string(teachers) + " non-negative numbers, not all 0");
  }
  for (double& x : w) x /= sum;
  return w;
}

}  // namespace

TeacherWeighting distill_teacher_weighting(const std::vector<std::string>& overrides, std::size_t teachers) {
  TeacherWeighting weighting;
  weighting.setting = teacher_weights_setting(overrides);
  weighting.choose_on_dev = weighting.setting == "auto";
  if (weighting.setting == "equal" || weighting.choose_on_dev) return weighting;
  weighting.weights = parse_teacher_weights(weighting.setting, teachers);  // checked even for one teacher
  if (teachers == 1) weighting.weights.clear();                            // one teacher: its probabilities as they are
  return weighting;
}

nlohmann::json distill_bundle(const CompressContext& r) {
  if (r.train == nullptr || r.labels == nullptr) throw UsageError("distill: no training data");
  nlohmann::json used;
  const DistillSettings s = settings_of(r, used);
  const FloatBert t = load_float_bert(Bundle::open(r.model_dir), std::make_shared<MaskRng>(1));
  const Settings o = student_options(t, s);
  at::set_num_threads(std::max(1, std::min(r.threads, o.max_threads)));
  torch::manual_seed(r.seed);
  auto rng = std::make_shared<MaskRng>(r.seed);
  ClassifierModel student(o.arch, static_cast<std::int64_t>(r.labels->size()), rng);
  if (s.init == "teacher" || (s.init == "auto" && teacher_init_fits(o.arch, t.options.arch))) {
    init_from_teacher(student, t);
  }

  nlohmann::json facts = nlohmann::json::object();
  const std::vector<std::string> titles = joined(r.train->titles, r.unlabelled);
  DistillLoss loss{s, {}, t.model, teacher_layer_map(o.arch.layers, t.options.arch.layers)};
  if (s.alpha > 0) loss.teacher_log_t = soft_labels(r, titles, s.temperature, facts);
  const Encoded train = encode_titles(*t.tokenizer, titles, o.arch.max_len);
  const std::vector<int> labels = joined(r.train->labels, std::vector<int>(r.unlabelled.size(), kUnlabelled));
  Encoded dev;
  FineTuneJob job;
  job.train = &train;
  job.train_labels = &labels;
  if (r.dev != nullptr) {
    dev = encode_titles(*t.tokenizer, r.dev->titles, o.arch.max_len);
    job.dev = &dev;
    job.dev_labels = &r.dev->labels;
  }
  job.labels = r.labels;
  job.seed = r.seed;
  job.loss = loss;
  spdlog::info("distill: student {} layers, hidden {}, {} heads, ff {}; {} titles ({} unlabelled)", o.arch.layers,
               o.arch.hidden, o.arch.heads, o.arch.ff, titles.size(), r.unlabelled.size());
  facts.update(fine_tune(student, rng, o, job));
  used["hidden"] = o.arch.hidden;
  used["heads"] = o.arch.heads;
  used["ff"] = o.arch.ff;
  facts["settings"] = used;
  facts["teacher_layer_map"] = loss.layer_map;
  facts["soft_labels"] = "teachers' calibrated probabilities p softened as softmax(log p / T)";
  facts["unlabelled_titles"] = r.unlabelled.size();
  facts["parameters_before"] = parameter_count(*t.model);
  facts["parameters_after"] = parameter_count(*student);
  write_student(r, t, student, o, facts);
  return facts;
}

}  // namespace newscls::bert
