// CUPTI: loading the library, subscribing, enabling exactly the callbacks
// the checker needs, and dispatching each by callback id to the handlers of
// its domain (runtime_api.cpp, driver_api.cpp), which turn calls into the
// operations of ops.h.
//
// Runtime calls are handled at the runtime level (their stream semantics,
// cudaStreamPerThread included, are what the program wrote). The driver
// calls a runtime call makes inside itself are its implementation and are
// ignored, with one exception: a runtime kernel launch takes its function
// handle and arguments from the nested driver launch when one arrives,
// and falls back to the runtime-level data when none does.
//
// Launches are the hot path, and CUPTI's dispatch is most of their cost: a
// runtime launch costs four callbacks (runtime and driver, entry and exit).
// The runtime's callbacks of launches, and of the busiest other calls, are
// therefore calibrated away (calibration.cpp): once the first calls showed
// that the nested driver call alone describes each of them, only the
// driver's are kept.
#include <dlfcn.h>
#include <glob.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/cuda/cupti_handlers.h"
#include "runtime/rtl.h"
#include "runtime/timing.h"

namespace xsc::rt {
namespace {

using namespace cupti;

// ---- CUPTI entry points -----------------------------------------------------

struct CuptiApi {
  void* library = nullptr;
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiEnableCallback) enable_callback = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
  decltype(&cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&cuptiActivityGetAttribute) get_activity_attribute = nullptr;
  decltype(&cuptiActivitySetAttribute) set_activity_attribute = nullptr;
};

// The loaded CUPTI and the runtime's subscriber, for the application's own
// cuptiSubscribe (below) to take the slot over.
struct Subscription {
  std::mutex mu;
  CuptiApi api;
  CUpti_SubscriberHandle subscriber = nullptr;  // null: not subscribed
  // CUPTI's own count of activity buffers to pre-allocate per context, to
  // give back to an application that takes the slot; 0 when unchanged.
  std::size_t cupti_preallocated_buffers = 0;
};

Subscription& subscription() {
  static auto* instance = new Subscription;
  return *instance;
}

std::vector<std::string> cupti_candidates() {
  std::vector<std::string> names;
  // An explicit choice is the only candidate: no silent fallback to a
  // different CUPTI than the one asked for.
  if (const char* path = std::getenv("XSC_CUPTI_LIB"); path != nullptr && *path != '\0') {
    names.emplace_back(path);
    return names;
  }
  names.emplace_back("libcupti.so.13");
  names.emplace_back("libcupti.so");
  glob_t found{};
  if (glob("/usr/local/cuda/lib64/libcupti.so*", 0, nullptr, &found) == 0) {
    for (std::size_t i = 0; i < found.gl_pathc; ++i) names.emplace_back(found.gl_pathv[i]);
  }
  globfree(&found);
  return names;
}

bool load_cupti(CuptiApi* api) {
  for (const std::string& name : cupti_candidates()) {
    void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) continue;
    api->library = library;
    api->unsubscribe =
        reinterpret_cast<decltype(api->unsubscribe)>(dlsym(library, "cuptiUnsubscribe"));
    api->subscribe = reinterpret_cast<decltype(api->subscribe)>(dlsym(library, "cuptiSubscribe"));
    api->enable_callback =
        reinterpret_cast<decltype(api->enable_callback)>(dlsym(library, "cuptiEnableCallback"));
    api->result_string =
        reinterpret_cast<decltype(api->result_string)>(dlsym(library, "cuptiGetResultString"));
    api->get_activity_attribute = reinterpret_cast<decltype(api->get_activity_attribute)>(
        dlsym(library, "cuptiActivityGetAttribute"));
    api->set_activity_attribute = reinterpret_cast<decltype(api->set_activity_attribute)>(
        dlsym(library, "cuptiActivitySetAttribute"));
    if (api->subscribe != nullptr && api->enable_callback != nullptr) return true;
  }
  return false;
}

// Without a CUDA driver no CUDA program can run here: there is nothing to
// check and nothing worth a message (every process under LD_PRELOAD, the
// shell included, would print one).
bool driver_installed() {
  void* library = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (library == nullptr) return false;
  dlclose(library);
  return true;
}

// ---- the callback -------------------------------------------------------------

// A free (destroy) fed at entry whose call then failed: the checker has
// retired something the driver did not. Rare (a double free, a bad stream),
// and the application sees the error itself.
void note_failed_after_enter(const char* function) {
  if (options().verbosity >= 1)
    notice(std::string(function != nullptr ? function : "a CUDA call") +
           " failed after the checker took it as done; later reports on its pointer may be wrong");
}

void handle_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* raw) {
  ThreadState& thread = thread_state();
  if (thread.guard > 0) return;
  const auto* data = static_cast<const CUpti_CallbackData*>(raw);
  if (driver_only_launches()) {
    // A runtime launch callback that was already on its way when they were
    // turned off, and the state of a launch whose exit callback will not
    // come: the driver launch carries the launch now. Dropped before any
    // runtime call is looked at, which would take it for the call's caller.
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && is_runtime_launch(cbid)) return;
    if (thread.runtime_depth > 0 && is_runtime_launch(thread.runtime_cbid)) {
      thread.runtime_depth = 0;
      thread.nested_launch_seen = false;
    }
  }
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && !runtime_call_observed(thread, cbid, data)) return;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    if (data->callbackSite == CUPTI_API_ENTER) {
      if (thread.runtime_depth++ == 0) {
        thread.runtime_cbid = cbid;
        thread.nested_launch_seen = false;
        if (is_runtime_launch(cbid)) {
          // A launch is never fed at entry: only its stream is noted, for
          // the nested driver launch that normally carries everything.
          thread.runtime_launch_stream = runtime_launch_stream(cbid, data);
          thread.launch_made_other_driver_calls = false;
          thread.fed_at_enter = false;
        } else {
          ReentrancyGuard guard;
          thread.fed_at_enter = runtime_enter(cbid, data);
        }
      }
      return;
    }
    if (thread.runtime_depth > 0 && --thread.runtime_depth > 0) return;
    if (thread.nested_launch_seen) {
      // A launch its driver launch already fed (the common case): nothing
      // left but the adapter poll every launch exit makes.
      thread.nested_launch_seen = false;
      if (calibrating_launches())
        calibrate_launch(thread.nested_driver_stream == thread.runtime_launch_stream &&
                             !thread.launch_made_other_driver_calls,
                         data->functionName);
      poll_torch_adapter();
      return;
    }
    // A launch that succeeded without a nested driver launch. (A failed one
    // says nothing about how launches are observed.)
    if (is_runtime_launch(cbid) && calibrating_launches() && runtime_succeeded(data))
      calibrate_launch(false, data->functionName);
    if (thread.fed_at_enter) {
      thread.fed_at_enter = false;
      if (!runtime_succeeded(data)) note_failed_after_enter(data->functionName);
    } else if (runtime_succeeded(data)) {
      ReentrancyGuard guard;
      runtime_exit(cbid, data);
    }
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    // Inside a runtime call being calibrated: described, never fed (the
    // runtime call feeds itself at its exit).
    if (thread.call_checked && thread.runtime_depth == 1) {
      ReentrancyGuard guard;
      describe_nested_call(thread, cbid, data);
      return;
    }
    // A host function is wrapped at its driver call's entry, also when a
    // runtime call made it (host_funcs.cpp); the kHostFunc event comes from
    // the exit of the call the application made.
    if (data->callbackSite == CUPTI_API_ENTER && wrap_host_function(cbid, data) &&
        thread.runtime_depth > 0)
      return;
    if (thread.runtime_depth == 0) {
      // Driver calls made by the application itself.
      if (data->callbackSite == CUPTI_API_ENTER) {
        ReentrancyGuard guard;
        thread.driver_fed_at_enter = driver_enter(cbid, data);
        return;
      }
      if (thread.driver_fed_at_enter) {
        thread.driver_fed_at_enter = false;
        if (!driver_succeeded(data)) note_failed_after_enter(data->functionName);
        return;
      }
    }
    if (data->callbackSite != CUPTI_API_EXIT || !driver_succeeded(data)) return;
    if (thread.runtime_depth > 0) {
      // Inside a runtime call: only a launch's own driver launch is used.
      const bool in_launch = is_runtime_launch(thread.runtime_cbid);
      if (in_launch && (!is_driver_launch(cbid) || thread.nested_launch_seen))
        thread.launch_made_other_driver_calls = true;
      if (is_driver_launch(cbid) && in_launch && !thread.nested_launch_seen) {
        thread.nested_launch_seen = true;
        ReentrancyGuard guard;
        driver_launch(cbid, data, &thread.runtime_launch_stream);
      }
      return;
    }
    ReentrancyGuard guard;
    driver_exit(cbid, data);
  } else {
    return;
  }
  // Outside the guard: the adapter's attach may make CUDA calls of its own.
  if (thread.adapter_check_due) {
    thread.adapter_check_due = false;
    maybe_attach_torch_adapter();
  }
  // The adapter hooks PyTorch's allocator only after a kernel launch: the
  // allocator makes CUDA calls (device properties and the like) while it is
  // still building its per-device state, and hooking it then would touch
  // entries that do not exist yet. A launch comes only once it is whole.
  const bool launch = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? is_runtime_launch(cbid)
                                                            : is_driver_launch(cbid);
  if (launch) poll_torch_adapter();
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* raw) {
  // The cost of CUPTI's dispatch alone (XSC_PROFILE=subscribe-only).
  if (profile_mode() == ProfileMode::kSubscribeOnly) return;
  if (!callback_timing_on.load(std::memory_order_relaxed)) {
    handle_callback(domain, cbid, raw);
    return;
  }
  std::uint64_t none = 0;
  startup_times().first_callback.compare_exchange_strong(none, monotonic_ns(),
                                                         std::memory_order_relaxed);
  // Which calls the callbacks come for (timing_calls), counted at entry.
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    const auto* data = static_cast<const CUpti_CallbackData*>(raw);
    if (data->callbackSite == CUPTI_API_ENTER)
      note_cuda_call(domain == CUPTI_CB_DOMAIN_DRIVER_API, cbid, data->functionName);
  }
  const PartScope part(Part::kCallbacks);
  handle_callback(domain, cbid, raw);
}

// Once subscribed, CUPTI pre-allocates buffers for Activity API records
// (by default 3 of about 3 MB) in every context created from then on. The
// runtime uses callbacks only: on the buggy example those buffers cost
// about 2,350 page faults (9 MB of freshly zeroed memory) per process, and
// driver round trips at context creation. The runtime asks for none; CUPTI
// still allocates buffers when a profiler in the process enables activity
// records, and an application that takes the CUPTI slot gets the old count
// back.
// XSC_CUPTI_DEVICE_BUFFERS=N asks for N instead, to measure the difference.
void limit_activity_buffers(Subscription& sub) {
  CuptiApi& api = sub.api;
  if (api.get_activity_attribute == nullptr || api.set_activity_attribute == nullptr) return;
  std::size_t wanted = 0;
  if (const char* text = std::getenv("XSC_CUPTI_DEVICE_BUFFERS"); text != nullptr && *text != '\0') {
    char* end = nullptr;
    const unsigned long long value = std::strtoull(text, &end, 10);
    if (*end != '\0' || value > 64) {
      std::fprintf(stderr,
                   "xstream-check: XSC_CUPTI_DEVICE_BUFFERS: '%s' is not a count from 0 to 64; "
                   "ignored\n",
                   text);
      return;
    }
    wanted = static_cast<std::size_t>(value);
  }
  std::size_t current = 0;
  std::size_t size = sizeof current;
  if (api.get_activity_attribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, &size,
                                 &current) != CUPTI_SUCCESS ||
      current == wanted)
    return;
  size = sizeof wanted;
  if (api.set_activity_attribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, &size,
                                 &wanted) == CUPTI_SUCCESS)
    sub.cupti_preallocated_buffers = current;
}

// Gives an application that takes the CUPTI slot CUPTI's own pre-allocation
// back, for the contexts it creates from then on.
void restore_activity_buffers(Subscription& sub) {
  if (sub.cupti_preallocated_buffers == 0 || sub.api.set_activity_attribute == nullptr) return;
  std::size_t size = sizeof sub.cupti_preallocated_buffers;
  sub.api.set_activity_attribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, &size,
                                 &sub.cupti_preallocated_buffers);
  sub.cupti_preallocated_buffers = 0;
}

}  // namespace

// Called from a call's exit callback; the subscription lock is only tried,
// since the application's own cuptiSubscribe holds it while CUPTI may wait
// for callbacks in flight.
bool cupti::disable_runtime_callbacks(std::span<const CUpti_CallbackId> ids) {
  Subscription& sub = subscription();
  std::unique_lock<std::mutex> lock(sub.mu, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  if (sub.subscriber == nullptr || sub.api.enable_callback == nullptr) return true;
  ReentrancyGuard guard;
  for (CUpti_CallbackId cbid : ids)
    sub.api.enable_callback(0, sub.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
  return true;
}

bool subscribe_cupti() {
  Subscription& sub = subscription();
  std::lock_guard<std::mutex> lock(sub.mu);
  CuptiApi& api = sub.api;
  StartupTimes& times = startup_times();
  times.cupti_begin = monotonic_ns();
  // Callback handling is timed only when asked: two clock reads per callback
  // are a measurable part of a launch.
  callback_timing_on.store(options().verbosity >= 2 || profile_parts(), std::memory_order_relaxed);
  if (!load_cupti(&api)) {
    if (!driver_installed()) return true;
    std::fprintf(stderr,
                 "xstream-check: cannot load CUPTI (libcupti.so.13; set XSC_CUPTI_LIB to its "
                 "path); checking disabled\n");
    return false;
  }
  times.cupti_loaded = monotonic_ns();
  CUpti_SubscriberHandle subscriber = nullptr;
  const CUptiResult result =
      api.subscribe(&subscriber, reinterpret_cast<CUpti_CallbackFunc>(on_callback), nullptr);
  times.cupti_subscribed = monotonic_ns();
  if (result != CUPTI_SUCCESS) {
    if (!driver_installed()) return true;
    const char* text = nullptr;
    if (api.result_string == nullptr || api.result_string(result, &text) != CUPTI_SUCCESS)
      text = nullptr;
    if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
      std::fprintf(stderr,
                   "xstream-check: another CUPTI tool (a profiler or sanitizer) holds the "
                   "callback subscription; checking disabled\n");
    } else {
      std::fprintf(stderr, "xstream-check: cuptiSubscribe failed (%s); checking disabled\n",
                   text != nullptr ? text : "unknown error");
    }
    return false;
  }
  limit_activity_buffers(sub);
  // XSC_PROFILE=subscribe-bare: what the subscription costs by itself,
  // apart from the callbacks enabled on it.
  if (profile_mode() == ProfileMode::kSubscribeBare) {
    sub.subscriber = subscriber;
    return true;
  }
  const LaunchCallbacks launches = options().launch_callbacks;
  start_calibration(options());
  int failed = 0;
  // XSC_PROFILE=subscribe-only measures CUPTI's dispatch in a checked
  // run's steady state: a callback that returns at once never calibrates,
  // so the runtime callbacks that calibration turns off are left off here.
  const bool steady_only = profile_mode() == ProfileMode::kSubscribeOnly;
  for (CUpti_CallbackId cbid : kRuntimeCallbacks) {
    if (launches == LaunchCallbacks::kDriver && is_runtime_launch(cbid)) continue;
    if (steady_only && calibrated_call(cbid)) continue;
    failed += api.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, cbid) != CUPTI_SUCCESS;
  }
  for (CUpti_CallbackId cbid : kDriverCallbacks)
    failed += api.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid) != CUPTI_SUCCESS;
  for (CUpti_CallbackId cbid : kRuntimeGraphCallbacks)
    failed += api.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, cbid) != CUPTI_SUCCESS;
  for (CUpti_CallbackId cbid : kDriverGraphCallbacks)
    failed += api.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid) != CUPTI_SUCCESS;
  if (failed > 0 && options().verbosity > 0)
    std::fprintf(stderr, "xstream-check: %d CUPTI callbacks could not be enabled\n", failed);
  sub.subscriber = subscriber;
  return true;
}

// CUPTI has one subscriber slot. An application that subscribes itself
// gets it: the runtime unsubscribes and stops feeding events (a partial view
// would report false races), and the report at exit covers what was seen.
void yield_cupti_to_application() {
  Subscription& sub = subscription();
  std::lock_guard<std::mutex> lock(sub.mu);
  if (sub.subscriber == nullptr) return;
  if (sub.api.unsubscribe != nullptr) {
    ReentrancyGuard guard;
    sub.api.unsubscribe(sub.subscriber);
    restore_activity_buffers(sub);
  }
  sub.subscriber = nullptr;
  stop_checking();
  notice("the application subscribes to CUPTI itself; checking stops here");
}

// The real CUPTI entry point `name`: from the CUPTI the runtime loaded, or
// the next definition after this library (the application's libcupti).
void* real_cupti_symbol(const char* name) {
  void* library = nullptr;
  {
    Subscription& sub = subscription();
    std::lock_guard<std::mutex> lock(sub.mu);
    library = sub.api.library;
  }
  void* symbol = library != nullptr ? dlsym(library, name) : nullptr;
  if (symbol == nullptr) symbol = dlsym(RTLD_NEXT, name);
  return symbol;
}

}  // namespace xsc::rt

// Interposed (LD_PRELOAD) CUPTI subscription entry points: see
// yield_cupti_to_application. The application's call and result are passed
// through untouched.
extern "C" __attribute__((visibility("default"))) CUptiResult CUPTIAPI
cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata) {
  xsc::rt::yield_cupti_to_application();
  auto real = reinterpret_cast<decltype(&cuptiSubscribe)>(
      xsc::rt::real_cupti_symbol("cuptiSubscribe"));
  if (real == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  return real(subscriber, callback, userdata);
}

extern "C" __attribute__((visibility("default"))) CUptiResult CUPTIAPI
cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata,
                  CUpti_SubscriberParams* params) {
  xsc::rt::yield_cupti_to_application();
  auto real = reinterpret_cast<decltype(&cuptiSubscribe_v2)>(
      xsc::rt::real_cupti_symbol("cuptiSubscribe_v2"));
  if (real == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  return real(subscriber, callback, userdata, params);
}
