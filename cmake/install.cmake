# What `cmake --install` puts where (GNUInstallDirs): the libraries, the public headers, the CLI,
# the model fetcher, pkg-config files and a CMake package (find_package(headroom CONFIG) ->
# headroom::headroom, headroom::io). Included by the top-level CMakeLists.txt. Components: runtime
# (shared libraries, CLI, model fetcher) and dev (headers, archives, pkg-config, CMake package);
# `cmake --install B --component runtime` (then dev) installs them without anything else (gst/).
include(CMakePackageConfigHelpers)

set(HR_INSTALL_TARGETS headroom_shared)
set(HR_INSTALL_STATIC headroom)
if(HR_BUILD_IO)
  list(APPEND HR_INSTALL_TARGETS headroom_io_shared)
  list(APPEND HR_INSTALL_STATIC headroom_io)
endif()
install(TARGETS ${HR_INSTALL_TARGETS} EXPORT headroomTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The static archives are for `pkg-config --static`; the CMake package gives the shared libraries.
install(TARGETS ${HR_INSTALL_STATIC} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)

# Headers: everything under include/ but report.h (libheadroom_report stays private to the CLI),
# io.h only with the io library, and the generated version.h.
set(_hr_hdr_excl PATTERN report.h EXCLUDE)
if(NOT HR_BUILD_IO)
  list(APPEND _hr_hdr_excl PATTERN io.h EXCLUDE)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/include/headroom.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/headroom DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev ${_hr_hdr_excl})
install(FILES ${PROJECT_BINARY_DIR}/include/headroom/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/headroom COMPONENT dev)

if(HR_BUILD_IO)
  install(TARGETS headroom_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
  # Models are never installed: headroom-fetch-models puts them in the user's cache, where the CLI
  # looks for rvm|meet|selfie. It checks them against the sums installed beside it.
  install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/headroom-fetch-models DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
  install(FILES ${PROJECT_SOURCE_DIR}/scripts/models.sha256 DESTINATION ${CMAKE_INSTALL_DATADIR}/headroom COMPONENT runtime)
endif()

# pkg-config: prefix relative to the .pc file's own folder, so an installed tree can be moved
# (and `cmake --install --prefix P` works whatever CMAKE_INSTALL_PREFIX was at configure time).
# Libs.private / Requires.private are for `pkg-config --static` (the .a archives). Dependencies
# with a pkg-config file go in Requires.private; XNNPACK and pthreadpool have none. FFmpeg goes
# in Libs.private as plain -l flags: Debian ships it shared only, and Requires.private would pull
# its static closure (-lvpx, -lzmq, ...), which no -dev package provides. cmake/vulkan.cmake may
# append to HR_PC_REQUIRES_PRIVATE / HR_PC_LIBS_PRIVATE.
# A distribution package, whose prefix is fixed, turns HR_PC_RELOCATABLE off (debian/rules) for
# plain /usr paths, which pkg-config recognises as system folders and leaves out of the flags.
option(HR_PC_RELOCATABLE "pkg-config files find the prefix from their own folder (\${pcfiledir})" ON)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR NOT HR_PC_RELOCATABLE)
  set(HR_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _rel "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  string(REGEX REPLACE "/$" "" _rel "${_rel}")
  set(HR_PC_PREFIX "\${pcfiledir}/${_rel}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(HR_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  set(HR_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(HR_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(HR_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
list(APPEND HR_PC_REQUIRES_PRIVATE libcjson)
if(HR_HAVE_VULKAN)
  list(APPEND HR_PC_REQUIRES_PRIVATE vulkan)
endif()
list(APPEND HR_PC_LIBS_PRIVATE -lXNNPACK -lpthreadpool -pthread -lm)
list(JOIN HR_PC_REQUIRES_PRIVATE " " HR_PC_REQUIRES_PRIVATE_S)
list(JOIN HR_PC_LIBS_PRIVATE " " HR_PC_LIBS_PRIVATE_S)
configure_file(${PROJECT_SOURCE_DIR}/headroom.pc.in ${PROJECT_BINARY_DIR}/headroom.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/headroom.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
if(HR_BUILD_IO)
  configure_file(${PROJECT_SOURCE_DIR}/headroom-io.pc.in ${PROJECT_BINARY_DIR}/headroom-io.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/headroom-io.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
endif()

# CMake package: headroomConfig.cmake + version file + the exported targets.
set(HR_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/headroom)
install(EXPORT headroomTargets NAMESPACE headroom:: DESTINATION ${HR_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/headroomConfig.cmake.in
  ${PROJECT_BINARY_DIR}/headroomConfig.cmake INSTALL_DESTINATION ${HR_CMAKE_DIR})
# 0.x: a minor version may break the API, so only the same minor is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/headroomConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/headroomConfig.cmake ${PROJECT_BINARY_DIR}/headroomConfigVersion.cmake
        DESTINATION ${HR_CMAKE_DIR} COMPONENT dev)
