/*
 * posix_class.h - the twelve POSIX character classes ([:alpha:] ...) by
 * name, as <ctype.h> tests them in the C locale: one table for the
 * matcher's compiler (rx_compile.c) and the index planner (regex_plan.c).
 */
#ifndef CODESEARCH_POSIX_CLASS_H
#define CODESEARCH_POSIX_CLASS_H

#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef int (*posix_class_test)(int c);

/* The test of the class named name[0, len); fold: "upper" and "lower" are
 * "alpha", as grep -i takes them. NULL for a name that is none of them. */
static inline posix_class_test posix_class_named(const char *name, size_t len, bool fold)
{
    static const struct {
        const char *name;
        posix_class_test test;
    } classes[] = {
        { "alpha", isalpha }, { "digit", isdigit }, { "alnum", isalnum }, { "upper", isupper },
        { "lower", islower }, { "space", isspace }, { "blank", isblank }, { "punct", ispunct },
        { "print", isprint }, { "graph", isgraph }, { "cntrl", iscntrl }, { "xdigit", isxdigit },
    };
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if (strlen(classes[i].name) == len && memcmp(classes[i].name, name, len) == 0)
            return fold && (classes[i].test == isupper || classes[i].test == islower)
                       ? isalpha
                       : classes[i].test;
    return NULL;
}

#endif /* CODESEARCH_POSIX_CLASS_H */
