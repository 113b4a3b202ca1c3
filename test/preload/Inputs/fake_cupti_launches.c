/* A stand-in for libcupti that keeps the subscriber's callback and logs
 * which callbacks get turned off, with a door (fake_cupti_call) through
 * which launch_calibration.c makes the calls real CUPTI would make around
 * kernel launches. */
#include <stdio.h>
#include <stdlib.h>

#include <cupti.h>

static CUpti_CallbackFunc subscribed;
static void* subscribed_userdata;
static int token;

/* FAKE_CUPTI_COUNT_ENABLES=1: print at exit how many callbacks were
 * enabled (the measurement variants enable none or all of them). */
static int enabled_callbacks;
static int ever_enabled;  /* a subscriber that enabled nothing gets no calls */

/* FAKE_CUPTI_HONOR_OFF=1: a runtime API callback turned off is no longer
 * delivered, as real CUPTI does; by default it still is, as a callback
 * already on its way when it was turned off would be. */
enum { kRuntimeIds = 1024 };
static _Atomic int runtime_off[kRuntimeIds];
static int honor_off(void) {
  const char* honor = getenv("FAKE_CUPTI_HONOR_OFF");
  return honor != NULL && honor[0] == '1';
}
static void print_enabled(void) {
  fprintf(stderr, "fake-cupti: %d callbacks enabled\n", enabled_callbacks);
}

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                           void* userdata) {
  subscribed = callback;
  subscribed_userdata = userdata;
  const char* count = getenv("FAKE_CUPTI_COUNT_ENABLES");
  if (count != NULL && count[0] == '1') atexit(print_enabled);
  *subscriber = (CUpti_SubscriberHandle)&token;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  (void)subscriber;
  subscribed = NULL;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  (void)subscriber;
  enabled_callbacks += enable ? 1 : -1;
  ever_enabled |= enable != 0;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < kRuntimeIds) runtime_off[cbid] = !enable;
  if (!enable)
    fprintf(stderr, "fake-cupti: off: %s callback %u\n",
            domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "runtime" : "driver", (unsigned)cbid);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult result, const char** text) {
  (void)result;
  *text = "fake CUPTI";
  return CUPTI_SUCCESS;
}

/* Calls the subscriber as CUPTI would; 0 when there is none. */
int fake_cupti_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, int exit_site,
                    const void* params, void* result) {
  if (subscribed == NULL || !ever_enabled) return 0;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < kRuntimeIds && runtime_off[cbid] &&
      honor_off())
    return 1;
  CUpti_CallbackData data = {0};
  data.callbackSite = exit_site ? CUPTI_API_EXIT : CUPTI_API_ENTER;
  data.functionName = "fake";
  data.functionParams = params;
  data.functionReturnValue = result;
  subscribed(subscribed_userdata, domain, cbid, &data);
  return 1;
}
