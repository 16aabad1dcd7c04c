// The CLI's exit codes (docs/cli.md) come from one mapping of error kinds, and a parent process
// (fp8lab study) maps a child's code back to the same kind.
#include "fp8lab/error.hpp"

#include <gtest/gtest.h>

namespace fp8lab {
namespace {

TEST(ExitCodes, EachKindMapsToItsDocumentedCode) {
  EXPECT_EQ(exit_code_for(ErrorKind::invalid_argument), 2);
  EXPECT_EQ(exit_code_for(ErrorKind::format), 2);
  EXPECT_EQ(exit_code_for(ErrorKind::shape), 2);
  EXPECT_EQ(exit_code_for(ErrorKind::dtype), 2);
  EXPECT_EQ(exit_code_for(ErrorKind::io), 3);
  EXPECT_EQ(exit_code_for(ErrorKind::non_finite), 4);
  EXPECT_EQ(exit_code_for(ErrorKind::busy), 5);
  EXPECT_EQ(exit_code_for(ErrorKind::out_of_memory), 6);
  EXPECT_EQ(exit_code_for(ErrorKind::internal), 1);
  EXPECT_EQ(exit_code_for(ErrorKind::cuda), 1);
  for (int code = 1; code <= 6; ++code) {
    EXPECT_EQ(exit_code_for(error_kind_for_exit_code(code)), code);
  }
}

TEST(ExitCodes, EveryKindIsFoundByItsName) {
  const ErrorKind kinds[] = {ErrorKind::invalid_argument,
                             ErrorKind::shape,
                             ErrorKind::dtype,
                             ErrorKind::non_finite,
                             ErrorKind::io,
                             ErrorKind::format,
                             ErrorKind::cuda,
                             ErrorKind::internal,
                             ErrorKind::busy,
                             ErrorKind::out_of_memory};
  for (const ErrorKind kind : kinds) {
    const auto found = error_kind_from_name(error_kind_name(kind));
    ASSERT_TRUE(found.has_value()) << error_kind_name(kind);
    EXPECT_EQ(*found, kind) << error_kind_name(kind);
  }
  EXPECT_FALSE(error_kind_from_name("CUDA").has_value());
  EXPECT_FALSE(error_kind_from_name("").has_value());
  EXPECT_FALSE(error_kind_from_name("error").has_value());
}

}  // namespace
}  // namespace fp8lab
