// The one JSON reading place: a depth limit instead of a stack overflow, excerpts that never
// recurse, and bounded whole-file reads that refuse devices, FIFOs and oversized files.
#include "fp8lab/error.hpp"
#include "fp8lab/file_read.hpp"
#include "fp8lab/json_read.hpp"
#include "fp8lab/safetensors.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <random>

namespace fp8lab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string nested_arrays(int depth) {
  return std::string(static_cast<std::size_t>(depth), '[') +
         std::string(static_cast<std::size_t>(depth), ']');
}

ErrorKind kind_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no fp8lab::Error";
  return ErrorKind::internal;
}

TEST(JsonRead, DepthLimitIsExactAndDeepInputIsAFormatError) {
  EXPECT_NO_THROW(parse_json(nested_arrays(kMaxJsonDepth), "limit"));
  EXPECT_EQ(kind_of([] { parse_json(nested_arrays(kMaxJsonDepth + 1), "one more"); }),
            ErrorKind::format);
  // 100k levels: what used to overflow the stack wherever the value was printed.
  const std::string deep = "{\"a\": " + nested_arrays(100000) + "}";
  try {
    parse_json(deep, "deep.json");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("deep.json: JSON nested deeper than"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(try_parse_json(deep).has_value());
  EXPECT_EQ(kind_of([] { parse_json("{\"a\": 1", "torn"); }), ErrorKind::format);
}

TEST(JsonRead, ExcerptIsShortForDeepLongAndInvalidUtf8Values) {
  json deep = json::array();
  for (int i = 0; i < 200000; ++i) deep = json::array({std::move(deep)});  // built, not parsed
  const std::string text = json_excerpt(deep, 50);
  EXPECT_EQ(text.substr(0, 10), "[[[[[[[[[[");
  EXPECT_LE(text.size(), 53u);
  EXPECT_EQ(json_excerpt(json{{"k", std::string(10000, 'x')}}, 40).size(), 43u);
  EXPECT_NO_THROW(json_excerpt(json("\xff\xfe broken")));
  EXPECT_EQ(json_excerpt(json{{"a", {1, 2}}, {"b", nullptr}}), R"({"a":[1,2],"b":null})");
}

// Keys read from hostile JSON: a value of the wrong type is "not it" for json_has_string and an
// fp8lab::Error naming the key for json_value_or, where nlohmann's value() throws type_error.
TEST(JsonRead, TypedKeysRefuseOtherTypesWithoutTypeErrors) {
  const json j = json::parse(R"({"format": 1, "kind": "shards", "flag": true, "n": 2.5, "k": 3})");
  EXPECT_TRUE(json_has_string(j, "kind", "shards"));
  EXPECT_FALSE(json_has_string(j, "kind", "shard"));
  EXPECT_FALSE(json_has_string(j, "format", "fp8lab-checkpoint"));  // a number there
  EXPECT_FALSE(json_has_string(j, "missing", ""));
  EXPECT_FALSE(json_has_string(json::array({"kind"}), "kind", "shards"));
  EXPECT_FALSE(json_has_string(json("kind"), "kind", "shards"));
  EXPECT_EQ(json_value_or(j, "flag", false, "t"), true);
  EXPECT_EQ(json_value_or(j, "missing", std::string("dflt"), "t"), "dflt");
  EXPECT_DOUBLE_EQ(json_value_or(j, "n", 0.0, "t"), 2.5);
  EXPECT_DOUBLE_EQ(json_value_or(j, "k", 0.0, "t"), 3.0);  // an integer is a number
  EXPECT_EQ(json_value_or(j, "k", std::int64_t{0}, "t"), 3);
  try {
    json_value_or(j, "format", std::string(), "meta.json");
    ADD_FAILURE() << "a number read as a string";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::format);
    EXPECT_EQ(e.message(), "meta.json: \"format\" must be a string, got 1");
  }
  EXPECT_EQ(kind_of([&] { json_value_or(j, "n", std::int64_t{0}, "t"); }), ErrorKind::format);
  EXPECT_EQ(kind_of([&] { json_value_or(j, "kind", false, "t"); }), ErrorKind::format);
}

TEST(FileRead, RefusesDevicesFifosAndOversizedFilesBeforeReading) {
  EXPECT_EQ(kind_of([] { read_file_bounded("/dev/zero", 1 << 20, "input"); }),
            ErrorKind::invalid_argument);
  std::random_device rd;
  const fs::path dir = fs::temp_directory_path() / ("fp8lab_fileread_" + std::to_string(rd()));
  fs::create_directories(dir);
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(kind_of([&] { read_file_bounded(dir / "fifo", 1 << 20, "input"); }),
            ErrorKind::invalid_argument);  // and it did not hang waiting for a writer
  std::ofstream(dir / "big") << std::string(2000, 'x');
  EXPECT_EQ(kind_of([&] { read_file_bounded(dir / "big", 1999, "input"); }), ErrorKind::format);
  EXPECT_EQ(read_file_bounded(dir / "big", 2000, "input").size(), 2000u);
  EXPECT_EQ(kind_of([&] { read_file_bounded(dir / "missing", 10, "input"); }), ErrorKind::io);
  EXPECT_EQ(kind_of([&] { read_json_file(dir / "big"); }), ErrorKind::format);  // not JSON
  EXPECT_EQ(read_file_bytes_bounded(dir / "big", 2000, "input").size(), 2000u);
  EXPECT_EQ(kind_of([] { read_file_bytes_bounded("/dev/zero", kMaxBinaryFileBytes, "input"); }),
            ErrorKind::invalid_argument);
  EXPECT_EQ(kind_of([] { SafetensorsFile::load("/dev/zero"); }), ErrorKind::invalid_argument);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fp8lab
