// Element types that fp8lab stores. Dispatch on DType happens in one place per op (a switch
// over this enum), never through templates spread across the code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace fp8lab {

enum class DType : std::uint8_t { f32, bf16, e4m3, e5m2, i32, u16, u8, f64 };

constexpr std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::bf16: return 2;
    case DType::e4m3: return 1;
    case DType::e5m2: return 1;
    case DType::i32: return 4;
    case DType::u16: return 2;
    case DType::u8: return 1;
    case DType::f64: return 8;
  }
  return 0;
}

constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::bf16: return "bf16";
    case DType::e4m3: return "e4m3";
    case DType::e5m2: return "e5m2";
    case DType::i32: return "i32";
    case DType::u16: return "u16";
    case DType::u8: return "u8";
    case DType::f64: return "f64";
  }
  return "?";
}

constexpr bool is_fp8(DType t) { return t == DType::e4m3 || t == DType::e5m2; }

// Parses "f32", "bf16", "e4m3", ...; throws fp8lab::Error naming the bad string.
DType parse_dtype(std::string_view name);

}  // namespace fp8lab
