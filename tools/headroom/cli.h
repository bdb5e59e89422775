/* CLI shared helpers: option parsing, model path resolution, subcommand entry points. */
#ifndef HR_CLI_H
#define HR_CLI_H
#include <stdbool.h>
#include "headroom.h"

/* Resolve "rvm" / "meet" / "selfie" to models/NAME.json (HR_MODEL_DIR or ./models), else as given. */
const char *cli_model_path(const char *arg, char *buf, size_t n);
/* Parse "WxH". */
bool cli_parse_size(const char *s, int *w, int *h);
/* Load a model or print the error; returns NULL on failure. */
hr_model *cli_load_model(const char *arg);
/* Read a whole file into *buf (malloc; the caller frees it). HR_EIO (errno set) or HR_ENOMEM. */
hr_status cli_read_file(const char *path, void **buf, size_t *len);
/* Monotonic clock in milliseconds. */
double cli_now_ms(void);

/* SIGINT / SIGTERM end a loop at a frame boundary: the first one sets a flag that loops poll, a
 * second one exits at once (status 128 + signal). cli_stop_signal: the signal caught, 0 if none. */
void cli_catch_stop_signals(void);
int cli_stop_requested(void);
int cli_stop_signal(void);

int cmd_info(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bench(int argc, char **argv);
#endif
