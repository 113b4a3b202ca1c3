/* A stand-in for libcupti that keeps the subscriber's callback and logs
 * which callbacks get turned off, with a door (fake_cupti_call) through
 * which launch_calibration.c makes the calls real CUPTI would make around
 * kernel launches. */
#include <stdio.h>

#include <cupti.h>

static CUpti_CallbackFunc subscribed;
static void* subscribed_userdata;
static int token;

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                           void* userdata) {
  subscribed = callback;
  subscribed_userdata = userdata;
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
  if (subscribed == NULL) return 0;
  CUpti_CallbackData data = {0};
  data.callbackSite = exit_site ? CUPTI_API_EXIT : CUPTI_API_ENTER;
  data.functionName = "fake";
  data.functionParams = params;
  data.functionReturnValue = result;
  subscribed(subscribed_userdata, domain, cbid, &data);
  return 1;
}
