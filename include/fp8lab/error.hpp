// fp8lab's one exception type and the checks that throw it.
//
// Every failed check carries the failed expression, file:line and a message that names the
// offending values (shapes, dtypes, tensor names), so an error is useful without a debugger.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace fp8lab {

// What went wrong, coarsely: callers (the CLI, the trainer's non-finite policy) branch on it.
enum class ErrorKind { invalid_argument, shape, dtype, non_finite, io, format, cuda, internal };

const char* error_kind_name(ErrorKind kind);

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
