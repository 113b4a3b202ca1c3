/* A library that posts and waits on semaphores of its own accord: the
 * runtime follows only the program's own code's semaphores (the executable
 * and libpython), so a handover made through these orders nothing. */
#include <semaphore.h>

int library_post(sem_t* sem) { return sem_post(sem); }
int library_wait(sem_t* sem) { return sem_wait(sem); }
