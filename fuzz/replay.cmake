# Every fuzz target's seeds (fuzz/corpus/<target>) and crash regressions (fuzz/regressions/
# <target>: inputs that once crashed or leaked) replayed through one plain executable, so that
# CTest checks them on every build (GCC included, no sanitizers). Each target's entry point is
# renamed to fuzz_<target> so that all of them link into fuzz_replay.
set(fp8lab_fuzz_targets vocab shard jsonl pack gpt2_encode safetensors checkpoint study_plan config_override)
set(fuzz_replay_sources ${CMAKE_CURRENT_LIST_DIR}/replay_main.cpp)
foreach(name IN LISTS fp8lab_fuzz_targets)
  set(source ${CMAKE_CURRENT_LIST_DIR}/fuzz_${name}.cpp)
  list(APPEND fuzz_replay_sources ${source})
  set_source_files_properties(${source} TARGET_DIRECTORY fp8lab_lib PROPERTIES
                              COMPILE_DEFINITIONS LLVMFuzzerTestOneInput=fuzz_${name})
endforeach()
add_executable(fuzz_replay ${fuzz_replay_sources})
target_link_libraries(fuzz_replay PRIVATE fp8lab_lib)
fp8lab_warnings(fuzz_replay)
foreach(name IN LISTS fp8lab_fuzz_targets)
  set(skip)
  if(name STREQUAL "gpt2_encode")  # needs the GPT-2 vocabulary (scripts/fetch-gpt2-vocab)
    set(skip --skip-unless-exists ${PROJECT_SOURCE_DIR}/data/cache/gpt2-vocab/encoder.json)
  endif()
  add_test(NAME fuzz_replay_${name}
           COMMAND fuzz_replay ${name} ${skip} ${CMAKE_CURRENT_LIST_DIR}/corpus/${name}
                   ${CMAKE_CURRENT_LIST_DIR}/regressions/${name})
  set_tests_properties(fuzz_replay_${name} PROPERTIES LABELS fuzz TIMEOUT 120
                       SKIP_RETURN_CODE 77)
endforeach()
