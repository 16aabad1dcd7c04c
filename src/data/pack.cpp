// Corpus packs: documents (name + text) in one zstd stream, for carrying text to a machine
// without network. Long-distance matching finds the many near-duplicate files of a source tree.
//
// Format version 2 (the layout is in document_source.hpp) checks everything it reads: a header
// with its own SHA-256 and the stream's totals, a SHA-256 per record (name and text), the zstd
// frame's checksum, and the SHA-256 of the whole decompressed stream. Sizes are bounded by the
// file: the header may declare at most kMaxExpansion decompressed bytes per compressed byte, and
// no record may claim more than what the header has left. A flipped bit anywhere is an error.
#include <fmt/format.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <memory>
#include <unistd.h>

#include "data/document_source.hpp"
#include "fp8lab/data_prepare.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/json_read.hpp"
#include "core/sha256.hpp"

namespace fp8lab::data {
namespace fs = std::filesystem;

namespace {
constexpr char kPackMagic[8] = {'F', 'P', '8', 'P', 'A', 'C', 'K', '2'};
constexpr std::uint8_t kZstdMagic[4] = {0x28, 0xB5, 0x2F, 0xFD};  // how version 1 packs began
// The one zstd frame header the writer produces: the magic, then a descriptor with only the
// checksum flag (no dictionary, content size unknown: the first call never ends the frame) and a
// 2^27-byte window. zstd ignores some of these bits (the unused flag, a larger window), so a
// flipped one would decode to the same bytes: the reader accepts this header and no other.
constexpr std::uint8_t kFrameHeader[6] = {0x28, 0xB5, 0x2F, 0xFD, 0x04, 0x88};
constexpr std::uint32_t kMaxNameBytes = 4096;
constexpr std::size_t kDigestBytes = 32;
constexpr std::size_t kHeaderBytes = 8 + 4 * 8 + 2 * kDigestBytes;  // 104
// The smallest record: u32 name length, a 1-byte name, u64 text length, the digest.
constexpr std::uint64_t kMinRecordBytes = 4 + 1 + 8 + kDigestBytes;

using Digest = std::array<std::uint8_t, kDigestBytes>;

struct PackHeader {
  std::uint64_t documents = 0, text_bytes = 0, payload_bytes = 0, compressed_bytes = 0;
  Digest payload_sha{};
};

void put_u64(std::uint8_t* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
std::uint64_t get_u64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}

Digest digest_of(Sha256& h) { return h.digest(); }

std::array<std::uint8_t, kHeaderBytes> encode_header(const PackHeader& h) {
  std::array<std::uint8_t, kHeaderBytes> b{};
  std::memcpy(b.data(), kPackMagic, 8);
  put_u64(b.data() + 8, h.documents);
  put_u64(b.data() + 16, h.text_bytes);
  put_u64(b.data() + 24, h.payload_bytes);
  put_u64(b.data() + 32, h.compressed_bytes);
  std::memcpy(b.data() + 40, h.payload_sha.data(), kDigestBytes);
  Sha256 self;
  self.update(b.data(), 72);
  const Digest d = digest_of(self);
  std::memcpy(b.data() + 72, d.data(), kDigestBytes);
  return b;
}

struct CCtxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DCtxFree {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

// A document name for a message: quoted and escaped (it may hold NUL or newlines), and short.
std::string shown(const std::string& name) { return json_excerpt(nlohmann::json(name), 200); }

void check_zstd(std::size_t code, const char* what, const fs::path& path) {
  FP8LAB_CHECK_KIND(ErrorKind::io, !ZSTD_isError(code), "pack {}: {} failed: {}", path.string(),
                    what, ZSTD_getErrorName(code));
}
}  // namespace

struct PackWriter::Impl {
  fs::path path, tmp;
  std::ofstream out;
  // Owned here, so a constructor that throws (Impl is then destroyed) does not leak it.
  std::unique_ptr<ZSTD_CCtx, CCtxFree> cctx_owner{ZSTD_createCCtx()};
  ZSTD_CCtx* cctx = cctx_owner.get();
  std::vector<char> buffer = std::vector<char>(ZSTD_CStreamOutSize());
  PackHeader header;
  Sha256 payload_hash;
  std::unique_ptr<Sha256> record_hash;
  std::vector<std::string> names;  // sorted at finish: duplicates are refused
  bool finished = false;

  void push(const void* data, std::size_t size, ZSTD_EndDirective mode) {
    if (size > 0) {
      payload_hash.update(data, size);
      if (record_hash) record_hash->update(data, size);
    }
    header.payload_bytes += size;
    ZSTD_inBuffer in{data, size, 0};
    bool done = false;
    while (!done) {
      ZSTD_outBuffer o{buffer.data(), buffer.size(), 0};
      const std::size_t remaining = ZSTD_compressStream2(cctx, &o, &in, mode);
      check_zstd(remaining, "compression", path);
      out.write(buffer.data(), static_cast<std::streamsize>(o.pos));
      header.compressed_bytes += o.pos;
      done = mode == ZSTD_e_end ? remaining == 0 : in.pos == in.size;
    }
    FP8LAB_CHECK_KIND(ErrorKind::io, out.good(), "writing pack {} failed", tmp.string());
  }
  ~Impl() {
    if (!finished && !tmp.empty()) {
      out.close();
      std::error_code ec;
      fs::remove(tmp, ec);
    }
  }
};

PackWriter::PackWriter(const fs::path& path, int level, int threads)
    : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  // Written beside the target and renamed over it at finish(): a failed pack destroys nothing.
  impl_->tmp = fs::path(path.string() + ".tmp." + std::to_string(::getpid()));
  impl_->out.open(impl_->tmp, std::ios::binary | std::ios::trunc);
  FP8LAB_CHECK_KIND(ErrorKind::io, impl_->out.good(), "cannot create pack {}", impl_->tmp.string());
  const auto placeholder = encode_header(PackHeader{});
  impl_->out.write(reinterpret_cast<const char*>(placeholder.data()), kHeaderBytes);
  check_zstd(ZSTD_CCtx_setParameter(impl_->cctx, ZSTD_c_compressionLevel, level), "level", path);
  // A 128 MiB window: within zstd's default decoder limit, so any zstd can read the pack.
  check_zstd(ZSTD_CCtx_setParameter(impl_->cctx, ZSTD_c_windowLog, 27), "windowLog", path);
  check_zstd(ZSTD_CCtx_setParameter(impl_->cctx, ZSTD_c_enableLongDistanceMatching, 1), "ldm",
             path);
  check_zstd(ZSTD_CCtx_setParameter(impl_->cctx, ZSTD_c_checksumFlag, 1), "checksum", path);
  if (threads > 1) {
    // nbWorkers is refused by a libzstd built without threads: then compress on one thread.
    ZSTD_CCtx_setParameter(impl_->cctx, ZSTD_c_nbWorkers, threads);
  }
}

PackWriter::~PackWriter() = default;

void PackWriter::add(const Document& doc) {
  FP8LAB_CHECK(!doc.name.empty() && doc.name.size() <= kMaxNameBytes &&
                   doc.name.find('\0') == std::string::npos,
               "pack: document name {} of {} bytes (must be 1..{} bytes without NUL)",
               shown(doc.name), doc.name.size(), kMaxNameBytes);
  const auto name_len = static_cast<std::uint32_t>(doc.name.size());
  const auto text_len = static_cast<std::uint64_t>(doc.text.size());
  impl_->record_hash = std::make_unique<Sha256>();
  impl_->push(&name_len, sizeof(name_len), ZSTD_e_continue);
  impl_->push(doc.name.data(), doc.name.size(), ZSTD_e_continue);
  impl_->push(&text_len, sizeof(text_len), ZSTD_e_continue);
  impl_->push(doc.text.data(), doc.text.size(), ZSTD_e_continue);
  const Digest d = digest_of(*impl_->record_hash);
  impl_->record_hash.reset();
  impl_->push(d.data(), d.size(), ZSTD_e_continue);
  impl_->names.push_back(doc.name);
  ++impl_->header.documents;
  impl_->header.text_bytes += text_len;
}

std::int64_t PackWriter::finish() {
  Impl& m = *impl_;
  std::sort(m.names.begin(), m.names.end());
  const auto dup = std::adjacent_find(m.names.begin(), m.names.end());
  FP8LAB_CHECK(dup == m.names.end(),
               "pack {}: two documents are named {}; unpacking would overwrite one with the "
               "other",
               m.path.string(), dup == m.names.end() ? "" : shown(*dup));
  const std::uint32_t end = 0;
  m.push(&end, sizeof(end), ZSTD_e_continue);  // never a first call that ends the frame
  m.push(nullptr, 0, ZSTD_e_end);
  FP8LAB_CHECK(m.header.payload_bytes <= m.header.compressed_bytes * kPackMaxExpansion,
               "pack {}: {} bytes compress to {}, more than the {}:1 a pack may expand to; "
               "split such documents into several packs",
               m.path.string(), m.header.payload_bytes, m.header.compressed_bytes,
               kPackMaxExpansion);
  m.header.payload_sha = digest_of(m.payload_hash);
  const auto header = encode_header(m.header);
  m.out.seekp(0);
  m.out.write(reinterpret_cast<const char*>(header.data()), kHeaderBytes);
  m.out.flush();
  FP8LAB_CHECK_KIND(ErrorKind::io, m.out.good(), "writing pack {} failed", m.tmp.string());
  m.out.close();
  FP8LAB_CHECK_KIND(ErrorKind::io, !m.out.fail(), "closing pack {} failed", m.tmp.string());
  fs::rename(m.tmp, m.path);
  m.finished = true;
  return static_cast<std::int64_t>(kHeaderBytes + m.header.compressed_bytes);
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
  std::size_t last_code = 1;  // ZSTD_decompressStream's last result: 0 once the frame is complete
  PackHeader header;
  std::uint64_t consumed = 0, documents = 0, text_bytes = 0;
  Sha256 payload_hash;
  std::unique_ptr<Sha256> record_hash;

  [[noreturn]] void corrupt(const std::string& what) const {
    FP8LAB_FAIL(ErrorKind::format, "pack {} is corrupt: {}", path.string(), what);
  }

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
      last_code = ZSTD_decompressStream(dctx, &o, &input);
      if (ZSTD_isError(last_code)) {
        corrupt(fmt::format("zstd data near compressed byte offset {}: {}",
                            kHeaderBytes + compressed_read, ZSTD_getErrorName(last_code)));
      }
      if (o.pos > 0) {
        out_pos = 0;
        out_end = o.pos;
        return true;
      }
      if (last_code == 0 && input.pos == input.size && in.peek() == EOF) return false;
    }
  }
  // Reads n payload bytes; never more than the header declared.
  void read_exact(void* dst, std::size_t n, const char* what) {
    if (n > header.payload_bytes - consumed) {
      corrupt(
          fmt::format("{} of {} bytes at payload offset {} runs past the {} bytes the header "
                      "declares",
                      what, n, consumed, header.payload_bytes));
    }
    auto* d = static_cast<char*>(dst);
    const char* start = d;
    for (std::size_t left = n; left > 0;) {
      if (out_pos == out_end && !refill()) {
        corrupt(fmt::format("it ends inside {} (payload offset {})", what, consumed));
      }
      const std::size_t k = std::min(left, out_end - out_pos);
      std::memcpy(d, out_buf.data() + out_pos, k);
      out_pos += k;
      d += k;
      left -= k;
    }
    consumed += n;
    payload_hash.update(start, n);
    if (record_hash) record_hash->update(start, n);
  }
  // After the end marker: the totals, the stream's hash, and a complete zstd frame (whose own
  // checksum zstd has verified) with nothing after it.
  void check_end() {
    if (documents != header.documents || text_bytes != header.text_bytes ||
        consumed != header.payload_bytes) {
      corrupt(
          fmt::format("it holds {} documents, {} text bytes in {} bytes but its header "
                      "declares {}, {} and {}",
                      documents, text_bytes, consumed, header.documents, header.text_bytes,
                      header.payload_bytes));
    }
    if (digest_of(payload_hash) != header.payload_sha) corrupt("the stream fails its SHA-256");
    if (out_pos != out_end || refill()) corrupt("data follows the end marker");
    if (last_code != 0 || input.pos != input.size || compressed_read != header.compressed_bytes) {
      corrupt("the zstd frame is incomplete or followed by other data");
    }
  }
};

PackReader::PackReader(const fs::path& path) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.path = path;
  m.in.open(path, std::ios::binary);
  FP8LAB_CHECK_KIND(ErrorKind::io, m.in.good(), "cannot read pack {}", path.string());
  std::error_code ec;
  const std::uint64_t file_size = fs::file_size(path, ec);
  FP8LAB_CHECK_KIND(ErrorKind::io, !ec, "pack {} is not a regular file", path.string());
  std::array<std::uint8_t, kHeaderBytes> b{};
  m.in.read(reinterpret_cast<char*>(b.data()), kHeaderBytes);
  const auto got = static_cast<std::size_t>(m.in.gcount());
  FP8LAB_CHECK_KIND(ErrorKind::format, !(got >= 4 && std::memcmp(b.data(), kZstdMagic, 4) == 0),
                    "pack {} has format version 1, which this build no longer reads (it carries "
                    "no checksums): write it again with `fp8lab data pack`",
                    path.string());
  FP8LAB_CHECK_KIND(ErrorKind::format,
                    got == kHeaderBytes && std::memcmp(b.data(), kPackMagic, 8) == 0,
                    "{} is not an fp8lab pack (no FP8PACK2 header)", path.string());
  m.header.documents = get_u64(b.data() + 8);
  m.header.text_bytes = get_u64(b.data() + 16);
  m.header.payload_bytes = get_u64(b.data() + 24);
  m.header.compressed_bytes = get_u64(b.data() + 32);
  std::memcpy(m.header.payload_sha.data(), b.data() + 40, kDigestBytes);
  if (encode_header(m.header) != b) m.corrupt("its header fails its SHA-256");
  std::array<std::uint8_t, sizeof(kFrameHeader)> frame{};
  m.in.read(reinterpret_cast<char*>(frame.data()), frame.size());
  if (static_cast<std::size_t>(m.in.gcount()) != frame.size() ||
      std::memcmp(frame.data(), kFrameHeader, frame.size()) != 0)
    m.corrupt("its zstd frame header is not the one fp8lab writes");
  m.in.seekg(static_cast<std::streamoff>(kHeaderBytes));
  const PackHeader& h = m.header;
  if (h.compressed_bytes != file_size - kHeaderBytes) {
    m.corrupt(fmt::format("its header declares {} compressed bytes, the file holds {}",
                          h.compressed_bytes, file_size - kHeaderBytes));
  }
  if (h.payload_bytes / kPackMaxExpansion > h.compressed_bytes || h.text_bytes > h.payload_bytes ||
      h.documents > h.payload_bytes / kMinRecordBytes) {
    m.corrupt(
        fmt::format("its header declares {} documents and {} bytes from {} compressed "
                    "bytes (at most {}:1)",
                    h.documents, h.payload_bytes, h.compressed_bytes, kPackMaxExpansion));
  }
}

PackReader::~PackReader() = default;

bool PackReader::next(Document& doc) {
  Impl& m = *impl_;
  m.record_hash = std::make_unique<Sha256>();
  std::uint32_t name_len = 0;
  m.read_exact(&name_len, sizeof(name_len), "a record header");
  if (name_len == 0) {
    m.record_hash.reset();
    m.check_end();
    return false;
  }
  const std::uint64_t record = m.documents + 1;
  if (name_len > kMaxNameBytes) {
    m.corrupt(fmt::format("record {} has a name of {} bytes (at most {})", record, name_len,
                          kMaxNameBytes));
  }
  doc.name.resize(name_len);
  m.read_exact(doc.name.data(), name_len, "a record name");
  std::uint64_t text_len = 0;
  m.read_exact(&text_len, sizeof(text_len), "a record header");
  if (text_len > m.header.payload_bytes - m.consumed) {
    m.corrupt(fmt::format("record {} claims {} bytes, more than the {} left in the pack", record,
                          text_len, m.header.payload_bytes - m.consumed));
  }
  // Grow in steps, so memory follows the data that really arrives.
  doc.text.clear();
  for (std::uint64_t left = text_len; left > 0;) {
    const std::size_t step = static_cast<std::size_t>(std::min<std::uint64_t>(left, 1 << 22));
    const std::size_t at = doc.text.size();
    doc.text.resize(at + step);
    m.read_exact(doc.text.data() + at, step, "a record's text");
    left -= step;
  }
  const Digest expected = digest_of(*m.record_hash);
  m.record_hash.reset();
  Digest stored{};
  m.read_exact(stored.data(), stored.size(), "a record's SHA-256");
  if (stored != expected) {
    m.corrupt(fmt::format("record {} ({}) fails its SHA-256", record, shown(doc.name)));
  }
  if (doc.name.find('\0') != std::string::npos) {
    m.corrupt(fmt::format("record {} has a NUL byte in its name", record));
  }
  ++m.documents;
  m.text_bytes += text_len;
  return true;
}

}  // namespace fp8lab::data
