# The version header, `cmake --install` and the exported CMake package fp8lab::fp8lab.
# Included at the end of the top-level CMakeLists.txt, once every target exists.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The version lives in project(fp8lab VERSION ...) alone; C++ reads it from this header.
configure_file(${PROJECT_SOURCE_DIR}/cmake/version.hpp.in
               ${PROJECT_BINARY_DIR}/include/fp8lab/version.hpp @ONLY)

# The library installs as libfp8lab.a and exports as fp8lab::fp8lab; its interface target of
# third-party dependencies goes with it (fp8lab::dependencies).
set_target_properties(fp8lab_lib PROPERTIES OUTPUT_NAME fp8lab EXPORT_NAME fp8lab)
set_target_properties(fp8lab_deps PROPERTIES EXPORT_NAME dependencies)
install(TARGETS fp8lab_lib fp8lab_deps EXPORT fp8labTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS fp8lab RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The FP8 linear behind its C ABI (include/fp8lab/linear_c.h) installs as libfp8lab_linear.so
# and exports as fp8lab::linear; its C++ inside stays private.
set_target_properties(fp8lab_linear PROPERTIES EXPORT_NAME linear)
target_include_directories(fp8lab_linear INTERFACE
                           $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
install(TARGETS fp8lab_linear EXPORT fp8labTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/fp8lab/linear_c.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fp8lab)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/fp8lab ${PROJECT_BINARY_DIR}/include/fp8lab
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")

set(fp8lab_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/fp8lab)
install(EXPORT fp8labTargets NAMESPACE fp8lab:: DESTINATION ${fp8lab_cmake_dir})
set(FP8LAB_EXPORT_CLI11 OFF)
if(TARGET CLI11::CLI11)
  set(FP8LAB_EXPORT_CLI11 ON)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/fp8labConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/fp8labConfig.cmake
                              INSTALL_DESTINATION ${fp8lab_cmake_dir})
# 0.x: a minor version may break the interface, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/fp8labConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/fp8labConfig.cmake
              ${PROJECT_BINARY_DIR}/fp8labConfigVersion.cmake
        DESTINATION ${fp8lab_cmake_dir})

# An out-of-tree project installs and consumes the package (tests/package/).
if(BUILD_TESTING)
  add_subdirectory(${PROJECT_SOURCE_DIR}/tests/package ${PROJECT_BINARY_DIR}/tests/package)
endif()
