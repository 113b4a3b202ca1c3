/* An application that is a CUPTI client itself: it subscribes and prints
 * the result, which must be the same with and without the checker. */
#include <stdio.h>

#include <cupti.h>

static void CUPTIAPI on_callback(void* userdata, CUpti_CallbackDomain domain,
                                 CUpti_CallbackId cbid, const void* data) {
  (void)userdata;
  (void)domain;
  (void)cbid;
  (void)data;
}

int main(void) {
  CUpti_SubscriberHandle subscriber = NULL;
  CUptiResult result = cuptiSubscribe(&subscriber, on_callback, NULL);
  printf("cuptiSubscribe -> %d\n", (int)result);
  if (result == CUPTI_SUCCESS) printf("cuptiUnsubscribe -> %d\n", (int)cuptiUnsubscribe(subscriber));
  return result == CUPTI_SUCCESS ? 0 : 1;
}
