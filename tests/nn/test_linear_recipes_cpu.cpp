// The FP8 scaling recipes of the CPU reference linear layer (fp8lab/fp8_recipe.hpp): accuracy
// against the bf16 policy, the saved operands being the recipe's casts, the BF16 wgrad, and the
// errors of shapes a recipe cannot tile.
#include "common/test_data.hpp"
#include "common/tolerances.hpp"
#include "fp8lab/fp8_grouped.hpp"
#include "fp8lab/linear.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <tuple>

namespace fp8lab {
namespace {

using testing::error_of;
using testing::fresh_seed;
using testing::poisoned;
using testing::relative_frobenius;

using Inputs = testing::LinearOperands;

// Activations whose rows differ in magnitude (tokens do), weights O(1/sqrt(K)), small gradients.
Inputs inputs(std::int64_t m, std::int64_t k, std::int64_t n) {
  Inputs in = testing::linear_operands(m, k, n, fresh_seed());
  for (std::int64_t r = 0; r < m; ++r)
    for (std::int64_t c = 0; c < k; ++c) {
      std::uint16_t& v = in.x.as<std::uint16_t>()[r * k + c];
      v = float_to_bf16(bf16_to_float(v) * std::ldexp(1.0f, static_cast<int>(r % 9) - 4));
    }
  return in;
}

struct LayerRun {
  LinearSavedHost saved;
  LinearScratchHost scratch;
  HostTensor y, dx, dw;
  LayerRun(LinearPrecision p, const Fp8Options& o, std::int64_t m, std::int64_t k, std::int64_t n)
      : saved(p, m, k, n, o),
        scratch(p, m, n, o),
        y(poisoned(DType::bf16, {m, n})),
        dx(poisoned(DType::bf16, {m, k})),
        dw(poisoned(DType::f32, {n, k})) {}
};

void run(LayerRun& r, LinearPrecision p, const Fp8Options& o, const Inputs& in) {
  const LinearConfig config{p, "blocks.0.mlp.fc", o};
  linear_forward_cpu(config, in.x, in.w, r.y, r.saved.saved);
  linear_backward_cpu(config, r.saved.saved, in.dy, r.dx, r.dw, r.scratch.scratch);
}

class Recipes : public ::testing::TestWithParam<std::tuple<Fp8Recipe, bool>> {};

TEST_P(Recipes, YdXdWAreWithinTheFp8BoundsOfTheBf16Policy) {
  const auto [recipe, bf16_wgrad] = GetParam();
  const Fp8Options o{recipe, bf16_wgrad};
  const std::int64_t m = 256, k = 384, n = 128;
  const Inputs in = inputs(m, k, n);
  LayerRun ref(LinearPrecision::bf16, {}, m, k, n), f8(LinearPrecision::fp8, o, m, k, n);
  run(ref, LinearPrecision::bf16, {}, in);
  run(f8, LinearPrecision::fp8, o, in);
  const double ey = relative_frobenius(f8.y, ref.y), edx = relative_frobenius(f8.dx, ref.dx),
               edw = relative_frobenius(f8.dw, ref.dw);
  std::fprintf(stderr, "[measured] %s%s vs bf16: y %.4f, dX %.4f, dW %.4f\n",
               fp8_recipe_name(recipe), bf16_wgrad ? " (bf16 wgrad)" : "", ey, edx, edw);
  EXPECT_LT(ey, tolerances::kFp8LinearYVsBf16);
  EXPECT_LT(edx, tolerances::kFp8LinearDxVsBf16);
  EXPECT_LT(edw, tolerances::kFp8LinearDwVsBf16);
  EXPECT_GT(ey, tolerances::kFp8LinearYVsBf16Floor);  // the FP8 path really ran
  if (bf16_wgrad) {
    EXPECT_LT(edw, 1e-6);  // the wgrad is the bf16 policy's own GEMM
    EXPECT_EQ(f8.saved.saved.x.data, in.x.view().data);
  } else {
    EXPECT_GT(edw, tolerances::kFp8LinearYVsBf16Floor);
  }
}

INSTANTIATE_TEST_SUITE_P(AllRecipes, Recipes,
                         ::testing::Combine(::testing::Values(Fp8Recipe::tensorwise,
                                                              Fp8Recipe::rowwise,
                                                              Fp8Recipe::blockwise),
                                            ::testing::Bool()));

bool same_bytes(const TensorView& a, const TensorView& b) {
  return a.shape == b.shape && a.dtype == b.dtype && std::memcmp(a.data, b.data, a.nbytes()) == 0;
}

// Each saved layout is the grouped cast the recipe table names, scales included.
TEST(Recipes, SavedOperandsAreTheRecipesCastsInBothLayouts) {
  for (Fp8Recipe recipe : {Fp8Recipe::rowwise, Fp8Recipe::blockwise}) {
    SCOPED_TRACE(fp8_recipe_name(recipe));
    const Fp8Options o{recipe, false};
    const std::int64_t m = 128, k = 256, n = 384;
    const Inputs in = inputs(m, k, n);
    LayerRun r(LinearPrecision::fp8, o, m, k, n);
    run(r, LinearPrecision::fp8, o, in);
    const LinearSaved& s = r.saved.saved;
    struct Case {
      const HostTensor* src;
      Fp8Role role;
      TensorView q, q_inv, qt, qt_inv;
    };
    for (const Case& c : {Case{&in.x, Fp8Role::x, s.xq, s.xq_inv, s.xq_t, s.xq_t_inv},
                          Case{&in.w, Fp8Role::w, s.wq, s.wq_inv, s.wq_t, s.wq_t_inv},
                          Case{&in.dy, Fp8Role::dy, r.scratch.scratch.dyq,
                               r.scratch.scratch.dyq_inv, r.scratch.scratch.dyq_t,
                               r.scratch.scratch.dyq_t_inv}}) {
      const OperandScaling sc = operand_scaling(recipe, c.role);
      const Fp8Format f = fp8_role_format(c.role);
      HostTensor q(fp8_dtype(f), c.q.shape), qt(fp8_dtype(f), c.qt.shape);
      HostTensor inv(DType::f32, c.q_inv.shape), inv_t(DType::f32, c.qt_inv.shape);
      quantize_grouped_cpu(*c.src, f, sc.q, q, inv, "t");
      quantize_grouped_transposed_cpu(*c.src, f, sc.qt, qt, inv_t, "t");
      EXPECT_TRUE(same_bytes(q, c.q));
      EXPECT_TRUE(same_bytes(inv, c.q_inv));
      EXPECT_TRUE(same_bytes(qt, c.qt));
      EXPECT_TRUE(same_bytes(inv_t, c.qt_inv));
    }
  }
}

TEST(Recipes, ShapesARecipeCannotTileAreErrorsNamingTheDimension) {
  const Inputs in = inputs(128, 200, 128);  // K = 200: not a multiple of 128
  const Fp8Options o{Fp8Recipe::blockwise, false};
  LayerRun r(LinearPrecision::fp8, o, 128, 200, 128);
  const Error e = error_of([&] {
    linear_forward_cpu({LinearPrecision::fp8, "blocks.3.mlp.fc", o}, in.x, in.w, r.y,
                       r.saved.saved);
  });
  EXPECT_EQ(e.kind(), ErrorKind::shape);
  EXPECT_NE(e.message().find("blockwise"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("K (input features) is 200"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("multiple of 128"), std::string::npos) << e.message();
  // A saved state made for another recipe.
  LayerRun other(LinearPrecision::fp8, {}, 128, 256, 128);
  const Inputs ok = inputs(128, 256, 128);
  const Error e2 = error_of([&] {
    linear_forward_cpu({LinearPrecision::fp8, "fc", o}, ok.x, ok.w, other.y, other.saved.saved);
  });
  EXPECT_NE(e2.message().find("tensorwise recipe"), std::string::npos) << e2.message();
}

TEST(Recipes, NamesRoundTripAndUnknownNamesAreErrors) {
  for (Fp8Recipe r : {Fp8Recipe::tensorwise, Fp8Recipe::rowwise, Fp8Recipe::blockwise})
    EXPECT_EQ(parse_fp8_recipe(fp8_recipe_name(r)), r);
  const Error e = error_of([] { parse_fp8_recipe("columnwise"); });
  EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
  EXPECT_NE(e.message().find("'columnwise'"), std::string::npos);
}

}  // namespace
}  // namespace fp8lab
