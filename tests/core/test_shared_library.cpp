// Loading libraries fp8lab does not link: a forced file alone, else the defaults in order, and
// every failed candidate named with dlerror's reason.
#include "core/shared_library.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fp8lab {
namespace {

TEST(SharedLibrary, AForcedFileIsTheOnlyCandidate) {
  EXPECT_EQ(library_candidates("/opt/x/libnccl.so.2", {"libnccl.so.2", "libnccl.so"}),
            std::vector<std::string>{"/opt/x/libnccl.so.2"});
  EXPECT_EQ(library_candidates("", {"libnccl.so.2", "libnccl.so"}),
            (std::vector<std::string>{"libnccl.so.2", "libnccl.so"}));
}

TEST(SharedLibrary, OpensTheFirstThatLoadsAndNamesThoseBefore) {
  // libm is on every glibc system; the first name exists nowhere.
  const OpenedLibrary lib =
      open_first_library({"libfp8lab-no-such-library.so.7", "libm.so.6"}, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib.handle, nullptr) << lib.tried;
  EXPECT_NE(::dlsym(lib.handle, "cos"), nullptr);
  EXPECT_NE(lib.tried.find("\n  libfp8lab-no-such-library.so.7: "), std::string::npos) << lib.tried;
  EXPECT_EQ(lib.tried.find("libm.so.6"), std::string::npos) << lib.tried;
  ::dlclose(lib.handle);
}

TEST(SharedLibrary, NoneLoadingNamesEveryCandidateWithItsReason) {
  const OpenedLibrary lib = open_first_library(
      {"libfp8lab-no-such-library.so.7", "/nonexistent/libfp8lab-x.so"}, RTLD_NOW | RTLD_LOCAL);
  EXPECT_EQ(lib.handle, nullptr);
  EXPECT_NE(lib.tried.find("\n  libfp8lab-no-such-library.so.7: "), std::string::npos) << lib.tried;
  EXPECT_NE(lib.tried.find("\n  /nonexistent/libfp8lab-x.so: "), std::string::npos) << lib.tried;
  EXPECT_NE(lib.tried.find("No such file"), std::string::npos) << lib.tried;
}

}  // namespace
}  // namespace fp8lab
