// A non-finite gradient (finite loss) is reported with the name of the tensor. The fault is
// injected by a backend that forwards every op to the CPU backend and poisons one dW: the model
// and trainer run unchanged over it, as they must over any backend.
#include "common/test_data.hpp"
#include "fp8lab/trainer.hpp"
#include "train/train_fixtures.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace fp8lab {
namespace {

class PoisoningBackend final : public Backend {
 public:
  bool poison_next_dw = false;
  Device device() const override { return inner_->device(); }
  std::string name() const override { return inner_->name(); }
  Buffer allocate(MemoryKind k, DType d, const Shape& s, std::string_view n) override {
    return inner_->allocate(k, d, s, n);
  }
  MemoryStats memory_stats() const override { return inner_->memory_stats(); }
  void upload(const TensorView& d, const void* s) override { inner_->upload(d, s); }
  void download(const TensorView& s, void* d) override { inner_->download(s, d); }
  void synchronize() override { inner_->synchronize(); }
  void fill_zero(const TensorView& t) override { inner_->fill_zero(t); }
  void convert(const TensorView& s, const TensorView& d) override { inner_->convert(s, d); }
  void add_inplace(const TensorView& d, const TensorView& s) override { inner_->add_inplace(d, s); }
  void scale_inplace(const TensorView& t, float f) override { inner_->scale_inplace(t, f); }
  void embedding_forward(const TensorView& a, const TensorView& b, const TensorView& c,
                         const TensorView& d) override {
    inner_->embedding_forward(a, b, c, d);
  }
  void embedding_backward(const TensorView& a, const TensorView& b, const TensorView& c,
                          const TensorView& d) override {
    inner_->embedding_backward(a, b, c, d);
  }
  void rmsnorm_forward(const TensorView& x, const TensorView& w, float eps, const TensorView& y,
                       const TensorView& r) override {
    inner_->rmsnorm_forward(x, w, eps, y, r);
  }
  void rmsnorm_backward(const TensorView& x, const TensorView& w, const TensorView& r,
                        const TensorView& dy, const TensorView& dx, const TensorView& dw) override {
    inner_->rmsnorm_backward(x, w, r, dy, dx, dw);
  }
  void attention_forward(const TensorView& q, int h, int t, const TensorView& o,
                         const TensorView& l) override {
    inner_->attention_forward(q, h, t, o, l);
  }
  void attention_backward(const TensorView& q, const TensorView& o, const TensorView& l,
                          const TensorView& d, int h, int t, const TensorView& dq) override {
    inner_->attention_backward(q, o, l, d, h, t, dq);
  }
  void gelu_forward(const TensorView& x, const TensorView& y) override {
    inner_->gelu_forward(x, y);
  }
  void gelu_backward(const TensorView& x, const TensorView& dy, const TensorView& dx) override {
    inner_->gelu_backward(x, dy, dx);
  }
  std::unique_ptr<LinearContext> linear_forward(LinearMode m, const TensorView& x,
                                                const TensorView& w, const TensorView& y,
                                                std::string_view n) override {
    return inner_->linear_forward(m, x, w, y, n);
  }
  void linear_backward(LinearContext& s, const TensorView& dy, const TensorView& dx,
                       const TensorView& dw) override {
    inner_->linear_backward(s, dy, dx, dw);
    if (poison_next_dw) {  // the first linear of the backward: the last block's mlp.proj
      dw.as<float>()[5] = std::numeric_limits<float>::infinity();
      poison_next_dw = false;
    }
  }
  LossSums cross_entropy(const TensorView& x, const TensorView& w, const TensorView& t, int ig,
                         int ch, float gs, const TensorView& dx, const TensorView& dw) override {
    return inner_->cross_entropy(x, w, t, ig, ch, gs, dx, dw);
  }
  double sum_of_squares(const TensorView& t) override { return inner_->sum_of_squares(t); }
  bool all_finite(const TensorView& t) override { return inner_->all_finite(t); }
  void adamw_update(const TensorView& p, const TensorView& g, const TensorView& m,
                    const TensorView& v, const AdamWStep& s) override {
    inner_->adamw_update(p, g, m, v, s);
  }

 private:
  std::unique_ptr<Backend> inner_ = make_cpu_backend();
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
