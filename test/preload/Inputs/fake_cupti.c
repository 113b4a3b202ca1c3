/* A stand-in for libcupti with its one-subscriber rule, so that the
 * runtime's handling of an application that subscribes to CUPTI itself can
 * be checked without a GPU. Every call is logged to stderr. */
#include <stdio.h>

#include <cupti.h>

static int taken;
static int dummy_handle;

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                           void* userdata) {
  (void)callback;
  (void)userdata;
  if (subscriber == NULL) return CUPTI_ERROR_INVALID_PARAMETER;
  if (taken) {
    fprintf(stderr, "fake-cupti: subscribe refused\n");
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  taken = 1;
  *subscriber = (CUpti_SubscriberHandle)&dummy_handle;
  fprintf(stderr, "fake-cupti: subscribe\n");
  return CUPTI_SUCCESS;
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  if (!taken || subscriber != (CUpti_SubscriberHandle)&dummy_handle)
    return CUPTI_ERROR_INVALID_PARAMETER;
  taken = 0;
  fprintf(stderr, "fake-cupti: unsubscribe\n");
  return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  (void)enable;
  (void)domain;
  (void)cbid;
  return subscriber == (CUpti_SubscriberHandle)&dummy_handle ? CUPTI_SUCCESS
                                                             : CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult cuptiGetResultString(CUptiResult result, const char** text) {
  *text = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "CUPTI error";
  return CUPTI_SUCCESS;
}

/* The one Activity API attribute the runtime sets, with CUPTI's documented
 * default of 3 buffers pre-allocated per context; changes are logged. */
static size_t preallocated_buffers = 3;

CUptiResult cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t* size, void* value) {
  if (attr != CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE || *size != sizeof(size_t))
    return CUPTI_ERROR_INVALID_PARAMETER;
  *(size_t*)value = preallocated_buffers;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t* size, void* value) {
  if (attr != CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE || *size != sizeof(size_t))
    return CUPTI_ERROR_INVALID_PARAMETER;
  fprintf(stderr, "fake-cupti: activity buffers pre-allocated per context: %zu -> %zu\n",
          preallocated_buffers, *(size_t*)value);
  preallocated_buffers = *(size_t*)value;
  return CUPTI_SUCCESS;
}
