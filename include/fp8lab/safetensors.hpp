// The safetensors format (huggingface/safetensors), written and read without dependencies:
//
//   u64 little-endian N | N bytes of JSON header | data
//   header: {"<name>": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
//            "__metadata__": {"key": "string value", ...}}
//   offsets are relative to the start of the data section.
//
// The reader trusts nothing: a short file, a header length beyond the file, invalid JSON, an
// unknown dtype, a shape whose size disagrees with its offsets, offsets outside the data,
// overlapping or gapped tensors are all ErrorKind::format errors naming the file and the tensor.
#pragma once

#include "fp8lab/dtype.hpp"
#include "fp8lab/tensor.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fp8lab {

// "F32", "BF16", "F8_E4M3", "F8_E5M2", "I32", "U16", "U8", "F64".
std::string_view safetensors_dtype_name(DType dtype);
DType parse_safetensors_dtype(std::string_view name);  // throws ErrorKind::format

struct SafetensorsTensor {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  const void* data = nullptr;  // writer: shape.numel() * dtype_size(dtype) bytes
};

using SafetensorsMetadata = std::map<std::string, std::string>;

// The whole file as bytes (header sorted by name, as the reference implementation writes it).
std::vector<std::uint8_t> encode_safetensors(const std::vector<SafetensorsTensor>& tensors,
                                             const SafetensorsMetadata& metadata);

// The metadata of a safetensors file, reading only its header (checked as SafetensorsFile
// checks it) and none of the tensor data.
SafetensorsMetadata read_safetensors_metadata(const std::filesystem::path& path);

class SafetensorsFile {
 public:
  // Parses and validates `bytes` (kept inside); `source` names the file in errors.
  SafetensorsFile(std::vector<std::uint8_t> bytes, std::string source);
  static SafetensorsFile load(const std::filesystem::path& path);

  struct Entry {
    DType dtype;
    Shape shape;
    std::size_t offset;  // into the data section
    std::size_t nbytes;
  };
  const std::map<std::string, Entry>& entries() const { return entries_; }
  const SafetensorsMetadata& metadata() const { return metadata_; }
  bool contains(std::string_view name) const;
  // The tensor's bytes; throws naming the file when it is missing or has another dtype/shape.
  const void* tensor(std::string_view name, DType dtype, const Shape& shape) const;
  const std::string& source() const { return source_; }

 private:
  std::vector<std::uint8_t> bytes_;
  std::string source_;
  std::size_t data_start_ = 0;
  std::map<std::string, Entry> entries_;
  SafetensorsMetadata metadata_;
};

}  // namespace fp8lab
