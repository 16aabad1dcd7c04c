// `fp8lab bench linear`: the isolated linear layer on the GPU (see fp8lab/bench_linear.hpp).
#include "command_registry.hpp"
#include "commands/bench_model.hpp"
#include "commands/json_output.hpp"
#include "fp8lab/error.hpp"

#if defined(FP8LAB_HAVE_CUDA)
#include <cstdio>
#include <random>

#include "fp8lab/bench_linear.hpp"
#include "fp8lab/json_read.hpp"
#endif

namespace fp8lab::cli {
namespace {

#if defined(FP8LAB_HAVE_CUDA)
struct BenchLinearArgs {
  LinearBenchConfig config;
  std::vector<std::string> shapes{"512x512", "512x2048", "2048x512", "512x8192"};
  std::vector<std::string> modes{"bf16", "fp8-plain", "fp8-fused"};
  std::vector<std::string> recipes{"rowwise", "blockwise"};
  JsonOutput json;
};

std::vector<LinearBenchShape> parse_shapes(const std::vector<std::string>& specs) {
  std::vector<LinearBenchShape> out;
  for (const std::string& s : specs) {
    long long in = 0, o = 0;
    char sep = 0;
    const int got = std::sscanf(s.c_str(), "%lld%c%lld", &in, &sep, &o);
    FP8LAB_CHECK(got == 3 && sep == 'x' && in > 0 && o > 0,
                 "--shapes: '{}' is not IxO (e.g. 512x2048)", s);
    out.push_back({in, o});
  }
  return out;
}

void run(const BenchLinearArgs& args) {
  LinearBenchConfig config = args.config;
  args.json.check_not_input({config.peer_json});
  config.shapes = parse_shapes(args.shapes);
  config.modes.clear();
  for (const std::string& m : args.modes) config.modes.push_back(parse_linear_cuda_mode(m));
  config.recipes.clear();
  for (const std::string& r : args.recipes)
    if (r != "none") config.recipes.push_back(parse_fp8_recipe(r));
  if (config.seed == 0) config.seed = std::random_device{}();
  // The peer's file is read first: a bad one fails before minutes of timing, not after.
  const nlohmann::json peer =
      config.peer_json.empty() ? nlohmann::json() : read_json_file(config.peer_json);
  LinearBenchResult result = run_linear_bench(config);
  if (!config.peer_json.empty()) attach_linear_peer(result, peer, config.peer_json);
  // Under --json the report goes to stderr; stdout gets only the JSON.
  std::fputs(linear_bench_report(result).c_str(), args.json.text());
  args.json.emit(linear_bench_json(result));
}
#endif

void setup(CLI::App& bench) {
  bench.require_subcommand(1);
  bench.footer("Example: fp8lab bench model --backend cpu --preset tiny --repeats 3\n"
               "Each subcommand has --help.\n");
  CLI::App* linear = bench.add_subcommand(
      "linear",
      "Isolated linear layer fwd+bwd on the GPU: bf16, fp8-plain, fp8-fused and the grouped "
      "recipes, each vs its limit, and the PyTorch peer");
  linear->footer(
      "Example, on the GPU machine (the peer first, in the same call):\n"
      "  python3 bench/peers/linear_peer.py --json peer_linear.json\n"
      "  fp8lab bench linear --shapes 512x2048 2048x512 --peer peer_linear.json --json-file "
      "linear.json\n");
#if defined(FP8LAB_HAVE_CUDA)
  auto args = std::make_shared<BenchLinearArgs>();
  linear->add_option("--tokens", args->config.tokens, "rows of x (M)")->capture_default_str();
  linear->add_option("--shapes", args->shapes, "layer shapes IxO")->capture_default_str();
  linear->add_option("--modes", args->modes, "bf16, fp8-plain, fp8-fused")->capture_default_str();
  linear->add_option("--recipes", args->recipes,
                     "grouped recipes timed besides tensorwise (rowwise, blockwise; none)")
      ->capture_default_str();
  linear->add_option("--repeats", args->config.repeats, "timed repeats (>= 20)")
      ->capture_default_str();
  linear->add_option("--warmup", args->config.warmup, "untimed repeats")->capture_default_str();
  linear->add_option("--rotations", args->config.rotations, "rotating input buffers")
      ->capture_default_str();
  linear->add_option("--seed", args->config.seed, "input seed (0: fresh)");
  linear->add_flag("!--no-w-overlap", args->config.w_overlap,
                   "cast W on the main stream (A/B of the side-stream overlap)");
  linear->add_option("--peer", args->config.peer_json, "JSON from bench/peers/linear_peer.py");
  linear->add_option("--commit", args->config.commit, "source commit recorded in the JSON");
  args->json.add_options(*linear, "the results");
  linear->callback([args] { run(*args); });
#else
  linear->callback([] {
    FP8LAB_FAIL(ErrorKind::cuda,
                "fp8lab was built without the CUDA backend: bench linear needs it");
  });
#endif
  add_bench_model(bench);
}

const CommandRegistration registration{
    {"bench", "Benchmarks: bench linear (the FP8 linear layer), bench model (the whole GPT)",
     setup}};

}  // namespace
}  // namespace fp8lab::cli
