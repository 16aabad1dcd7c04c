// Corpus packs: documents (name + text) in one zstd stream, for carrying text to a machine
// without network. Long-distance matching finds the many near-duplicate files of a source tree.
#include <fmt/format.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>

#include "data/document_source.hpp"
#include "fp8lab/data_prepare.hpp"
#include "fp8lab/error.hpp"

namespace fp8lab::data {
namespace fs = std::filesystem;

namespace {
constexpr char kPackMagic[8] = {'F', 'P', '8', 'P', 'A', 'C', 'K', '1'};
constexpr std::uint32_t kMaxNameBytes = 4096;

struct CCtxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DCtxFree {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

void check_zstd(std::size_t code, const char* what, const fs::path& path) {
  FP8LAB_CHECK_KIND(ErrorKind::io, !ZSTD_isError(code), "pack {}: {} failed: {}", path.string(),
                    what, ZSTD_getErrorName(code));
}
}  // namespace

struct PackWriter::Impl {
  fs::path path;
  std::ofstream out;
  // Owned here, so a constructor that throws (Impl is then destroyed) does not leak it.
  std::unique_ptr<ZSTD_CCtx, CCtxFree> cctx_owner{ZSTD_createCCtx()};
  ZSTD_CCtx* cctx = cctx_owner.get();
  std::vector<char> buffer = std::vector<char>(ZSTD_CStreamOutSize());
  std::int64_t written = 0;

  void push(const void* data, std::size_t size, ZSTD_EndDirective mode) {
    ZSTD_inBuffer in{data, size, 0};
    bool finished = false;
    while (!finished) {
      ZSTD_outBuffer o{buffer.data(), buffer.size(), 0};
      const std::size_t remaining = ZSTD_compressStream2(cctx, &o, &in, mode);
      check_zstd(remaining, "compression", path);
      out.write(buffer.data(), static_cast<std::streamsize>(o.pos));
      written += static_cast<std::int64_t>(o.pos);
      finished = mode == ZSTD_e_end ? remaining == 0 : in.pos == in.size;
    }
    FP8LAB_CHECK_KIND(ErrorKind::io, out.good(), "writing pack {} failed", path.string());
  }
};

PackWriter::PackWriter(const fs::path& path, int level, int threads)
    : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->out.open(path, std::ios::binary | std::ios::trunc);
  FP8LAB_CHECK_KIND(ErrorKind::io, impl_->out.good(), "cannot create pack {}", path.string());
  check_zstd(ZSTD_CCtx_setParameter(impl_->cctx, ZSTD_c_compressionLevel, level), "level", path);
  // A 128 MiB window: within zstd's default decoder limit, so any zstd can read the pack.
  check_zstd(ZSTD_CCtx_setParameter(impl_->cctx, ZSTD_c_windowLog, 27), "windowLog", path);
  check_zstd(ZSTD_CCtx_setParameter(impl_->cctx, ZSTD_c_enableLongDistanceMatching, 1), "ldm",
             path);
  if (threads > 1) {
    // nbWorkers is refused by a libzstd built without threads: then compress on one thread.
    ZSTD_CCtx_setParameter(impl_->cctx, ZSTD_c_nbWorkers, threads);
  }
  impl_->push(kPackMagic, sizeof(kPackMagic), ZSTD_e_continue);
}

PackWriter::~PackWriter() = default;

void PackWriter::add(const Document& doc) {
  FP8LAB_CHECK(!doc.name.empty() && doc.name.size() <= kMaxNameBytes,
               "pack: document name of {} bytes (must be 1..{})", doc.name.size(), kMaxNameBytes);
  const auto name_len = static_cast<std::uint32_t>(doc.name.size());
  const auto text_len = static_cast<std::uint64_t>(doc.text.size());
  impl_->push(&name_len, sizeof(name_len), ZSTD_e_continue);
  impl_->push(doc.name.data(), doc.name.size(), ZSTD_e_continue);
  impl_->push(&text_len, sizeof(text_len), ZSTD_e_continue);
  impl_->push(doc.text.data(), doc.text.size(), ZSTD_e_continue);
}

std::int64_t PackWriter::finish() {
  const std::uint32_t end = 0;
  impl_->push(&end, sizeof(end), ZSTD_e_end);
  impl_->out.close();
  FP8LAB_CHECK_KIND(ErrorKind::io, !impl_->out.fail(), "closing pack {} failed",
                    impl_->path.string());
  return impl_->written;
}

struct PackReader::Impl {
  fs::path path;
  std::ifstream in;
  std::unique_ptr<ZSTD_DCtx, DCtxFree> dctx_owner{ZSTD_createDCtx()};
  ZSTD_DCtx* dctx = dctx_owner.get();
  std::vector<char> in_buf = std::vector<char>(ZSTD_DStreamInSize());
  ZSTD_inBuffer input{nullptr, 0, 0};
  std::vector<char> out_buf = std::vector<char>(ZSTD_DStreamOutSize());
  std::size_t out_pos = 0, out_end = 0;
  std::uint64_t compressed_read = 0;

  // Decompresses more output; false at the end of the file.
  bool refill() {
    while (true) {
      if (input.pos == input.size) {
        in.read(in_buf.data(), static_cast<std::streamsize>(in_buf.size()));
        const auto got = static_cast<std::size_t>(in.gcount());
        if (got == 0) return false;
        compressed_read += got;
        input = ZSTD_inBuffer{in_buf.data(), got, 0};
      }
      ZSTD_outBuffer o{out_buf.data(), out_buf.size(), 0};
      const std::size_t code = ZSTD_decompressStream(dctx, &o, &input);
      FP8LAB_CHECK_KIND(ErrorKind::format, !ZSTD_isError(code),
                        "pack {}: corrupt zstd data near compressed byte offset {}: {}",
                        path.string(), compressed_read, ZSTD_getErrorName(code));
      if (o.pos > 0) {
        out_pos = 0;
        out_end = o.pos;
        return true;
      }
    }
  }
  void read_exact(void* dst, std::size_t n, const char* what) {
    auto* d = static_cast<char*>(dst);
    while (n > 0) {
      if (out_pos == out_end && !refill()) {
        FP8LAB_FAIL(ErrorKind::format,
                    "pack {} is truncated: it ends inside {} (compressed byte "
                    "offset {})",
                    path.string(), what, compressed_read);
      }
      const std::size_t k = std::min(n, out_end - out_pos);
      std::memcpy(d, out_buf.data() + out_pos, k);
      out_pos += k;
      d += k;
      n -= k;
    }
  }
};

PackReader::PackReader(const fs::path& path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->in.open(path, std::ios::binary);
  FP8LAB_CHECK_KIND(ErrorKind::io, impl_->in.good(), "cannot read pack {}", path.string());
  char magic[sizeof(kPackMagic)];
  impl_->read_exact(magic, sizeof(magic), "the header");
  FP8LAB_CHECK_KIND(ErrorKind::format, std::memcmp(magic, kPackMagic, sizeof(magic)) == 0,
                    "pack {}: bad magic at decompressed byte offset 0", path.string());
}

PackReader::~PackReader() = default;

bool PackReader::next(Document& doc) {
  std::uint32_t name_len = 0;
  impl_->read_exact(&name_len, sizeof(name_len), "a record header");
  if (name_len == 0) return false;
  FP8LAB_CHECK_KIND(ErrorKind::format, name_len <= kMaxNameBytes,
                    "pack {}: record name length {} exceeds {}", impl_->path.string(), name_len,
                    kMaxNameBytes);
  doc.name.resize(name_len);
  impl_->read_exact(doc.name.data(), name_len, "a record name");
  std::uint64_t text_len = 0;
  impl_->read_exact(&text_len, sizeof(text_len), "a record header");
  FP8LAB_CHECK_KIND(ErrorKind::format, text_len < (std::uint64_t{1} << 36),
                    "pack {}: record '{}' claims {} bytes", impl_->path.string(), doc.name,
                    text_len);
  // Grow in steps, so a corrupt length fails at the truncation instead of allocating it all.
  doc.text.clear();
  for (std::uint64_t left = text_len; left > 0;) {
    const std::size_t step = static_cast<std::size_t>(std::min<std::uint64_t>(left, 1 << 22));
    const std::size_t at = doc.text.size();
    doc.text.resize(at + step);
    impl_->read_exact(doc.text.data() + at, step, "a record's text");
    left -= step;
  }
  return true;
}

}  // namespace fp8lab::data
