// Every registry row (op_registry.hpp) on every backend variant here, against the CPU
// reference: a second CPU backend must give the same bytes (determinism), the CUDA backend
// (under each attention kernel family, for the attention rows) must meet each output's bound.
// And every Backend op must have a row: a new op without one fails here.
//
// What stays in tests/cuda/ checks more than an op's outputs against the CPU's at one shape:
// the bytes of the FP8 casts and scales a linear saves (test_cuda_linear, test_cuda_recipes),
// sizes past a grid's sweep and special values (test_cuda_ops), fused against separate ops
// (test_cuda_add_rmsnorm, test_cuda_linear_gelu), families against each other and many shapes
// (test_cuda_attention), the producers' amax slots (test_cuda_fused_amax) and whole models.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include "backend_ops/op_registry.hpp"
#include "common/test_data.hpp"
#include "fp8lab/error.hpp"

namespace fp8lab::testing {
namespace {

struct Variant {
  std::string name;
  bool cuda = false;
  KernelOptions kernels{};
};

struct Case {
  std::size_t row;
  Variant variant;
};

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  const auto& rows = op_registry();
  for (std::size_t r = 0; r < rows.size(); ++r) {
    cases.push_back({r, {"cpu_again"}});
    if (!rows[r].per_attention_family) {
      cases.push_back({r, {"cuda", true}});
      continue;
    }
    for (AttentionKernels k :
         {AttentionKernels::automatic, AttentionKernels::mma_sync, AttentionKernels::wgmma,
          AttentionKernels::wgmma_ws, AttentionKernels::cudnn, AttentionKernels::cudnn_forward}) {
      std::string name = std::string("cuda_") + attention_kernels_name(k);
      for (char& c : name)
        if (c == '-') c = '_';
      cases.push_back({r, {name, true, KernelOptions{k}}});
    }
  }
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const OpRow& row = op_registry()[info.param.row];
  return row.op + "_" + row.name + "_" + info.param.variant.name;
}

bool gpu_here() { return choose_backend("auto").name == "cuda"; }

std::vector<OpOutput> run_on(Backend& backend, const OpRow& row, std::uint64_t seed) {
  OpSession session(backend, row.unaligned ? 1 : 0);
  return row.run(session, seed);
}

class BackendOps : public ::testing::TestWithParam<Case> {};

TEST_P(BackendOps, MeetTheirBoundsAgainstTheCpuReference) {
  const Case& c = GetParam();
  const OpRow& row = op_registry()[c.row];
  if (c.variant.cuda && !gpu_here())
    GTEST_SKIP() << "no usable CUDA GPU here: " << choose_backend("auto").reason;
  const std::uint64_t seed = fresh_seed();
  auto reference_backend = make_cpu_backend();
  const std::vector<OpOutput> reference = run_on(*reference_backend, row, seed);
  ASSERT_FALSE(reference.empty()) << "a row must produce outputs";

  auto backend = c.variant.cuda ? make_cuda_backend(c.variant.kernels) : make_cpu_backend();
  if (c.variant.cuda && !row.cuda_refuses.empty()) {
    try {
      run_on(*backend, row, seed);
      ADD_FAILURE() << row.op << " " << row.name << ": the CUDA backend should refuse this case";
    } catch (const Error& e) {
      EXPECT_NE(e.message().find(row.cuda_refuses), std::string::npos) << e.message();
    }
    return;
  }
  const std::vector<OpOutput> got = run_on(*backend, row, seed);
  ASSERT_EQ(got.size(), reference.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].name, reference[i].name);
    // A second CPU run is the same arithmetic: the same bytes, whatever the bound.
    const Bound bound = c.variant.cuda ? reference[i].bound : Bound::exact();
    const std::string why = bound_violation(got[i].value, reference[i].value, bound);
    EXPECT_TRUE(why.empty()) << row.op << " " << row.name << ", output " << got[i].name << " on "
                             << c.variant.name << " (bound " << bound.describe() << "): " << why;
  }
}

INSTANTIATE_TEST_SUITE_P(Registry, BackendOps, ::testing::ValuesIn(all_cases()), case_name);

// Members of Backend that are not ops with results to compare: the object's identity, memory
// handling (every row allocates, uploads, downloads and synchronizes through them), and a
// scheduling hint the model tests cover (memory lent to workspaces changes no result).
const std::set<std::string>& not_ops() {
  static const std::set<std::string> names = {
      "device", "name",     "device_name", "allocate",  "memory_stats",
      "upload", "download", "synchronize", "lend_idle"};
  return names;
}

// The virtual member functions declared in class Backend, read from its header.
std::set<std::string> backend_members() {
  std::ifstream in(std::string(FP8LAB_SOURCE_DIR) + "/include/fp8lab/backend.hpp");
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  const std::size_t start = all.find("class Backend {");
  const std::size_t end = all.find("\n};", start);
  EXPECT_NE(start, std::string::npos);
  const std::string body = all.substr(start, end - start);
  const std::regex virtual_fn(R"(virtual\s+[\w:<>,\s]+?[\s&*]+(\w+)\s*\()");
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(body.begin(), body.end(), virtual_fn);
       it != std::sregex_iterator(); ++it)
    names.insert((*it)[1]);
  return names;
}

TEST(BackendOpRegistry, EveryBackendOpHasARowAndEveryRowAnOp) {
  const std::set<std::string> members = backend_members();
  // The parse must see the interface (about thirty members), not pass by finding nothing.
  ASSERT_GE(members.size(), 25u) << "backend.hpp's virtual functions were not found";
  std::set<std::string> covered;
  for (const OpRow& row : op_registry()) covered.insert(row.op);
  for (const std::string& m : members) {
    if (not_ops().count(m) != 0) continue;
    EXPECT_EQ(covered.count(m), 1u)
        << "Backend::" << m << " has no row in tests/backend_ops/op_rows_*.cpp";
  }
  for (const std::string& op : covered)
    EXPECT_EQ(members.count(op), 1u)
        << "registry row for '" << op << "', which is not a virtual member of Backend";
  for (const std::string& n : not_ops())
    EXPECT_EQ(members.count(n), 1u) << "'" << n << "' is listed as not an op but is not in Backend";
}

// Memory is accounted by kind (MemoryStats::current_by_kind), on every backend here: what the
// bench's bytes per parameter of training state is read from.
TEST(BackendOpRegistry, MemoryIsAccountedByKind) {
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(make_cpu_backend());
  if (gpu_here()) backends.push_back(make_cuda_backend());
  for (auto& b : backends) {
    // The CUDA pool hands out whole 256-byte units (cuBLASLt's alignment), and counts them.
    const std::int64_t unit = b->name() == "cpu" ? 1 : 256;
    const auto held = [unit](std::int64_t bytes) { return (bytes + unit - 1) / unit * unit; };
    const MemoryStats before = b->memory_stats();
    {
      const Buffer p = b->allocate(MemoryKind::parameters, DType::f32, {1000}, "p");
      const Buffer g = b->allocate(MemoryKind::gradients, DType::bf16, {300}, "g");
      const Buffer o = b->allocate(MemoryKind::optimizer, DType::f32, {2, 250}, "o");
      const MemoryStats s = b->memory_stats();
      EXPECT_EQ(s.current(MemoryKind::parameters) - before.current(MemoryKind::parameters),
                held(4000))
          << b->name();
      EXPECT_EQ(s.current(MemoryKind::gradients) - before.current(MemoryKind::gradients), held(600))
          << b->name();
      EXPECT_EQ(s.current(MemoryKind::optimizer) - before.current(MemoryKind::optimizer),
                held(2000))
          << b->name();
      std::int64_t sum = 0;
      for (std::int64_t k : s.current_by_kind) sum += k;
      EXPECT_EQ(sum, s.current_bytes) << b->name();
    }
    EXPECT_EQ(b->memory_stats().current_by_kind, before.current_by_kind) << b->name();
  }
}

// The bound checks themselves: a check that cannot fail would make every row pass.
TEST(BackendOpRegistry, BoundsCatchWhatTheyBound) {
  HostTensor a(DType::f32, {3}), b(DType::f32, {3});
  for (int i = 0; i < 3; ++i) a.as<float>()[i] = b.as<float>()[i] = 1.f + static_cast<float>(i);
  EXPECT_EQ(bound_violation(a, b, Bound::exact()), "");
  b.as<float>()[1] = std::nextafter(2.f, 3.f);  // one ulp
  EXPECT_NE(bound_violation(a, b, Bound::exact()), "");
  EXPECT_EQ(bound_violation(a, b, Bound::ulp(1)), "");
  b.as<float>()[1] = std::nextafter(b.as<float>()[1], 3.f);  // two
  EXPECT_NE(bound_violation(a, b, Bound::ulp(1)), "");
  EXPECT_EQ(bound_violation(a, b, Bound::relative(1e-6)), "");
  b.as<float>()[2] = 3.1f;
  EXPECT_NE(bound_violation(a, b, Bound::relative(1e-2)), "");
  a.as<float>()[0] = -0.f;  // -0 and +0 are the same value ...
  b.as<float>()[0] = 0.f;
  b.as<float>()[1] = a.as<float>()[1];
  b.as<float>()[2] = a.as<float>()[2];
  EXPECT_EQ(bound_violation(a, b, Bound::ulp(1)), "");
  a.as<float>()[0] = std::nanf("");  // ... and a NaN meets no bound but exact equality
  EXPECT_NE(bound_violation(a, b, Bound::ulp(1e9)), "");
  EXPECT_NE(bound_violation(a, b, Bound::relative(1e9)), "");
  HostTensor c(DType::f32, {4});
  EXPECT_NE(bound_violation(c, b, Bound::relative(1)), "");  // shapes differ
}

}  // namespace
}  // namespace fp8lab::testing
