// fp8lab's one exception type and the checks that throw it.
//
// Every failed check carries the failed expression, file:line and a message that names the
// offending values (shapes, dtypes, tensor names), so an error is useful without a debugger.
#pragma once

#include <fmt/format.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace fp8lab {

// What went wrong, coarsely: callers (the CLI, the trainer's non-finite policy) branch on it.
// busy: a resource another process holds (a locked run directory); out_of_memory: an allocation
// failed.
enum class ErrorKind {
  invalid_argument,
  shape,
  dtype,
  non_finite,
  io,
  format,
  cuda,
  internal,
  busy,
  out_of_memory
};

const char* error_kind_name(ErrorKind kind);
// The inverse: the kind whose name is `name` ("CUDA error"), for a parent process that reads a
// child's "fp8lab: <kind>: <message>" line; nothing for a name no kind has.
std::optional<ErrorKind> error_kind_from_name(std::string_view name);

// The CLI's exit status for each kind (the table is docs/cli.md): 1 internal error, 2 bad input
// or usage, 3 I/O failure, 4 non-finite values, 5 busy, 6 out of memory.
namespace exit_code {
inline constexpr int ok = 0, internal = 1, bad_input = 2, io = 3, non_finite = 4, busy = 5,
                     out_of_memory = 6;
}  // namespace exit_code
int exit_code_for(ErrorKind kind);
// The inverse, for a parent process that reports a child's failure (`fp8lab study`).
ErrorKind error_kind_for_exit_code(int code);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message, std::string expression, const char* file, int line);

  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }      // the human part alone
  const std::string& expression() const { return expression_; }  // the failed check, if any
  const char* file() const { return file_; }
  int line() const { return line_; }

 private:
  ErrorKind kind_;
  std::string message_;
  std::string expression_;
  const char* file_;
  int line_;
};

[[noreturn]] void throw_error(ErrorKind kind, std::string message, const char* expression,
                              const char* file, int line);

}  // namespace fp8lab

// FP8LAB_CHECK(cond, fmt, args...): throw ErrorKind::invalid_argument when cond is false.
#define FP8LAB_CHECK(cond, ...) FP8LAB_CHECK_KIND(::fp8lab::ErrorKind::invalid_argument, cond, __VA_ARGS__)

#define FP8LAB_CHECK_KIND(kind, cond, ...)                                                 \
  do {                                                                                     \
    if (!(cond)) [[unlikely]] {                                                            \
      ::fp8lab::throw_error((kind), ::fmt::format(__VA_ARGS__), #cond, __FILE__, __LINE__); \
    }                                                                                      \
  } while (0)

// FP8LAB_FAIL(kind, fmt, args...): throw unconditionally (no expression to report).
#define FP8LAB_FAIL(kind, ...) \
  ::fp8lab::throw_error((kind), ::fmt::format(__VA_ARGS__), "", __FILE__, __LINE__)
