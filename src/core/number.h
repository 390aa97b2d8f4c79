/*
 * number.h - parsing numbers as users write them, for the spec parser and
 * the command line. The public parsers (amq_parse_probability,
 * amq_parse_count) are declared in amq/amq.h; this header adds the one for
 * plain real-valued options such as "growth=2" or "tightening=0.85".
 *
 * Every parser reads the whole text: no surrounding spaces, no trailing
 * characters. Messages written to an amq_diag quote the text and say what
 * is wrong with it, but do not name the option, which only the caller
 * knows: callers prefix the option ("option 'p': ...").
 */
#ifndef AMQ_NUMBER_H
#define AMQ_NUMBER_H

#include "amq/amq.h"

/*
 * Parse a finite real number in [min, max]: an optional '-', digits with an
 * optional '.' and fraction ("2", "0.85", ".5"), and an optional exponent
 * ("1e-3", "2.5E+2"). "nan", "inf", hexadecimal floats, '+' signs and
 * spaces are rejected. The value is the correctly rounded double whatever
 * the locale.
 *
 * Returns AMQ_OK and sets *out; AMQ_EINVAL for malformed text; AMQ_ERANGE
 * for a value outside [min, max], too large for a double, or nonzero but
 * too close to 0 for one. *out is untouched on failure; diag may be NULL.
 */
int amq__parse_real(double *out, const char *text, double min, double max, amq_diag *diag);

#endif /* AMQ_NUMBER_H */
