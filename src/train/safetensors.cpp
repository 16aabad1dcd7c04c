// safetensors encoding and strict parsing (see fp8lab/safetensors.hpp).
#include "fp8lab/safetensors.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "fp8lab/error.hpp"
#include "fp8lab/file_read.hpp"
#include "fp8lab/json_read.hpp"

namespace fp8lab {
namespace {

using nlohmann::json;

constexpr std::uint64_t kMaxHeaderBytes = 100u << 20;  // the reference reader's limit

struct DTypeName {
  DType dtype;
  std::string_view name;
};
constexpr DTypeName kDTypeNames[] = {
    {DType::f32, "F32"}, {DType::bf16, "BF16"}, {DType::e4m3, "F8_E4M3"}, {DType::e5m2, "F8_E5M2"},
    {DType::i32, "I32"}, {DType::u16, "U16"},   {DType::u8, "U8"},        {DType::f64, "F64"}};

// The header length in the first 8 bytes of a file of `size` bytes, checked against both.
std::uint64_t header_length(const std::uint8_t* first8, std::uintmax_t size,
                            const std::string& source) {
  FP8LAB_CHECK_KIND(ErrorKind::format, size >= 8,
                    "safetensors '{}': {} bytes is too short for the header length", source, size);
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(first8[i]) << (8 * i);
  FP8LAB_CHECK_KIND(
      ErrorKind::format, n <= kMaxHeaderBytes && n <= size - 8,
      "safetensors '{}': header length {} exceeds the file ({} bytes) or the 100 MiB limit "
      "(truncated or not a safetensors file)",
      source, n, size);
  return n;
}

json parse_header(std::string_view text, const std::string& source) {
  json header = parse_json(text, fmt::format("safetensors '{}' header", source));
  FP8LAB_CHECK_KIND(ErrorKind::format, header.is_object(),
                    "safetensors '{}': header is not a JSON object", source);
  return header;
}

SafetensorsMetadata parse_metadata(const json& value, const std::string& source) {
  FP8LAB_CHECK_KIND(ErrorKind::format, value.is_object(),
                    "safetensors '{}': __metadata__ is not an object", source);
  SafetensorsMetadata out;
  for (const auto& [k, v] : value.items()) {
    FP8LAB_CHECK_KIND(ErrorKind::format, v.is_string(),
                      "safetensors '{}': metadata '{}' is not a string", source, k);
    out[k] = v.get<std::string>();
  }
  return out;
}

}  // namespace

std::string_view safetensors_dtype_name(DType dtype) {
  for (const auto& d : kDTypeNames) {
    if (d.dtype == dtype) return d.name;
  }
  return "?";
}

DType parse_safetensors_dtype(std::string_view name) {
  for (const auto& d : kDTypeNames) {
    if (d.name == name) return d.dtype;
  }
  FP8LAB_FAIL(ErrorKind::format, "unsupported safetensors dtype '{}'", name);
}

std::vector<std::uint8_t> encode_safetensors(const std::vector<SafetensorsTensor>& tensors,
                                             const SafetensorsMetadata& metadata) {
  std::vector<const SafetensorsTensor*> sorted;
  for (const auto& t : tensors) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->name < b->name; });
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (const SafetensorsTensor* t : sorted) {
    FP8LAB_CHECK(!t->name.empty() && t->name != "__metadata__" && !header.contains(t->name),
                 "safetensors: bad or duplicate tensor name '{}'", t->name);
    std::vector<std::int64_t> dims;
    for (int i = 0; i < t->shape.rank(); ++i) dims.push_back(t->shape[i]);
    const std::uint64_t nbytes =
        static_cast<std::uint64_t>(t->shape.numel()) * dtype_size(t->dtype);
    header[t->name] = {{"dtype", safetensors_dtype_name(t->dtype)},
                       {"shape", dims},
                       {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
  }
  std::string text = header.dump();
  // Pad the header with spaces so the data section starts 8-byte aligned (allowed by the spec).
  text.append((8 - (text.size() % 8)) % 8, ' ');
  std::vector<std::uint8_t> out(8 + text.size() + offset);
  const std::uint64_t n = text.size();
  for (int i = 0; i < 8; ++i)
    out[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(n >> (8 * i));
  std::memcpy(out.data() + 8, text.data(), text.size());
  std::size_t pos = 8 + text.size();
  for (const SafetensorsTensor* t : sorted) {
    const std::size_t nbytes = static_cast<std::size_t>(t->shape.numel()) * dtype_size(t->dtype);
    if (nbytes) std::memcpy(out.data() + pos, t->data, nbytes);
    pos += nbytes;
  }
  return out;
}

SafetensorsFile::SafetensorsFile(std::vector<std::uint8_t> bytes, std::string source)
    : bytes_(std::move(bytes)), source_(std::move(source)) {
  const std::size_t size = bytes_.size();
  const std::uint64_t n = header_length(bytes_.data(), size, source_);
  data_start_ = 8 + static_cast<std::size_t>(n);
  const std::size_t data_size = size - data_start_;
  const json header =
      parse_header(std::string_view(reinterpret_cast<const char*>(bytes_.data()) + 8,
                                    static_cast<std::size_t>(n)),
                   source_);
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      metadata_ = parse_metadata(value, source_);
      continue;
    }
    const bool well_formed =
        value.is_object() && value.contains("dtype") && value["dtype"].is_string() &&
        value.contains("shape") && value["shape"].is_array() && value.contains("data_offsets") &&
        value["data_offsets"].is_array() && value["data_offsets"].size() == 2 &&
        value["data_offsets"][0].is_number_unsigned() &&
        value["data_offsets"][1].is_number_unsigned() && value["shape"].size() <= Shape::kMaxRank;
    FP8LAB_CHECK_KIND(ErrorKind::format, well_formed,
                      "safetensors '{}': tensor '{}' has a malformed entry {}", source_, name,
                      json_excerpt(value));
    const std::string dtype_text = value["dtype"].get<std::string>();
    const bool known = std::any_of(std::begin(kDTypeNames), std::end(kDTypeNames),
                                   [&](const DTypeName& d) { return d.name == dtype_text; });
    FP8LAB_CHECK_KIND(ErrorKind::format, known,
                      "safetensors '{}': tensor '{}' has unsupported dtype '{}'", source_, name,
                      dtype_text);
    Entry e{parse_safetensors_dtype(dtype_text), {}, 0, 0};
    std::vector<std::int64_t> dims;
    std::uint64_t numel = 1;
    for (const auto& d : value["shape"]) {
      FP8LAB_CHECK_KIND(
          ErrorKind::format, d.is_number_unsigned() && d.get<std::uint64_t>() < (1ull << 40),
          "safetensors '{}': tensor '{}' has a bad dimension {}", source_, name, json_excerpt(d));
      numel *= d.get<std::uint64_t>();
      FP8LAB_CHECK_KIND(ErrorKind::format, numel < (1ull << 48),
                        "safetensors '{}': tensor '{}' is too large", source_, name);
      dims.push_back(d.get<std::int64_t>());
    }
    e.shape = Shape(dims);
    const auto begin = value["data_offsets"][0].get<std::uint64_t>();
    const auto end = value["data_offsets"][1].get<std::uint64_t>();
    FP8LAB_CHECK_KIND(
        ErrorKind::format,
        begin <= end && end <= data_size && end - begin == numel * dtype_size(e.dtype),
        "safetensors '{}': tensor '{}' ({} {}) has data_offsets [{}, {}] that do not fit its size "
        "or the "
        "{} data bytes",
        source_, name, safetensors_dtype_name(e.dtype), e.shape.str(), begin, end, data_size);
    e.offset = static_cast<std::size_t>(begin);
    e.nbytes = static_cast<std::size_t>(end - begin);
    ranges.emplace_back(e.offset, e.offset + e.nbytes);
    entries_.emplace(name, e);
  }
  std::sort(ranges.begin(), ranges.end());
  std::size_t expect = 0;
  for (const auto& [b, e] : ranges) {
    FP8LAB_CHECK_KIND(ErrorKind::format, b == expect,
                      "safetensors '{}': tensor data overlaps or leaves a gap at byte {}", source_,
                      b);
    expect = e;
  }
  FP8LAB_CHECK_KIND(
      ErrorKind::format, expect == data_size,
      "safetensors '{}': {} data bytes but the tensors cover {} (truncated or padded)", source_,
      data_size, expect);
}

SafetensorsFile SafetensorsFile::load(const std::filesystem::path& path) {
  return SafetensorsFile(read_file_bytes_bounded(path, kMaxBinaryFileBytes, "safetensors file"),
                         path.string());
}

SafetensorsMetadata read_safetensors_metadata(const std::filesystem::path& path) {
  const std::string source = path.string();
  std::ifstream in(path, std::ios::binary);
  FP8LAB_CHECK_KIND(ErrorKind::io, in.good(), "cannot open '{}'", source);
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  FP8LAB_CHECK_KIND(ErrorKind::io, !ec, "cannot read the size of '{}': {}", source, ec.message());
  std::uint8_t first8[8] = {};
  in.read(reinterpret_cast<char*>(first8),
          static_cast<std::streamsize>(std::min<std::uintmax_t>(size, 8)));
  const std::uint64_t n = header_length(first8, size, source);
  std::string text(static_cast<std::size_t>(n), '\0');
  in.read(text.data(), static_cast<std::streamsize>(n));
  FP8LAB_CHECK_KIND(ErrorKind::io, in.good(), "cannot read the header of '{}'", source);
  const json header = parse_header(text, source);
  const auto it = header.find("__metadata__");
  return it == header.end() ? SafetensorsMetadata{} : parse_metadata(*it, source);
}

bool SafetensorsFile::contains(std::string_view name) const {
  return entries_.count(std::string(name)) > 0;
}

const void* SafetensorsFile::tensor(std::string_view name, DType dtype, const Shape& shape) const {
  auto it = entries_.find(std::string(name));
  FP8LAB_CHECK_KIND(ErrorKind::format, it != entries_.end(), "safetensors '{}' has no tensor '{}'",
                    source_, name);
  FP8LAB_CHECK_KIND(ErrorKind::shape, it->second.dtype == dtype && it->second.shape == shape,
                    "safetensors '{}': tensor '{}' is {} {}, expected {} {}", source_, name,
                    safetensors_dtype_name(it->second.dtype), it->second.shape.str(),
                    safetensors_dtype_name(dtype), shape.str());
  return bytes_.data() + data_start_ + it->second.offset;
}

}  // namespace fp8lab
