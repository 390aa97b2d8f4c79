/*
 * frontier_url.c - amq_frontier_canonical_url, the optional hook that
 * gives equal URLs one spelling before a crawl frontier compares them.
 *
 * It applies the normalizations of RFC 3986 section 6.2.2 and 6.2.3 that
 * never change the resource a URL names, and no others:
 *
 *   HTTP://User@Example.COM:80?q#top  ->  http://User@example.com/?q
 *   \__/   \__/ \_________/ \_/ \__/       \__/   \__/ \_________/|
 *   scheme  |   host        port |         lower   kept  lower    path "/"
 *       userinfo          fragment  (default port and fragment dropped)
 *
 * The URL is split by RFC 3986's generic syntax: scheme ":" "//" authority,
 * then path, query and fragment. The authority ends at the first "/", "?"
 * or "#"; the userinfo is everything up to its last "@"; the host is an IP
 * literal "[...]" or runs to the next ":", after which only digits may
 * follow (the port).
 *
 *   - Scheme and host are case-insensitive (3.1, 3.2.2), so they are
 *     lower-cased. In the host a percent-escape "%XX" is copied as it is:
 *     lower-casing its hex digits would not change the name, but the hook
 *     promises never to touch an escape. The userinfo is case-sensitive and
 *     kept.
 *   - An empty port and, for http and https, the default ports 80 and 443
 *     are dropped (6.2.3); the port is compared as a number, so "080" is 80.
 *     Other ports are kept as written.
 *   - For http and https an empty path is "/" (6.2.3): "http://a.b" and
 *     "http://a.b/" are the same resource. That is the only case where the
 *     result is longer than the input, by one byte.
 *   - The fragment names a part of a document, never a different one to
 *     fetch: it is dropped.
 *
 * Not done, because each can change what a server returns or needs
 * knowledge of the scheme beyond this: decoding percent-escapes of
 * unreserved characters, upper-casing escape digits, removing "." and ".."
 * segments, sorting query parameters, IDNA. Allocates nothing.
 */
#include "amq/frontier.h"
#include "core/util.h"

#include <stdbool.h>
#include <string.h>

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Whether text[0, len) equals the lower-case word, ignoring case. */
static bool equals_lower(const char *text, size_t len, const char *word)
{
    if (strlen(word) != len)
        return false;
    for (size_t i = 0; i < len; i++)
        if (lower(text[i]) != word[i])
            return false;
    return true;
}

/* The port digits' value, saturated above 65535. */
static unsigned port_value(const char *digits, size_t len)
{
    unsigned value = 0;
    for (size_t i = 0; i < len; i++) {
        value = value * 10 + (unsigned)(digits[i] - '0');
        if (value > 65535)
            return 65536;
    }
    return value;
}

/* The parts of a URL, as offsets into it. */
typedef struct url_parts {
    size_t scheme_end;    /* the ':' */
    size_t host;          /* after the userinfo's '@', else after "//" */
    size_t host_end;      /* the ':' before the port, or the authority's end */
    size_t port;          /* the first port digit */
    size_t authority_end; /* the first '/', '?' or '#' after "//", or the end */
    size_t fragment;      /* the '#', or the end */
} url_parts;

static int split(url_parts *p, const char *url, size_t len)
{
    size_t i = 0;
    if (len == 0 || !is_alpha(url[0]))
        return AMQ_EINVAL;
    while (i < len && (is_alpha(url[i]) || is_digit(url[i]) || url[i] == '+' || url[i] == '-' ||
                       url[i] == '.'))
        i++;
    if (len - i < 3 || memcmp(url + i, "://", 3) != 0)
        return AMQ_EINVAL;
    p->scheme_end = i;
    size_t authority = i + 3;
    p->authority_end = authority;
    while (p->authority_end < len && url[p->authority_end] != '/' && url[p->authority_end] != '?' &&
           url[p->authority_end] != '#')
        p->authority_end++;
    p->host = authority;
    for (size_t j = authority; j < p->authority_end; j++)
        if (url[j] == '@')
            p->host = j + 1;
    p->host_end = p->host;
    if (p->host < p->authority_end && url[p->host] == '[') {
        const char *close = memchr(url + p->host, ']', p->authority_end - p->host);
        if (!close)
            return AMQ_EINVAL;
        p->host_end = (size_t)(close - url) + 1;
    } else {
        while (p->host_end < p->authority_end && url[p->host_end] != ':')
            p->host_end++;
    }
    p->port = p->authority_end;
    if (p->host_end < p->authority_end) {
        if (url[p->host_end] != ':')
            return AMQ_EINVAL;
        p->port = p->host_end + 1;
        for (size_t j = p->port; j < p->authority_end; j++)
            if (!is_digit(url[j]))
                return AMQ_EINVAL;
    }
    p->fragment = p->authority_end;
    while (p->fragment < len && url[p->fragment] != '#')
        p->fragment++;
    return AMQ_OK;
}

int amq_frontier_canonical_url(char *out, size_t capacity, size_t *out_len, const char *url,
                               size_t len, void *user)
{
    (void)user;
    *out_len = 0;
    url_parts p;
    if (split(&p, url, len) != AMQ_OK)
        return AMQ_EINVAL;

    const char *scheme = url;
    bool http = equals_lower(scheme, p.scheme_end, "http");
    bool https = equals_lower(scheme, p.scheme_end, "https");
    size_t port_len = p.authority_end - p.port;
    unsigned port = port_value(url + p.port, port_len);
    bool keep_port = port_len > 0 && !(http && port == 80) && !(https && port == 443);
    bool add_slash =
        (http || https) && (p.authority_end == p.fragment || url[p.authority_end] != '/');

    size_t needed = p.host_end + (keep_port ? 1 + port_len : 0) + (add_slash ? 1 : 0) +
                    (p.fragment - p.authority_end);
    if (needed > capacity) {
        *out_len = needed;
        return AMQ_ERANGE;
    }
    size_t n = 0;
    for (size_t i = 0; i < p.scheme_end; i++)
        out[n++] = lower(url[i]);
    memcpy(out + n, url + p.scheme_end, p.host - p.scheme_end); /* "://" and the userinfo */
    n += p.host - p.scheme_end;
    for (size_t i = p.host; i < p.host_end; i++) {
        if (url[i] == '%' && p.host_end - i >= 3 && is_hex(url[i + 1]) && is_hex(url[i + 2])) {
            memcpy(out + n, url + i, 3);
            n += 3;
            i += 2;
        } else {
            out[n++] = lower(url[i]);
        }
    }
    if (keep_port) {
        out[n++] = ':';
        memcpy(out + n, url + p.port, port_len);
        n += port_len;
    }
    if (add_slash)
        out[n++] = '/';
    memcpy(out + n, url + p.authority_end, p.fragment - p.authority_end);
    n += p.fragment - p.authority_end;
    *out_len = n;
    return AMQ_OK;
}
