#include "cli.h"
int cli_train(int argc, char **argv) { (void)argc; (void)argv; return 1; }
