// The sampler and the generation loop (fp8lab/decoder.hpp): greedy is the argmax, draws follow
// softmax(logits / temperature) over the top k, the same seed and step give the same token, and
// generate() feeds back what it picks, stops where told and refuses what does not fit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/test_data.hpp"
#include "fp8lab/decoder.hpp"
#include "fp8lab/model.hpp"
#include "model/model_fixtures.hpp"

namespace fp8lab {
namespace {

std::vector<float> fresh_logits(std::int64_t n, std::uint64_t seed, float spread) {
  std::vector<float> l(static_cast<std::size_t>(n));
  fill_normal(l.data(), n, seed, 77, 0.f, spread);
  return l;
}

template <typename Call>
void expect_error(Call&& call, const std::string& fragment) {
  try {
    call();
    ADD_FAILURE() << "no error; expected one mentioning '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Sampler, GreedyIsTheArgmaxLowestIdFirstAndSkipsPaddedIds) {
  const std::uint64_t seed = testing::fresh_seed();
  std::vector<float> l = fresh_logits(50, seed, 2.f);
  const auto argmax = static_cast<std::int32_t>(std::max_element(l.begin(), l.end()) - l.begin());
  SamplerConfig greedy;
  greedy.temperature = 0;
  EXPECT_EQ(sample_token(l, greedy, 0), argmax);
  l[7] = l[31] = l[static_cast<std::size_t>(argmax)] + 1.f;  // a tie above the rest
  EXPECT_EQ(sample_token(l, greedy, 5), 7);
  greedy.allowed_ids = 7;  // ids 7.. are padding: the best of 0..6
  const auto best_allowed =
      static_cast<std::int32_t>(std::max_element(l.begin(), l.begin() + 7) - l.begin());
  EXPECT_EQ(sample_token(l, greedy, 5), best_allowed);
  // top_k 1 is greedy at any temperature and seed.
  SamplerConfig k1;
  k1.top_k = 1, k1.temperature = 5.0, k1.seed = seed;
  for (std::uint64_t step = 0; step < 20; ++step) EXPECT_EQ(sample_token(l, k1, step), 7);
}

// Draw frequencies against the softmax over the k kept logits: 40000 draws, each frequency
// within 5 binomial standard deviations (a fault in the walk or the weights moves them by far
// more); ids outside the top k never drawn.
void check_distribution(const std::vector<float>& l, double temperature, std::int64_t k,
                        std::uint64_t seed) {
  const int n = static_cast<int>(l.size());
  std::vector<int> order(l.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return l[a] > l[b]; });
  std::vector<double> p(l.size(), 0.0);
  double total = 0;
  for (int i = 0; i < (k > 0 ? k : n); ++i) {
    p[order[i]] = std::exp((l[order[i]] - l[order[0]]) / temperature);
    total += p[order[i]];
  }
  for (double& v : p) v /= total;
  SamplerConfig cfg;
  cfg.temperature = temperature, cfg.top_k = k, cfg.seed = seed;
  constexpr int kDraws = 40000;
  std::vector<int> count(l.size(), 0);
  for (int s = 0; s < kDraws; ++s) ++count[sample_token(l, cfg, static_cast<std::uint64_t>(s))];
  for (int i = 0; i < n; ++i) {
    const double sigma = std::sqrt(kDraws * p[i] * (1 - p[i]));
    EXPECT_LE(std::abs(count[i] - kDraws * p[i]), 5 * sigma + 1)
        << "id " << i << " p " << p[i] << " T " << temperature << " k " << k;
    if (p[i] == 0) {
      EXPECT_EQ(count[i], 0) << "id " << i << " is outside the top " << k;
    }
  }
}

TEST(Sampler, DrawsFollowTheTemperedSoftmaxOverTheTopK) {
  const std::uint64_t seed = testing::fresh_seed();
  const std::vector<float> l = fresh_logits(12, seed, 1.5f);
  check_distribution(l, 1.0, 0, seed);
  check_distribution(l, 0.5, 0, seed + 1);
  check_distribution(l, 2.0, 4, seed + 2);
}

TEST(Sampler, TheSameSeedAndStepGiveTheSameToken) {
  const std::uint64_t seed = testing::fresh_seed();
  const std::vector<float> l = fresh_logits(300, seed, 1.f);
  SamplerConfig a;
  a.seed = seed;
  SamplerConfig b = a;
  b.seed = seed + 1;
  int differ = 0;
  for (std::uint64_t step = 0; step < 64; ++step) {
    EXPECT_EQ(sample_token(l, a, step), sample_token(l, a, step));
    differ += sample_token(l, a, step) != sample_token(l, b, step);
  }
  EXPECT_GT(differ, 32);  // another seed is another sequence (equal by chance ~1/100 per step)
}

TEST(Sampler, BadSettingsAndLogitsAreNamed) {
  const std::vector<float> l{0.f, 1.f, 2.f};
  SamplerConfig c;
  c.temperature = -0.5;
  expect_error([&] { sample_token(l, c, 0); }, "--temperature -0.5");
  c.temperature = std::nan("");
  expect_error([&] { sample_token(l, c, 0); }, "--temperature nan");
  c.temperature = 1, c.top_k = -3;
  expect_error([&] { sample_token(l, c, 0); }, "--top-k -3");
  c.top_k = 0;
  const std::vector<float> bad{0.f, std::numeric_limits<float>::infinity(), 2.f};
  expect_error([&] { sample_token(bad, c, 4); }, "the logit of token 1 at generation step 4");
}

TEST(Generate, FeedsBackWhatItPicksAndStopsWhereTold) {
  const std::uint64_t seed = testing::fresh_seed();
  ModelConfig c;
  c.vocab_size = 40, c.d_model = 32, c.n_layers = 2, c.n_heads = 2, c.seq_len = 16;
  c.init_std = 0.3f;
  PrecisionConfig fp32;  // fp32: feeding all at once and one by one agree to ~1e-7
  fp32.compute = ComputeMode::fp32;
  auto be = make_cpu_backend();
  GptModel model(c, fp32, 1, *be);
  model.init_parameters(seed);
  GptDecoder decoder(model);
  const std::vector<std::int32_t> prompt = testing::random_tokens(5, c.vocab_size, seed, 9);
  GenerateOptions o;
  o.max_new_tokens = 12;  // 5 + 12 - 1 = 16: exactly the context
  o.sampler.temperature = 0.7, o.sampler.seed = seed;
  std::vector<std::int32_t> streamed;
  const std::vector<std::int32_t> out =
      generate(decoder, prompt, o, [&](std::int32_t id) { streamed.push_back(id); });
  ASSERT_EQ(out.size(), 12u);
  EXPECT_EQ(streamed, out);
  // The same picks by hand: the whole sequence fed at once, each step sampled from its row.
  GptDecoder check(model);
  std::vector<std::int32_t> seq = prompt;
  seq.insert(seq.end(), out.begin(), out.end() - 1);
  const std::vector<float> rows = check.feed(seq, /*all_rows=*/true);
  for (std::size_t s = 0; s < out.size(); ++s) {
    const std::size_t row = prompt.size() - 1 + s;
    const std::span<const float> logits(rows.data() + row * c.vocab_size,
                                        static_cast<std::size_t>(c.vocab_size));
    EXPECT_EQ(sample_token(logits, o.sampler, s), out[s]) << "step " << s;
  }
  // A stop token ends generation before it is emitted; generate() starts from an empty cache.
  o.stop_token = out[3];
  const auto first_stop = std::find(out.begin(), out.end(), out[3]) - out.begin();
  streamed.clear();
  EXPECT_EQ(generate(decoder, prompt, o, [&](std::int32_t id) { streamed.push_back(id); }),
            std::vector<std::int32_t>(out.begin(), out.begin() + first_stop));
  EXPECT_EQ(streamed.size(), static_cast<std::size_t>(first_stop));
}

TEST(Generate, RefusesWhatDoesNotFitTheContext) {
  expect_error([] { check_generation_fits(5, 0, 16); }, "--max-new-tokens 0 must be at least 1");
  expect_error([] { check_generation_fits(5, -2, 16); }, "--max-new-tokens -2");
  expect_error([] { check_generation_fits(0, 4, 16); }, "the prompt is empty");
  expect_error([] { check_generation_fits(17, 1, 16); },
               "the prompt is 17 tokens long, longer than the model's context of 16");
  expect_error([] { check_generation_fits(5, 13, 16); }, "at most 12 new tokens fit");
  check_generation_fits(5, 12, 16);
  check_generation_fits(16, 1, 16);
}

}  // namespace
}  // namespace fp8lab
