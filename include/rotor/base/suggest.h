/* rotor — "did you mean": the known name closest to a misspelt one.
 *
 * Closeness is the edit distance (insertions, deletions, substitutions,
 * and a swap of two neighbours each cost one) after folding case and
 * treating '-', '_' and '.' alike, so "resnet50", "Resnet_50" and
 * "rsenet-50" all find "resnet-50".  A candidate is suggested only when it
 * is within a quarter of the longer name's length (at least 1, at most 2),
 * so unrelated words ("bert-huge", three letters off "bert-base") get no
 * suggestion. */
#ifndef ROTOR_SUGGEST_H
#define ROTOR_SUGGEST_H

/* The closest of names[0 .. n) to word, or NULL when none is close; ties:
 * the first. */
const char *rotor_suggest(const char *word, const char *const *names, int n);

/* " (did you mean 'NAME'?)" into buf when there is a suggestion, else "". */
const char *rotor_suggest_phrase(const char *word, const char *const *names, int n, char *buf, int cap);

#endif
