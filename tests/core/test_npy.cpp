// .npy reading and writing: round trips, and a typed error naming the problem for every kind of
// bad file (magic, version, header, dtype, order, rank, truncation, trailing bytes, missing file).
#include "common/test_data.hpp"
#include "fp8lab/npy.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace fp8lab {
namespace {

// A .npy image with an arbitrary header text, version and payload.
std::vector<std::uint8_t> npy_image(const std::string& header, std::size_t data_bytes,
                                    int major = 1) {
  std::vector<std::uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<std::uint8_t>(major),
                                   0};
  const std::size_t len = header.size();
  out.push_back(static_cast<std::uint8_t>(len & 0xFF));
  out.push_back(static_cast<std::uint8_t>(len >> 8));
  if (major >= 2) out.insert(out.end(), {0, 0});
  out.insert(out.end(), header.begin(), header.end());
  for (std::size_t i = 0; i < data_bytes; ++i) out.push_back(static_cast<std::uint8_t>(i * 7));
  return out;
}

std::string dict(const std::string& descr, const std::string& order, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape + ", }\n";
}

Error parse_error(const std::vector<std::uint8_t>& bytes) {
  try {
    parse_npy_f32_2d(bytes, "bad.npy");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.npy"), std::string::npos) << e.what();
    return e;
  }
  ADD_FAILURE() << "expected an error";
  return Error(ErrorKind::internal, "none", "", __FILE__, __LINE__);
}

void expect_error(const std::vector<std::uint8_t>& bytes, ErrorKind kind,
                  const std::string& words) {
  const Error e = parse_error(bytes);
  EXPECT_EQ(e.kind(), kind) << e.what();
  EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
}

TEST(Npy, F32RoundTripThroughBytesAndFiles) {
  const HostTensor x = testing::random_normal(DType::f32, {37, 61}, testing::fresh_seed(), 1);
  const std::vector<std::uint8_t> image = encode_npy(x);
  EXPECT_EQ((image.size() - x.nbytes()) % 64, 0u) << "data must start on a 64-byte boundary";
  const HostTensor back = parse_npy_f32_2d(image, "<memory>");
  ASSERT_EQ(back.shape(), x.shape());
  EXPECT_EQ(std::memcmp(back.as<float>(), x.as<float>(), x.nbytes()), 0);

  const auto path = std::filesystem::temp_directory_path() /
                    ("fp8lab_npy_" + std::to_string(testing::fresh_seed()) + ".npy");
  write_npy(path.string(), x);
  const HostTensor from_file = read_npy_f32_2d(path.string());
  std::filesystem::remove(path);
  EXPECT_EQ(std::memcmp(from_file.as<float>(), x.as<float>(), x.nbytes()), 0);
}

TEST(Npy, ByteTensorsAreWrittenAsU1AndVersion2HeadersAreRead) {
  HostTensor q(DType::e4m3, {3, 5});
  const std::vector<std::uint8_t> image = encode_npy(q);
  const std::string text(image.begin() + 10, image.end() - 15);
  EXPECT_NE(text.find("'descr': '|u1'"), std::string::npos) << text;
  EXPECT_NE(text.find("'shape': (3, 5)"), std::string::npos) << text;
  const HostTensor v2 = parse_npy_f32_2d(npy_image(dict("<f4", "False", "(2, 3)"), 24, 2), "v2");
  EXPECT_EQ(v2.shape(), Shape({2, 3}));
  const HostTensor empty = parse_npy_f32_2d(npy_image(dict("<f4", "False", "(0, 4)"), 0), "e");
  EXPECT_EQ(empty.shape(), Shape({0, 4}));
}

TEST(Npy, BadFilesAreTypedErrorsNamingTheProblem) {
  const std::string good = dict("<f4", "False", "(2, 3)");
  std::vector<std::uint8_t> bad_magic = npy_image(good, 24);
  bad_magic[1] = 'X';
  expect_error(bad_magic, ErrorKind::format, "magic");
  expect_error(npy_image(good, 24, 4), ErrorKind::format, "version 4.0");
  expect_error(std::vector<std::uint8_t>(bad_magic.begin(), bad_magic.begin() + 4),
               ErrorKind::format, "magic");
  const std::vector<std::uint8_t> full = npy_image(good, 24);
  expect_error(std::vector<std::uint8_t>(full.begin(), full.begin() + 8), ErrorKind::format,
               "truncated .npy preamble");
  expect_error(std::vector<std::uint8_t>(full.begin(), full.begin() + 30), ErrorKind::format,
               "truncated .npy header");
  expect_error(npy_image(good, 23), ErrorKind::format, "truncated data");
  expect_error(npy_image(good, 0), ErrorKind::format, "needs 24 bytes, the file has 0");
  expect_error(npy_image(good, 25), ErrorKind::format, "1 unexpected bytes");
  expect_error(npy_image(dict("<f8", "False", "(2, 3)"), 48), ErrorKind::dtype, "'<f8'");
  expect_error(npy_image(dict(">f4", "False", "(2, 3)"), 24), ErrorKind::dtype, "'>f4'");
  expect_error(npy_image(dict("|u1", "False", "(2, 3)"), 6), ErrorKind::dtype, "'|u1'");
  expect_error(npy_image(dict("<f4", "True", "(2, 3)"), 24), ErrorKind::format, "fortran_order");
  expect_error(npy_image(dict("<f4", "False", "(6,)"), 24), ErrorKind::shape, "(6,) (1-D)");
  expect_error(npy_image(dict("<f4", "False", "(1, 2, 3)"), 24), ErrorKind::shape, "3-D");
  expect_error(npy_image("{'descr': '<f4', 'shape': (2, 3), }\n", 24), ErrorKind::format,
               "must have");
  expect_error(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", 24),
               ErrorKind::format, "unexpected key 'x'");
  expect_error(npy_image("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 3)}", 24),
               ErrorKind::format, "True or False");
  expect_error(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}", 24),
               ErrorKind::format, "integer dimension");
  expect_error(npy_image("not a dict at all", 24), ErrorKind::format, "malformed .npy header");
}

TEST(Npy, MissingFileIsAnIoErrorNamingThePath) {
  try {
    read_npy_f32_2d("/nonexistent/dir/x.npy");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/x.npy"), std::string::npos);
  }
}

}  // namespace
}  // namespace fp8lab
