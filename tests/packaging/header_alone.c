/* The public header must compile on its own: nothing may be needed before it. */
#include <distribute/c_api.h>
