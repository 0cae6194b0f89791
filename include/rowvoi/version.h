/*
** rowvoi version macros.  This file is the single source of the version:
** CMake and the Python build both read RV_VERSION_STRING from here.
*/
#ifndef ROWVOI_VERSION_H
#define ROWVOI_VERSION_H

#define RV_VERSION_MAJOR  0
#define RV_VERSION_MINOR  1
#define RV_VERSION_PATCH  0
#define RV_VERSION_STRING "0.1.0"
#define RV_VERSION_NUMBER (RV_VERSION_MAJOR * 10000 + RV_VERSION_MINOR * 100 + RV_VERSION_PATCH)

#endif /* ROWVOI_VERSION_H */
