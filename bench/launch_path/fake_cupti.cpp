// Stand-in for libcupti (loaded through XSC_CUPTI_LIB), for launch_path
// only: keeps the subscriber's callback so that the benchmark can call it
// with the callback sequence CUPTI would make.
#include <cupti.h>

namespace {
CUpti_CallbackFunc subscribed = nullptr;
void* subscribed_userdata = nullptr;
int subscriber_token = 0;
}  // namespace

extern "C" {

__attribute__((visibility("default"))) CUptiResult cuptiSubscribe(
    CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata) {
  subscribed = callback;
  subscribed_userdata = userdata;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&subscriber_token);
  return CUPTI_SUCCESS;
}

__attribute__((visibility("default"))) CUptiResult cuptiEnableCallback(
    uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId) {
  return CUPTI_SUCCESS;
}

__attribute__((visibility("default"))) CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle) {
  subscribed = nullptr;
  return CUPTI_SUCCESS;
}

__attribute__((visibility("default"))) CUptiResult cuptiGetResultString(CUptiResult,
                                                                        const char** text) {
  *text = "fake CUPTI";
  return CUPTI_SUCCESS;
}

// The benchmark's door to the subscriber.
__attribute__((visibility("default"))) CUpti_CallbackFunc fake_cupti_callback(void** userdata) {
  *userdata = subscribed_userdata;
  return subscribed;
}

}  // extern "C"
