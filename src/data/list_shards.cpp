// Resolving a data argument (shard, directory or manifest) to the shard files of one split.
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fp8lab/error.hpp"
#include "fp8lab/loader.hpp"

namespace fp8lab::data {
namespace {

std::vector<std::filesystem::path> shards_from_manifest(const std::filesystem::path& manifest,
                                                        std::string_view split) {
  std::ifstream in(manifest);
  FP8LAB_CHECK_KIND(ErrorKind::io, in.good(), "cannot read manifest {}", manifest.string());
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    FP8LAB_FAIL(ErrorKind::format, "manifest {}: {}", manifest.string(), e.what());
  }
  const std::string key(split);
  FP8LAB_CHECK_KIND(ErrorKind::format,
                    j.is_object() && j.contains("splits") && j["splits"].contains(key),
                    "manifest {} has no split '{}'", manifest.string(), split);
  std::vector<std::filesystem::path> out;
  for (const auto& shard : j["splits"][key].at("shards")) {
    out.push_back(manifest.parent_path() / shard.at("file").get<std::string>());
  }
  return out;
}

}  // namespace

std::vector<std::filesystem::path> list_shards(const std::filesystem::path& where,
                                               std::string_view split) {
  namespace fs = std::filesystem;
  FP8LAB_CHECK_KIND(ErrorKind::io, fs::exists(where), "data path {} does not exist",
                    where.string());
  if (fs::is_regular_file(where)) {
    if (where.extension() == ".json") return shards_from_manifest(where, split);
    return {where};
  }
  const std::string prefix = std::string(split) + "_";
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(where)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.starts_with(prefix) && name.ends_with(".bin")) {
      out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  FP8LAB_CHECK_KIND(ErrorKind::io, !out.empty(), "no {}*.bin shards in {}", prefix, where.string());
  return out;
}

}  // namespace fp8lab::data
