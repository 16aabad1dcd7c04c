// Names of the FP8 scaling recipes (fp8lab/fp8_recipe.hpp).
#include "fp8lab/fp8_recipe.hpp"

#include "fp8lab/error.hpp"

namespace fp8lab {

const char* fp8_recipe_name(Fp8Recipe r) {
  switch (r) {
    case Fp8Recipe::tensorwise:
      return "tensorwise";
    case Fp8Recipe::rowwise:
      return "rowwise";
    case Fp8Recipe::blockwise:
      return "blockwise";
  }
  return "?";
}

Fp8Recipe parse_fp8_recipe(std::string_view name) {
  for (Fp8Recipe r : {Fp8Recipe::tensorwise, Fp8Recipe::rowwise, Fp8Recipe::blockwise})
    if (name == fp8_recipe_name(r)) return r;
  FP8LAB_FAIL(ErrorKind::invalid_argument,
              "unknown FP8 recipe '{}' (expected tensorwise, rowwise or blockwise)", name);
}

}  // namespace fp8lab
