// Fuzzes the study config parser (`fp8lab study CONFIG`) on arbitrary text: only fp8lab::Error may
// come out, and a plan that parses names a control among its arms and a reference for each arm.
#include <string_view>

#include "fp8lab/error.hpp"
#include "fp8lab/json_read.hpp"
#include "fp8lab/study.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fp8lab;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const StudyPlan plan = parse_study_plan(parse_json(text, "fuzz/study.json"));
    bool control = false;
    for (const StudyArm& arm : plan.arms) {
      control = control || arm.name == plan.control;
      if (study_reference(plan, arm).policy != "bf16") __builtin_trap();
    }
    if (!control) __builtin_trap();
  } catch (const Error&) {
  }
  return 0;
}
