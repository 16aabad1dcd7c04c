# Every dependency is a Debian package installed by scripts/setup.
find_package(OpenMP REQUIRED COMPONENTS CXX)
set(BLA_VENDOR OpenBLAS)
find_package(BLAS REQUIRED)           # OpenBLAS: the CPU reference GEMMs
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 QUIET CONFIG)       # header-only; Debian ships it without a config on some releases
find_package(OpenSSL REQUIRED COMPONENTS Crypto)  # SHA-256
find_package(Threads REQUIRED)

find_library(FP8LAB_ZSTD_LIBRARY zstd REQUIRED)  # libzstd-dev: corpus packs (src/data/pack.cpp)

add_library(fp8lab_deps INTERFACE)
target_link_libraries(fp8lab_deps INTERFACE OpenMP::OpenMP_CXX ${BLAS_LIBRARIES} fmt::fmt
                      nlohmann_json::nlohmann_json OpenSSL::Crypto Threads::Threads
                      ${FP8LAB_ZSTD_LIBRARY})
if(TARGET CLI11::CLI11)
  target_link_libraries(fp8lab_deps INTERFACE CLI11::CLI11)
endif()
# OpenBLAS's cblas.h lives in an alternatives directory on Debian.
find_path(FP8LAB_CBLAS_INCLUDE cblas.h PATHS /usr/include/x86_64-linux-gnu /usr/include/openblas
          /usr/include/x86_64-linux-gnu/openblas-pthread REQUIRED)
target_include_directories(fp8lab_deps INTERFACE ${FP8LAB_CBLAS_INCLUDE})

function(fp8lab_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wno-unused-parameter>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wno-unused-parameter>)
  if(FP8LAB_WERROR)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Werror> $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
  endif()
endfunction()
