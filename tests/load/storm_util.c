/* tests/load/storm_util.c - kdc-storm's clocks, random arrivals, quantiles, growing arrays and JSON strings. */
#define _GNU_SOURCE
#include "storm.h"

const char *const class_names[ERR_CLASSES] = { "timeout", "kdc", "decode", "network",
                                                      "other" };

double
now_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Process CPU time (user + system) from /proc/self/stat, in seconds. */
double
cpu_seconds(void)
{
    char text[2048], *p;
    unsigned long utime = 0, stime = 0;
    FILE *f = fopen("/proc/self/stat", "r");
    size_t n;
    int field;

    if (f == NULL)
        return 0.0;
    n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    /* The command name may hold spaces; fields are counted from its closing parenthesis. */
    p = strrchr(text, ')');
    if (p == NULL)
        return 0.0;
    p += 2;
    for (field = 3; field < 14 && p != NULL; field++) {
        p = strchr(p, ' ');
        if (p != NULL)
            p++;
    }
    if (p == NULL || sscanf(p, "%lu %lu", &utime, &stime) != 2)
        return 0.0;
    return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

uint64_t
next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Exponential gap of a Poisson process of the given rate. */
double
poisson_gap(uint64_t *state, double rate)
{
    double u = ((double)(next_random(state) >> 11) + 0.5) / 9007199254740992.0;

    return -log(u) / rate;
}

int
compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

double
quantile(const double *sorted, long n, double q)
{
    long index;

    if (n == 0)
        return 0.0;
    index = (long)(q * (double)(n - 1) + 0.5);
    return sorted[index];
}

void *
grow(void *array, long *cap, long need, size_t size)
{
    long new_cap = *cap ? *cap : 1024;
    void *bigger;

    if (need <= *cap)
        return array;
    while (new_cap < need)
        new_cap *= 2;
    bigger = realloc(array, (size_t)new_cap * size);
    if (bigger == NULL) {
        fprintf(stderr, "kdc-storm: out of memory\n");
        exit(2);
    }
    *cap = new_cap;
    return bigger;
}

void
write_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', out);
        if ((unsigned char)*s >= 0x20)
            fputc(*s, out);
    }
    fputc('"', out);
}
