// JSON reading with a depth limit, and non-recursive excerpts for error messages.
#include "fp8lab/json_read.hpp"

#include "fp8lab/error.hpp"
#include "fp8lab/file_read.hpp"

#include <vector>

namespace fp8lab {
namespace {

using nlohmann::json;

// nlohmann's messages quote the token being read, which may be megabytes long.
std::string short_message(const char* what) {
  std::string text(what);
  if (text.size() > 300) text = text.substr(0, 300) + "...";
  return text;
}

// Throws (through the parser) as soon as a container opens deeper than the limit, before any
// of its contents is read.
struct DepthGuard {
  std::string_view source;
  bool operator()(int depth, json::parse_event_t event, json&) const {
    const bool opens =
        event == json::parse_event_t::object_start || event == json::parse_event_t::array_start;
    FP8LAB_CHECK_KIND(ErrorKind::format, !opens || depth < kMaxJsonDepth,
                      "{}: JSON nested deeper than {} levels", source, kMaxJsonDepth);
    return true;
  }
};

std::string scalar_text(const json& v, std::size_t max_chars) {
  if (v.is_string() && v.get_ref<const std::string&>().size() > max_chars) {
    return json(v.get_ref<const std::string&>().substr(0, max_chars))
               .dump(-1, ' ', false, json::error_handler_t::replace) +
           "...";
  }
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

json parse_json(std::string_view text, std::string_view source) {
  try {
    return json::parse(text.begin(), text.end(), DepthGuard{source});
  } catch (const json::exception& e) {
    FP8LAB_FAIL(ErrorKind::format, "{}: not valid JSON: {}", source, short_message(e.what()));
  }
}

std::optional<json> try_parse_json(std::string_view text) {
  try {
    return parse_json(text, "<line>");
  } catch (const Error&) {
    return std::nullopt;
  }
}

json read_json_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  return parse_json(read_file_bounded(path, max_bytes, "JSON file"), path.string());
}

std::string json_excerpt(const json& value, std::size_t max_chars) {
  struct Frame {
    const json* node;
    json::const_iterator next;
    bool first;
  };
  std::string out;
  std::vector<Frame> stack;
  const auto open = [&](const json& v) {
    if (v.is_object() || v.is_array()) {
      out += v.is_object() ? '{' : '[';
      stack.push_back({&v, v.cbegin(), true});
    } else {
      out += scalar_text(v, max_chars);
    }
  };
  open(value);
  while (!stack.empty() && out.size() <= max_chars) {
    Frame& f = stack.back();
    if (f.next == f.node->cend()) {
      out += f.node->is_object() ? '}' : ']';
      stack.pop_back();
      continue;
    }
    if (!f.first) out += ',';
    f.first = false;
    if (f.node->is_object()) out += scalar_text(json(f.next.key()), max_chars) + ":";
    const json& child = *f.next;
    ++f.next;
    open(child);  // may grow the stack: `f` is not used after this
  }
  if (out.size() > max_chars) {
    out.resize(max_chars);
    out += "...";
  }
  return out;
}

bool json_has_string(const json& value, std::string_view key, std::string_view expected) {
  if (!value.is_object()) return false;
  const auto it = value.find(std::string(key));
  return it != value.end() && it->is_string() && it->get_ref<const std::string&>() == expected;
}

namespace detail {
void fail_json_key_type(std::string_view what, std::string_view key, const json& value,
                        std::string_view wanted) {
  FP8LAB_FAIL(ErrorKind::format, "{}: \"{}\" must be {}, got {}", what, key, wanted,
              json_excerpt(value));
}
}  // namespace detail

}  // namespace fp8lab
