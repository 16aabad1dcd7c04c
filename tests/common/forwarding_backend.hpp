// A Backend that hands every op to another one (the CPU backend by default). Tests derive from it
// and override the few ops they want to watch or break; the model and trainer run unchanged over
// it, as they must over any backend.
#pragma once

#include "fp8lab/backend.hpp"

#include <memory>
#include <string>
#include <utility>

namespace fp8lab::testing {

class ForwardingBackend : public Backend {
 public:
  explicit ForwardingBackend(std::unique_ptr<Backend> inner = make_cpu_backend())
      : inner_(std::move(inner)) {}
  Device device() const override { return inner_->device(); }
  std::string name() const override { return inner_->name(); }
  std::string device_name() const override { return inner_->device_name(); }
  Buffer allocate(MemoryKind k, DType d, const Shape& s, std::string_view n) override {
    return inner_->allocate(k, d, s, n);
  }
  MemoryStats memory_stats() const override { return inner_->memory_stats(); }
  void upload(const TensorView& d, const void* s) override { inner_->upload(d, s); }
  void download(const TensorView& s, void* d) override { inner_->download(s, d); }
  void synchronize() override { inner_->synchronize(); }
  void fill_zero(const TensorView& t) override { inner_->fill_zero(t); }
  void convert(const TensorView& s, const TensorView& d, AmaxSlot a = {}) override {
    inner_->convert(s, d, a);
  }
  void add_inplace(const TensorView& d, const TensorView& s) override { inner_->add_inplace(d, s); }
  void add(const TensorView& a, const TensorView& b, const TensorView& out) override {
    inner_->add(a, b, out);
  }
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
                       const TensorView& r, AmaxSlot a = {}) override {
    inner_->rmsnorm_forward(x, w, eps, y, r, a);
  }
  void rmsnorm_backward(const TensorView& x, const TensorView& w, const TensorView& r,
                        const TensorView& dy, const TensorView& dx, const TensorView& dw,
                        GradWrite write = GradWrite::accumulate) override {
    inner_->rmsnorm_backward(x, w, r, dy, dx, dw, write);
  }
  void add_rmsnorm_forward(const TensorView& x, const TensorView& b, const TensorView& sum,
                           const TensorView& w, float eps, const TensorView& y, const TensorView& r,
                           AmaxSlot a = {}) override {
    inner_->add_rmsnorm_forward(x, b, sum, w, eps, y, r, a);
  }
  void rmsnorm_backward_and_convert(const TensorView& x, const TensorView& w, const TensorView& r,
                                    const TensorView& dy, const TensorView& dx,
                                    const TensorView& dw, const TensorView& copy,
                                    AmaxSlot a = {},
                                    GradWrite write = GradWrite::accumulate) override {
    inner_->rmsnorm_backward_and_convert(x, w, r, dy, dx, dw, copy, a, write);
  }
  void attention_forward(const TensorView& q, int h, int t, const TensorView& o,
                         const TensorView& l, AmaxSlot a = {}) override {
    inner_->attention_forward(q, h, t, o, l, a);
  }
  void attention_backward(const TensorView& q, const TensorView& o, const TensorView& l,
                          const TensorView& d, int h, int t, const TensorView& dq,
                          AmaxSlot a = {}) override {
    inner_->attention_backward(q, o, l, d, h, t, dq, a);
  }
  void gelu_forward(const TensorView& x, const TensorView& y, AmaxSlot a = {}) override {
    inner_->gelu_forward(x, y, a);
  }
  void gelu_backward(const TensorView& x, const TensorView& dy, const TensorView& dx,
                     AmaxSlot a = {}) override {
    inner_->gelu_backward(x, dy, dx, a);
  }
  std::unique_ptr<LinearContext> linear_forward(LinearMode m, const TensorView& x,
                                                const TensorView& w, const TensorView& y,
                                                std::string_view n, AmaxSlot a = {},
                                                AmaxSlot wa = {}) override {
    return inner_->linear_forward(m, x, w, y, n, a, wa);
  }
  void linear_backward(LinearContext& s, const TensorView& dy, const TensorView& dx,
                       const TensorView& dw, AmaxSlot a = {},
                       GradWrite write = GradWrite::accumulate) override {
    inner_->linear_backward(s, dy, dx, dw, a, write);
  }
  LossSums cross_entropy(const TensorView& x, const TensorView& w, const TensorView& t, int ig,
                         int ch, float gs, const TensorView& dx, const TensorView& dw,
                         GradWrite write = GradWrite::accumulate) override {
    return inner_->cross_entropy(x, w, t, ig, ch, gs, dx, dw, write);
  }
  double sum_of_squares(const TensorView& t) override { return inner_->sum_of_squares(t); }
  bool all_finite(const TensorView& t) override { return inner_->all_finite(t); }
  void adamw_update(const TensorView& p, const TensorView& g, const TensorView& m,
                    const TensorView& v, const AdamWStep& s, const TensorView& w,
                    AmaxSlot wa) override {
    inner_->adamw_update(p, g, m, v, s, w, wa);
  }
  void attention_cached_forward(const TensorView& qkv, int h, std::int64_t pos,
                                const TensorView& k, const TensorView& v,
                                const TensorView& out) override {
    inner_->attention_cached_forward(qkv, h, pos, k, v, out);
  }
  void lm_head_logits(const TensorView& x, const TensorView& w, const TensorView& l) override {
    inner_->lm_head_logits(x, w, l);
  }

 protected:
  Backend& inner() { return *inner_; }

 private:
  std::unique_ptr<Backend> inner_;
};

}  // namespace fp8lab::testing
