/* headroom CLI entry point: dispatches to subcommands (info, plan, run, bench). */
#include <stdio.h>
#include <string.h>
#include "headroom.h"

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: headroom info|plan|run|bench ...\n"); return 2; }
  fprintf(stderr, "headroom: unknown command '%s'\n", argv[1]);
  return 2;
}
