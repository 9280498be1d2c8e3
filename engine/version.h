#ifndef BB_VERSION_H
#define BB_VERSION_H
#include "real.h"
#define BIGBATCH_VERSION "0.1.0"
#endif
