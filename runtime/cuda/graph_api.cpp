// The capture and graph calls of the CUDA runtime and driver APIs: each
// call's CUPTI parameters turned into the operations of ops.h (capture.cpp
// and graph.cpp act on them). runtime_api.cpp and driver_api.cpp hand over
// the calls they do not handle themselves.
//
// Every way to begin a capture counts, in any mode (global, thread-local,
// relaxed: the mode says which other calls the capture forbids, not what
// the captured work is), and every instantiate form maps the executable
// graph to its graph. A node added by hand is fed as the work it stands
// for (capture.cpp). cudaGraphUpload is not followed: an upload runs
// nothing.
#include "runtime/cuda/cupti_handlers.h"

namespace xsc::rt::cupti {
namespace {

#define RT(name) CUPTI_RUNTIME_TRACE_CBID_##name
#define DRV(name) CUPTI_DRIVER_TRACE_CBID_##name

// cudaGraphInstantiate of CUDA 10 and 11 (the CUDA 13 headers describe only
// the CUDA 12 form): the executable graph and the graph come first, as in
// the driver's cuGraphInstantiate and cuGraphInstantiate_v2.
struct GraphInstantiateV10000Params {
  cudaGraphExec_t* pGraphExec;
  cudaGraph_t graph;
};

std::vector<std::uint64_t> handles(const void* const* array, std::size_t count) {
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; array != nullptr && i < count; ++i) out.push_back(u64(array[i]));
  return out;
}

// A kernel, memset, copy node added by hand: the call it stands for, fed
// into the node's graph (begin_node_by_hand).
template <class Feed>
void node_by_hand(const void* graph, Feed&& feed) {
  const NodeByHand node = begin_node_by_hand(u64(graph));
  if (!node.ready) return;
  feed(node.stream);
  end_node_by_hand(u64(graph), node);
}

// Bytes a memset node writes; 0 (the whole allocation) for rows apart.
template <class Memset>
std::uint64_t memset_bytes(const Memset& m) {
  return m.height <= 1 ? std::uint64_t(m.elementSize) * m.width : 0;
}

void runtime_kernel_node(const void* graph, const void* func, void** args, const dim3& grid) {
  node_by_hand(graph, [&](StreamId s) { on_runtime_launch(func, false, args, grid_of(grid), s); });
}

void runtime_memset_node(const void* graph, const void* dst, std::uint64_t bytes) {
  node_by_hand(graph, [&](StreamId s) { on_memset(u64(dst), bytes, s); });
}

// A copy node: its extent is left out (0: the whole allocations).
void runtime_copy_node(const void* graph, const cudaMemcpy3DParms& copy) {
  node_by_hand(graph, [&](StreamId s) {
    on_copy(u64(copy.dstPtr.ptr), u64(copy.srcPtr.ptr), 0, copy_kind(copy.kind), s, false);
  });
}

std::uint64_t driver_copy_side(CUmemorytype type, const void* host, CUdeviceptr device) {
  return type == CU_MEMORYTYPE_HOST ? u64(host) : type == CU_MEMORYTYPE_ARRAY ? 0 : device;
}

void driver_copy_node(const void* graph, const CUDA_MEMCPY3D& copy) {
  node_by_hand(graph, [&](StreamId s) {
    on_copy(driver_copy_side(copy.dstMemoryType, copy.dstHost, copy.dstDevice),
            driver_copy_side(copy.srcMemoryType, copy.srcHost, copy.srcDevice), 0,
            CopyKind::kDefault, s, false);
  });
}

// A node added with cudaGraphAddNode: a conditional node is modelled, a
// kernel, copy, memset or child-graph node fed as the work it stands for, a
// memory node said to be unchecked; the others (empty, host, event,
// semaphore nodes) carry no buffer uses.
template <class Params>
void runtime_added_node(const Params& p, const cudaGraphNode_t* deps, std::size_t ndeps,
                        const cudaGraphNodeParams* node) {
  if (node == nullptr) return;
  switch (node->type) {
    case cudaGraphNodeTypeConditional: {
      const std::vector<std::uint64_t> bodies =
          handles(reinterpret_cast<const void* const*>(node->conditional.phGraph_out),
                  node->conditional.phGraph_out != nullptr ? node->conditional.size : 0);
      const std::vector<std::uint64_t> after =
          handles(reinterpret_cast<const void* const*>(deps), ndeps);
      on_conditional_node(u64(p.graph()), p.node(), after.data(), after.size(),
                          static_cast<int>(node->conditional.type), bodies.data(),
                          static_cast<unsigned>(bodies.size()));
      break;
    }
    case cudaGraphNodeTypeKernel:
      runtime_kernel_node(p.graph(), node->kernel.func, node->kernel.kernelParams,
                          node->kernel.gridDim);
      break;
    case cudaGraphNodeTypeMemset:
      runtime_memset_node(p.graph(), node->memset.dst, memset_bytes(node->memset));
      break;
    case cudaGraphNodeTypeMemcpy:
      runtime_copy_node(p.graph(), node->memcpy.copyParams);
      break;
    case cudaGraphNodeTypeGraph:
      on_child_graph_node(u64(p.graph()), u64(node->graph.graph));
      break;
    case cudaGraphNodeTypeMemAlloc:
    case cudaGraphNodeTypeMemFree:
      on_graph_memory_node();
      break;
    default:
      break;
  }
}

// The same for cuGraphAddNode.
template <class Params>
void driver_added_node(const Params& p, const CUgraphNode* deps, std::size_t ndeps,
                       const CUgraphNodeParams* node) {
  if (node == nullptr) return;
  switch (node->type) {
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: {
      const std::vector<std::uint64_t> bodies =
          handles(reinterpret_cast<const void* const*>(node->conditional.phGraph_out),
                  node->conditional.phGraph_out != nullptr ? node->conditional.size : 0);
      const std::vector<std::uint64_t> after =
          handles(reinterpret_cast<const void* const*>(deps), ndeps);
      on_conditional_node(u64(p.graph()), p.node(), after.data(), after.size(),
                          static_cast<int>(node->conditional.type), bodies.data(),
                          static_cast<unsigned>(bodies.size()));
      break;
    }
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      const auto& k = node->kernel;
      node_by_hand(p.graph(), [&](StreamId s) {
        on_kernel_launch(k.func != nullptr ? u64(k.func) : u64(k.kern), k.kernelParams, k.extra,
                         grid_of(k.gridDimX, k.gridDimY, k.gridDimZ), s);
      });
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      const auto& m = node->memset;
      node_by_hand(p.graph(), [&](StreamId s) { on_memset(m.dst, memset_bytes(m), s); });
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY:
      driver_copy_node(p.graph(), node->memcpy.copyParams);
      break;
    case CU_GRAPH_NODE_TYPE_GRAPH:
      on_child_graph_node(u64(p.graph()), u64(node->graph.graph));
      break;
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
      on_graph_memory_node();
      break;
    default:
      break;
  }
}

// The graph and the new node of either API's AddNode parameters.
struct RuntimeAddNode {
  const cudaGraphAddNode_v12030_params& p;
  const void* graph() const { return p.graph; }
  std::uint64_t node() const { return p.pGraphNode != nullptr ? u64(*p.pGraphNode) : 0; }
};

template <class P>
struct DriverAddNode {
  const P& p;
  const void* graph() const { return p.hGraph; }
  std::uint64_t node() const { return p.phGraphNode != nullptr ? u64(*p.phGraphNode) : 0; }
};

// What cudaStreamGetCaptureInfo / cuStreamGetCaptureInfo told the
// application about an active capture.
template <class Status, class Graph, class Node>
void capture_info(StreamId stream, const Status* status, const Graph* graph,
                  const Node* const* deps, const std::size_t* ndeps) {
  if (status == nullptr || static_cast<int>(*status) != cudaStreamCaptureStatusActive) return;
  const std::uint64_t g = graph != nullptr ? u64(*graph) : 0;
  if (deps == nullptr || ndeps == nullptr) {
    on_stream_capture_info(stream, g, nullptr, 0);
    return;
  }
  const std::vector<std::uint64_t> after =
      handles(reinterpret_cast<const void* const*>(*deps), *ndeps);
  on_stream_capture_info(stream, g, after.data(), after.size());
}

void capture_dependencies(StreamId stream, const void* const* nodes, std::size_t count) {
  const std::vector<std::uint64_t> after = handles(nodes, count);
  on_stream_capture_dependencies(stream, after.data(), after.size());
}

}  // namespace

// Fed at entry, as other destroys are: the handle goes back to the driver
// inside the call.
bool runtime_graph_enter(CUpti_CallbackId cbid, const CUpti_CallbackData* data) {
  if (cbid != RT(cudaGraphExecDestroy_v10000)) return false;
  on_graph_exec_destroy(u64(params<cudaGraphExecDestroy_v10000_params>(data).graphExec));
  return true;
}

bool driver_graph_enter(CUpti_CallbackId cbid, const CUpti_CallbackData* data) {
  if (cbid != DRV(cuGraphExecDestroy)) return false;
  on_graph_exec_destroy(u64(params<cuGraphExecDestroy_params>(data).hGraphExec));
  return true;
}

void runtime_graph_exit(CUpti_CallbackId cbid, const CUpti_CallbackData* data) {
  switch (cbid) {
    case RT(cudaStreamBeginCapture_v10000): case RT(cudaStreamBeginCapture_ptsz_v10000):
      on_stream_begin_capture(resolve(u64(params<cudaStreamBeginCapture_v10000_params>(data).stream),
                                      cbid == RT(cudaStreamBeginCapture_ptsz_v10000)),
                              0, /*to_graph=*/false, /*has_dependencies=*/false);
      break;
    case RT(cudaStreamBeginCaptureToGraph_v12030):
    case RT(cudaStreamBeginCaptureToGraph_ptsz_v12030): {
      const auto& p = params<cudaStreamBeginCaptureToGraph_v12030_params>(data);
      on_stream_begin_capture(resolve(u64(p.stream), cbid == RT(cudaStreamBeginCaptureToGraph_ptsz_v12030)),
                              u64(p.graph), /*to_graph=*/true, p.numDependencies != 0);
      break;
    }
    case RT(cudaStreamEndCapture_v10000): case RT(cudaStreamEndCapture_ptsz_v10000): {
      const auto& p = params<cudaStreamEndCapture_v10000_params>(data);
      on_stream_end_capture(resolve(u64(p.stream), cbid == RT(cudaStreamEndCapture_ptsz_v10000)),
                            p.pGraph ? u64(*p.pGraph) : 0);
      break;
    }
    case RT(cudaStreamGetCaptureInfo_v12030): case RT(cudaStreamGetCaptureInfo_ptsz_v12030): {
      const auto& p = params<cudaStreamGetCaptureInfo_v12030_params>(data);
      capture_info(resolve(u64(p.stream), cbid == RT(cudaStreamGetCaptureInfo_ptsz_v12030)),
                   p.captureStatus_out, p.graph_out, p.dependencies_out, p.numDependencies_out);
      break;
    }
    case RT(cudaStreamUpdateCaptureDependencies_v12030):
    case RT(cudaStreamUpdateCaptureDependencies_ptsz_v12030): {
      const auto& p = params<cudaStreamUpdateCaptureDependencies_v12030_params>(data);
      capture_dependencies(
          resolve(u64(p.stream), cbid == RT(cudaStreamUpdateCaptureDependencies_ptsz_v12030)),
          reinterpret_cast<const void* const*>(p.dependencies), p.numDependencies);
      break;
    }
    case RT(cudaGraphInstantiate_v10000): {
      const auto& p = params<GraphInstantiateV10000Params>(data);
      if (p.pGraphExec) on_graph_instantiate(u64(*p.pGraphExec), u64(p.graph), 0);
      break;
    }
    case RT(cudaGraphInstantiate_v12000): {
      const auto& p = params<cudaGraphInstantiate_v12000_params>(data);
      if (p.pGraphExec) on_graph_instantiate(u64(*p.pGraphExec), u64(p.graph), p.flags);
      break;
    }
    case RT(cudaGraphInstantiateWithFlags_v11040): {
      const auto& p = params<cudaGraphInstantiateWithFlags_v11040_params>(data);
      if (p.pGraphExec) on_graph_instantiate(u64(*p.pGraphExec), u64(p.graph), p.flags);
      break;
    }
    case RT(cudaGraphInstantiateWithParams_v12000):
    case RT(cudaGraphInstantiateWithParams_ptsz_v12000): {
      const auto& p = params<cudaGraphInstantiateWithParams_v12000_params>(data);
      if (p.pGraphExec)
        on_graph_instantiate(u64(*p.pGraphExec), u64(p.graph),
                             p.instantiateParams != nullptr ? p.instantiateParams->flags : 0);
      break;
    }
    case RT(cudaGraphExecUpdate_v10020): {
      const auto& p = params<cudaGraphExecUpdate_v10020_params>(data);
      on_graph_exec_update(u64(p.hGraphExec), u64(p.hGraph));
      break;
    }
    case RT(cudaGraphCreate_v10000): {
      const auto& p = params<cudaGraphCreate_v10000_params>(data);
      if (p.pGraph) on_graph_forget(u64(*p.pGraph));
      break;
    }
    case RT(cudaGraphDestroy_v10000):
      on_graph_forget(u64(params<cudaGraphDestroy_v10000_params>(data).graph));
      break;
    case RT(cudaGraphClone_v10000): {
      const auto& p = params<cudaGraphClone_v10000_params>(data);
      if (p.pGraphClone) on_graph_clone(u64(*p.pGraphClone), u64(p.originalGraph));
      break;
    }
    case RT(cudaGraphAddNode_v12030): {
      const auto& p = params<cudaGraphAddNode_v12030_params>(data);
      runtime_added_node(RuntimeAddNode{p}, p.pDependencies, p.numDependencies, p.nodeParams);
      break;
    }
    case RT(cudaGraphAddKernelNode_v10000): {
      const auto& p = params<cudaGraphAddKernelNode_v10000_params>(data);
      if (p.pNodeParams != nullptr)
        runtime_kernel_node(p.graph, p.pNodeParams->func, p.pNodeParams->kernelParams,
                            p.pNodeParams->gridDim);
      break;
    }
    case RT(cudaGraphAddMemsetNode_v10000): {
      const auto& p = params<cudaGraphAddMemsetNode_v10000_params>(data);
      if (p.pMemsetParams != nullptr)
        runtime_memset_node(p.graph, p.pMemsetParams->dst, memset_bytes(*p.pMemsetParams));
      break;
    }
    case RT(cudaGraphAddMemcpyNode_v10000): {
      const auto& p = params<cudaGraphAddMemcpyNode_v10000_params>(data);
      if (p.pCopyParams != nullptr) runtime_copy_node(p.graph, *p.pCopyParams);
      break;
    }
    case RT(cudaGraphAddMemcpyNode1D_v11010): {
      const auto& p = params<cudaGraphAddMemcpyNode1D_v11010_params>(data);
      node_by_hand(p.graph, [&](StreamId s) {
        on_copy(u64(p.dst), u64(p.src), p.count, copy_kind(p.kind), s, false);
      });
      break;
    }
    // A symbol is no allocation the checker tracks: only the other side.
    case RT(cudaGraphAddMemcpyNodeToSymbol_v11010): {
      const auto& p = params<cudaGraphAddMemcpyNodeToSymbol_v11010_params>(data);
      node_by_hand(p.graph, [&](StreamId s) {
        on_copy(0, u64(p.src), p.count, copy_kind(p.kind), s, false);
      });
      break;
    }
    case RT(cudaGraphAddMemcpyNodeFromSymbol_v11010): {
      const auto& p = params<cudaGraphAddMemcpyNodeFromSymbol_v11010_params>(data);
      node_by_hand(p.graph, [&](StreamId s) {
        on_copy(u64(p.dst), 0, p.count, copy_kind(p.kind), s, false);
      });
      break;
    }
    case RT(cudaGraphAddChildGraphNode_v10000): {
      const auto& p = params<cudaGraphAddChildGraphNode_v10000_params>(data);
      on_child_graph_node(u64(p.graph), u64(p.childGraph));
      break;
    }
    case RT(cudaGraphAddMemAllocNode_v11040): case RT(cudaGraphAddMemFreeNode_v11040):
      on_graph_memory_node();
      break;
    case RT(cudaGraphLaunch_v10000): case RT(cudaGraphLaunch_ptsz_v10000): {
      const auto& p = params<cudaGraphLaunch_v10000_params>(data);
      on_graph_exec_launch(u64(p.graphExec),
                           resolve(u64(p.stream), cbid == RT(cudaGraphLaunch_ptsz_v10000)));
      break;
    }
    default:
      break;
  }
}

void driver_graph_exit(CUpti_CallbackId cbid, const CUpti_CallbackData* data) {
  switch (cbid) {
    case DRV(cuStreamBeginCapture): case DRV(cuStreamBeginCapture_ptsz):
      on_stream_begin_capture(resolve(u64(params<cuStreamBeginCapture_params>(data).hStream),
                                      cbid == DRV(cuStreamBeginCapture_ptsz)),
                              0, /*to_graph=*/false, /*has_dependencies=*/false);
      break;
    case DRV(cuStreamBeginCapture_v2): case DRV(cuStreamBeginCapture_v2_ptsz):
      on_stream_begin_capture(resolve(u64(params<cuStreamBeginCapture_v2_params>(data).hStream),
                                      cbid == DRV(cuStreamBeginCapture_v2_ptsz)),
                              0, /*to_graph=*/false, /*has_dependencies=*/false);
      break;
    case DRV(cuStreamBeginCaptureToGraph): case DRV(cuStreamBeginCaptureToGraph_ptsz): {
      const auto& p = params<cuStreamBeginCaptureToGraph_params>(data);
      on_stream_begin_capture(resolve(u64(p.hStream), cbid == DRV(cuStreamBeginCaptureToGraph_ptsz)),
                              u64(p.hGraph), /*to_graph=*/true, p.numDependencies != 0);
      break;
    }
    case DRV(cuStreamEndCapture): case DRV(cuStreamEndCapture_ptsz): {
      const auto& p = params<cuStreamEndCapture_params>(data);
      on_stream_end_capture(resolve(u64(p.hStream), cbid == DRV(cuStreamEndCapture_ptsz)),
                            p.phGraph ? u64(*p.phGraph) : 0);
      break;
    }
    case DRV(cuStreamGetCaptureInfo_v2): case DRV(cuStreamGetCaptureInfo_v2_ptsz): {
      const auto& p = params<cuStreamGetCaptureInfo_v2_params>(data);
      capture_info(resolve(u64(p.hStream), cbid == DRV(cuStreamGetCaptureInfo_v2_ptsz)),
                   p.captureStatus_out, p.graph_out, p.dependencies_out, p.numDependencies_out);
      break;
    }
    case DRV(cuStreamGetCaptureInfo_v3): case DRV(cuStreamGetCaptureInfo_v3_ptsz): {
      const auto& p = params<cuStreamGetCaptureInfo_v3_params>(data);
      capture_info(resolve(u64(p.hStream), cbid == DRV(cuStreamGetCaptureInfo_v3_ptsz)),
                   p.captureStatus_out, p.graph_out, p.dependencies_out, p.numDependencies_out);
      break;
    }
    case DRV(cuStreamUpdateCaptureDependencies):
    case DRV(cuStreamUpdateCaptureDependencies_ptsz): {
      const auto& p = params<cuStreamUpdateCaptureDependencies_params>(data);
      capture_dependencies(
          resolve(u64(p.hStream), cbid == DRV(cuStreamUpdateCaptureDependencies_ptsz)),
          reinterpret_cast<const void* const*>(p.dependencies), p.numDependencies);
      break;
    }
    case DRV(cuStreamUpdateCaptureDependencies_v2):
    case DRV(cuStreamUpdateCaptureDependencies_v2_ptsz): {
      const auto& p = params<cuStreamUpdateCaptureDependencies_v2_params>(data);
      capture_dependencies(
          resolve(u64(p.hStream), cbid == DRV(cuStreamUpdateCaptureDependencies_v2_ptsz)),
          reinterpret_cast<const void* const*>(p.dependencies), p.numDependencies);
      break;
    }
    case DRV(cuGraphInstantiate): case DRV(cuGraphInstantiate_v2): {
      const auto& p = params<cuGraphInstantiate_v2_params>(data);
      if (p.phGraphExec) on_graph_instantiate(u64(*p.phGraphExec), u64(p.hGraph), 0);
      break;
    }
    case DRV(cuGraphInstantiateWithFlags): {
      const auto& p = params<cuGraphInstantiateWithFlags_params>(data);
      if (p.phGraphExec) on_graph_instantiate(u64(*p.phGraphExec), u64(p.hGraph), p.flags);
      break;
    }
    case DRV(cuGraphInstantiateWithParams): case DRV(cuGraphInstantiateWithParams_ptsz): {
      const auto& p = params<cuGraphInstantiateWithParams_params>(data);
      if (p.phGraphExec)
        on_graph_instantiate(u64(*p.phGraphExec), u64(p.hGraph),
                             p.instantiateParams != nullptr ? p.instantiateParams->flags : 0);
      break;
    }
    case DRV(cuGraphExecUpdate): {
      const auto& p = params<cuGraphExecUpdate_params>(data);
      on_graph_exec_update(u64(p.hGraphExec), u64(p.hGraph));
      break;
    }
    case DRV(cuGraphExecUpdate_v2): {
      const auto& p = params<cuGraphExecUpdate_v2_params>(data);
      on_graph_exec_update(u64(p.hGraphExec), u64(p.hGraph));
      break;
    }
    case DRV(cuGraphCreate): {
      const auto& p = params<cuGraphCreate_params>(data);
      if (p.phGraph) on_graph_forget(u64(*p.phGraph));
      break;
    }
    case DRV(cuGraphDestroy):
      on_graph_forget(u64(params<cuGraphDestroy_params>(data).hGraph));
      break;
    case DRV(cuGraphClone): {
      const auto& p = params<cuGraphClone_params>(data);
      if (p.phGraphClone) on_graph_clone(u64(*p.phGraphClone), u64(p.originalGraph));
      break;
    }
    case DRV(cuGraphAddNode): {
      const auto& p = params<cuGraphAddNode_params>(data);
      driver_added_node(DriverAddNode<cuGraphAddNode_params>{p}, p.dependencies, p.numDependencies,
                        p.nodeParams);
      break;
    }
    case DRV(cuGraphAddNode_v2): {
      const auto& p = params<cuGraphAddNode_v2_params>(data);
      driver_added_node(DriverAddNode<cuGraphAddNode_v2_params>{p}, p.dependencies,
                        p.numDependencies, p.nodeParams);
      break;
    }
    case DRV(cuGraphAddKernelNode): {  // the CUDA 11 parameters: no CUkernel
      const auto& p = params<cuGraphAddKernelNode_params>(data);
      if (p.nodeParams == nullptr) break;
      const auto& k = *p.nodeParams;
      node_by_hand(p.hGraph, [&](StreamId s) {
        on_kernel_launch(u64(k.func), k.kernelParams, k.extra,
                         grid_of(k.gridDimX, k.gridDimY, k.gridDimZ), s);
      });
      break;
    }
    case DRV(cuGraphAddKernelNode_v2): {
      const auto& p = params<cuGraphAddKernelNode_v2_params>(data);
      if (p.nodeParams == nullptr) break;
      const auto& k = *p.nodeParams;
      node_by_hand(p.hGraph, [&](StreamId s) {
        on_kernel_launch(k.func != nullptr ? u64(k.func) : u64(k.kern), k.kernelParams, k.extra,
                         grid_of(k.gridDimX, k.gridDimY, k.gridDimZ), s);
      });
      break;
    }
    case DRV(cuGraphAddMemsetNode): {
      const auto& p = params<cuGraphAddMemsetNode_params>(data);
      if (p.memsetParams == nullptr) break;
      const auto& m = *p.memsetParams;
      node_by_hand(p.hGraph, [&](StreamId s) { on_memset(m.dst, memset_bytes(m), s); });
      break;
    }
    case DRV(cuGraphAddMemcpyNode): {
      const auto& p = params<cuGraphAddMemcpyNode_params>(data);
      if (p.copyParams != nullptr) driver_copy_node(p.hGraph, *p.copyParams);
      break;
    }
    case DRV(cuGraphAddChildGraphNode): {
      const auto& p = params<cuGraphAddChildGraphNode_params>(data);
      on_child_graph_node(u64(p.hGraph), u64(p.childGraph));
      break;
    }
    case DRV(cuGraphAddMemAllocNode): case DRV(cuGraphAddMemFreeNode):
      on_graph_memory_node();
      break;
    case DRV(cuGraphLaunch): case DRV(cuGraphLaunch_ptsz): {
      const auto& p = params<cuGraphLaunch_params>(data);
      on_graph_exec_launch(u64(p.hGraph),
                           resolve(u64(p.hStream), cbid == DRV(cuGraphLaunch_ptsz)));
      break;
    }
    default:
      break;
  }
}

namespace {

const CUpti_CallbackId kRuntimeGraphCallbackIds[] = {
    RT(cudaStreamBeginCapture_v10000), RT(cudaStreamBeginCapture_ptsz_v10000),
    RT(cudaStreamBeginCaptureToGraph_v12030), RT(cudaStreamBeginCaptureToGraph_ptsz_v12030),
    RT(cudaStreamEndCapture_v10000), RT(cudaStreamEndCapture_ptsz_v10000),
    RT(cudaStreamGetCaptureInfo_v12030), RT(cudaStreamGetCaptureInfo_ptsz_v12030),
    RT(cudaStreamUpdateCaptureDependencies_v12030),
    RT(cudaStreamUpdateCaptureDependencies_ptsz_v12030),
    RT(cudaGraphInstantiate_v10000), RT(cudaGraphInstantiate_v12000),
    RT(cudaGraphInstantiateWithFlags_v11040), RT(cudaGraphInstantiateWithParams_v12000),
    RT(cudaGraphInstantiateWithParams_ptsz_v12000), RT(cudaGraphExecUpdate_v10020),
    RT(cudaGraphExecDestroy_v10000), RT(cudaGraphCreate_v10000), RT(cudaGraphDestroy_v10000),
    RT(cudaGraphClone_v10000), RT(cudaGraphAddNode_v12030), RT(cudaGraphAddKernelNode_v10000),
    RT(cudaGraphAddMemcpyNode_v10000), RT(cudaGraphAddMemcpyNode1D_v11010),
    RT(cudaGraphAddMemcpyNodeToSymbol_v11010), RT(cudaGraphAddMemcpyNodeFromSymbol_v11010),
    RT(cudaGraphAddMemsetNode_v10000), RT(cudaGraphAddChildGraphNode_v10000),
    RT(cudaGraphAddMemAllocNode_v11040), RT(cudaGraphAddMemFreeNode_v11040),
    RT(cudaGraphLaunch_v10000), RT(cudaGraphLaunch_ptsz_v10000),
};

const CUpti_CallbackId kDriverGraphCallbackIds[] = {
    DRV(cuStreamBeginCapture), DRV(cuStreamBeginCapture_ptsz), DRV(cuStreamBeginCapture_v2),
    DRV(cuStreamBeginCapture_v2_ptsz), DRV(cuStreamBeginCaptureToGraph),
    DRV(cuStreamBeginCaptureToGraph_ptsz), DRV(cuStreamEndCapture), DRV(cuStreamEndCapture_ptsz),
    DRV(cuStreamGetCaptureInfo_v2), DRV(cuStreamGetCaptureInfo_v2_ptsz),
    DRV(cuStreamGetCaptureInfo_v3), DRV(cuStreamGetCaptureInfo_v3_ptsz),
    DRV(cuStreamUpdateCaptureDependencies), DRV(cuStreamUpdateCaptureDependencies_ptsz),
    DRV(cuStreamUpdateCaptureDependencies_v2), DRV(cuStreamUpdateCaptureDependencies_v2_ptsz),
    DRV(cuGraphInstantiate), DRV(cuGraphInstantiate_v2), DRV(cuGraphInstantiateWithFlags),
    DRV(cuGraphInstantiateWithParams), DRV(cuGraphInstantiateWithParams_ptsz),
    DRV(cuGraphExecUpdate), DRV(cuGraphExecUpdate_v2), DRV(cuGraphExecDestroy),
    DRV(cuGraphCreate), DRV(cuGraphDestroy), DRV(cuGraphClone), DRV(cuGraphAddNode),
    DRV(cuGraphAddNode_v2), DRV(cuGraphAddKernelNode), DRV(cuGraphAddKernelNode_v2),
    DRV(cuGraphAddMemcpyNode), DRV(cuGraphAddMemsetNode), DRV(cuGraphAddChildGraphNode),
    DRV(cuGraphAddMemAllocNode), DRV(cuGraphAddMemFreeNode), DRV(cuGraphLaunch),
    DRV(cuGraphLaunch_ptsz),
};

}  // namespace

const std::span<const CUpti_CallbackId> kRuntimeGraphCallbacks{kRuntimeGraphCallbackIds};
const std::span<const CUpti_CallbackId> kDriverGraphCallbacks{kDriverGraphCallbackIds};

#undef RT
#undef DRV

}  // namespace xsc::rt::cupti
