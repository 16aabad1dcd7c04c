# Installs the fp8lab build FP8LAB_BUILD_DIR into WORK_DIR/prefix, then configures, builds and runs
# the consumer project CONSUMER_SOURCE_DIR against it. Fails on the first step that fails.
# Run by the package_consumer test (tests/package/CMakeLists.txt).
foreach(var FP8LAB_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR EXPECTED_VERSION CMAKE_GENERATOR
            CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_package.cmake: -D${var}=... is required")
  endif()
endforeach()

function(run_step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name} failed (${rc}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run_step("cmake --install" ${CMAKE_COMMAND} --install ${FP8LAB_BUILD_DIR} --prefix ${prefix})
run_step("configuring the consumer" ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR}
         -B ${WORK_DIR}/build -G ${CMAKE_GENERATOR} -DCMAKE_BUILD_TYPE=Release
         -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_PREFIX_PATH=${prefix}
         -DFP8LAB_EXPECTED_VERSION=${EXPECTED_VERSION})
run_step("building the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run_step("running the consumer" ${WORK_DIR}/build/fp8lab_consumer)
message(STATUS "${step_output}")
