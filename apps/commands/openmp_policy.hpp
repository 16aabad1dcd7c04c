// The CPU commands' OpenMP wait policy (train, sample): see ensure_passive_openmp.
#pragma once

namespace fp8lab::cli {

// libgomp reads OMP_WAIT_POLICY once, when it loads: its default (spin) wastes the cores that
// OpenBLAS and other processes need. So a command about to run the CPU backend re-executes itself
// once with the passive policy unless the user chose a policy (then, or if exec fails, it simply
// carries on). Call it before any output.
void ensure_passive_openmp();

}  // namespace fp8lab::cli
