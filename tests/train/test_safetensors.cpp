// safetensors writer/reader: round trip, and every kind of damage is a clear format error.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "common/test_data.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/safetensors.hpp"
#include "train/train_fixtures.hpp"

namespace fp8lab {
namespace {

std::vector<std::uint8_t> sample_file(std::uint64_t seed, HostTensor& a, HostTensor& b) {
  a = testing::random_normal(DType::f32, {3, 5}, seed, 1);
  b = testing::random_normal(DType::bf16, {7}, seed, 2);
  return encode_safetensors({{"layer.weight", DType::f32, a.shape(), a.view().data},
                             {"a.bias", DType::bf16, b.shape(), b.view().data}},
                            {{"note", "hello"}});
}

TEST(Safetensors, RoundTripsTensorsAndMetadata) {
  HostTensor a, b;
  auto bytes = sample_file(testing::fresh_seed(), a, b);
  // The header length is little-endian and the data section starts 8-byte aligned.
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
  EXPECT_EQ((8 + n) % 8, 0u);
  EXPECT_EQ(bytes[8], '{');
  SafetensorsFile f(bytes, "mem");
  EXPECT_EQ(f.entries().size(), 2u);
  EXPECT_EQ(f.metadata().at("note"), "hello");
  EXPECT_EQ(std::memcmp(f.tensor("layer.weight", DType::f32, {3, 5}), a.view().data, a.nbytes()),
            0);
  EXPECT_EQ(std::memcmp(f.tensor("a.bias", DType::bf16, {7}), b.view().data, b.nbytes()), 0);
  EXPECT_THROW(f.tensor("layer.weight", DType::f32, {5, 3}), Error);  // wrong shape
  EXPECT_THROW(f.tensor("missing", DType::f32, {1}), Error);
}

void expect_format_error(std::vector<std::uint8_t> bytes, const char* what) {
  try {
    SafetensorsFile f(std::move(bytes), "damaged.safetensors");
    ADD_FAILURE() << what << ": parsed without error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::format) << what << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find("damaged.safetensors"), std::string::npos) << what;
  }
}

std::vector<std::uint8_t> with_header(const std::string& header, std::size_t data_bytes) {
  std::vector<std::uint8_t> out(8 + header.size() + data_bytes, 0x11);
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(header.size() >> (8 * i));
  std::memcpy(out.data() + 8, header.data(), header.size());
  return out;
}

TEST(Safetensors, DamagedFilesAreFormatErrors) {
  HostTensor a, b;
  const auto good = sample_file(testing::fresh_seed(), a, b);
  expect_format_error({1, 2, 3}, "shorter than the length field");
  expect_format_error(std::vector<std::uint8_t>(good.begin(), good.end() - 5), "truncated data");
  expect_format_error(std::vector<std::uint8_t>(good.begin(), good.begin() + 20),
                      "truncated header");
  auto longer = good;
  longer.push_back(0);
  expect_format_error(longer, "trailing bytes");
  auto bad_length = good;
  bad_length[7] = 0x7F;
  expect_format_error(bad_length, "absurd header length");
  auto bad_json = good;
  bad_json[9] = '#';
  expect_format_error(bad_json, "invalid JSON");
  expect_format_error(with_header(R"({"x":{"dtype":"F17","shape":[1],"data_offsets":[0,4]}})", 4),
                      "unknown dtype");
  expect_format_error(with_header(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", 4),
                      "size mismatch");
  expect_format_error(with_header(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 4),
                      "out of range");
  expect_format_error(with_header(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                  R"("y":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                                  4),
                      "overlap");
  expect_format_error(with_header(R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4),
                      "negative dim");
  expect_format_error(with_header(R"({"x":[1,2]})", 0), "entry not an object");
  expect_format_error(with_header(R"({"__metadata__":{"k":3}})", 0), "non-string metadata");
  expect_format_error(with_header(R"([1])", 0), "header not an object");
}

void write_bytes(const std::filesystem::path& file, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(file, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

TEST(Safetensors, MetadataIsReadFromTheHeaderAlone) {
  HostTensor a, b;
  auto good = sample_file(testing::fresh_seed(), a, b);
  testing::TempDir dir;
  const auto file = dir.path() / "w.safetensors";
  // Cut inside the data: the whole-file reader refuses it, the header reader never reads there.
  good.resize(good.size() - 5);
  write_bytes(file, good);
  EXPECT_EQ(read_safetensors_metadata(file), (SafetensorsMetadata{{"note", "hello"}}));
  write_bytes(file, with_header(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4));
  EXPECT_TRUE(read_safetensors_metadata(file).empty());

  const auto kind_of = [&](const std::vector<std::uint8_t>& bytes) {
    write_bytes(file, bytes);
    try {
      read_safetensors_metadata(file);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
      return e.kind();
    }
    return ErrorKind::internal;  // parsed: the caller's expectation fails
  };
  EXPECT_EQ(kind_of({1, 2, 3}), ErrorKind::format);
  EXPECT_EQ(kind_of(std::vector<std::uint8_t>(good.begin(), good.begin() + 20)),
            ErrorKind::format);  // the header is cut
  EXPECT_EQ(kind_of(with_header(R"({"__metadata__":{"k":3}})", 0)), ErrorKind::format);
  EXPECT_EQ(kind_of(with_header(R"({"__metadata__":[]})", 0)), ErrorKind::format);
  EXPECT_EQ(kind_of(with_header("{nope", 0)), ErrorKind::format);
  try {
    read_safetensors_metadata(dir.path() / "absent.safetensors");
    ADD_FAILURE() << "a missing file was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io) << e.what();
  }
}

}  // namespace
}  // namespace fp8lab
