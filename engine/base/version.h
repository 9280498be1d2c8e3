#ifndef BB_VERSION_H
#define BB_VERSION_H
#include "../real.h"
#define BIGBATCH_VERSION "0.1.0"
/* BIGBATCH_VERSION and the build's commit: "0.1.0+0123456789ab", with ".dirty" when the
 * engine's sources differed from that commit, or "0.1.0" outside a git checkout. */
const char *bigbatch_version(void);
#endif
