# cmake --install build --prefix DIR: the library, its headers and a CMake package, so that a
# project of one's own needs only find_package(uwaga) and target_link_libraries(… uwaga::uwaga)
# (apps/examples/my_model; README, "Using uwaga in your own project"). The programs' rule is in
# apps/CMakeLists.txt.
#
#   DIR/lib/libuwaga.a                          the library
#   DIR/include/uwaga/{core,nn,optim,data}/…  its headers
#   DIR/lib/cmake/uwaga/                        uwagaConfig.cmake, uwagaConfigVersion.cmake and
#                                               uwagaTargets.cmake (the target uwaga::uwaga)
#
# Static, not shared: the library is built for the machine it is built on (-march=native), with no
# promise of a stable ABI between versions, so one installed copy serves one machine and one
# version anyway; linked statically, a program or a Python module (the bindings link the same
# library) runs from any directory without an rpath or LD_LIBRARY_PATH, and a rebuilt library can
# never be loaded under a program compiled against older headers. It is position-independent, so
# it links into a shared object of one's own as well.
include(CMakePackageConfigHelpers)

# The headers include each other as "core/tensor.h", so DIR/include/uwaga is on the include path
# of uwaga::uwaga; DIR/include as well, for a program's own #include <uwaga/nn/linear.h>.
target_include_directories(uwaga INTERFACE $<INSTALL_INTERFACE:include/uwaga>
                                           $<INSTALL_INTERFACE:include>)
target_compile_features(uwaga PUBLIC cxx_std_20)
add_library(uwaga::uwaga ALIAS uwaga)

# Each header keeps its folder (nn/conv/conv2d.h installs as include/uwaga/nn/conv/conv2d.h).
foreach(folder core nn optim data)
  file(GLOB_RECURSE headers RELATIVE ${CMAKE_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/${folder}/*.h)
  foreach(header ${headers})
    get_filename_component(header_dir ${header} DIRECTORY)
    install(FILES ${CMAKE_SOURCE_DIR}/${header} DESTINATION include/uwaga/${header_dir})
  endforeach()
endforeach()

install(TARGETS uwaga EXPORT uwagaTargets ARCHIVE DESTINATION lib)
install(EXPORT uwagaTargets NAMESPACE uwaga:: DESTINATION lib/cmake/uwaga)

set(UWAGA_WITH_MPI OFF)
if(UWAGA_MPI AND MPI_CXX_FOUND)
  set(UWAGA_WITH_MPI ON)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/uwagaConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/package/uwagaConfig.cmake
                              INSTALL_DESTINATION lib/cmake/uwaga)
# 0.y: a new minor version may change the API, so only the same major.minor satisfies a request.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/package/uwagaConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/package/uwagaConfig.cmake
              ${CMAKE_BINARY_DIR}/package/uwagaConfigVersion.cmake
        DESTINATION lib/cmake/uwaga)
