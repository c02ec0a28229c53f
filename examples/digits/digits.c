#include "digits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum { kMaxDigits = 4096 };

/* One CSV line: 64 pixel values, then the label. */
static int parse_line(char* line, float* pixels, int32_t* label) {
  char* cursor = line;
  for (int i = 0; i <= kDigitPixels; ++i) {
    char* end = NULL;
    long value = strtol(cursor, &end, 10);
    if (end == cursor || value < 0 || value > 16) return -1;
    if (i < kDigitPixels) {
      pixels[i] = (float)value / 16.0f;
    } else {
      if (value >= kDigitClasses) return -1;
      *label = (int32_t)value;
    }
    cursor = end + (*end == ',' ? 1 : 0);
  }
  return 0;
}

int digits_load(const char* path, struct digits* out) {
  gzFile file = gzopen(path, "rb");
  if (file == NULL) {
    fprintf(stderr, "cannot open %s (install python3-sklearn, or pass the file)\n", path);
    return -1;
  }
  memset(out, 0, sizeof *out);
  out->pixels = malloc(sizeof(float) * kDigitPixels * kMaxDigits);
  out->labels = malloc(sizeof(int32_t) * kMaxDigits);
  char line[1024];
  int status = 0;
  while (status == 0 && gzgets(file, line, sizeof line) != NULL) {
    if (line[0] == '\n' || line[0] == '\0') continue;
    if (out->count == kMaxDigits ||
        parse_line(line, out->pixels + (size_t)out->count * kDigitPixels, &out->labels[out->count]) != 0) {
      fprintf(stderr, "%s: line %d is not 64 pixels and a label\n", path, out->count + 1);
      status = -1;
    }
    ++out->count;
  }
  gzclose(file);
  if (status != 0 || out->count == 0) {
    digits_free(out);
    return -1;
  }
  return 0;
}

void digits_free(struct digits* digits) {
  free(digits->pixels);
  free(digits->labels);
  memset(digits, 0, sizeof *digits);
}

int digits_argmax(const float* probs) {
  int best = 0;
  for (int k = 1; k < kDigitClasses; ++k) best = probs[k] > probs[best] ? k : best;
  return best;
}

uint32_t digits_next_random(uint64_t* state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(*state >> 32);
}

void digits_shuffle(int* order, int n, uint64_t* state) {
  for (int i = n - 1; i > 0; --i) {
    const int j = (int)(digits_next_random(state) % (uint32_t)(i + 1));
    const int t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
}
