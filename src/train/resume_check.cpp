// The resume config check (see train/resume_check.hpp).
#include "train/resume_check.hpp"

#include <algorithm>
#include <array>

#include "fp8lab/error.hpp"
#include "fp8lab/json_read.hpp"

namespace fp8lab {
namespace {

using nlohmann::json;

// None changes the weights' trajectory: the cadence keys decide how far to train, what is logged
// or validated and how many checkpoints stay on disk (train.steps moves the end of a schedule
// whose optim.decay_steps is 0; docs/training.md says so); the attention kernel family and the
// memory options (kMemoryOptions, precision.KEY) decide how the same step is computed (the own
// attention families and the memory options give the same bits; cuDNN's attention, and
// pointwise recompute's separate GELU kernel for a bf16 fc on the GPU, round within the same
// bounds), so a run may resume on a GPU with less memory.
constexpr std::array<std::string_view, 7> kResumeMayChange = {
    "train.steps",        "train.log_every",        "train.eval_every",
    "train.eval_batches", "train.checkpoint_every", "train.keep_checkpoints",
    "kernels.attention"};

// Leaves of a config's JSON form as ("a.b", value); the form nests at most two levels.
void flatten(const json& j, const std::string& prefix,
             std::vector<std::pair<std::string, json>>& out) {
  for (const auto& [key, value] : j.items()) {
    if (value.is_object()) {
      flatten(value, prefix + key + ".", out);
    } else {
      out.emplace_back(prefix + key, value);
    }
  }
}

std::vector<std::pair<std::string, json>> leaves(const RunConfig& c) {
  std::vector<std::pair<std::string, json>> out;
  flatten(to_json(c), "", out);
  return out;
}

const json* find_leaf(const std::vector<std::pair<std::string, json>>& leaves,
                      const std::string& key) {
  for (const auto& [k, v] : leaves) {
    if (k == key) return &v;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> differing_config_keys(const RunConfig& a, const RunConfig& b) {
  const auto la = leaves(a), lb = leaves(b);
  std::vector<std::string> keys;
  for (const auto& [key, value] : la) {
    const json* other = find_leaf(lb, key);
    if (other == nullptr || *other != value) keys.push_back(key);
  }
  for (const auto& [key, value] : lb) {
    if (find_leaf(la, key) == nullptr) keys.push_back(key);
  }
  return keys;
}

bool resume_may_change(std::string_view key) {
  if (std::find(kResumeMayChange.begin(), kResumeMayChange.end(), key) != kResumeMayChange.end())
    return true;
  constexpr std::string_view precision = "precision.";
  return key.starts_with(precision) &&
         std::any_of(kMemoryOptions.begin(), kMemoryOptions.end(),
                     [&](const MemoryOption& m) { return key.substr(precision.size()) == m.key; });
}

void check_resume_config(const RunConfig& checkpoint, const RunConfig& now,
                         std::string_view checkpoint_name) {
  const auto la = leaves(checkpoint), lb = leaves(now);
  std::string refused;
  for (const std::string& key : differing_config_keys(checkpoint, now)) {
    if (resume_may_change(key)) continue;
    const json* was = find_leaf(la, key);
    const json* is = find_leaf(lb, key);
    refused += fmt::format("{}{} (checkpoint {}, now {})", refused.empty() ? "" : "; ", key,
                           was ? json_excerpt(*was) : "absent", is ? json_excerpt(*is) : "absent");
  }
  if (refused.empty()) return;
  std::string memory_options;  // "precision.mlp_recompute, pointwise_recompute, ..."
  for (const MemoryOption& m : kMemoryOptions)
    memory_options += fmt::format("{}{}", memory_options.empty() ? "precision." : ", ", m.key);
  FP8LAB_FAIL(ErrorKind::invalid_argument,
              "--resume: the config differs from checkpoint '{}' in keys a resumed run may not "
              "change: {}. Only train.steps, the logging, validation and checkpoint cadence "
              "(train.log_every, eval_every, eval_batches, checkpoint_every, keep_checkpoints), "
              "kernels.attention and the memory options ({}) may change; train into a new "
              "--out to change anything else",
              checkpoint_name, refused, memory_options);
}

}  // namespace fp8lab
