# The Vulkan compute backend: built into headroom when the Vulkan headers/loader and glslc exist.
# Shaders (shaders/*.comp) are compiled to SPIR-V at build time, an fp32 and an fp16-storage variant
# each, and embedded as C arrays; without Vulkan nothing here is built and the backend reports
# HR_ENOTSUP (src/backend/vulkan_stub.c).
option(HR_VULKAN "Build the Vulkan compute backend when Vulkan and glslc are found" ON)
find_package(Vulkan QUIET)
find_program(HR_GLSLC glslc)
if(HR_VULKAN AND Vulkan_FOUND AND HR_GLSLC)
  file(GLOB HR_VK_SHADERS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/shaders/*.comp)
  file(GLOB HR_VK_SHADER_INC CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/shaders/*.glsl)
  set(HR_VK_GEN ${PROJECT_BINARY_DIR}/gen/shaders)
  file(MAKE_DIRECTORY ${HR_VK_GEN})
  set(HR_VK_SPV)
  foreach(sh ${HR_VK_SHADERS})
    get_filename_component(n ${sh} NAME_WE)
    add_custom_command(OUTPUT ${HR_VK_GEN}/${n}.spv.h
      COMMAND ${HR_GLSLC} -I${PROJECT_SOURCE_DIR}/shaders --target-env=vulkan1.1 -O -mfmt=c -o ${HR_VK_GEN}/${n}.spv.h ${sh}
      DEPENDS ${sh} ${HR_VK_SHADER_INC}
      COMMENT "glslc ${n}.comp")
    # the fp16-storage variant (common.glsl HR_FP16): used where the device has 16-bit storage
    add_custom_command(OUTPUT ${HR_VK_GEN}/${n}_h.spv.h
      COMMAND ${HR_GLSLC} -I${PROJECT_SOURCE_DIR}/shaders --target-env=vulkan1.1 -O -DHR_FP16 -mfmt=c -o ${HR_VK_GEN}/${n}_h.spv.h ${sh}
      DEPENDS ${sh} ${HR_VK_SHADER_INC}
      COMMENT "glslc ${n}.comp (fp16 storage)")
    list(APPEND HR_VK_SPV ${HR_VK_GEN}/${n}.spv.h ${HR_VK_GEN}/${n}_h.spv.h)
  endforeach()
  add_custom_target(headroom_shaders DEPENDS ${HR_VK_SPV})
  add_dependencies(headroom headroom_shaders)
  file(GLOB HR_VK_SRC CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/backend/vulkan/*.c)
  target_sources(headroom PRIVATE ${HR_VK_SRC})
  target_include_directories(headroom PRIVATE ${HR_VK_GEN})
  target_compile_definitions(headroom PUBLIC HR_HAVE_VULKAN=1)
  target_link_libraries(headroom PUBLIC Vulkan::Vulkan ${CMAKE_DL_LIBS})
  set(HR_HAVE_VULKAN ON)
  message(STATUS "headroom: Vulkan backend ON (${Vulkan_LIBRARY}, ${HR_GLSLC})")
else()
  set(HR_HAVE_VULKAN OFF)
  message(STATUS "headroom: Vulkan backend OFF (Vulkan found: ${Vulkan_FOUND}, glslc: ${HR_GLSLC})")
endif()
