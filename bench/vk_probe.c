/* GPU probe: one compute shader (SPIR-V) timed alone with timestamps, its push constants and
 * specialisation constants given, and the driver's statistics for its pipeline (registers, shared
 * memory: VK_KHR_pipeline_executable_properties, which NVIDIA has and lavapipe not). What
 * bench/vulkan_h200.sh's 2026-12-06 notes on convd3.comp were measured with.
 *   cc -O2 -o vk_probe bench/vk_probe.c -lvulkan
 *   glslc -O --target-env=vulkan1.1 -Ishaders -o d3.spv shaders/convd3.comp
 *   STATS=1 SPEC=0:16,2:4 ./vk_probe d3.spv 0 1 0          # statistics only (0 workgroups)
 *   PC=p0,p1,...,p31 SPEC=0:16,2:4 ./vk_probe d3.spv 345 1 0 7   # 345 workgroups, best of 7
 * Arguments: SHADER.spv GROUPS ITERS FLOP_PER_THREAD_PER_ITER [reps] (the last two only for the
 * TFLOP/s column of synthetic shaders; push constant word 0 is ITERS unless PC is set). One storage
 * buffer of 256 MB at binding 0, filled with 1.0f before the first run; local size 256. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>
#define CK(x) do { VkResult r_ = (x); if (r_) { fprintf(stderr, "%s: %d\n", #x, r_); exit(1); } } while (0)
int main(int argc, char **argv) {
  if (argc < 5) { fprintf(stderr, "usage: vk_probe SHADER.spv GROUPS ITERS FLOP_PER_THREAD_PER_ITER [reps]\n"); return 2; }
  int G = atoi(argv[2]), IT = atoi(argv[3]); double fl = atof(argv[4]); int reps = argc > 5 ? atoi(argv[5]) : 5;
  FILE *f = fopen(argv[1], "rb");
  if (!f) { perror(argv[1]); return 1; }
  fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
  uint32_t *code = malloc(n); if (fread(code, 1, n, f) != (size_t)n) return 1; fclose(f);
  VkApplicationInfo ai = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_2};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &ai};
  VkInstance inst; CK(vkCreateInstance(&ici, NULL, &inst));
  uint32_t np = 8; VkPhysicalDevice pds[8]; CK(vkEnumeratePhysicalDevices(inst, &np, pds));
  VkPhysicalDevice pd = pds[0];
  VkPhysicalDeviceProperties pp; vkGetPhysicalDeviceProperties(pd, &pp);
  uint32_t nq = 16; VkQueueFamilyProperties qf[16]; vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf);
  uint32_t qi = 0; while (!(qf[qi].queueFlags & VK_QUEUE_COMPUTE_BIT)) qi++;
  float pr = 1; VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = qi, .queueCount = 1, .pQueuePriorities = &pr};
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pef = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR, .pipelineExecutableInfo = VK_TRUE};
  const char *exts[] = {"VK_KHR_pipeline_executable_properties"};
  int stats = getenv("STATS") != NULL;
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1, .pQueueCreateInfos = &qci,
                            .pNext = stats ? &pef : NULL, .enabledExtensionCount = stats ? 1 : 0, .ppEnabledExtensionNames = exts};
  VkDevice dev; CK(vkCreateDevice(pd, &dci, NULL, &dev));
  VkQueue q; vkGetDeviceQueue(dev, qi, 0, &q);
  VkDeviceSize bs = 256 << 20;
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = bs, .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT};
  VkBuffer buf; CK(vkCreateBuffer(dev, &bci, NULL, &buf));
  VkMemoryRequirements mr; vkGetBufferMemoryRequirements(dev, buf, &mr);
  VkPhysicalDeviceMemoryProperties mp; vkGetPhysicalDeviceMemoryProperties(pd, &mp);
  uint32_t mt = 0; while (!((mr.memoryTypeBits >> mt) & 1) || !(mp.memoryTypes[mt].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) mt++;
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = mr.size, .memoryTypeIndex = mt};
  VkDeviceMemory mem; CK(vkAllocateMemory(dev, &mai, NULL, &mem)); CK(vkBindBufferMemory(dev, buf, mem, 0));
  VkDescriptorSetLayoutBinding b = {.binding = 0, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo dl = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, .bindingCount = 1, .pBindings = &b};
  VkDescriptorSetLayout dsl; CK(vkCreateDescriptorSetLayout(dev, &dl, NULL, &dsl));
  VkPushConstantRange pcr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 128};
  VkPipelineLayoutCreateInfo plc = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1, .pSetLayouts = &dsl, .pushConstantRangeCount = 1, .pPushConstantRanges = &pcr};
  VkPipelineLayout pl; CK(vkCreatePipelineLayout(dev, &plc, NULL, &pl));
  VkShaderModuleCreateInfo smc = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = n, .pCode = code};
  VkShaderModule sm; CK(vkCreateShaderModule(dev, &smc, NULL, &sm));
  /* SPEC="id:val,id:val" */
  VkSpecializationMapEntry me[8]; int32_t sv[8]; int ns = 0;
  for (const char *sp = getenv("SPEC"); sp && *sp && ns < 8;) {
    int id, val, nc; if (sscanf(sp, "%d:%d%n", &id, &val, &nc) != 2) break;
    me[ns] = (VkSpecializationMapEntry){.constantID = id, .offset = 4 * ns, .size = 4}; sv[ns++] = val; sp += nc; if (*sp == ',') sp++;
  }
  VkSpecializationInfo si = {.mapEntryCount = ns, .pMapEntries = me, .dataSize = 4 * ns, .pData = sv};
  VkComputePipelineCreateInfo cpc = {.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, .layout = pl,
    .flags = stats ? VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR : 0,
    .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT, .module = sm, .pName = "main", .pSpecializationInfo = &si}};
  VkPipeline pipe; CK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpc, NULL, &pipe));
  if (stats) {
    PFN_vkGetPipelineExecutablePropertiesKHR gp = (PFN_vkGetPipelineExecutablePropertiesKHR)vkGetDeviceProcAddr(dev, "vkGetPipelineExecutablePropertiesKHR");
    PFN_vkGetPipelineExecutableStatisticsKHR gs = (PFN_vkGetPipelineExecutableStatisticsKHR)vkGetDeviceProcAddr(dev, "vkGetPipelineExecutableStatisticsKHR");
    VkPipelineInfoKHR pi = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = pipe};
    uint32_t ne = 0; gp(dev, &pi, &ne, NULL);
    VkPipelineExecutablePropertiesKHR ep[4]; for (int i = 0; i < 4; i++) ep[i] = (VkPipelineExecutablePropertiesKHR){.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR};
    if (ne > 4) ne = 4;
    gp(dev, &pi, &ne, ep);
    for (uint32_t e = 0; e < ne; e++) {
      VkPipelineExecutableInfoKHR ei = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, .pipeline = pipe, .executableIndex = e};
      uint32_t nst = 0; gs(dev, &ei, &nst, NULL);
      VkPipelineExecutableStatisticKHR st[64]; if (nst > 64) nst = 64;
      for (uint32_t i = 0; i < nst; i++) st[i] = (VkPipelineExecutableStatisticKHR){.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
      gs(dev, &ei, &nst, st);
      printf("%s [%s]:", argv[1], ep[e].name);
      for (uint32_t i = 0; i < nst; i++) {
        printf(" %s=", st[i].name);
        if (st[i].format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR) printf("%llu", (unsigned long long)st[i].value.u64);
        else if (st[i].format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR) printf("%lld", (long long)st[i].value.i64);
        else if (st[i].format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR) printf("%g", st[i].value.f64);
        else printf("%d", (int)st[i].value.b32);
      }
      printf("\n");
    }
    if (G == 0) return 0;
  }
  VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
  VkDescriptorPoolCreateInfo dpc = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = 1, .poolSizeCount = 1, .pPoolSizes = &ps};
  VkDescriptorPool dp; CK(vkCreateDescriptorPool(dev, &dpc, NULL, &dp));
  VkDescriptorSetAllocateInfo dsa = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, .descriptorPool = dp, .descriptorSetCount = 1, .pSetLayouts = &dsl};
  VkDescriptorSet ds; CK(vkAllocateDescriptorSets(dev, &dsa, &ds));
  VkDescriptorBufferInfo dbi = {buf, 0, bs};
  VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = ds, .descriptorCount = 1, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .pBufferInfo = &dbi};
  vkUpdateDescriptorSets(dev, 1, &w, 0, NULL);
  VkQueryPoolCreateInfo qpc = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 2};
  VkQueryPool qp; CK(vkCreateQueryPool(dev, &qpc, NULL, &qp));
  VkCommandPoolCreateInfo cpi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = qi, .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT};
  VkCommandPool cp; CK(vkCreateCommandPool(dev, &cpi, NULL, &cp));
  VkCommandBufferAllocateInfo cba = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = cp, .commandBufferCount = 1};
  VkCommandBuffer cb; CK(vkAllocateCommandBuffers(dev, &cba, &cb));
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CK(vkBeginCommandBuffer(cb, &bi));
    if (r == 0) vkCmdFillBuffer(cb, buf, 0, bs, 0x3f800000u);
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT, .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    vkCmdResetQueryPool(cb, qp, 0, 2);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1, &ds, 0, NULL);
    int pc[32] = {IT, G, 0, 0};
    const char *pe = getenv("PC");
    for (int k = 0; pe && k < 32; k++) { pc[k] = (int)strtol(pe, (char **)&pe, 10); if (*pe == ',') pe++; }
    vkCmdPushConstants(cb, pl, VK_SHADER_STAGE_COMPUTE_BIT, 0, 128, pc);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp, 0);
    vkCmdDispatch(cb, G, 1, 1);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 1);
    CK(vkEndCommandBuffer(cb));
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    CK(vkQueueSubmit(q, 1, &si, VK_NULL_HANDLE)); CK(vkQueueWaitIdle(q));
    uint64_t ts[2]; CK(vkGetQueryPoolResults(dev, qp, 0, 2, sizeof ts, ts, 8, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
    double us = (ts[1] - ts[0]) * pp.limits.timestampPeriod / 1e3;
    if (us < best) best = us;
  }
  double flops = fl * IT * (double)G * 256;
  printf("%-28s G %6d it %6d  %9.1f us  %7.2f TFLOP/s\n", argv[1], G, IT, best, flops / best / 1e6);
  return 0;
}
