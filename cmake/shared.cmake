# Shared libraries: libheadroom.so.0 and libheadroom_io.so.0. Only HR_API symbols are exported
# (-fvisibility=hidden objects, plus cmake/headroom.map, which keeps hr__* internals and anything
# else local even if one were marked by mistake). tests/cli/abi_symbols.sh keeps the list.

# SOVERSION 0 (the ABI may change until 1.0: bump it with every incompatible change), VERSION = the
# project's, and the map file.
function(hr_shared_library_properties target output_name export_name)
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${output_name} EXPORT_NAME ${export_name}
    SOVERSION 0 VERSION ${PROJECT_VERSION}
    C_VISIBILITY_PRESET hidden
    LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/headroom.map)
  target_link_options(${target} PRIVATE "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/headroom.map"
                      "LINKER:--as-needed")
  if(NOT HR_SANITIZE AND NOT HR_TSAN)
    target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  endif()
endfunction()

# A shared library made of a static one, linked whole: every object, exports per the map. The
# static library's own link dependencies (XNNPACK, pthreadpool, cJSON, ...) become the shared
# library's NEEDED entries. Sources added to the static target later (cmake/vulkan.cmake) follow.
function(hr_add_shared_library target static output_name)
  set(stub ${PROJECT_BINARY_DIR}/${target}_whole.c)
  if(NOT EXISTS ${stub})
    file(WRITE ${stub} "/* ${output_name}.so is lib${output_name}.a linked whole (cmake/shared.cmake). */\ntypedef int hr__whole_archive;\n")
  endif()
  add_library(${target} SHARED ${stub})
  hr_shared_library_properties(${target} ${output_name} ${output_name})
  target_link_libraries(${target} PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${static}>")
  target_include_directories(${target} INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endfunction()
