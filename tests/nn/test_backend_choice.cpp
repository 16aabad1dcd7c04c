// choose_backend (fp8lab/backend.hpp): "auto" is the CUDA backend exactly where it can start,
// explicit names are taken as given, and the line every command prints first says which and why.
#include "fp8lab/backend.hpp"
#include "fp8lab/error.hpp"

#if defined(FP8LAB_HAVE_CUDA)
#include "core/cuda_check.hpp"
#endif

#include <gtest/gtest.h>

namespace fp8lab {
namespace {

TEST(BackendChoice, AutoIsCudaExactlyWhereTheCudaBackendStarts) {
  const BackendChoice auto_choice = choose_backend("auto");
#if defined(FP8LAB_HAVE_CUDA)
  std::string why;
  const bool gpu = cuda_available(&why);
#else
  const std::string why = "this fp8lab was built without CUDA";
  const bool gpu = false;
#endif
  EXPECT_EQ(auto_choice.name, gpu ? "cuda" : "cpu");
  EXPECT_EQ(auto_choice.reason, gpu ? "auto: a usable CUDA GPU" : "auto: " + why);
  EXPECT_EQ(make_backend("auto")->name(), auto_choice.name);
  EXPECT_EQ(auto_choice.line("eval"),
            "fp8lab eval: backend " + auto_choice.name + " (" + auto_choice.reason + ")");
}

TEST(BackendChoice, ExplicitNamesAreTakenAsGivenAndOthersNamed) {
  for (const char* name : {"cpu", "cuda"}) {
    const BackendChoice c = choose_backend(name);
    EXPECT_EQ(c.name, name);
    EXPECT_EQ(c.line("train"), std::string("fp8lab train: backend ") + name + " (asked for)");
  }
  for (const char* bad : {"gpu", "", "CPU"}) {
    try {
      choose_backend(bad);
      ADD_FAILURE() << "no error for backend '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(e.message().find("unknown backend '" + std::string(bad) + "'"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace fp8lab
