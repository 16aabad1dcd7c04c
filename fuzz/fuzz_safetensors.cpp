// Fuzzes the safetensors reader on arbitrary bytes: only fp8lab::Error may come out; every
// tensor of a file that parses must be readable inside the buffer (ASan checks), and encoding
// the parsed tensors again must parse back to the same entries and bytes.
#include <cstring>
#include <vector>

#include "fp8lab/error.hpp"
#include "fp8lab/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fp8lab;
  try {
    SafetensorsFile f(std::vector<std::uint8_t>(data, data + size), "fuzz.safetensors");
    std::vector<SafetensorsTensor> tensors;
    std::uint64_t checksum = 0;
    for (const auto& [name, e] : f.entries()) {
      const auto* p = static_cast<const std::uint8_t*>(f.tensor(name, e.dtype, e.shape));
      for (std::size_t i = 0; i < e.nbytes; ++i) checksum += p[i];
      tensors.push_back({name, e.dtype, e.shape, p});
    }
    (void)checksum;
    const SafetensorsFile again(encode_safetensors(tensors, f.metadata()), "fuzz.reencoded");
    if (again.entries().size() != f.entries().size() || again.metadata() != f.metadata()) {
      __builtin_trap();
    }
    for (const auto& [name, e] : f.entries()) {
      const void* a = f.tensor(name, e.dtype, e.shape);
      const void* b = again.tensor(name, e.dtype, e.shape);
      if (e.nbytes && std::memcmp(a, b, e.nbytes) != 0) __builtin_trap();
    }
  } catch (const fp8lab::Error&) {
  }
  return 0;
}
