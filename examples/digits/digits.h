/* scikit-learn's handwritten digits (1797 images of 8x8 pixels, 0..16, classes
 * 0-9), as Debian's python3-sklearn ships them in digits.csv.gz. */
#ifndef DIGITS_H
#define DIGITS_H

#include <stdint.h>

enum { kDigitPixels = 64, kDigitClasses = 10 };
/* The last 360 digits are held out for testing; the examples train on the rest. */
enum { kDigitTestCount = 360 };

#define DIGITS_DEFAULT_PATH "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"

struct digits {
  int count;
  float* pixels;  /* count x 64, scaled to [0, 1] */
  int32_t* labels; /* count */
};

/* Reads the gzip'd CSV at path. Returns 0, or -1 with a message on stderr. */
int digits_load(const char* path, struct digits* out);
void digits_free(struct digits* digits);

/* The most probable of kDigitClasses classes (the first on a tie). */
int digits_argmax(const float* probs);

/* Deterministic, identical on every worker: a small LCG, and the Fisher-Yates
 * shuffle of order[0, n) it drives. */
uint32_t digits_next_random(uint64_t* state);
void digits_shuffle(int* order, int n, uint64_t* state);

#endif
