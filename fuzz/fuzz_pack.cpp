// Fuzzes the .fp8pack reader on arbitrary (mostly non-zstd) bytes.
#include "data/document_source.hpp"
#include "fp8lab/error.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fp8lab::data;
  const auto path = fp8lab::fuzz::write_temp(data, size, ".fp8pack");
  try {
    PackReader reader(path);
    Document d;
    for (int i = 0; i < 1000 && reader.next(d); ++i) {
    }
  } catch (const fp8lab::Error&) {
  }
  return 0;
}
