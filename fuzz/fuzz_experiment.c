/* libFuzzer target: the experiment-file reader (inih through our line reader, every section's
 * checks, the grid and zip expansion, derived expressions) on arbitrary text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../sweeps/experiment.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0'; /* the reader refuses NUL bytes before this; the fuzzer still tries them */
    Experiment exp;
    Error err = {{0}};
    if (experiment_load_string("fuzz.ini", text, NULL, &exp, &err) == 0) {
        RunSpec *runs = NULL;
        int n = 0;
        if (experiment_expand(&exp, &runs, &n, &err) == 0) runspecs_free(runs, n);
        experiment_free(&exp);
    }
    free(text);
    return 0;
}
