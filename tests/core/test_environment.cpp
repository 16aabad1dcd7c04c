// The library reads no environment variable: the settings a program installs are what it uses.
#include "fp8lab/environment.hpp"
#include "fp8lab/tokenizer.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

namespace fp8lab {
namespace {

EnvLookup lookup_of(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(Environment, SettingsComeFromTheVariablesTheLookupReturns) {
  const EnvironmentSettings none = environment_from(lookup_of({}));
  EXPECT_TRUE(none.gpt2_vocab_dir.empty());
  EXPECT_TRUE(none.nccl_library.empty());
  EXPECT_TRUE(none.cudnn_library.empty());
  EXPECT_TRUE(none.source_commit.empty());
  EXPECT_FALSE(none.cuda_sync_after_launch);
  const EnvironmentSettings all = environment_from(lookup_of({{"FP8LAB_GPT2_VOCAB", "/v"},
                                                              {"FP8LAB_NCCL_LIBRARY", "/n.so"},
                                                              {"FP8LAB_CUDNN_LIBRARY", "/c.so"},
                                                              {"FP8LAB_SOURCE_COMMIT", "abc dirty"},
                                                              {"FP8LAB_CUDA_SYNC", "1"}}));
  EXPECT_EQ(all.gpt2_vocab_dir, "/v");
  EXPECT_EQ(all.nccl_library, "/n.so");
  EXPECT_EQ(all.cudnn_library, "/c.so");
  EXPECT_EQ(all.source_commit, "abc dirty");
  EXPECT_TRUE(all.cuda_sync_after_launch);
  // Only "1" turns synchronisation on.
  EXPECT_FALSE(environment_from(lookup_of({{"FP8LAB_CUDA_SYNC", "yes"}})).cuda_sync_after_launch);
}

TEST(Environment, TheLibraryUsesTheInstalledSettingsNotTheProcessEnvironment) {
  const EnvironmentSettings saved = environment();
  const std::filesystem::path default_dir = data::default_gpt2_vocab_dir();
  ::setenv("FP8LAB_GPT2_VOCAB", "/from/the/process", 1);
  EXPECT_EQ(data::default_gpt2_vocab_dir(), default_dir);  // not read behind the program's back
  ::unsetenv("FP8LAB_GPT2_VOCAB");
  EnvironmentSettings mine = saved;
  mine.gpt2_vocab_dir = "/installed/vocab";
  install_environment(mine);
  EXPECT_EQ(data::default_gpt2_vocab_dir(), std::filesystem::path("/installed/vocab"));
  install_environment(saved);
  EXPECT_EQ(data::default_gpt2_vocab_dir(), default_dir);
}

}  // namespace
}  // namespace fp8lab
