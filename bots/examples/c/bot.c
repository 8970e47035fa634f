/*
 * A Project L protocol bot in C (C99, standard library only): one file.
 *
 * Build:  gcc -O2 -o /tmp/cbot bots/examples/c/bot.c
 * Run:    arena play greedy --cmd /tmp/cbot
 * Check:  arena check-bot -- /tmp/cbot
 *
 * It asks for the legal options in every request ("legal_actions": true) and answers
 * with a random one, avoiding "pass" while anything else is legal. It needs no JSON
 * library: it only finds the top-level fields "type", "id", "seed" and "legal" and
 * copies one element of "legal" verbatim into its reply. Protocol: docs/protocol.md.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long rng_state = 88172645463325252ULL;

static unsigned long long next_random(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static const char *skip_ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    return p;
}

/* Return the first character after the JSON value starting at p (NULL if malformed). */
static const char *skip_value(const char *p) {
    p = skip_ws(p);
    if (*p == '"') {
        for (p++; *p && *p != '"'; p++)
            if (*p == '\\' && p[1]) p++;
        return *p ? p + 1 : NULL;
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        for (; *p; p++) {
            if (*p == '"') {
                p = skip_value(p);
                if (!p) return NULL;
                p--;
            } else if (*p == '{' || *p == '[') {
                depth++;
            } else if (*p == '}' || *p == ']') {
                if (--depth == 0) return p + 1;
            }
        }
        return NULL;
    }
    while (*p && *p != ',' && *p != '}' && *p != ']' && *p != ' ') p++;
    return p;
}

/* Find the top-level field `key` of the object at p; return a pointer to its value. */
static const char *field(const char *p, const char *key) {
    size_t n = strlen(key);
    p = skip_ws(p);
    if (*p != '{') return NULL;
    p++;
    for (;;) {
        p = skip_ws(p);
        if (*p != '"') return NULL;
        const char *name = p + 1;
        const char *end = skip_value(p);
        if (!end) return NULL;
        p = skip_ws(end);
        if (*p != ':') return NULL;
        p = skip_ws(p + 1);
        if ((size_t)(end - name - 1) == n && strncmp(name, key, n) == 0) return p;
        p = skip_value(p);
        if (!p) return NULL;
        p = skip_ws(p);
        if (*p != ',') return NULL;
        p++;
    }
}

static int is_type(const char *value, const char *type) {
    size_t n = strlen(type);
    return value && value[0] == '"' && strncmp(value + 1, type, n) == 0 && value[n + 1] == '"';
}

/* Print a random element of the JSON array at p, avoiding {"type":"pass"} if possible. */
static void print_choice(const char *p) {
    const char *items[4096];
    int count = 0, non_pass = 0;
    p = skip_ws(p);
    if (*p != '[') { fputs("{\"type\":\"pass\"}", stdout); return; }
    p = skip_ws(p + 1);
    while (*p && *p != ']' && count < 4096) {
        items[count++] = p;
        if (!is_type(field(p, "type"), "pass")) non_pass++;
        p = skip_value(p);
        if (!p) break;
        p = skip_ws(p);
        if (*p == ',') p = skip_ws(p + 1);
    }
    if (count == 0) { fputs("{\"type\":\"pass\"}", stdout); return; }
    int k = (int)(next_random() % (unsigned long long)(non_pass ? non_pass : count));
    for (int i = 0; i < count; i++) {
        if (non_pass && is_type(field(items[i], "type"), "pass")) continue;
        if (k-- == 0) {
            const char *end = skip_value(items[i]);
            fwrite(items[i], 1, (size_t)(end - items[i]), stdout);
            return;
        }
    }
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) != -1) {
        const char *type = field(line, "type");
        const char *id = field(line, "id");
        long long rid = id ? atoll(id) : 0;
        if (is_type(type, "quit")) break;
        if (is_type(type, "hello")) {
            const char *seed = field(line, "seed");
            if (seed && atoll(seed) > 0) rng_state = (unsigned long long)atoll(seed) * 2654435761ULL + 1;
            printf("{\"type\":\"ready\",\"id\":%lld,\"name\":\"c-example\",\"version\":\"1.0\",\"legal_actions\":true}\n", rid);
        } else if (is_type(type, "action") || is_type(type, "reward") || is_type(type, "level_up") || is_type(type, "finish")) {
            printf("{\"id\":%lld,\"action\":", rid);
            const char *legal = field(line, "legal");
            if (legal) print_choice(legal);
            else fputs("{\"type\":\"pass\"}", stdout);
            fputs("}\n", stdout);
        } else {
            continue; /* game_over and anything unknown: no reply */
        }
        fflush(stdout);
    }
    free(line);
    return 0;
}
