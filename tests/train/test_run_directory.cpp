// A run directory's safety: one trainer at a time (naming the holder), no writing into a
// directory fp8lab did not create, `latest` valid at every instant of a re-save, edited step
// counts caught, and a resume that names every config key it may not change and lets the memory
// options change.
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "common/test_data.hpp"
#include "core/sha256.hpp"
#include "fp8lab/checkpoint.hpp"
#include "fp8lab/json_read.hpp"
#include "fp8lab/output_dir.hpp"
#include "fp8lab/safetensors.hpp"
#include "fp8lab/trainer.hpp"
#include "train/train_fixtures.hpp"

namespace fp8lab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::quiet;
using testing::TempDir;

std::string error_of(const std::function<void()>& f, ErrorKind kind) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

void train(const RunConfig& c, const fs::path& dir, bool resume = false) {
  auto be = make_cpu_backend();
  TrainerOptions o = quiet();
  o.resume = resume;
  Trainer t(c, dir, *be, o);
  t.run();
}

TEST(RunDirectory, ASecondTrainerIsRefusedNamingTheFirst) {
  TempDir dir;
  const RunConfig c = testing::small_run(testing::fresh_seed());
  auto be = make_cpu_backend();
  {
    Trainer first(c, dir.path(), *be, quiet());
    const std::string what =
        error_of([&] { Trainer second(c, dir.path(), *be, quiet()); }, ErrorKind::busy);
    EXPECT_NE(what.find("pid " + std::to_string(::getpid()) + " on host"), std::string::npos)
        << what;
  }
  EXPECT_NO_THROW(Trainer(c, dir.path(), *be, quiet()));  // the lock left with its holder
}

TEST(RunDirectory, ADirectoryFp8labDidNotCreateIsRefusedUnlessForced) {
  TempDir dir;
  std::ofstream(dir.path() / "config.json") << "my own notes\n";
  const RunConfig c = testing::small_run(testing::fresh_seed());
  auto be = make_cpu_backend();
  const std::string what =
      error_of([&] { Trainer t(c, dir.path(), *be, quiet()); }, ErrorKind::invalid_argument);
  EXPECT_NE(what.find("--force"), std::string::npos) << what;
  std::ifstream in(dir.path() / "config.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "my own notes\n");
  EXPECT_FALSE(fs::exists(dir.path() / "checkpoints"));
  TrainerOptions o = quiet();
  o.force = true;
  EXPECT_NO_THROW(Trainer(c, dir.path(), *be, o));
  EXPECT_EQ(output_marker_kind(dir.path()), "run");
  // A marked run directory is not data output, and the other way round.
  EXPECT_THROW(OutputDirectory(dir.path(), "data"), Error);
}

// Replays the checkpoints directory's inotify events of one save and checks after each that
// `latest` (as it stood then) names a directory that exists.
void expect_latest_always_valid(Trainer& t, const fs::path& ckpts) {
  const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_GE(
      ::inotify_add_watch(fd, ckpts.c_str(), IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO),
      0);
  std::set<std::string> present;
  for (const auto& e : fs::directory_iterator(ckpts)) present.insert(e.path().filename());
  std::string target = read_latest_name(ckpts);
  t.save_checkpoint();
  const std::string final_target = read_latest_name(ckpts);
  alignas(inotify_event) char buf[1 << 16];
  int events = 0;
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) {
    for (char* p = buf; p < buf + n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(p);
      const std::string name = ev->len ? ev->name : "";
      if (ev->mask & (IN_CREATE | IN_MOVED_TO)) present.insert(name);
      if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) present.erase(name);
      if (name == "latest" && (ev->mask & IN_MOVED_TO)) target = final_target;
      EXPECT_TRUE(present.count(target)) << "`latest` names " << target << " after an event on "
                                         << name << " (mask " << ev->mask << ")";
      ++events;
      p += sizeof(inotify_event) + ev->len;
    }
  }
  ::close(fd);
  EXPECT_GT(events, 3);
}

TEST(RunDirectory, ResavingTheLatestStepKeepsLatestValidThroughout) {
  TempDir dir;
  RunConfig c = testing::small_run(testing::fresh_seed());
  c.train.steps = 2;
  auto be = make_cpu_backend();
  Trainer t(c, dir.path(), *be, quiet());
  t.run();
  const fs::path ckpts = dir.path() / "checkpoints";
  ASSERT_EQ(read_latest_name(ckpts), "step_00000002");
  expect_latest_always_valid(t, ckpts);
  EXPECT_EQ(read_latest_name(ckpts), "step_00000002.1");
  EXPECT_FALSE(fs::exists(ckpts / "step_00000002"));
  expect_latest_always_valid(t, ckpts);  // and back
  EXPECT_EQ(read_latest_name(ckpts), "step_00000002");
  EXPECT_FALSE(fs::exists(ckpts / "step_00000002.1"));
  GptModel model(c.model, c.precision, c.train.micro_batch, *be);
  EXPECT_EQ(load_checkpoint(*latest_checkpoint(ckpts), model, nullptr).step, 2);
}

json read_meta(const fs::path& ckpt) { return read_json_file(ckpt / "meta.json"); }
void write_meta(const fs::path& ckpt, const json& j) {
  std::ofstream(ckpt / "meta.json", std::ios::trunc) << j.dump(2);
}

// An edited step count that keeps meta.json consistent (step = adam_updates + skipped) is
// caught by the directory name, then by optimizer.safetensors' own record of the counts, and
// for checkpoints without that record by the data position.
TEST(RunDirectory, AnEditedStepCountIsCaughtAtEachLayer) {
  TempDir dir;
  RunConfig c = testing::small_run(testing::fresh_seed());
  c.train.steps = 4;
  c.train.checkpoint_every = 2;
  train(c, dir.path());
  const fs::path ckpts = dir.path() / "checkpoints";
  json meta = read_meta(ckpts / "step_00000004");
  meta["step"] = 5;
  meta["adam_updates"] = 5;
  write_meta(ckpts / "step_00000004", meta);
  c.train.steps = 6;
  error_of([&] { read_checkpoint_meta(ckpts / "step_00000004"); }, ErrorKind::format);
  fs::rename(ckpts / "step_00000004", ckpts / "step_00000005");
  std::ofstream(ckpts / "latest", std::ios::trunc) << "step_00000005\n";
  std::string what = error_of([&] { train(c, dir.path(), true); }, ErrorKind::format);
  EXPECT_NE(what.find("optimizer.safetensors records"), std::string::npos) << what;
  // A checkpoint of a build that did not record the counts: the data position tells.
  const fs::path opt = ckpts / "step_00000005" / "optimizer.safetensors";
  const SafetensorsFile moments = SafetensorsFile::load(opt);
  std::vector<SafetensorsTensor> tensors;
  for (const auto& [name, e] : moments.entries())
    tensors.push_back({name, e.dtype, e.shape, moments.tensor(name, e.dtype, e.shape)});
  const auto bytes = encode_safetensors(tensors, {{"format", "fp8lab-adamw"}});
  std::ofstream(opt, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  meta["files"]["optimizer.safetensors"] = sha256_hex(bytes.data(), bytes.size());
  write_meta(ckpts / "step_00000005", meta);
  what = error_of([&] { train(c, dir.path(), true); }, ErrorKind::format);
  EXPECT_NE(what.find("data position"), std::string::npos) << what;
}

TEST(RunDirectory, ResumeNamesEveryKeyItMayNotChange) {
  TempDir dir;
  RunConfig c = testing::small_run(testing::fresh_seed());
  c.train.steps = 2;
  train(c, dir.path());
  RunConfig changed = c;
  changed.optim.lr *= 2;
  changed.train.seed += 1;
  changed.data.order = "sequential";
  changed.optim.moments = DType::bf16;  // the moments were rounded otherwise
  changed.train.steps = 4;              // may change
  changed.train.log_every = 3;          // may change
  const std::string what =
      error_of([&] { train(changed, dir.path(), true); }, ErrorKind::invalid_argument);
  for (const char* key : {"optim.lr", "train.seed", "data.order", "optim.moments"})
    EXPECT_NE(what.find(key), std::string::npos) << key << ": " << what;
  EXPECT_EQ(what.find("train.log_every ("), std::string::npos) << what;
  RunConfig extended = c;
  extended.train.steps = 4;
  extended.train.log_every = 3;
  extended.train.keep_checkpoints = 5;
  extended.train.checkpoint_every = 1;
  extended.kernels.attention = AttentionKernels::mma_sync;  // the same bits in every family
  EXPECT_NO_THROW(train(extended, dir.path(), true));
  EXPECT_EQ(read_latest_name(dir.path() / "checkpoints"), "step_00000004");
}

// The memory options change how a step is computed, not what it computes: a run trained without
// them resumes with all of them (on a smaller GPU, say) and ends on the uninterrupted run's
// weights, bit for bit (FP8 linears, so that weights from the master apply too).
TEST(RunDirectory, MemoryOptionsMayChangeOnResumeAndKeepTheBits) {
  RunConfig c = testing::small_run(testing::fresh_seed());
  c.model.n_layers = 3;
  c.precision.policy = PrecisionPolicy::fp8_linears;
  c.train.steps = 4;
  TempDir whole, split;
  train(c, whole.path());
  RunConfig first = c;
  first.train.steps = 2;
  train(first, split.path());
  RunConfig lean = c;
  lean.precision.mlp_recompute = lean.precision.pointwise_recompute = true;
  lean.precision.residual_recompute = lean.precision.qkv_recompute = true;
  lean.precision.fp8_weights_from_master = true;
  EXPECT_NO_THROW(train(lean, split.path(), true));
  const json a = read_json_file(whole.path() / "run.json");
  const json b = read_json_file(split.path() / "run.json");
  ASSERT_TRUE(a["final_params_sha256"].is_string());
  EXPECT_EQ(a["final_params_sha256"], b["final_params_sha256"]);
  EXPECT_EQ(b["step"], 4);
}

TEST(OutputPaths, AnOutputMayNotBeOrHoldAnInput) {
  TempDir dir;
  const fs::path in = dir.path() / "in.npy";
  std::ofstream(in) << "x";
  fs::create_hard_link(in, dir.path() / "link.npy");
  fs::create_symlink(in, dir.path() / "sym.npy");
  for (const char* out : {"in.npy", "link.npy", "sym.npy", "./in.npy"}) {
    error_of([&] { check_output_not_input(dir.path() / out, {in}, "--out"); },
             ErrorKind::invalid_argument);
  }
  EXPECT_NO_THROW(check_output_not_input(dir.path() / "out.npy", {in}, "--out"));
  // Directories: neither inside the other.
  error_of([&] { check_output_not_input(dir.path(), {in}, "--out"); }, ErrorKind::invalid_argument);
  error_of([&] { check_output_not_input(dir.path() / "sub", {dir.path()}, "--out"); },
           ErrorKind::invalid_argument);
}

}  // namespace
}  // namespace fp8lab
