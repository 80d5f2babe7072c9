/* rotor's version: one place for the program (`rotor --version`), the
 * shared library's soname (the Makefile reads ROTOR_VERSION_MAJOR from here)
 * and the documents rotor writes.  Semantic versioning: the major number
 * changes when the library's interface or a file format breaks. */
#ifndef ROTOR_BASE_VERSION_H
#define ROTOR_BASE_VERSION_H

#define ROTOR_VERSION_MAJOR 0
#define ROTOR_VERSION_MINOR 1
#define ROTOR_VERSION_PATCH 0
#define ROTOR_VERSION "0.1.0"

/* The version the library was built as ("0.1.0"), for a caller linked
 * against a shared librotor that may be newer than its headers. */
const char *rotor_version(void);

#endif
