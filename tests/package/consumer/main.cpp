// Uses the installed fp8lab package on the CPU: the version header against the package's version,
// a preset resolved and overridden through the public config API, and fp8lab's typed error for an
// unknown preset; and the C ABI's shared library (fp8lab::linear) at the header's ABI version.
// Exits non-zero, saying what differed, on any mismatch.
#include <cstdio>
#include <fp8lab/config.hpp>
#include <fp8lab/error.hpp>
#include <fp8lab/linear_c.h>
#include <fp8lab/version.hpp>
#include <string>
#include <string_view>

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "fp8lab_consumer: %s\n", what.c_str());
    ++failures;
  }
}

}  // namespace

int main() {
  expect(std::string_view(fp8lab::kVersion) == FP8LAB_PACKAGE_VERSION,
         std::string("fp8lab/version.hpp says ") + fp8lab::kVersion + ", the package " +
             FP8LAB_PACKAGE_VERSION);

  fp8lab::RunConfig config = fp8lab::run_preset("gpt50m");
  expect(config.model.d_model == 512 && config.model.n_layers == 8,
         "gpt50m is not d_model 512 with 8 layers");
  fp8lab::apply_override(config, "model.n_layers=4");
  config.validate();
  expect(config.model.n_layers == 4, "model.n_layers=4 did not apply");
  const fp8lab::RunConfig round_trip = fp8lab::run_config_from_json(fp8lab::to_json(config));
  expect(round_trip == config, "the config does not survive to_json / run_config_from_json");

  bool threw = false;
  try {
    (void)fp8lab::run_preset("no-such-preset");
  } catch (const fp8lab::Error& e) {
    threw = std::string(e.what()).find("no-such-preset") != std::string::npos;
  }
  expect(threw, "an unknown preset did not throw an fp8lab::Error naming it");

  expect(fp8lab_linear_abi_version() == FP8LAB_LINEAR_ABI_VERSION,
         "libfp8lab_linear.so's ABI version is not its header's");

  if (failures == 0)
    std::printf("fp8lab_consumer: fp8lab %s works from its package\n", fp8lab::kVersion);
  return failures == 0 ? 0 : 1;
}
