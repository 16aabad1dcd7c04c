// The one place fp8lab reads JSON (config files, --set values, checkpoint meta.json, safetensors
// headers, data manifests, JSONL corpora, the GPT-2 vocabulary, study records).
//
// Hostile JSON must end in an fp8lab::Error, never in a crash: nlohmann's parser is iterative, but
// dumping, comparing or diffing a value recurses once per nesting level, so a value nested 100k
// deep overflows the stack wherever it is later printed. Every reader therefore goes through
// parse_json(), which refuses nesting deeper than kMaxJsonDepth, and error messages show values
// through json_excerpt(), which formats without recursion and stops after a few hundred bytes.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace fp8lab {

// Deeper than any file fp8lab reads or writes needs (run configs nest 3 levels, meta.json 4).
inline constexpr int kMaxJsonDepth = 128;
// JSON files fp8lab reads are small; anything larger is refused before it is read.
inline constexpr std::uint64_t kMaxJsonFileBytes = std::uint64_t{64} << 20;

// Parses `text`; invalid JSON or nesting deeper than kMaxJsonDepth is an ErrorKind::format error
// naming `source` (a file name, "--set optim.lr", "foo.jsonl line 12", ...).
nlohmann::json parse_json(std::string_view text, std::string_view source);

// The same, but a malformed text gives nullopt (for logs that tolerate a torn last line).
std::optional<nlohmann::json> try_parse_json(std::string_view text);

// Reads and parses a JSON file: ErrorKind::io when it cannot be read or is not a regular file,
// ErrorKind::format when it is larger than `max_bytes`, not JSON, or nested too deep.
nlohmann::json read_json_file(const std::filesystem::path& path,
                              std::uint64_t max_bytes = kMaxJsonFileBytes);

// A one-line rendering of `value` for error messages, at most about `max_chars` characters
// (longer output ends in "..."). Iterative, so any depth is safe; invalid UTF-8 is replaced.
std::string json_excerpt(const nlohmann::json& value, std::size_t max_chars = 200);

// Whether `value` is an object whose `key` holds the string `expected`. Anything else there (a
// number, an array) is simply not it: nlohmann's value(key, "") would throw a type_error instead.
bool json_has_string(const nlohmann::json& value, std::string_view key, std::string_view expected);

namespace detail {
[[noreturn]] void fail_json_key_type(std::string_view what, std::string_view key,
                                     const nlohmann::json& value, std::string_view wanted);
}

// The optional key `key` of the object `object` as a T (bool, a number or std::string),
// `fallback` when it is absent; a value of another type is an ErrorKind::format error naming
// `what` (e.g. "study config: arm 'x'"), the key, the type wanted and the value found.
template <typename T>
T json_value_or(const nlohmann::json& object, std::string_view key, T fallback,
                std::string_view what) {
  const auto it = object.find(std::string(key));
  if (it == object.end()) return fallback;
  const bool fits = std::is_same_v<T, bool>          ? it->is_boolean()
                    : std::is_same_v<T, std::string> ? it->is_string()
                    : std::is_integral_v<T>          ? it->is_number_integer()
                                                     : it->is_number();
  if (!fits) {
    detail::fail_json_key_type(what, key, *it,
                               std::is_same_v<T, bool>          ? "a boolean"
                               : std::is_same_v<T, std::string> ? "a string"
                               : std::is_integral_v<T>          ? "an integer"
                                                                : "a number");
  }
  return it->template get<T>();
}

}  // namespace fp8lab
