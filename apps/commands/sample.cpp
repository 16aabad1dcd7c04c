// `fp8lab sample`: generate text from a checkpoint, streaming each token to stdout as it is
// picked (docs/sampling.md).
//
// stdout carries only text (the prompt, then the generated tokens, then a newline), so it can be
// piped; the backend line and the closing timing line go to stderr. Every argument, the prompt
// and the checkpoint are checked before the first byte of text is written: bad input prints one
// error and exits 2 with stdout empty.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "command_registry.hpp"
#include "commands/json_output.hpp"
#include "fp8lab/decoder.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/file_read.hpp"
#include "fp8lab/inference_checkpoint.hpp"
#include "fp8lab/tokenizer.hpp"
#include "openmp_policy.hpp"

namespace fp8lab::cli {
namespace {

struct SampleOptions {
  std::string checkpoint;
  std::string prompt, prompt_file;
  long long max_new_tokens = 0;
  double temperature = 1.0;
  long long top_k = 0;
  unsigned long long seed = 1;
  std::string backend = "auto";
  std::string tokenizer = "auto";
  std::string vocab_dir;
  JsonOutput json;
};

std::string read_prompt(const SampleOptions& o, bool have_prompt) {
  FP8LAB_CHECK(have_prompt != !o.prompt_file.empty(),
               "give the prompt as --prompt TEXT or --prompt-file FILE (exactly one of them)");
  if (have_prompt) return o.prompt;
  // Far more than any context holds (a longer prompt is refused once tokenized), and a bound:
  // /dev/zero or a FIFO is an error, not an endless read.
  constexpr std::uint64_t kMaxPromptFileBytes = std::uint64_t{16} << 20;
  return read_file_bounded(o.prompt_file, kMaxPromptFileBytes, "--prompt-file");
}

std::string hex_bytes(std::string_view bytes) {
  std::string out;
  for (unsigned char b : bytes) out += fmt::format("{}{:02x}", out.empty() ? "" : " ", b);
  return out;
}

// The prompt's ids: GPT-2 prompts start after <|endoftext|>, as every training document does
// (fp8lab data prepare); each id must be one the model has.
std::vector<std::int32_t> encode_prompt(const data::Tokenizer& tok, const std::string& prompt,
                                        std::int64_t vocab) {
  std::vector<std::int32_t> ids;
  if (tok.eot_id()) ids.push_back(*tok.eot_id());
  tok.encode_append(prompt, ids);
  std::size_t offset = 0;
  for (std::size_t i = tok.eot_id() ? 1 : 0; i < ids.size(); ++i) {
    const std::string_view bytes = tok.token_bytes(ids[i]);
    FP8LAB_CHECK(ids[i] < vocab,
                 "the prompt's byte(s) {} at offset {} are {} token {}, outside the model's "
                 "vocabulary of {} ids",
                 hex_bytes(bytes), offset, tok.name(), ids[i], vocab);
    offset += bytes.size();
  }
  return ids;
}

void run_sample(const SampleOptions& o, bool have_prompt) {
  FP8LAB_CHECK(o.max_new_tokens > 0, "--max-new-tokens {} must be at least 1", o.max_new_tokens);
  GenerateOptions gen;
  gen.max_new_tokens = o.max_new_tokens;
  gen.sampler.temperature = o.temperature;
  gen.sampler.top_k = o.top_k;
  gen.sampler.seed = o.seed;
  gen.sampler.validate();
  const std::string prompt = read_prompt(o, have_prompt);

  const InferenceCheckpoint ckpt = open_inference_checkpoint(o.checkpoint);
  o.json.check_not_input(
      {o.prompt_file, ckpt.dir / "meta.json", ckpt.dir / "model.safetensors"});
  const ModelConfig& mc = ckpt.meta.config.model;
  std::string tok_name = o.tokenizer;
  if (tok_name == "auto") {
    tok_name = run_tokenizer_name(ckpt.meta.config);
    FP8LAB_CHECK(!tok_name.empty(),
                 "cannot tell the tokenizer of '{}' (data.kind {}, vocabulary {}): give "
                 "--tokenizer byte or gpt2",
                 ckpt.dir.string(), ckpt.meta.config.data.kind, mc.vocab_size);
  }
  auto tokenizer = data::make_tokenizer(tok_name, o.vocab_dir);
  const std::vector<std::int32_t> ids = encode_prompt(*tokenizer, prompt, mc.vocab_size);
  check_generation_fits(static_cast<std::int64_t>(ids.size()), o.max_new_tokens, mc.seq_len);
  gen.sampler.allowed_ids = std::min<std::int64_t>(mc.vocab_size, tokenizer->vocab_size());
  gen.stop_token = tokenizer->eot_id();

  const BackendChoice choice = choose_backend(o.backend);
  if (choice.name == "cpu") ensure_passive_openmp();
  std::fprintf(stderr, "%s\n", choice.line("sample").c_str());
  auto backend = make_backend(choice.name);
  const auto model = load_inference_model(ckpt, *backend);
  GptDecoder decoder(*model);

  // Under --json the text is not streamed: it comes whole in the JSON object at the end.
  const bool stream = !o.json.to_stdout;
  if (stream) {
    std::fwrite(prompt.data(), 1, prompt.size(), stdout);
    std::fflush(stdout);
  }
  std::string text;
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::int32_t> out = generate(decoder, ids, gen, [&](std::int32_t id) {
    const std::string_view bytes = tokenizer->token_bytes(id);
    text += bytes;
    if (!stream) return;
    std::fwrite(bytes.data(), 1, bytes.size(), stdout);
    std::fflush(stdout);
  });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (stream) {
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }
  o.json.emit({{"checkpoint", ckpt.dir.string()},
               {"step", ckpt.meta.step},
               {"tokenizer", tokenizer->name()},
               {"prompt", prompt},
               {"prompt_tokens", ids.size()},
               {"text", text},
               {"ids", out},
               {"seconds", seconds}});
  std::fprintf(stderr,
               "fp8lab sample: %zu tokens from a %zu-token prompt in %.2f s (%.1f tokens/s), "
               "checkpoint %s (step %lld), %s tokenizer\n",
               out.size(), ids.size(), seconds, static_cast<double>(out.size()) / seconds,
               ckpt.dir.string().c_str(), static_cast<long long>(ckpt.meta.step),
               tokenizer->name().c_str());
}

void setup_sample(CLI::App& sub) {
  auto o = std::make_shared<SampleOptions>();
  sub.footer(
      "Feeds the prompt through the model once, then picks each new token from the logits of\n"
      "the last one and feeds it back (a key/value cache: one row per token). The text goes to\n"
      "stdout as it is generated: the prompt, the new tokens, a newline. stderr gets the backend\n"
      "(first line) and the speed. GPT-2 prompts start after <|endoftext|>, and generation stops\n"
      "early when the model picks it. The prompt and the generated tokens but the last must fit\n"
      "the model's context (seq_len). Sampling is deterministic: the same checkpoint, prompt,\n"
      "--temperature, --top-k and --seed give the same text (--temperature 0: greedy).\n"
      "--json prints {checkpoint, step, tokenizer, prompt, prompt_tokens, text, ids, seconds} at\n"
      "the end instead of streaming the text (text: the generated part; bytes that are not UTF-8\n"
      "read as U+FFFD there, ids has them exactly).\n"
      "Example: fp8lab sample --checkpoint runs/tiny --prompt 'And God said' --max-new-tokens 64\n"
      "         --temperature 0.8 --top-k 40 --seed 7\n");
  sub.add_option("--checkpoint", o->checkpoint,
                 "a run directory, its checkpoints/ directory, or one step_N checkpoint")
      ->required();
  CLI::Option* prompt = sub.add_option("--prompt", o->prompt, "the text to continue");
  sub.add_option("--prompt-file", o->prompt_file, "read the prompt from this file (bytes as is)")
      ->excludes(prompt);
  sub.add_option("--max-new-tokens", o->max_new_tokens, "how many tokens to generate (>= 1)")
      ->required();
  sub.add_option("--temperature", o->temperature, "softmax temperature; 0: greedy")
      ->capture_default_str();
  sub.add_option("--top-k", o->top_k, "sample among the k most likely tokens only; 0: all")
      ->capture_default_str();
  sub.add_option("--seed", o->seed, "the sampler's seed")->capture_default_str();
  sub.add_option("--backend", o->backend,
                 "auto (cuda when built with CUDA and a GPU is present, else cpu) | cpu | cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  sub.add_option("--tokenizer", o->tokenizer,
                 "auto (the run's: its data manifest, else its vocabulary) | byte | gpt2")
      ->check(CLI::IsMember({"auto", "byte", "gpt2"}))
      ->capture_default_str();
  sub.add_option("--vocab-dir", o->vocab_dir,
                 "GPT-2 encoder.json and vocab.bpe (default: $FP8LAB_GPT2_VOCAB or "
                 "data/cache/gpt2-vocab)");
  o->json.add_options(sub, "the prompt, the generated text and its ids");
  sub.callback([o, prompt] { run_sample(*o, prompt->count() > 0); });
}

const CommandRegistration kRegistration{
    {"sample", "Generate text from a checkpoint (KV cache; greedy, temperature, top-k; seeded)",
     setup_sample}};

}  // namespace
}  // namespace fp8lab::cli
