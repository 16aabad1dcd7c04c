// The PyTorch peer's results as `fp8lab bench model` reads them (bench/peers/gpt_peer.py writes
// {"preset", "arms": {name: {"frozen": {...}, "train": {...}}}}): model_bench.cpp's report and
// the target checks (model_bench_targets.cpp).
#pragma once

#include "fp8lab/json_read.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace fp8lab::bench {

// The peer's entry for this preset and arm, or null. The peer names MLP activation checkpointing
// "-ckpt". Its compiled arms already recompute pointwise ops in the backward (torch.compile's
// partitioner), so "+recompute-pointwise" compares with the peer's arm without it.
inline const nlohmann::json* peer_arm(const nlohmann::json& peer, const std::string& preset,
                                      const std::string& arm) {
  if (!json_has_string(peer, "preset", preset) || !peer.contains("arms")) return nullptr;
  std::string name = arm;
  const std::string pointwise = "+recompute-pointwise";
  if (name.size() > pointwise.size() && name.ends_with(pointwise))
    name.resize(name.size() - pointwise.size());
  const std::string suffix = "+recompute";
  if (name.size() > suffix.size() && name.ends_with(suffix))
    name = name.substr(0, name.size() - suffix.size()) + "-ckpt";
  const auto& arms = peer.at("arms");
  if (!arms.contains(name) || arms.at(name).contains("error")) return nullptr;
  return &arms.at(name);
}

// part ("frozen" or "train") . key of a peer arm, 0 when absent or not a number.
inline double peer_value(const nlohmann::json& p, const char* part, const char* key) {
  if (!p.contains(part) || !p.at(part).contains(key)) return 0.0;
  const nlohmann::json& v = p.at(part).at(key);
  return v.is_number() ? v.get<double>() : 0.0;  // null: not measured (e.g. energy without NVML)
}

}  // namespace fp8lab::bench
