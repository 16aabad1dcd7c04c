// The message of the fp8lab::Error a call throws, for tests that check what an error says.
#pragma once

#include <functional>
#include <string>

#include "fp8lab/error.hpp"

namespace fp8lab::testing {

// The message of the fp8lab::Error `fn` throws; "(no error)" when it returns.
inline std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.message();
  }
  return "(no error)";
}

}  // namespace fp8lab::testing
