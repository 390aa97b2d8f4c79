/*
 * number.c - numbers as users write them in spec strings and on the command
 * line: counts ("1000000", "1e6", "2.5e3"), probabilities ("0.0001", "1e-4",
 * "1/8192", "0.01%") and plain reals ("2", "0.85").
 *
 * All three share one scanner for the decimal grammar
 *
 *     number   = digits [ "." [ digits ] ] [ exponent ]
 *              | "." digits [ exponent ]
 *     exponent = ( "e" | "E" ) [ "+" | "-" ] digits
 *
 * which records where the integer and fraction digits are and the exponent,
 * without computing anything. A leading '-' is read only to give a better
 * message ("'-1' is negative" for a count, "not between 0 and 1" for a
 * probability) and as the sign of a real. Everything outside the grammar
 * is refused before any conversion: spaces, '+' signs, "nan", "inf",
 * "0x10", trailing characters. Texts longer than MAX_TEXT characters are refused too, so the
 * rewritten form below always fits a stack buffer.
 *
 * Counts are computed exactly in integers. The digits (integer and fraction
 * run together) form an integer D, and the value is D * 10^E with
 * E = exponent - number of fraction digits. Trailing zeros of D move into E;
 * if E is still negative the value is not whole ("1.5", "1e-3" are errors,
 * "2.5e3" and "1.000" are fine). Otherwise D is accumulated digit by digit
 * and multiplied by 10 E times, each step checked for overflow, so every
 * value up to 2^64 - 1 = 18446744073709551615 is exact and one more is
 * AMQ_ERANGE. No double is involved.
 *
 * Reals go through strtod, which rounds correctly (glibc) but reads the
 * decimal point of the current LC_NUMERIC locale: under a locale with a
 * decimal comma, strtod("0.5") stops at the '.'. Rather than depend on the
 * locale (or change it, which is process-global), the scanned number is
 * rewritten without a decimal point, as its significant digits and an
 * adjusted exponent: "0.0125" becomes "125e-4", "2.5e3" becomes "25e2".
 * strtod reads that form identically in every locale, and the rewriting is
 * exact, so the result is still the correctly rounded double of the text. A
 * percentage is the same rewrite with the exponent lowered by 2, so
 * "0.01%" gives exactly the double of "1e-4". Exponents are clamped to
 * +-EXPONENT_CLAMP while scanning; any exponent that large overflows or
 * underflows a double anyway.
 *
 * Probabilities are a number, a percentage, or a fraction a/b of two
 * positive numbers (the quotient is a/b in double arithmetic, exact for
 * "1/8192"), and must lie strictly between 0 and 1.
 *
 * Failures fill an amq_diag (via amq__fail) with the text quoted and what is
 * wrong; the caller adds which option it was.
 */
#include "core/number.h"
#include "core/util.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* Longest text accepted; far more digits than a double or uint64_t can use. */
#define MAX_TEXT 200

/* Exponents beyond this are equivalent to it: 10^100000 overflows and
 * 10^-100000 underflows every type used here. */
#define EXPONENT_CLAMP 100000L

/* Where a scanned number's parts are in the text. */
typedef struct decimal_text {
    const char *int_digits;  /* digits before the point */
    size_t int_len;          /* how many (may be 0: ".5") */
    const char *frac_digits; /* digits after the point */
    size_t frac_len;         /* how many (may be 0) */
    long exponent;           /* the written exponent, clamped */
} decimal_text;

/* The digits of a number as one integer: significant digits from the first
 * nonzero to the last nonzero, value = those digits * 10^exponent. */
typedef struct significand {
    const decimal_text *number;
    size_t first; /* index of the first nonzero digit */
    size_t count; /* number of significant digits; 0 when the value is 0 */
    long exponent;
} significand;

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static const char *skip_digits(const char *p)
{
    while (is_digit(*p))
        p++;
    return p;
}

/* Describe the character c for a message: printable ASCII as itself, other
 * bytes in hex. */
static const char *describe_char(char buffer[8], char c)
{
    unsigned char byte = (unsigned char)c;
    if (byte >= 0x20 && byte < 0x7f)
        snprintf(buffer, 8, "'%c'", c);
    else
        snprintf(buffer, 8, "0x%02x", byte);
    return buffer;
}

static int check_length(const char *text, amq_diag *diag)
{
    size_t len = 0;
    while (len <= MAX_TEXT && text[len] != '\0')
        len++;
    if (len > MAX_TEXT)
        return amq__fail(diag, AMQ_EINVAL,
                         "'%.24s...' is too long for a number (over %d characters)", text,
                         MAX_TEXT);
    if (len == 0)
        return amq__fail(diag, AMQ_EINVAL, "an empty text is not a number");
    return AMQ_OK;
}

/* Scan one number of the grammar above starting at start. On success set
 * *end past it. whole is the complete text, for messages. */
static int scan_decimal(decimal_text *number, const char **end, const char *start,
                        const char *whole, amq_diag *diag)
{
    const char *p = start;
    number->int_digits = p;
    p = skip_digits(p);
    number->int_len = (size_t)(p - number->int_digits);
    number->frac_digits = p;
    number->frac_len = 0;
    if (*p == '.') {
        number->frac_digits = ++p;
        p = skip_digits(p);
        number->frac_len = (size_t)(p - number->frac_digits);
    }
    if (number->int_len == 0 && number->frac_len == 0)
        return amq__fail(diag, AMQ_EINVAL, "'%s' is not a number", whole);

    number->exponent = 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        bool negative = *p == '-';
        if (*p == '-' || *p == '+')
            p++;
        if (!is_digit(*p))
            return amq__fail(diag, AMQ_EINVAL, "'%s' has no digits in its exponent", whole);
        long exponent = 0;
        for (; is_digit(*p); p++)
            if (exponent < EXPONENT_CLAMP)
                exponent = exponent * 10 + (*p - '0');
        if (exponent > EXPONENT_CLAMP)
            exponent = EXPONENT_CLAMP;
        number->exponent = negative ? -exponent : exponent;
    }
    *end = p;
    return AMQ_OK;
}

/* Complain about what follows a number, or succeed if nothing does. */
static int expect_end(const char *p, const char *whole, amq_diag *diag)
{
    char shown[8];
    if (*p != '\0')
        return amq__fail(diag, AMQ_EINVAL, "'%s' has an unexpected %s after the number", whole,
                         describe_char(shown, *p));
    return AMQ_OK;
}

static char digit_at(const decimal_text *number, size_t i)
{
    return i < number->int_len ? number->int_digits[i] : number->frac_digits[i - number->int_len];
}

static significand significant_digits(const decimal_text *number)
{
    size_t total = number->int_len + number->frac_len;
    significand s = { number, 0, 0, 0 };
    size_t first = 0;
    while (first < total && digit_at(number, first) == '0')
        first++;
    if (first == total)
        return s;
    size_t last = total - 1;
    while (digit_at(number, last) == '0')
        last--;
    s.first = first;
    s.count = last - first + 1;
    /* The digit at index last has weight 10^(int_len - 1 - last) before the
     * written exponent; frac_len and total are bounded by MAX_TEXT. */
    s.exponent = number->exponent + (long)number->int_len - 1 - (long)last;
    return s;
}

/* The exact integer value of a scanned number. Sets *overflow instead when
 * the value does not fit 64 bits; fails when it is not whole. */
static int decimal_to_u64(uint64_t *out, bool *overflow, const decimal_text *number,
                          const char *whole, amq_diag *diag)
{
    significand s = significant_digits(number);
    *overflow = false;
    *out = 0;
    if (s.count == 0)
        return AMQ_OK;
    if (s.exponent < 0)
        return amq__fail(diag, AMQ_EINVAL, "'%s' is not a whole number", whole);
    /* 10^20 > 2^64: more than 20 digits in all cannot fit. */
    if ((long)s.count + s.exponent > 20) {
        *overflow = true;
        return AMQ_OK;
    }
    uint64_t value = 0;
    bool fits = true;
    for (size_t i = 0; i < s.count; i++) {
        uint64_t digit = (uint64_t)(digit_at(number, s.first + i) - '0');
        fits = fits && amq__mul_u64(value, 10, &value) && amq__add_u64(value, digit, &value);
    }
    for (long i = 0; i < s.exponent; i++)
        fits = fits && amq__mul_u64(value, 10, &value);
    *overflow = !fits;
    *out = value;
    return AMQ_OK;
}

/* The correctly rounded double of a scanned number times 10^shift, via the
 * point-free rewrite described at the top. Fails when the value overflows
 * a double or a nonzero value rounds to zero. */
static int decimal_to_double(double *out, const decimal_text *number, int shift, const char *whole,
                             amq_diag *diag)
{
    significand s = significant_digits(number);
    if (s.count == 0) {
        *out = 0.0;
        return AMQ_OK;
    }
    char rewritten[MAX_TEXT + 32];
    for (size_t i = 0; i < s.count; i++)
        rewritten[i] = digit_at(number, s.first + i);
    snprintf(rewritten + s.count, sizeof rewritten - s.count, "e%ld", s.exponent + shift);

    int saved_errno = errno;
    errno = 0;
    double value = strtod(rewritten, NULL);
    bool out_of_range = errno == ERANGE;
    errno = saved_errno;
    if (out_of_range && value > 1.0)
        return amq__fail(diag, AMQ_ERANGE, "'%s' is too large for a double", whole);
    if (value == 0.0)
        return amq__fail(diag, AMQ_ERANGE, "'%s' is too close to 0 for a double", whole);
    *out = value;
    return AMQ_OK;
}

/* A number alone, as the whole text, with an optional leading '-' when
 * allow_minus (the value is then negated). */
static int parse_plain(double *out, const char *text, bool allow_minus, amq_diag *diag)
{
    const char *start = allow_minus && text[0] == '-' ? text + 1 : text;
    decimal_text number;
    const char *end;
    int status = scan_decimal(&number, &end, start, text, diag);
    if (status == AMQ_OK)
        status = expect_end(end, text, diag);
    double value = 0.0;
    if (status == AMQ_OK)
        status = decimal_to_double(&value, &number, 0, text, diag);
    if (status == AMQ_OK)
        *out = start != text ? -value : value;
    return status;
}

int amq__parse_real(double *out, const char *text, double min, double max, amq_diag *diag)
{
    int status = check_length(text, diag);
    double value = 0.0;
    if (status == AMQ_OK)
        status = parse_plain(&value, text, true, diag);
    if (status != AMQ_OK)
        return status;
    if (!(value >= min && value <= max))
        return amq__fail(diag, AMQ_ERANGE, "'%s' is not between %g and %g", text, min, max);
    *out = value;
    return AMQ_OK;
}

/* "a/b": both sides positive numbers. slash points at the '/'. */
static int parse_fraction(double *out, const char *text, const char *slash, amq_diag *diag)
{
    decimal_text numerator, denominator;
    const char *end;
    double a = 0.0, b = 0.0;
    int status = scan_decimal(&numerator, &end, text, text, diag);
    if (status == AMQ_OK && end != slash)
        status = amq__fail(diag, AMQ_EINVAL, "'%s': the numerator is not a number", text);
    if (status == AMQ_OK)
        status = scan_decimal(&denominator, &end, slash + 1, text, diag);
    if (status == AMQ_OK)
        status = expect_end(end, text, diag);
    if (status == AMQ_OK && significant_digits(&denominator).count == 0)
        status = amq__fail(diag, AMQ_EINVAL, "'%s' divides by zero", text);
    if (status == AMQ_OK)
        status = decimal_to_double(&a, &numerator, 0, text, diag);
    if (status == AMQ_OK)
        status = decimal_to_double(&b, &denominator, 0, text, diag);
    if (status == AMQ_OK)
        *out = a / b;
    return status;
}

/* "x%": a number followed by a percent sign. */
static int parse_percentage(double *out, const char *text, amq_diag *diag)
{
    decimal_text number;
    const char *end;
    int status = scan_decimal(&number, &end, text, text, diag);
    if (status == AMQ_OK && !(end[0] == '%' && end[1] == '\0'))
        status = expect_end(end, text, diag);
    if (status == AMQ_OK)
        status = decimal_to_double(out, &number, -2, text, diag);
    return status;
}

int amq_parse_probability(double *out, const char *text, amq_diag *diag)
{
    int status = check_length(text, diag);
    if (status != AMQ_OK)
        return status;
    const char *slash = strchr(text, '/');
    size_t len = strlen(text);
    double value = 0.0;
    if (slash)
        status = parse_fraction(&value, text, slash, diag);
    else if (text[len - 1] == '%')
        status = parse_percentage(&value, text, diag);
    else
        status = parse_plain(&value, text, true, diag);
    /* Every failure of a probability is AMQ_EINVAL, as documented; a value
     * too large or too small for a double is not in (0, 1) either. */
    if (status != AMQ_OK)
        return AMQ_EINVAL;
    if (!(value > 0.0 && value < 1.0))
        return amq__fail(diag, AMQ_EINVAL, "'%s' is not between 0 and 1 (exclusive)", text);
    *out = value;
    return AMQ_OK;
}

int amq_parse_count(uint64_t *out, const char *text, uint64_t min, uint64_t max, amq_diag *diag)
{
    int status = check_length(text, diag);
    if (status != AMQ_OK)
        return status;
    bool negative = text[0] == '-';
    decimal_text number;
    const char *end;
    status = scan_decimal(&number, &end, negative ? text + 1 : text, text, diag);
    if (status == AMQ_OK)
        status = expect_end(end, text, diag);
    uint64_t value = 0;
    bool overflow = false;
    if (status == AMQ_OK)
        status = decimal_to_u64(&value, &overflow, &number, text, diag);
    if (status != AMQ_OK)
        return status;
    if (negative && (overflow || value != 0))
        return amq__fail(diag, AMQ_ERANGE, "'%s' is negative; a count is at least %llu", text,
                         (unsigned long long)min);
    if (overflow || value > max)
        return amq__fail(diag, AMQ_ERANGE, "'%s' is above the maximum, %llu", text,
                         (unsigned long long)max);
    if (value < min)
        return amq__fail(diag, AMQ_ERANGE, "'%s' is below the minimum, %llu", text,
                         (unsigned long long)min);
    *out = value;
    return AMQ_OK;
}

static int hex_digit_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int amq_parse_hex(uint8_t *out, const char *text, size_t text_len, amq_diag *diag)
{
    if (text_len % 2 != 0)
        return amq__fail(diag, AMQ_EINVAL, "odd number of hex digits (%zu)", text_len);
    for (size_t i = 0; i < text_len; i += 2) {
        int high = hex_digit_value(text[i]), low = hex_digit_value(text[i + 1]);
        if (high < 0 || low < 0) {
            size_t bad = high < 0 ? i : i + 1;
            return amq__fail_at(diag, AMQ_EINVAL, bad, "character %zu is not a hex digit", bad + 1);
        }
        out[i / 2] = (uint8_t)(high << 4 | low);
    }
    return AMQ_OK;
}
