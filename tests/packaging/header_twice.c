/* Including the public header twice must be harmless (the include guard). */
#include <distribute/c_api.h>
#include <distribute/c_api.h>
