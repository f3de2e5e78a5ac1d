/*
 * Writing a generated program to a directory and building its ELF with
 * the ARM cross compiler (include/tracebench/gen.h).  The compiler's own
 * output goes to DIR/gen.log; the library prints nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracebench/gen.h"
#include "tracebench/types.h"

extern char **environ;

static int put(const char *dir, const char *name, const char *text, char *err, size_t errlen)
{
    char path[4096];
    FILE *f;
    size_t n = strlen(text);
    int bad;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!(f = fopen(path, "w"))) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return TB_ERR_IO;
    }
    bad = fwrite(text, 1, n, f) != n;
    bad |= fclose(f) != 0;
    if (bad) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return TB_ERR_IO;
    }
    return 0;
}

int tb_gen_write(const tb_gen_program *p, const char *dir, char *err, size_t errlen)
{
    struct stat st;
    char dummy[8];
    int rc;

    if (!err || !errlen)
        err = dummy, errlen = sizeof dummy;
    err[0] = '\0';
    if (!p || !dir || !*dir || !p->source || !p->ldscript || !p->scenario)
        return TB_ERR_INVAL;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create directory %s: %s", dir, strerror(errno));
        return TB_ERR_IO;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s exists and is not a directory", dir);
        return TB_ERR_IO;
    }
    if ((rc = put(dir, TB_GEN_SOURCE, p->source, err, errlen)) < 0 ||
        (rc = put(dir, TB_GEN_LDSCRIPT, p->ldscript, err, errlen)) < 0 ||
        (rc = put(dir, TB_GEN_SCENARIO, p->scenario, err, errlen)) < 0)
        return rc;
    return 0;
}

/* cc found: a path that is executable, or a name in PATH. */
static bool have_cc(const char *cc)
{
    const char *path = getenv("PATH");
    char buf[4096];

    if (strchr(cc, '/'))
        return access(cc, X_OK) == 0;
    if (!path)
        path = "/usr/bin:/bin";
    while (*path) {
        const char *end = strchr(path, ':');
        size_t l = end ? (size_t)(end - path) : strlen(path);

        snprintf(buf, sizeof buf, "%.*s/%s", (int)l, l ? path : ".", cc);
        if (access(buf, X_OK) == 0)
            return true;
        path += l + (end ? 1 : 0);
    }
    return false;
}

/* The first lines of the compiler's log, on one line each, into err. */
static void log_head(const char *log, char *err, size_t errlen)
{
    FILE *f = fopen(log, "r");
    size_t used = strlen(err);
    char line[512];
    unsigned n = 0;

    if (!f)
        return;
    while (n < 4 && fgets(line, sizeof line, f) && used + 2 < errlen) {
        line[strcspn(line, "\n")] = '\0';
        used += (size_t)snprintf(err + used, errlen - used, "\n  %s", line);
        if (used >= errlen)
            used = errlen - 1;
        n++;
    }
    fclose(f);
}

int tb_gen_build(const char *dir, const char *cc, char *err, size_t errlen)
{
    char src[4096], ld[4096], elf[4096], log[4096], tflag[4200];
    char dummy[8];
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int status, rc;

    if (!err || !errlen)
        err = dummy, errlen = sizeof dummy;
    err[0] = '\0';
    if (!dir || !*dir)
        return TB_ERR_INVAL;
    if (!cc || !*cc)
        cc = "arm-none-eabi-gcc";
    if (!have_cc(cc)) {
        snprintf(err, errlen, "the ARM cross compiler '%s' was not found%s; install the Debian "
                 "package gcc-arm-none-eabi (apt-get install --no-install-recommends "
                 "gcc-arm-none-eabi, or scripts/deps.sh), or name another with --cc",
                 cc, strchr(cc, '/') ? "" : " in PATH");
        return TB_ERR_NOT_FOUND;
    }
    snprintf(src, sizeof src, "%s/%s", dir, TB_GEN_SOURCE);
    snprintf(ld, sizeof ld, "%s/%s", dir, TB_GEN_LDSCRIPT);
    snprintf(elf, sizeof elf, "%s/%s", dir, TB_GEN_ELF);
    snprintf(log, sizeof log, "%s/%s", dir, TB_GEN_LOG);
    snprintf(tflag, sizeof tflag, "-T%s", ld);
    {
        /* The vector programs' flags (vectors/CMakeLists.txt); assembler
         * warnings are errors: a generated program must be clean. */
        char *argv[] = {(char *)cc, "-mcpu=cortex-a15", "-mfloat-abi=soft", "-ffreestanding",
                        "-nostdlib", "-g", "-Wa,--fatal-warnings", tflag, "-o", elf, src,
                        NULL};

        if (posix_spawn_file_actions_init(&fa) != 0)
            return TB_ERR_NOMEM;
        posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        rc = posix_spawnp(&pid, cc, &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
    }
    if (rc != 0) {
        snprintf(err, errlen, "cannot run %s: %s", cc, strerror(rc));
        return rc == ENOENT ? TB_ERR_NOT_FOUND : TB_ERR_IO;
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            snprintf(err, errlen, "waiting for %s: %s", cc, strerror(errno));
            return TB_ERR_IO;
        }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
            snprintf(err, errlen, "%s could not be started (exit 127); install the Debian "
                     "package gcc-arm-none-eabi", cc);
            return TB_ERR_NOT_FOUND;
        }
        snprintf(err, errlen, "%s rejected %s (a generator bug; its output is in %s):", cc,
                 src, log);
        log_head(log, err, errlen);
        return TB_ERR_FORMAT;
    }
    return 0;
}
