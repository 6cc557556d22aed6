#ifdef __linux__
// malloc_trim: the harness returns freed heap memory to the system before resetting the peak.
#include <malloc.h>
#endif
