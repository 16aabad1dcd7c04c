#include "fp8lab/error.hpp"

namespace fp8lab {

namespace {
constexpr const char* kUnnamedKind = "error";  // a number that is no ErrorKind
}  // namespace

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid_argument: return "invalid argument";
    case ErrorKind::shape: return "shape error";
    case ErrorKind::dtype: return "dtype error";
    case ErrorKind::non_finite: return "non-finite value";
    case ErrorKind::io: return "I/O error";
    case ErrorKind::format: return "format error";
    case ErrorKind::cuda: return "CUDA error";
    case ErrorKind::internal: return "internal error";
    case ErrorKind::busy: return "busy";
    case ErrorKind::out_of_memory: return "out of memory";
  }
  return kUnnamedKind;
}

std::optional<ErrorKind> error_kind_from_name(std::string_view name) {
  // The kinds are numbered 0, 1, ... (no explicit values) and the switch above names every one
  // (the compiler warns of a kind left out), so the first number without a name ends the list:
  // a kind added later is found here with no list to update.
  for (int k = 0;; ++k) {
    const auto kind = static_cast<ErrorKind>(k);
    const std::string_view known = error_kind_name(kind);
    if (known == kUnnamedKind) return std::nullopt;
    if (known == name) return kind;
  }
}

int exit_code_for(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid_argument:
    case ErrorKind::shape:
    case ErrorKind::dtype:
    case ErrorKind::format: return exit_code::bad_input;
    case ErrorKind::io: return exit_code::io;
    case ErrorKind::non_finite: return exit_code::non_finite;
    case ErrorKind::busy: return exit_code::busy;
    case ErrorKind::out_of_memory: return exit_code::out_of_memory;
    case ErrorKind::cuda:
    case ErrorKind::internal: return exit_code::internal;
  }
  return exit_code::internal;
}

ErrorKind error_kind_for_exit_code(int code) {
  switch (code) {
    case exit_code::bad_input: return ErrorKind::invalid_argument;
    case exit_code::io: return ErrorKind::io;
    case exit_code::non_finite: return ErrorKind::non_finite;
    case exit_code::busy: return ErrorKind::busy;
    case exit_code::out_of_memory: return ErrorKind::out_of_memory;
    default: return ErrorKind::internal;
  }
}

static std::string compose(ErrorKind kind, const std::string& message, const std::string& expr,
                           const char* file, int line) {
  std::string text = fmt::format("{}: {}", error_kind_name(kind), message);
  if (!expr.empty()) text += fmt::format(" [check `{}` failed at {}:{}]", expr, file, line);
  else text += fmt::format(" [at {}:{}]", file, line);
  return text;
}

Error::Error(ErrorKind kind, std::string message, std::string expression, const char* file, int line)
    : std::runtime_error(compose(kind, message, expression, file, line)),
      kind_(kind),
      message_(std::move(message)),
      expression_(std::move(expression)),
      file_(file),
      line_(line) {}

void throw_error(ErrorKind kind, std::string message, const char* expression, const char* file,
                 int line) {
  throw Error(kind, std::move(message), expression ? expression : "", file, line);
}

}  // namespace fp8lab
