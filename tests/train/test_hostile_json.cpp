// Deeply nested JSON at every place fp8lab reads JSON: each gives an fp8lab::Error naming the
// input, never a crash (100k levels overflowed the stack when an error message printed them).
#include "../data/data_test_util.hpp"
#include "fp8lab/checkpoint.hpp"
#include "fp8lab/config.hpp"
#include "fp8lab/error.hpp"
#include "data/loader.hpp"
#include "fp8lab/safetensors.hpp"
#include "fp8lab/study.hpp"
#include "fp8lab/tokenizer.hpp"
#include "data/document_source.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>

namespace fp8lab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string& deep() {
  static const std::string text = std::string(100000, '[') + std::string(100000, ']');
  return text;
}

void expect_error_naming(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error for " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(e.kind(), ErrorKind::internal) << e.what();
  }
}

TEST(HostileJson, DeepNestingIsAnErrorEverywhere) {
  data::testing::ScratchDir dir("deepjson");
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return dir / name;
  };
  const std::string nested = "{\"train\": " + deep() + "}";
  expect_error_naming([&] { load_run_config(write("config.json", nested)); }, "config.json");
  RunConfig c = run_preset("tiny");
  expect_error_naming([&] { apply_override(c, "optim.lr=" + deep()); }, "optim.lr");
  expect_error_naming(
      [&] {
        parse_checkpoint_meta("{\"format\": \"fp8lab-checkpoint\", \"config\": " + deep() + "}",
                              "meta.json");
      },
      "meta.json");
  std::string header = "{\"w\": " + deep() + "}";
  std::string st(8, '\0');
  for (int i = 0; i < 8; ++i) st[i] = static_cast<char>(header.size() >> (8 * i));
  st += header;
  expect_error_naming(
      [&] { SafetensorsFile(std::vector<std::uint8_t>(st.begin(), st.end()), "w.safetensors"); },
      "w.safetensors");
  expect_error_naming([&] { data::list_shards(write("manifest.json", nested), "train"); },
                      "manifest.json");
  expect_error_naming([&] { load_study_plan(write("study.json", nested)); }, "study.json");
  data::SourceSpec spec;
  spec.inputs = {write("c.jsonl", "{\"text\": \"ok\"}\n{\"text\": " + deep() + "}\n")};
  expect_error_naming(
      [&] {
        data::DocumentStream stream(spec);
        std::vector<data::Document> docs;
        while (stream.next_batch(docs, 1 << 20)) docs.clear();
      },
      "c.jsonl line 2");
  expect_error_naming([&] { data::make_gpt2_tokenizer_from_text(nested, "#version\n"); },
                      "encoder.json");
}

// A number where the checkpoint metadata's "format" string belongs (found by fuzz_checkpoint,
// fuzz/regressions/checkpoint/format_number.json): nlohmann's value() threw a type_error that
// escaped the parser.
TEST(HostileJson, AFormatThatIsNotAStringIsNotACheckpoint) {
  expect_error_naming(
      [] { parse_checkpoint_meta(R"({"adam_updates": 1, "format": 1})", "meta.json"); },
      "'meta.json' is not fp8lab checkpoint metadata");
}

TEST(HostileJson, ErrorsAboutDeepValuesBuiltInMemoryDoNotRecurse) {
  // Values that bypass the parser's limit (built in memory) still make short error messages.
  json value = json::array();
  for (int i = 0; i < 200000; ++i) value = json::array({std::move(value)});
  // (Moved, never copied: copying a json value recurses too.)
  json patch = json::object();
  patch["optim"]["lr"] = std::move(value);
  expect_error_naming([&] { run_config_from_json(patch); }, "optim.lr");
  json optim = json::object();
  optim["optim"] = std::move(patch["optim"]["lr"]);
  expect_error_naming([&] { run_config_from_json(optim); }, "optim");
}

}  // namespace
}  // namespace fp8lab
