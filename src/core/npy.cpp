// .npy reading (strict: 2-D '<f4', C order) and writing. Format reference: numpy's
// "NEP 1 — A simple file format for NumPy arrays" (magic, version, header length, a Python dict
// literal header, raw data).
#include "fp8lab/npy.hpp"

#include "fp8lab/file_read.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>

namespace fp8lab {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
};

// A parser for the one dict literal .npy headers hold:
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  NpyHeader parse() {
    NpyHeader h;
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    while (!peek_is('}')) {
      const std::string key = parse_string();
      expect(':');
      if (key == "descr")
        h.descr = parse_string(), have_descr = true;
      else if (key == "fortran_order")
        h.fortran_order = parse_bool(), have_order = true;
      else if (key == "shape")
        h.shape = parse_shape(), have_shape = true;
      else
        fail(fmt::format("unexpected key '{}'", key));
      if (!peek_is('}')) expect(',');
    }
    expect('}');
    skip_space();
    if (pos_ != text_.size()) fail("text after the closing '}'");
    if (!have_descr || !have_order || !have_shape)
      fail("the header must have 'descr', 'fortran_order' and 'shape'");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    FP8LAB_FAIL(ErrorKind::format, "{}: malformed .npy header ({}) at offset {} of \"{}\"", source_,
                what, pos_, text_);
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n')) ++pos_;
  }
  bool peek_is(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  void expect(char c) {
    if (!peek_is(c)) fail(fmt::format("expected '{}'", c));
    ++pos_;
  }
  std::string parse_string() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      fail("expected a string");
    const char quote = text_[pos_++];
    const std::size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }
  bool parse_bool() {
    skip_space();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (text_.substr(pos_, std::strlen(word)) == word) {
        pos_ += std::strlen(word);
        return value;
      }
    }
    fail("expected True or False");
  }
  std::vector<std::int64_t> parse_shape() {
    std::vector<std::int64_t> dims;
    expect('(');
    while (!peek_is(')')) {
      std::int64_t v = 0;
      const std::size_t start = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        if (v > (std::int64_t{1} << 50)) fail("dimension too large");
        v = v * 10 + (text_[pos_++] - '0');
      }
      if (pos_ == start) fail("expected a non-negative integer dimension");
      dims.push_back(v);
      if (!peek_is(')')) expect(',');
    }
    expect(')');
    return dims;
  }

  std::string_view text_;
  std::string_view source_;
  std::size_t pos_ = 0;
};

std::string shape_tuple(const std::vector<std::int64_t>& dims) {
  if (dims.size() == 1) return fmt::format("({},)", dims[0]);
  std::string s = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + ")";
}

std::uint32_t read_le(std::span<const std::uint8_t> b, std::size_t at, int bytes) {
  std::uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | b[at + static_cast<std::size_t>(i)];
  return v;
}

}  // namespace

HostTensor parse_npy_f32_2d(std::span<const std::uint8_t> bytes, std::string_view source) {
  FP8LAB_CHECK_KIND(
      ErrorKind::format,
      bytes.size() >= kMagicSize && std::memcmp(bytes.data(), kMagic, kMagicSize) == 0,
      "{}: not a .npy file (the magic string \\x93NUMPY is missing)", source);
  FP8LAB_CHECK_KIND(ErrorKind::format, bytes.size() >= 10, "{}: truncated .npy preamble ({} bytes)",
                    source, bytes.size());
  const int major = bytes[6], minor = bytes[7];
  FP8LAB_CHECK_KIND(ErrorKind::format, (major >= 1 && major <= 3) && minor == 0,
                    "{}: unsupported .npy format version {}.{} (expected 1.0, 2.0 or 3.0)", source,
                    major, minor);
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  FP8LAB_CHECK_KIND(ErrorKind::format, bytes.size() >= 8 + len_bytes,
                    "{}: truncated .npy preamble ({} bytes)", source, bytes.size());
  const std::size_t header_len = read_le(bytes, 8, static_cast<int>(len_bytes));
  const std::size_t data_offset = 8 + len_bytes + header_len;
  FP8LAB_CHECK_KIND(ErrorKind::format, bytes.size() >= data_offset,
                    "{}: truncated .npy header (header length {}, file has {} bytes)", source,
                    header_len, bytes.size());
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + 8 + len_bytes,
                              header_len);
  const NpyHeader h = HeaderParser(text, source).parse();
  FP8LAB_CHECK_KIND(ErrorKind::dtype, h.descr == "<f4",
                    "{}: unsupported dtype '{}' (fp8lab reads little-endian float32, '<f4')",
                    source, h.descr);
  FP8LAB_CHECK_KIND(ErrorKind::format, !h.fortran_order,
                    "{}: fortran_order True is not supported (save a C-ordered array)", source);
  FP8LAB_CHECK_KIND(ErrorKind::shape, h.shape.size() == 2,
                    "{}: expected a 2-D array, got shape {} ({}-D)", source, shape_tuple(h.shape),
                    h.shape.size());
  const std::int64_t rows = h.shape[0], cols = h.shape[1];
  FP8LAB_CHECK_KIND(ErrorKind::shape,
                    rows < (std::int64_t{1} << 31) && cols < (std::int64_t{1} << 31),
                    "{}: shape {} is too large", source, shape_tuple(h.shape));
  const std::size_t data_bytes = static_cast<std::size_t>(rows * cols) * 4;
  const std::size_t have = bytes.size() - data_offset;
  FP8LAB_CHECK_KIND(ErrorKind::format, have >= data_bytes,
                    "{}: truncated data: shape {} of float32 needs {} bytes, the file has {}",
                    source, shape_tuple(h.shape), data_bytes, have);
  FP8LAB_CHECK_KIND(ErrorKind::format, have == data_bytes,
                    "{}: {} unexpected bytes after the data of shape {}", source, have - data_bytes,
                    shape_tuple(h.shape));
  HostTensor t(DType::f32, Shape{rows, cols});
  if (data_bytes) std::memcpy(t.as<std::uint8_t>(), bytes.data() + data_offset, data_bytes);
  return t;
}

HostTensor read_npy_f32_2d(const std::string& path) {
  const std::string bytes = read_file_bounded(path, kMaxNpyFileBytes, ".npy input");
  return parse_npy_f32_2d(
      std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()), path);
}

std::vector<std::uint8_t> encode_npy(const TensorView& t) {
  check_device(t, Device::cpu, "encode_npy input");
  std::string descr;
  switch (t.dtype) {
    case DType::f32:
      descr = "<f4";
      break;
    case DType::f64:
      descr = "<f8";
      break;
    case DType::i32:
      descr = "<i4";
      break;
    case DType::u16:
    case DType::bf16:
      descr = "<u2";
      break;  // bf16 as its raw bit patterns
    case DType::u8:
    case DType::e4m3:
    case DType::e5m2:
      descr = "|u1";
      break;  // fp8 as its codes
  }
  std::vector<std::int64_t> dims;
  for (int i = 0; i < t.shape.rank(); ++i) dims.push_back(t.shape[i]);
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                   descr, shape_tuple(dims));
  // Pad with spaces and a final newline so the data starts on a 64-byte boundary (as numpy does).
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string preamble(kMagic, kMagicSize);
  preamble += {'\x01', '\x00', static_cast<char>(header.size() & 0xFF),
               static_cast<char>(header.size() >> 8)};
  preamble += header;
  std::vector<std::uint8_t> out(preamble.size() + t.nbytes());
  std::memcpy(out.data(), preamble.data(), preamble.size());
  if (t.nbytes()) std::memcpy(out.data() + preamble.size(), t.data, t.nbytes());
  return out;
}

void write_npy(const std::string& path, const TensorView& t) {
  const std::vector<std::uint8_t> bytes = encode_npy(t);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  FP8LAB_CHECK_KIND(ErrorKind::io, out.good(), "cannot create '{}': {}", path,
                    std::strerror(errno));
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  out.close();
  FP8LAB_CHECK_KIND(ErrorKind::io, !out.fail(), "error writing '{}': {}", path,
                    std::strerror(errno));
}

}  // namespace fp8lab
