#include "tb_test.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracebench/snapshot.h"

const char *tb_test_reference_dir(const char *what)
{
    static char path[1024];
    const char *env = getenv("TB_REFERENCE_DIR");
    const char *ci = getenv("CI");
    struct stat st;

    snprintf(path, sizeof path, "%s", env && *env ? env : TB_REFERENCE_DEFAULT);
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return path;
    if (ci && strcmp(ci, "true") == 0) {
        cr_assert_fail("reference traces absent at %s under CI=true (%s)", path, what);
        return NULL;
    }
    fprintf(stderr,
            "\n*** SKIPPED: %s: reference traces not found at %s "
            "(set TB_REFERENCE_DIR) ***\n\n",
            what, path);
    cr_skip_test("SKIPPED: reference traces absent (%s)", path);
    return NULL;
}

uint8_t *tb_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n + 1);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
        if (buf)
            *len = (size_t)n;
    }
    fclose(f);
    return buf;
}

char *tb_test_slurp(const char *path, size_t *len)
{
    size_t n = 0;
    char *s = (char *)tb_test_read_file(path, &n);

    cr_assert(s, "cannot read %s", path);
    s[n] = '\0';
    if (len)
        *len = n;
    return s;
}

bool tb_test_vector_has_option(const char *dir, const char *item)
{
    char p[1024], *readme, *s, *e;
    bool yes = false;
    size_t n = strlen(item);

    snprintf(p, sizeof p, "%s/README.md", dir);
    readme = tb_test_slurp(p, NULL);
    s = strstr(readme, "| options | `");
    cr_assert(s, "%s: no options row", p);
    s += 13;
    e = strchr(s, '`');
    for (char *t = s; e && t + n <= e; t++)
        if (!strncmp(t, item, n) && (t == s || t[-1] == ',') && (t[n] == ',' || t[n] == '`'))
            yes = true;
    free(readme);
    return yes;
}

int tb_test_run_cli(const char *args, const char *to, char **out, size_t *out_len,
                    char **err)
{
    char cmd[8192], o1[64], o2[64];
    int rc, status = -1;

    snprintf(o1, sizeof o1, "/tmp/tb_test_cli_%d.out", (int)getpid());
    snprintf(o2, sizeof o2, "/tmp/tb_test_cli_%d.err", (int)getpid());
    cr_assert_lt(snprintf(cmd, sizeof cmd, "'%s' %s > %s 2> %s", tb_test_cli(), args,
                          to ? to : o1, o2),
                 (int)sizeof cmd);
    rc = system(cmd);
    if (rc != -1 && WIFEXITED(rc))
        status = WEXITSTATUS(rc);
    *out = to ? strdup("") : tb_test_slurp(o1, out_len);
    *err = tb_test_slurp(o2, NULL);
    remove(o1);
    remove(o2);
    return status;
}

uint64_t tb_test_rand(uint64_t *state)
{
    uint64_t x = *state ? *state : 0x9E3779B97F4A7C15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

void tb_test_junk(uint8_t *buf, size_t n)
{
    size_t at, z;

    for (at = 0; at < n; at++)
        buf[at] = (uint8_t)(1 + at * 97 % 255);
    for (at = 20, z = 1; at < n / 2; at += 45, z = z % 4 + 1) {
        memset(buf + at, 0x00, z);
        buf[at + z] = 0x80;
    }
}

void tb_test_expect_junk(const tb_packet *v, size_t n, uint64_t base, size_t junk)
{
    cr_assert_geq(n, 1);
    cr_assert_eq(v[0].kind, TB_PKT_NOTSYNC);
    cr_assert_eq(v[0].index, base);
    cr_assert_eq(v[0].count, junk);
    if (n > 1) {
        cr_assert_eq(v[1].kind, TB_PKT_ASYNC);
        cr_assert_eq(v[1].index, base + junk);
    }
}

const char *tb_test_cli(void)
{
    static char buf[1024];
    const char *e = getenv("TB_CLI");

    if (e && *e)
        return e;
    snprintf(buf, sizeof buf, "%s/tracebench", TB_BINARY_DIR);
    return buf;
}

tb_cli_run tb_test_run_to(const char *to, const char *fmt, ...)
{
    char args[4096];
    tb_cli_run r = {-1, NULL, 0, NULL};
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    r.status = tb_test_run_cli(args, to, &r.out, &r.out_len, &r.err);
    fprintf(stderr, "$ tracebench %s\n%s%s(exit %d)\n", args, r.out_len < 2000 ? r.out : "",
            r.err, r.status);
    return r;
}

void tb_test_run_done(tb_cli_run *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

void tb_test_err_has(const tb_cli_run *r, const char *text)
{
    cr_expect(strstr(r->err, text), "stderr lacks \"%s\":\n%s", text, r->err);
}

void tb_test_err_lacks(const tb_cli_run *r, const char *text)
{
    cr_expect(!strstr(r->err, text), "stderr has \"%s\":\n%s", text, r->err);
}

void tb_test_out_has(const tb_cli_run *r, const char *text)
{
    cr_expect(strstr(r->out, text), "stdout lacks \"%s\"", text);
}

void tb_test_le16(uint8_t *b, uint16_t v)
{
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
}

void tb_test_le32(uint8_t *b, uint32_t v)
{
    tb_test_le16(b, (uint16_t)v);
    tb_test_le16(b + 2, (uint16_t)(v >> 16));
}

int tb_test_bytes_sink(void *ctx, const uint8_t *d, size_t n)
{
    tb_test_bytes *b = ctx;

    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        b->d = realloc(b->d, b->cap);
        cr_assert_not_null(b->d);
    }
    memcpy(b->d + b->n, d, n);
    b->n += n;
    return 0;
}

void tb_test_image_words(tb_memimage *m, uint32_t addr, const uint32_t *w, size_t n)
{
    uint8_t b[256];

    cr_assert_leq(n, sizeof b / 4, "tb_test_image_words: %zu words", n);
    for (size_t i = 0; i < n; i++)
        tb_test_le32(b + 4 * i, w[i]);
    cr_assert_eq(tb_memimage_add(m, addr, b, 4 * n), 0, "image words at 0x%08x", addr);
}

void tb_test_image_word(tb_memimage *m, uint32_t addr, uint32_t w)
{
    tb_test_image_words(m, addr, &w, 1);
}

int tb_test_sh(const char *cmd, char **out)
{
    char full[8192];
    FILE *p;
    size_t len = 0, cap = 4096;
    int st;

    snprintf(full, sizeof full, "%s 2>&1", cmd);
    p = popen(full, "r");
    cr_assert(p);
    *out = malloc(cap);
    cr_assert(*out);
    for (;;) {
        size_t k = fread(*out + len, 1, cap - len - 1, p);

        if (!k)
            break;
        len += k;
        if (len + 1 == cap) {
            cap *= 2;
            *out = realloc(*out, cap);
            cr_assert(*out);
        }
    }
    (*out)[len] = '\0';
    st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t tb_test_list_vectors(char ***names)
{
    char dir[1024], path[1400];
    DIR *dp;
    struct dirent *de;
    char **v = NULL;
    size_t n = 0;
    struct stat st;

    snprintf(dir, sizeof dir, "%s/vectors/generated", TB_SOURCE_DIR);
    dp = opendir(dir);
    cr_assert_not_null(dp, "%s", dir);
    while ((de = readdir(dp))) {
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s/snapshot.ini", dir, de->d_name);
        if (stat(path, &st) != 0)
            continue;
        v = realloc(v, (n + 1) * sizeof *v);
        cr_assert_not_null(v);
        v[n] = strdup(de->d_name);
        cr_assert_not_null(v[n]);
        n++;
    }
    closedir(dp);
    if (n)
        qsort(v, n, sizeof *v, cmp_name);
    *names = v;
    return n;
}

void tb_test_free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

void tb_test_scratch_make(char *buf, size_t len, const char *tag)
{
    snprintf(buf, len, "/tmp/tb_test_%s_%d", tag, (int)getpid());
    mkdir(buf, 0777);
}

void tb_test_scratch_remove(const char *dir)
{
    char cmd[512];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

const char *tb_test_arm_cc(const char *what)
{
    const char *cc = getenv("TB_ARM_CC");
    const char *ci = getenv("CI");

    if (!cc || !*cc)
        cc = "arm-none-eabi-gcc";
    if (system("command -v arm-none-eabi-gcc >/dev/null 2>&1") == 0 || strchr(cc, '/'))
        return cc;
    if (ci && !strcmp(ci, "true"))
        cr_expect_fail("%s: arm-none-eabi-gcc is missing (install gcc-arm-none-eabi)", what);
    else
        fprintf(stderr, "SKIPPED %s: arm-none-eabi-gcc is missing (gcc-arm-none-eabi)\n", what);
    return NULL;
}
