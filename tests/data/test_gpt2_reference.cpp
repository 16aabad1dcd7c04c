// GPT-2 encodings against independent implementations of the same vocabulary:
// tiktoken (tests/data/gpt2_reference.json, made by tests/reference/gen_gpt2_reference.py) and
// the npm package's own encoder.js (tests/data/gpt2_node_reference.json, made by
// tests/reference/gen_gpt2_node_reference.js).
#include <nlohmann/json.hpp>
#include <set>

#include "data_test_util.hpp"

namespace fp8lab::data {
namespace {

void expect_matches_reference(const Tokenizer& tok, const std::string& relative_path) {
  const std::string text = testing::read_file(testing::source_path(relative_path));
  ASSERT_FALSE(text.empty()) << relative_path;
  const nlohmann::json ref = nlohmann::json::parse(text);
  const auto& cases = ref.at("cases");
  ASSERT_GE(cases.size(), 100u) << relative_path << " holds too few cases";
  std::size_t mismatches = 0;
  for (const auto& c : cases) {
    const std::string s = c.at("text").get<std::string>();
    const std::vector<TokenId> expected = c.at("ids").get<std::vector<TokenId>>();
    const std::vector<TokenId> got = tok.encode(s);
    if (got != expected) {
      ++mismatches;
      ADD_FAILURE() << ref.value("implementation", "reference") << " disagrees on "
                    << ::testing::PrintToString(s) << "\n  expected "
                    << ::testing::PrintToString(expected) << "\n  got      "
                    << ::testing::PrintToString(got);
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST(Gpt2Reference, MatchesNodeEncoder) {
  FP8LAB_REQUIRE_GPT2(tok);
  expect_matches_reference(*tok, "tests/data/gpt2_node_reference.json");
}

TEST(Gpt2Reference, MatchesTiktoken) {
  FP8LAB_REQUIRE_GPT2(tok);
  const std::string path = testing::source_path("tests/data/gpt2_reference.json");
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << path << " is missing: generate it on a machine with tiktoken with "
                 << "tests/reference/gen_gpt2_reference.py --vocab-dir data/gpt2-vocab "
                 << "--out tests/data/gpt2_reference.json";
  }
  expect_matches_reference(*tok, "tests/data/gpt2_reference.json");
}

TEST(Gpt2Reference, StringsFileCoversTheReferences) {
  // Both reference files must have been made from the committed strings file.
  const nlohmann::json strings = nlohmann::json::parse(
      testing::read_file(testing::source_path("tests/data/gpt2_strings.json")));
  const nlohmann::json node = nlohmann::json::parse(
      testing::read_file(testing::source_path("tests/data/gpt2_node_reference.json")));
  std::set<std::string> all;
  for (const auto& s : strings.at("strings")) all.insert(s.get<std::string>());
  for (const auto& c : node.at("cases")) {
    EXPECT_TRUE(all.count(c.at("text").get<std::string>()))
        << "node reference case not in the strings file: " << c.at("text");
  }
  EXPECT_EQ(node.at("cases").size() + node.at("skipped_for_js_whitespace").get<std::size_t>(),
            all.size());
}

}  // namespace
}  // namespace fp8lab::data
