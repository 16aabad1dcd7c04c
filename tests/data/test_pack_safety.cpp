// Packs check what they carry (every flipped bit is an error, sizes are bounded by the file),
// and writing output never destroys user files: unpack neither follows links nor writes into
// linked files, duplicate and NUL-cut names are refused, outputs stay apart from inputs.
#include <zstd.h>

#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "data/document_source.hpp"
#include "data_test_util.hpp"
#include "fp8lab/data_prepare.hpp"
#include "fp8lab/error.hpp"
#include "core/sha256.hpp"

namespace fp8lab::data {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_NE(e.kind(), ErrorKind::internal) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

std::vector<Document> read_all(const fs::path& pack) {
  PackReader reader(pack);
  std::vector<Document> docs;
  for (Document d; reader.next(d);) docs.push_back(d);
  return docs;
}

fs::path small_pack(const ScratchDir& dir, std::mt19937_64& rng) {
  fs::create_directories(dir / "src/sub");
  testing::write_file(dir / "src/a.txt", testing::random_bytes(rng, 300));
  testing::write_file(dir / "src/sub/b.c", "int main(void) { return 0; }\n");
  testing::write_file(dir / "src/empty", "");
  PackOptions p;
  p.source.inputs = {dir / "src"};
  p.out = dir / "p.fp8pack";
  p.level = 3;
  p.progress = false;
  write_pack(p);
  return p.out;
}

// A version 2 pack built by hand, so that the reader meets records the writer refuses.
void write_raw_pack(const fs::path& path,
                    const std::vector<std::pair<std::string, std::string>>& docs) {
  std::string payload;
  std::uint64_t text_bytes = 0;
  for (const auto& [name, text] : docs) {
    const auto name_len = static_cast<std::uint32_t>(name.size());
    const auto text_len = static_cast<std::uint64_t>(text.size());
    const std::size_t start = payload.size();
    payload.append(reinterpret_cast<const char*>(&name_len), 4).append(name);
    payload.append(reinterpret_cast<const char*>(&text_len), 8).append(text);
    const auto d = sha256_hex(payload.data() + start, payload.size() - start);
    for (std::size_t i = 0; i < 32; ++i)
      payload += static_cast<char>(std::stoi(d.substr(2 * i, 2), nullptr, 16));
    text_bytes += text_len;
  }
  payload.append(4, '\0');
  // Streamed with the writer's frame settings, so the frame header is the one readers accept.
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, 27);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  std::string frame(ZSTD_compressBound(payload.size()) + 64, '\0');
  ZSTD_outBuffer out{frame.data(), frame.size(), 0};
  ZSTD_inBuffer in{payload.data(), payload.size(), 0};
  ZSTD_compressStream2(cctx, &out, &in, ZSTD_e_continue);
  ZSTD_inBuffer none{nullptr, 0, 0};
  while (ZSTD_compressStream2(cctx, &out, &none, ZSTD_e_end) != 0) {
  }
  ZSTD_freeCCtx(cctx);
  frame.resize(out.pos);
  std::string header("FP8PACK2", 8);
  for (std::uint64_t v : {std::uint64_t{docs.size()}, text_bytes, std::uint64_t{payload.size()},
                          std::uint64_t{frame.size()}})
    header.append(reinterpret_cast<const char*>(&v), 8);
  Sha256 whole;
  whole.update(payload.data(), payload.size());
  for (std::uint8_t b : whole.digest()) header += static_cast<char>(b);
  Sha256 self;
  self.update(header.data(), header.size());
  for (std::uint8_t b : self.digest()) header += static_cast<char>(b);
  testing::write_file(path, header + frame);
}

TEST(PackSafety, EveryFlippedBitIsAnError) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ScratchDir dir("packflip");
  const fs::path pack = small_pack(dir, rng);
  ASSERT_EQ(read_all(pack).size(), 3u);
  const std::string bytes = testing::read_file(pack);
  for (std::size_t pos = 0; pos < bytes.size(); ++pos) {
    std::string flipped = bytes;
    flipped[pos] = static_cast<char>(flipped[pos] ^ (1 << (rng() % 8)));
    testing::write_file(dir / "f.fp8pack", flipped);
    try {
      read_all(dir / "f.fp8pack");
      ADD_FAILURE() << "a flipped bit at byte " << pos << " of " << bytes.size() << " passed";
    } catch (const Error& e) {
      ASSERT_EQ(e.kind(), ErrorKind::format) << pos << ": " << e.what();
    }
  }
}

TEST(PackSafety, OldFormatAndOversizedClaimsAreRefusedWithAMessage) {
  const std::string regressions = testing::source_path("fuzz/regressions/pack/");
  EXPECT_NE(error_of([&] { read_all(regressions + "version1.fp8pack"); }).find("format version 1"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_all(regressions + "claims_6gib.fp8pack"); }).find("declares"),
            std::string::npos);
  // The writer keeps its packs within the bound the reader enforces.
  ScratchDir dir("packratio");
  fs::create_directories(dir / "src");
  testing::write_file(dir / "src/zeros.txt", std::string(4 << 20, 'a'));
  PackOptions p;
  p.source.inputs = {dir / "src"};
  p.out = dir / "z.fp8pack";
  p.progress = false;
  EXPECT_NE(error_of([&] { write_pack(p); }).find("1024:1"), std::string::npos);
  EXPECT_FALSE(fs::exists(p.out));
}

TEST(PackSafety, DuplicateAndNulNamesAreRefused) {
  ScratchDir dir("packnames");
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  testing::write_file(dir / "a/x.txt", "one");
  testing::write_file(dir / "b/x.txt", "two");
  PackOptions p;
  p.source.inputs = {dir / "a/x.txt", dir / "b/x.txt"};
  p.out = dir / "d.fp8pack";
  p.progress = false;
  EXPECT_NE(error_of([&] { write_pack(p); }).find("x.txt"), std::string::npos);
  PackWriter w(dir / "n.fp8pack", 1, 1);
  EXPECT_NE(error_of([&] {
              w.add({std::string("ok\0../../evil", 13), "x"});
            }).find("NUL"),
            std::string::npos);
  // Packs that carry such names despite valid checksums.
  write_raw_pack(dir / "nul.fp8pack", {{std::string("a\0b", 3), "x"}});
  EXPECT_NE(error_of([&] { read_all(dir / "nul.fp8pack"); }).find("NUL"), std::string::npos);
  write_raw_pack(dir / "dup.fp8pack", {{"same.txt", "first"}, {"same.txt", "second"}});
  EXPECT_EQ(read_all(dir / "dup.fp8pack").size(), 2u);  // valid as a stream of documents
  EXPECT_NE(error_of([&] {
              unpack_to_directory(dir / "dup.fp8pack", dir / "out");
            }).find("two documents are named \"same.txt\""),
            std::string::npos);
  EXPECT_EQ(testing::read_file(dir / "out/same.txt"), "first");
}

TEST(PackSafety, UnpackNeverWritesThroughLinks) {
  ScratchDir dir("packlinks");
  fs::create_directories(dir / "outside");
  testing::write_file(dir / "outside/keep.txt", "user data");
  write_raw_pack(dir / "first.fp8pack", {{"a.txt", "a"}});
  ASSERT_EQ(unpack_to_directory(dir / "first.fp8pack", dir / "out"), 1);  // marks out/
  fs::create_directory_symlink(dir / "outside", dir / "out/sub");
  fs::create_symlink(dir / "outside/keep.txt", dir / "out/leaf.txt");
  fs::create_hard_link(dir / "outside/keep.txt", dir / "out/hard.txt");
  for (const char* name : {"sub/keep.txt", "sub/new.txt", "leaf.txt", "hard.txt"}) {
    write_raw_pack(dir / "evil.fp8pack", {{name, "overwritten"}});
    error_of([&] { unpack_to_directory(dir / "evil.fp8pack", dir / "out"); });
    EXPECT_EQ(testing::read_file(dir / "outside/keep.txt"), "user data") << name;
    EXPECT_FALSE(fs::exists(dir / "outside/new.txt")) << name;
  }
  for (const char* name : {"../x", "/etc/x", "a/./b", "a//b", ".fp8lab-lock"}) {
    write_raw_pack(dir / "evil.fp8pack", {{name, "x"}});
    error_of([&] { unpack_to_directory(dir / "evil.fp8pack", dir / "out"); });
  }
}

TEST(OutputDirectories, UserFilesAreNeverReplacedWithoutForce) {
  std::mt19937_64 rng(testing::fresh_seed());
  ScratchDir dir("outdirs");
  const fs::path pack = small_pack(dir, rng);
  fs::create_directories(dir / "mine");
  testing::write_file(dir / "mine/train_000000.bin", "my file");
  testing::write_file(dir / "mine/manifest.json", "my manifest");
  EXPECT_NE(error_of([&] { unpack_to_directory(pack, dir / "mine"); }).find("--force"),
            std::string::npos);
  PrepareOptions o;
  o.tokenizer = "byte";
  o.source.inputs = {dir / "src"};
  o.out_dir = dir / "mine";
  o.progress = false;
  EXPECT_NE(error_of([&] { prepare_corpus(o); }).find("--force"), std::string::npos);
  EXPECT_EQ(testing::read_file(dir / "mine/train_000000.bin"), "my file");
  EXPECT_EQ(testing::read_file(dir / "mine/manifest.json"), "my manifest");
  // Outputs apart from inputs: into the input, inside it, or a pack over its own input.
  for (const fs::path& out : {dir / "src", dir / "src/shards"}) {
    o.out_dir = out;
    EXPECT_NE(error_of([&] { prepare_corpus(o); }).find("input"), std::string::npos);
  }
  PackOptions p;
  p.source.inputs = {dir / "src/a.txt"};
  p.out = dir / "src/a.txt";
  const std::string before = testing::read_file(dir / "src/a.txt");
  error_of([&] { write_pack(p); });
  EXPECT_EQ(testing::read_file(dir / "src/a.txt"), before);
  o.out_dir = dir / "fresh";
  o.force = false;
  EXPECT_NO_THROW(prepare_corpus(o));
  EXPECT_NO_THROW(prepare_corpus(o));  // its own output directory: reused
  o.out_dir = dir / "mine";
  o.force = true;
  EXPECT_NO_THROW(prepare_corpus(o));
}

// The document list hashes the name's length too: a name holding "\t...\n" cannot forge the
// lines of other documents.
TEST(DataPrepare, DocumentListHashIsUnambiguousForNamesWithTabsAndNewlines) {
  ScratchDir dir("doclist");
  fs::create_directories(dir / "two");
  fs::create_directories(dir / "one");
  testing::write_file(dir / "two/a", "xyz");
  testing::write_file(dir / "two/b", "second");
  const std::string forged = "a\t3\t" + sha256_hex(std::string("xyz")) + "\nb";
  testing::write_file(dir / "one" / forged, "second");
  std::map<std::string, std::string> hashes;
  for (const char* tree : {"one", "two"}) {
    PrepareOptions o;
    o.tokenizer = "byte";
    o.source.inputs = {dir / tree};
    o.split.heldout_fraction = 0;
    o.out_dir = dir / (std::string(tree) + "_out");
    o.progress = false;
    prepare_corpus(o);
    const auto m = nlohmann::json::parse(testing::read_file(o.out_dir / "manifest.json"));
    hashes[tree] = m["sources"]["document_list_sha256"];
  }
  EXPECT_NE(hashes["one"], hashes["two"]);
}

}  // namespace
}  // namespace fp8lab::data
