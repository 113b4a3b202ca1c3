#include "runtime/torch/autograd_nodes.h"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ATen/SequenceNumber.h>
#include <ATen/core/grad_mode.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/function.h>

namespace xsc::torch_adapter {
namespace {

const xsc_host_api* g_api = nullptr;

// Forward captures remembered per forward thread: enough for the nodes of
// one large step's forward pass (a capture is remembered only when a node
// was created since the last one).
constexpr std::size_t kRemembered = 1 << 14;

struct ForwardStacks {
  std::mutex mu;
  // Ring of (counter, stack), counters non-decreasing in ring order.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> ring =
      std::vector<std::pair<std::uint64_t, std::uint32_t>>(kRemembered);
  std::size_t next = 0;   // where the next one goes
  std::size_t count = 0;  // how many are held

  void add(std::uint64_t counter, std::uint32_t id) {
    std::lock_guard<std::mutex> lock(mu);
    ring[next] = {counter, id};
    next = (next + 1) % kRemembered;
    if (count < kRemembered) ++count;
  }

  // The stack remembered at exactly `counter`, or 0.
  std::uint32_t find(std::uint64_t counter) {
    std::lock_guard<std::mutex> lock(mu);
    const std::size_t first = (next + kRemembered - count) % kRemembered;
    std::size_t lo = 0, hi = count;  // binary search in ring order
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (ring[(first + mid) % kRemembered].first < counter) lo = mid + 1;
      else hi = mid;
    }
    if (lo == count) return 0;
    const auto& entry = ring[(first + lo) % kRemembered];
    return entry.first == counter ? entry.second : 0;
  }
};

// By RecordFunction's thread id, which a node keeps as its forward thread.
std::mutex g_threads_mu;
auto* g_threads = new std::unordered_map<std::uint64_t, ForwardStacks*>;  // leaked

ForwardStacks* stacks_of(std::uint64_t thread) {
  std::lock_guard<std::mutex> lock(g_threads_mu);
  auto it = g_threads->find(thread);
  return it == g_threads->end() ? nullptr : it->second;
}

struct ThisThread {
  ForwardStacks* stacks = nullptr;
  std::uint64_t last_counter = ~std::uint64_t{0};
};
thread_local ThisThread t_this;

// (node name, forward stack) -> backward stack, per thread: a step's
// backward meets the same pairs every step.
struct PairKey {
  std::uint32_t forward;
  std::string node;
  bool operator==(const PairKey& o) const { return forward == o.forward && node == o.node; }
};
struct PairHash {
  std::size_t operator()(const PairKey& k) const {
    return std::hash<std::string>()(k.node) * 31 + k.forward;
  }
};
thread_local std::unordered_map<PairKey, std::uint32_t, PairHash>* t_composed = nullptr;

// The node this thread last composed a stack for: a node's evaluation
// allocates and launches several times, and each asks again. A node is
// named by its forward thread and sequence number, which no other node of
// the run shares; its address alone could be reused.
struct LastNode {
  const torch::autograd::Node* node = nullptr;
  std::uint64_t thread = 0;
  std::uint64_t sequence_nr = 0;
  std::uint32_t stack = 0;
};
thread_local LastNode t_last_node;

}  // namespace

void init_autograd_nodes(const xsc_host_api* api) {
  // XSC_PROFILE=no-backward-stacks (a measurement variant,
  // docs/performance-knobs.md): forward stacks are not remembered, and a
  // backward use keeps its native stack.
  const char* profile = std::getenv("XSC_PROFILE");
  if (profile != nullptr && std::strcmp(profile, "no-backward-stacks") == 0) return;
  if (api->version >= 4 && api->backward_stack != nullptr) g_api = api;
}

void note_forward_stack(std::uint32_t id) {
  if (g_api == nullptr || id == 0 || !at::GradMode::is_enabled()) return;
  const std::uint64_t counter = at::sequence_number::peek();
  ThisThread& self = t_this;
  if (counter == self.last_counter) return;
  self.last_counter = counter;
  if (self.stacks == nullptr) {
    const std::uint64_t thread = at::RecordFunction::currentThreadId();
    auto* stacks = new ForwardStacks;
    std::lock_guard<std::mutex> lock(g_threads_mu);
    auto [it, inserted] = g_threads->emplace(thread, stacks);
    if (!inserted) delete stacks;
    self.stacks = it->second;
  }
  self.stacks->add(counter, id);
}

namespace {

std::uint32_t compose_backward_stack(const torch::autograd::Node& node, std::uint64_t thread,
                                     std::uint64_t sequence_nr) {
  ForwardStacks* stacks = stacks_of(thread);
  if (stacks == nullptr) return 0;
  const std::uint32_t forward = stacks->find(sequence_nr + 1);
  if (forward == 0) return 0;
  if (t_composed == nullptr)
    t_composed = new std::unordered_map<PairKey, std::uint32_t, PairHash>;  // per thread, kept
  PairKey key{forward, node.name()};
  auto it = t_composed->find(key);
  if (it != t_composed->end()) return it->second;
  const std::uint32_t id = g_api->backward_stack(key.node.c_str(), forward);
  if (id != 0) t_composed->emplace(std::move(key), id);
  return id;
}

}  // namespace

std::uint32_t backward_stack() {
  if (g_api == nullptr) return 0;
  std::shared_ptr<torch::autograd::Node> node = torch::autograd::get_current_node();
  if (!node) return 0;
  LastNode& last = t_last_node;
  const std::uint64_t thread = node->thread_id();
  const std::uint64_t sequence_nr = node->sequence_nr();
  if (last.node == node.get() && last.thread == thread && last.sequence_nr == sequence_nr)
    return last.stack;
  const std::uint32_t id = compose_backward_stack(*node, thread, sequence_nr);
  last = LastNode{node.get(), thread, sequence_nr, id};
  return id;
}

}  // namespace xsc::torch_adapter
