/* rotor_version: the version the library was built as (base/version.h). */
#include "rotor/base/version.h"

const char *rotor_version(void) { return ROTOR_VERSION; }
