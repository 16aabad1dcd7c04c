// Fuzzes JSONL corpus reading: every line must be an object with a string "text" field, or the
// reader throws fp8lab::Error naming the line.
#include "data/document_source.hpp"
#include "fp8lab/error.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fp8lab::data;
  const auto path = fp8lab::fuzz::write_temp(data, size, ".jsonl");
  SourceSpec spec;
  spec.inputs = {path};
  try {
    DocumentStream stream(spec);
    std::vector<Document> docs;
    std::size_t total = 0;
    while (stream.next_batch(docs, 1 << 16)) {
      for (const Document& d : docs) total += d.text.size();
      docs.clear();
    }
    if (total > size) __builtin_trap();  // JSON escapes only ever shrink or keep the text
  } catch (const fp8lab::Error&) {
  }
  return 0;
}
