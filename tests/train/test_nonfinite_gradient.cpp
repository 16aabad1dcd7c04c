// A non-finite gradient (finite loss) is reported with the name of the tensor. The fault is
// injected by a backend that forwards every op to the CPU backend and poisons one dW: the model
// and trainer run unchanged over it, as they must over any backend.
#include "common/forwarding_backend.hpp"
#include "common/test_data.hpp"
#include "fp8lab/trainer.hpp"
#include "train/train_fixtures.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace fp8lab {
namespace {

class PoisoningBackend final : public testing::ForwardingBackend {
 public:
  bool poison_next_dw = false;
  void linear_backward(LinearContext& s, const TensorView& dy, const TensorView& dx,
                       const TensorView& dw, AmaxSlot a = {},
                       GradWrite write = GradWrite::accumulate) override {
    ForwardingBackend::linear_backward(s, dy, dx, dw, a, write);
    if (poison_next_dw) {  // the first linear of the backward: the last block's mlp.proj
      dw.as<float>()[5] = std::numeric_limits<float>::infinity();
      poison_next_dw = false;
    }
  }
};

TEST(NonFiniteGradient, AbortNamesTheTensorAndSkipLeavesTheWeights) {
  for (const char* policy : {"abort", "skip"}) {
    RunConfig c = testing::small_run(testing::fresh_seed());
    c.train.nonfinite = policy;
    c.train.grad_accum = 1;
    testing::TempDir dir;
    PoisoningBackend be;
    TrainerOptions quiet;
    quiet.log = nullptr;
    Trainer t(c, dir.path(), be, quiet);
    const StepRecord first = t.train_step();
    EXPECT_TRUE(std::isfinite(first.grad_norm));
    const std::vector<float> before = t.model().get_parameters();
    be.poison_next_dw = true;
    if (std::string(policy) == "abort") {
      try {
        t.train_step();
        ADD_FAILURE() << "no error";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::non_finite);
        EXPECT_NE(e.message().find("step 2"), std::string::npos) << e.message();
        EXPECT_NE(e.message().find("'blocks.1.mlp.proj.weight'"), std::string::npos) << e.message();
      }
      continue;
    }
    const StepRecord r = t.train_step();
    EXPECT_TRUE(r.skipped);
    EXPECT_TRUE(std::isfinite(r.loss));  // the loss was fine: only the gradient was not
    EXPECT_EQ(t.skipped_steps(), 1);
    EXPECT_EQ(before, t.model().get_parameters());
    EXPECT_FALSE(t.train_step().skipped);  // the next step trains again
    EXPECT_NE(before, t.model().get_parameters());
  }
}

}  // namespace
}  // namespace fp8lab
