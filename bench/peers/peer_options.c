#include "peer_options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char kDefaultSizes[] = "8,64,1K,16K,256K,1M,4M,16M,64M";

static void usage(const char* prog) {
  fprintf(stderr,
          "usage: %s [--collective C[,C...]] [--variant NAME] [--mode default|busypoll]\n"
          "          [--sizes 8,64,1K,...] [--budget SECONDS] [--max-call SECONDS] [--header]\n",
          prog);
}

static int parse_size(const char* text, size_t* out) {
  char* end = NULL;
  unsigned long long v = strtoull(text, &end, 10);
  if (end == text) return 0;
  switch (*end) {
    case 'K': v <<= 10; end++; break;
    case 'M': v <<= 20; end++; break;
    case 'G': v <<= 30; end++; break;
    default: break;
  }
  if (*end != '\0' || v == 0) return 0;
  *out = (size_t)v;
  return 1;
}

/* Splits a comma list in place into at most `max` items. */
static int split(char* list, char** items, int max) {
  int n = 0;
  for (char* tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
    if (n == max) return -1;
    items[n++] = tok;
  }
  return n;
}

static int parse_sizes(const char* text, peer_options_t* opts) {
  char buf[1024];
  char* items[PEER_MAX_SIZES];
  if (strlen(text) >= sizeof buf) return 0;
  strcpy(buf, text);
  int n = split(buf, items, PEER_MAX_SIZES);
  if (n <= 0) return 0;
  for (int i = 0; i < n; i++)
    if (!parse_size(items[i], &opts->sizes[i])) return 0;
  opts->num_sizes = n;
  return 1;
}

static int parse_collectives(const char* text, peer_options_t* opts) {
  char buf[256];
  char* items[PEER_MAX_COLLECTIVES];
  if (strlen(text) >= sizeof buf) return 0;
  strcpy(buf, text);
  int n = split(buf, items, PEER_MAX_COLLECTIVES);
  if (n <= 0) return 0;
  for (int i = 0; i < n; i++)
    if (!peer_collective_parse(items[i], &opts->collectives[i])) return 0;
  opts->num_collectives = n;
  return 1;
}

int peer_options_parse(int argc, char** argv, const char* default_variant, peer_options_t* opts) {
  memset(opts, 0, sizeof *opts);
  opts->collectives[0] = PEER_ALLREDUCE;
  opts->num_collectives = 1;
  opts->variant = default_variant;
  opts->mode = "default";
  opts->budget_s = 0.2;
  opts->max_call_s = 1.0;
  parse_sizes(kDefaultSizes, opts);

  for (int i = 1; i < argc; i++) {
    const char* arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : NULL;
    int ok = 1;
    if (strcmp(arg, "--header") == 0) {
      opts->header = 1;
      continue;
    }
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      usage(argv[0]);
      return 0;
    }
    if (!value) {
      fprintf(stderr, "%s: %s needs a value (or is unknown)\n", argv[0], arg);
      usage(argv[0]);
      return 0;
    }
    if (strcmp(arg, "--collective") == 0) {
      ok = parse_collectives(value, opts);
    } else if (strcmp(arg, "--variant") == 0) {
      opts->variant = value;
    } else if (strcmp(arg, "--mode") == 0) {
      opts->mode = value;
      ok = strcmp(value, "default") == 0 || strcmp(value, "busypoll") == 0;
    } else if (strcmp(arg, "--sizes") == 0) {
      ok = parse_sizes(value, opts);
    } else if (strcmp(arg, "--budget") == 0 || strcmp(arg, "--max-call") == 0) {
      char* end = NULL;
      double seconds = strtod(value, &end);
      ok = *end == '\0' && seconds > 0.0;
      *(strcmp(arg, "--budget") == 0 ? &opts->budget_s : &opts->max_call_s) = seconds;
    } else {
      ok = 0;
    }
    if (!ok) {
      fprintf(stderr, "%s: bad argument: %s %s\n", argv[0], arg, value);
      usage(argv[0]);
      return 0;
    }
    i++;
  }
  return 1;
}

int peer_options_parse_own(int argc, char** argv, const char* default_variant, const peer_own_option_t* own,
                           peer_options_t* opts) {
  char** rest = calloc((size_t)argc + 1, sizeof *rest);
  if (rest == NULL) {
    fprintf(stderr, "%s: out of memory\n", argv[0]);
    return 0;
  }
  int kept = 0;
  if (argc > 0) rest[kept++] = argv[0];  /* the program's name */
  for (int i = 1; i < argc; i++) {
    const peer_own_option_t* match = NULL;
    for (const peer_own_option_t* o = own; o->name != NULL; o++)
      if (strcmp(argv[i], o->name) == 0) match = o;
    if (match == NULL) {
      rest[kept++] = argv[i];
    } else if (!match->takes_value) {
      *match->value = "1";
    } else if (i + 1 < argc) {
      *match->value = argv[++i];
    } else {
      fprintf(stderr, "%s: %s needs a value\n", argv[0], argv[i]);
      free(rest);
      return 0;
    }
  }
  const int ok = peer_options_parse(kept, rest, default_variant, opts);
  free(rest);
  return ok;
}
