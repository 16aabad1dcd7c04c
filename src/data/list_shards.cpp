// Resolving a data argument (shard, directory or manifest) to the shard files of one split.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "fp8lab/error.hpp"
#include "fp8lab/json_read.hpp"
#include "data/loader.hpp"
#include "data/shard.hpp"
#include "fp8lab/tokenizer.hpp"

namespace fp8lab::data {
namespace {

std::vector<std::filesystem::path> shards_from_manifest(const std::filesystem::path& manifest,
                                                        std::string_view split) {
  const nlohmann::json j = read_json_file(manifest);
  const std::string key(split);
  FP8LAB_CHECK_KIND(ErrorKind::format,
                    j.is_object() && j.contains("splits") && j["splits"].contains(key) &&
                        j["splits"][key].is_object() && j["splits"][key].contains("shards") &&
                        j["splits"][key]["shards"].is_array(),
                    "manifest {} has no split '{}' with a list of shards", manifest.string(),
                    split);
  std::vector<std::filesystem::path> out;
  for (const auto& shard : j["splits"][key]["shards"]) {
    // Shards sit beside their manifest: a name with a directory part is not one fp8lab wrote.
    const bool plain = shard.is_object() && shard.contains("file") && shard["file"].is_string() &&
                       std::filesystem::path(shard["file"].get<std::string>()).filename() ==
                           shard["file"].get<std::string>() &&
                       shard["file"] != "." && shard["file"] != "..";
    FP8LAB_CHECK_KIND(ErrorKind::format, plain,
                      "manifest {}: split '{}' lists {}, not a shard file name beside it",
                      manifest.string(), split, json_excerpt(shard));
    out.push_back(manifest.parent_path() / shard["file"].get<std::string>());
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

std::vector<std::uint8_t> byte_lengths_for_shards(const std::vector<std::filesystem::path>& shards,
                                                  std::int64_t vocab_size) {
  const auto missing = std::find_if(shards.begin(), shards.end(), [](const auto& shard) {
    return !std::filesystem::exists(byte_length_path(shard));
  });
  if (missing == shards.end()) return {};
  std::unique_ptr<Tokenizer> tokenizer;
  if (vocab_size <= 256) {
    tokenizer = make_byte_tokenizer();
  } else if (vocab_size >= 50257 && vocab_size <= 65536) {
    tokenizer = make_gpt2_tokenizer(default_gpt2_vocab_dir());
  } else {
    FP8LAB_FAIL(ErrorKind::invalid_argument,
                "shard {} has no byte-length sidecar {}, and a vocabulary of {} names no "
                "tokenizer to take byte lengths from (256: byte, 50257..65536: GPT-2); write "
                "sidecars with `fp8lab data prepare`",
                missing->string(), byte_length_path(*missing).string(), vocab_size);
  }
  return tokenizer->byte_length_table();
}

}  // namespace fp8lab::data
