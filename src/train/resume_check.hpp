// What a resumed run may change: `fp8lab train --resume` compares the whole resolved config with
// the checkpoint's and refuses any difference outside the keys that leave the weights'
// trajectory alone (docs/training.md lists them).
#pragma once

#include "fp8lab/config.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace fp8lab {

// "section.key" of every leaf in which the JSON forms of `a` and `b` differ, in key order.
std::vector<std::string> differing_config_keys(const RunConfig& a, const RunConfig& b);

// train.steps, the logging, validation and checkpoint cadence, and the checkpoints kept.
bool resume_may_change(std::string_view key);

// Throws ErrorKind::invalid_argument naming every differing key that may not change, with the
// checkpoint's and this config's values.
void check_resume_config(const RunConfig& checkpoint, const RunConfig& now,
                         std::string_view checkpoint_name);

}  // namespace fp8lab
