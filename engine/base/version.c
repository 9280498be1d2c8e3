/* The version recorded with every run and printed by `bigbatch version`: the release and the
 * git commit the binary was built from (commit.h is written by the Makefile). */
#include "version.h"

#include "commit.h"

const char *bigbatch_version(void)
{
    return BIGBATCH_VERSION BIGBATCH_COMMIT;
}
