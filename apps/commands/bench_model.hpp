// `fp8lab bench model` is a subcommand of `bench` (registered in bench_linear.cpp).
#pragma once

#include <CLI/CLI.hpp>

namespace fp8lab::cli {

void add_bench_model(CLI::App& bench);

}  // namespace fp8lab::cli
