// The Python files `fp8lab export --format hf` writes beside the weights, built into the binary
// from python/fp8lab_torch (cmake/embed_text.cmake): modeling_fp8lab.py (the transformers
// wrapper, hf_modeling.py) and model.py (the model it imports).
#pragma once

#include <span>
#include <string_view>

namespace fp8lab::cli {

struct EmbeddedFile {
  std::string_view name;  // the file name in the export directory
  std::string_view text;
};

std::span<const EmbeddedFile> hf_export_files();

}  // namespace fp8lab::cli
