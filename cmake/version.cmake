# Versions, from project(VERSION) and the build machine: generates headroom/version.h (public,
# installed) and core/build_info.h (private: the XNNPACK build hr_version() names).
# The state blob's format version is independent of these (src/session/state_blob.c).
set(HR_XNNPACK_VERSION "unknown")
find_program(HR_DPKG_QUERY dpkg-query)
mark_as_advanced(HR_DPKG_QUERY)
if(HR_DPKG_QUERY)
  # XNNPACK has no version API; Debian's package version names the snapshot we compile against.
  execute_process(COMMAND ${HR_DPKG_QUERY} -W -f=\${Version} libxnnpack-dev
                  OUTPUT_VARIABLE _v RESULT_VARIABLE _rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(_rc EQUAL 0 AND _v)
    set(HR_XNNPACK_VERSION "${_v}")
  endif()
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/version.h.in ${PROJECT_BINARY_DIR}/include/headroom/version.h @ONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/build_info.h.in ${PROJECT_BINARY_DIR}/src/core/build_info.h @ONLY)
