/* The model, built once: from the packed fields (the Python extension) or from their text form (C
 * and C++ users, e.g. ros2_control plugins), into one block of memory. Configuration time only:
 * this file allocates; the algorithms never do.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#define RD_BLOCK 64 /* every array of the block starts on its own cache line */

const char *const rd_model_field_names[RD_FIELD_COUNT] = {
#define RD_FIELD_NAME(name, count) #name,
    RD_MODEL_FIELDS(RD_FIELD_NAME)
#undef RD_FIELD_NAME
};

size_t rd_model_field_length(int k, const rd_model_size *z)
{
    const size_t nb = (size_t)z->nb, nq = (size_t)z->nq, nr = (size_t)z->nr, nf = (size_t)z->nf;
    (void)nb, (void)nq, (void)nr, (void)nf;
    switch (k) {
#define RD_FIELD_LENGTH(name, count) \
    case RD_FIELD_##name:            \
        return count;
        RD_MODEL_FIELDS(RD_FIELD_LENGTH)
#undef RD_FIELD_LENGTH
    default:
        return 0;
    }
}

static size_t block(size_t bytes) { return (bytes + RD_BLOCK - 1) / RD_BLOCK * RD_BLOCK; }

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return RD_BAD_INPUT;
}

/* The block's layout: the structs, then, when `described`, the nq joint name pointers, RD_LIMITS
 * rows of nq limits and the nf frame name pointers, and `names` bytes of names; then `extra` bytes.
 * Offsets in off[0..7]; returns the total. */
/* The description's limits per joint in the text form: effort, position lower and upper, velocity. */
enum { RD_LIMITS = 4 };
static const char *const LIMIT_KEYS[RD_LIMITS] = {"effort_limit", "position_lower", "position_upper", "velocity_limit"};

static size_t layout(const rd_model_size *z, int described, size_t names, size_t extra, size_t off[8])
{
    const size_t sizes[7] = {sizeof(rd_body) * z->nb, sizeof(rd_joint) * z->nq, sizeof(rd_secondary) * z->nr,
                             sizeof(double) * z->nr * z->nq, sizeof(rd_frame) * z->nf,
                             described ? sizeof(char *) * z->nq + RD_LIMITS * sizeof(double) * z->nq + sizeof(char *) * z->nf : 0,
                             described ? names : 0};
    size_t total = 0;
    for (int k = 0; k < 7; ++k) {
        off[k] = total;
        total += block(sizes[k]);
    }
    off[7] = total;
    return total + block(extra);
}

static int check_size(const rd_model_size *z, char *err, size_t errlen)
{
    const int v[4] = {z->nb, z->nq, z->nr, z->nf};
    const char *names[4] = {"nb", "nq", "nr", "nf"};
    for (int k = 0; k < 4; ++k)
        if (v[k] < 0 || v[k] > 100000)
            return fail(err, errlen, "model: %s = %d out of range [0, 100000]", names[k], v[k]);
    if (z->tree != 0 && z->tree != 1)
        return fail(err, errlen, "model: tree = %d, expected 0 or 1", z->tree);
    return RD_OK;
}

/* Fills the structs of m (its arrays placed already) from the fields. */
/* *body = x, a body index of the model text: 1 when it is the base (-1) or one of the nb bodies. */
static int body_in_range(double x, int nb, int *body)
{
    *body = (int)x;
    return *body >= -1 && *body < nb;
}

/* Each body's `last`: the largest index in its subtree, when every body's subtree is the bodies
 * i..last (a depth-first order, rd_crba's column blocks); else -1 for every body. A range i..max
 * holds the whole subtree and is no larger than it exactly when it has as many bodies, which holds
 * for every body at once when the ranges' sizes add up to the subtrees' (each body counted once per
 * ancestor-or-self: its depth + 1). */
static void subtrees(rd_model *m)
{
    const int nb = m->nb;
    long long ranges = 0, members = 0;
    for (int i = 0; i < nb; ++i) { /* depths first, in `last` */
        rd_body *b = &m->body[i];
        b->last = b->parent < 0 ? 0 : m->body[b->parent].last + 1;
        members += b->last + 1;
    }
    for (int i = 0; i < nb; ++i)
        m->body[i].last = i;
    for (int i = nb - 1; i >= 0; --i) {
        const rd_body *b = &m->body[i];
        if (b->parent >= 0 && b->last > m->body[b->parent].last)
            m->body[b->parent].last = b->last;
        ranges += b->last - i + 1;
    }
    if (ranges != members)
        for (int i = 0; i < nb; ++i)
            m->body[i].last = -1;
}

/* J = [S h; h^T m] (row-major 4x4) of a rigid-body inertia: the second moment S = int p p^T dm =
 * tr(Io)/2 1 - Io about the body origin. */
static void pseudo_inertia(const rd_inertia *I, double J[16])
{
    const double half = 0.5 * (I->Io[0] + I->Io[4] + I->Io[8]);
    for (int x = 0; x < 3; ++x) {
        for (int y = 0; y < 3; ++y)
            J[4 * x + y] = x == y ? half - I->Io[3 * x + y] : -I->Io[3 * x + y];
        J[4 * x + 3] = J[12 + x] = I->h[x];
    }
    J[15] = I->m;
}

static int fill(rd_model *m, const double *const x[RD_FIELD_COUNT], char *err, size_t errlen)
{
    const int nb = m->nb, nq = m->nq;
    memcpy(m->gravity, x[RD_FIELD_gravity], sizeof m->gravity);
    for (int i = 0; i < nb; ++i) {
        rd_body *b = &m->body[i];
        b->parent = (int)x[RD_FIELD_parent][i];
        b->type = x[RD_FIELD_type][i] != 0.0 ? RD_PRISMATIC : RD_REVOLUTE;
        b->joint = (int)x[RD_FIELD_joint][i];
        b->mult = x[RD_FIELD_mult][i];
        b->offset = x[RD_FIELD_offset][i];
        if (b->parent >= i || b->parent < -1 || b->joint < 0 || b->joint >= nq)
            return fail(err, errlen, "model: body %d: parent %d or joint %d out of range", i, b->parent, b->joint);
        memcpy(b->axis, x[RD_FIELD_axis] + 3 * i, 3 * sizeof(double));
        memcpy(b->E0, x[RD_FIELD_E0] + 9 * i, 9 * sizeof(double));
        memcpy(b->r0, x[RD_FIELD_r0] + 3 * i, 3 * sizeof(double));
        const double *a = b->axis, *E0 = b->E0;
        const double K[9] = {0.0, -a[2], a[1], a[2], 0.0, -a[0], -a[1], a[0], 0.0}; /* [a]x */
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) {
                double ke = 0.0, ae = 0.0;
                for (int k = 0; k < 3; ++k) {
                    ke += K[3 * r + k] * E0[3 * k + c];
                    ae += a[r] * a[k] * E0[3 * k + c];
                }
                b->KE0[3 * r + c] = ke, b->AE0[3 * r + c] = ae; /* Rodrigues' terms of E(q) */
            }
        for (int c = 0; c < 3; ++c)
            b->d[c] = E0[c] * a[0] + E0[3 + c] * a[1] + E0[6 + c] * a[2]; /* E0^T a */
        b->coord = -1;
        for (int k = 0; k < 3; ++k)
            if (fabs(a[k]) == 1.0 && a[(k + 1) % 3] == 0.0 && a[(k + 2) % 3] == 0.0)
                b->coord = k;
        b->inertia.m = x[RD_FIELD_mass][i];
        memcpy(b->inertia.h, x[RD_FIELD_h] + 3 * i, 3 * sizeof(double));
        memcpy(b->inertia.Io, x[RD_FIELD_Io] + 9 * i, 9 * sizeof(double));
        pseudo_inertia(&b->inertia, b->J0);
    }
    subtrees(m);
    for (int k = 0; k < nq; ++k)
        m->joint[k] = (rd_joint){x[RD_FIELD_Ia][k], x[RD_FIELD_Fv][k], x[RD_FIELD_Fc][k], x[RD_FIELD_Fs][k],
                                 x[RD_FIELD_B][k]};
    memcpy(m->b, x[RD_FIELD_b], sizeof(double) * m->nr * nq);
    for (int s = 0; s < m->nr; ++s) {
        rd_secondary *sl = &m->secondary[s];
        if (!body_in_range(x[RD_FIELD_carrier][s], nb, &sl->carrier))
            return fail(err, errlen, "model: secondary link %d: carrier %d out of range", s, sl->carrier);
        memcpy(sl->axis, x[RD_FIELD_secondary_axis] + 3 * s, 3 * sizeof(double));
        sl->inertia = x[RD_FIELD_secondary_inertia][s];
        sl->b = m->b + (size_t)s * nq;
    }
    for (int f = 0; f < m->nf; ++f) {
        rd_frame *fr = &m->frame[f];
        if (!body_in_range(x[RD_FIELD_frame_body][f], nb, &fr->body))
            return fail(err, errlen, "model: frame %d: body %d out of range", f, fr->body);
        memcpy(fr->R, x[RD_FIELD_frame_R] + 9 * f, 9 * sizeof(double));
        memcpy(fr->p, x[RD_FIELD_frame_p] + 3 * f, 3 * sizeof(double));
    }
    return RD_OK;
}

/* A model's block as place() lays it out: what it holds besides the structs, and where its parts lie. */
typedef struct {
    int described;   /* 1: the description's joint names, limits and frame names too (rd_model_parse) */
    size_t names;    /* bytes of the joint and frame names */
    size_t extra;    /* bytes at the end for the caller, 64-byte aligned */
    void **extra_at; /* where those start (NULL: not asked) */
    size_t off[8];   /* the parts' offsets (layout), then from the block's start */
} model_block;

/* Places the arrays of m in a new block (calloc) laid out by `layout`. */
static int place(rd_model *m, const rd_model_size *z, model_block *blk, char *err, size_t errlen)
{
    size_t *off = blk->off;
    const size_t extra = blk->extra;
    void **extra_at = blk->extra_at;
    memset(m, 0, sizeof *m);
    const size_t total = layout(z, blk->described, blk->names, extra, off);
    char *at = calloc(1, total + RD_BLOCK);
    if (!at)
        return fail(err, errlen, "model: out of memory (%zu bytes)", total);
    m->memory = at;
    at = (char *)(((size_t)at + RD_BLOCK - 1) / RD_BLOCK * RD_BLOCK);
    m->nb = z->nb, m->nq = z->nq, m->nr = z->nr, m->nf = z->nf, m->tree = z->tree;
    m->body = (rd_body *)(at + off[0]);
    m->joint = (rd_joint *)(at + off[1]);
    m->secondary = (rd_secondary *)(at + off[2]);
    m->b = (double *)(at + off[3]);
    m->frame = (rd_frame *)(at + off[4]);
    if (extra_at)
        *extra_at = extra ? at + off[7] : NULL;
    for (int k = 0; k < 8; ++k)
        off[k] = (size_t)(at - (char *)m->memory) + off[k]; /* from the block's start */
    return RD_OK;
}

int rd_model_build(rd_model *m, const rd_model_size *z, const double *const x[RD_FIELD_COUNT], size_t extra,
                   void **extra_at, char *err, size_t errlen)
{
    model_block blk = {0, 0, extra, extra_at, {0}};
    int st = check_size(z, err, errlen);
    if (st == RD_OK)
        st = place(m, z, &blk, err, errlen);
    if (st == RD_OK)
        st = fill(m, x, err, errlen);
    if (st != RD_OK)
        rd_model_free(m);
    return st;
}

void rd_model_free(rd_model *m)
{
    if (!m)
        return;
    free(m->memory);
    memset(m, 0, sizeof *m);
}

/* The index of `name` among n names, or -1 (no names, or none matches). */
static int name_index(const char *const *names, int n, const char *name)
{
    if (!names || !name)
        return -1;
    for (int k = 0; k < n; ++k)
        if (strcmp(names[k], name) == 0)
            return k;
    return -1;
}

int rd_joint_index(const rd_model *m, const char *name) { return name_index(m->joint_name, m->nq, name); }

int rd_frame_index(const rd_model *m, const char *name) { return name_index(m->frame_name, m->nf, name); }

/* -- the text form ----------------------------------------------------------------------------------- */

#define RD_TEXT_MAGIC "robot_dynamics-engine-model"
#define RD_TEXT_VERSION 1

/* A cursor over the text: the current line's tokens. */
typedef struct {
    const char *at;
    int line;
} cursor;

static void skip_blanks(cursor *c)
{
    while (*c->at == ' ' || *c->at == '\t' || *c->at == '\r')
        ++c->at;
}

/* The next token of the current line into buf (n bytes); 0 at the end of the line. */
static size_t token(cursor *c, char *buf, size_t n)
{
    skip_blanks(c);
    size_t len = 0;
    while (*c->at && !isspace((unsigned char)*c->at)) {
        if (len + 1 < n)
            buf[len] = *c->at;
        ++len, ++c->at;
    }
    if (n)
        buf[len < n ? len : n - 1] = '\0';
    return len;
}

static int end_of_line(cursor *c)
{
    skip_blanks(c);
    return *c->at == '\n' || *c->at == '\0';
}

static void next_line(cursor *c)
{
    while (*c->at && *c->at != '\n')
        ++c->at;
    if (*c->at == '\n')
        ++c->at, ++c->line;
}

static int read_count(cursor *c, long *out, const char *key, char *err, size_t errlen)
{
    char buf[32];
    char *end;
    if (!token(c, buf, sizeof buf))
        return fail(err, errlen, "model text, line %d: %s: expected a count", c->line, key);
    errno = 0;
    *out = strtol(buf, &end, 10);
    if (*end || errno || *out < 0 || *out > 100000000)
        return fail(err, errlen, "model text, line %d: %s: bad count '%s'", c->line, key, buf);
    return RD_OK;
}

/* n doubles of the current line into x (NULL: checked and skipped). */
static int read_values(cursor *c, double *x, long n, const char *key, char *err, size_t errlen)
{
    for (long k = 0; k < n; ++k) {
        skip_blanks(c);
        char *end;
        const double v = strtod(c->at, &end);
        if (end == c->at || !(*end == '\0' || isspace((unsigned char)*end)))
            return fail(err, errlen, "model text, line %d: %s: value %ld of %ld is not a number", c->line, key, k + 1, n);
        if (isnan(v))
            return fail(err, errlen, "model text, line %d: %s: value %ld is NaN", c->line, key, k + 1);
        if (x)
            x[k] = v;
        c->at = end;
    }
    if (!end_of_line(c))
        return fail(err, errlen, "model text, line %d: %s: more than the %ld values announced", c->line, key, n);
    return RD_OK;
}

enum { SZ_NB, SZ_NQ, SZ_NR, SZ_NF, SZ_TREE, SZ_COUNT };
static const char *const SIZE_KEYS[SZ_COUNT] = {"nb", "nq", "nr", "nf", "tree"};

/* The index of `key` among the fields (0..RD_FIELD_COUNT-1), the extra keys (joint_names:
 * RD_FIELD_COUNT, the limits: RD_FIELD_COUNT + 1 + LIMIT_KEYS' index, frame_names: FRAME_NAMES) or
 * the sizes (SIZES + SZ_*); -1 if unknown. */
enum { LIMITS_AT = RD_FIELD_COUNT + 1, FRAME_NAMES = LIMITS_AT + RD_LIMITS, SIZES = FRAME_NAMES + 1, KEYS = SIZES + SZ_COUNT };
static int key_index(const char *key)
{
    for (int k = 0; k < RD_FIELD_COUNT; ++k)
        if (strcmp(key, rd_model_field_names[k]) == 0)
            return k;
    if (strcmp(key, "joint_names") == 0)
        return RD_FIELD_COUNT;
    if (strcmp(key, "frame_names") == 0)
        return FRAME_NAMES;
    for (int k = 0; k < RD_LIMITS; ++k)
        if (strcmp(key, LIMIT_KEYS[k]) == 0)
            return LIMITS_AT + k;
    for (int k = 0; k < SZ_COUNT; ++k)
        if (strcmp(key, SIZE_KEYS[k]) == 0)
            return SIZES + k;
    return -1;
}

/* First pass: the header, the sizes, and where each entry's line starts (seen[k]: its cursor). */
static int scan(const char *text, cursor seen[KEYS], int found[KEYS], size_t *names_bytes, rd_model_size *z,
                char *err, size_t errlen)
{
    cursor c = {text, 1};
    char key[64];
    token(&c, key, sizeof key);
    if (strcmp(key, RD_TEXT_MAGIC) != 0)
        return fail(err, errlen, "model text: expected a first line '%s %d <robot>', got '%.40s'", RD_TEXT_MAGIC,
                    RD_TEXT_VERSION, key);
    long version;
    if (read_count(&c, &version, RD_TEXT_MAGIC, err, errlen))
        return RD_BAD_INPUT;
    if (version != RD_TEXT_VERSION)
        return fail(err, errlen, "model text: version %ld, this engine reads version %d", version, RD_TEXT_VERSION);
    next_line(&c);
    memset(found, 0, sizeof(int) * KEYS);
    long sizes[SZ_COUNT] = {0};
    while (*c.at) {
        if (end_of_line(&c) || *c.at == '#') {
            next_line(&c);
            continue;
        }
        token(&c, key, sizeof key);
        const int k = key_index(key);
        if (k < 0)
            return fail(err, errlen, "model text, line %d: unknown entry '%s'", c.line, key);
        if (found[k])
            return fail(err, errlen, "model text, line %d: '%s' given twice", c.line, key);
        found[k] = 1;
        seen[k] = c;
        if (k >= SIZES) {
            if (read_count(&c, &sizes[k - SIZES], key, err, errlen))
                return RD_BAD_INPUT;
            if (!end_of_line(&c))
                return fail(err, errlen, "model text, line %d: %s: expected one integer", c.line, key);
        } else if (k == RD_FIELD_COUNT || k == FRAME_NAMES) { /* joint or frame names: their bytes */
            long n;
            if (read_count(&c, &n, key, err, errlen))
                return RD_BAD_INPUT;
            char name[256];
            for (long j = 0; j < n; ++j) {
                const size_t len = token(&c, name, sizeof name);
                if (!len || len >= sizeof name)
                    return fail(err, errlen, "model text, line %d: %s: name %ld missing or too long", c.line, key, j + 1);
                *names_bytes += len + 1;
            }
            if (!end_of_line(&c))
                return fail(err, errlen, "model text, line %d: %s: more than the %ld names announced", c.line, key, n);
        }
        next_line(&c);
    }
    for (int k = 0; k < SZ_COUNT; ++k)
        if (!found[SIZES + k])
            return fail(err, errlen, "model text: no '%s' line", SIZE_KEYS[k]);
    *z = (rd_model_size){(int)sizes[SZ_NB], (int)sizes[SZ_NQ], (int)sizes[SZ_NR], (int)sizes[SZ_NF], (int)sizes[SZ_TREE]};
    for (int k = 0; k < LIMITS_AT + 1; ++k) /* the position and velocity limits are optional */
        if (!found[k])
            return fail(err, errlen, "model text: no '%s' line",
                        k < RD_FIELD_COUNT ? rd_model_field_names[k] : (k == RD_FIELD_COUNT ? "joint_names" : "effort_limit"));
    return RD_OK;
}

int rd_model_text_size(const char *text, rd_model_size *z, char *err, size_t errlen)
{
    cursor seen[KEYS];
    int found[KEYS];
    size_t names_bytes = 0;
    if (!text)
        return fail(err, errlen, "model text: none given");
    int st = scan(text, seen, found, &names_bytes, z, err, errlen);
    return st == RD_OK ? check_size(z, err, errlen) : st;
}

/* The frame names of the line at *c (their bytes counted by scan) into `bytes`, which moves past
 * them, and their nf pointers into name; m->frame_name = name. */
static int read_frame_names(cursor *c, rd_model *m, char **name, char **bytes, char *err, size_t errlen)
{
    long n;
    if (read_count(c, &n, "frame_names", err, errlen))
        return RD_BAD_INPUT;
    if (n != m->nf)
        return fail(err, errlen, "model text, line %d: frame_names has %ld names, expected nf = %d", c->line, n, m->nf);
    for (long j = 0; j < n; ++j) {
        const size_t len = token(c, *bytes, 256);
        name[j] = *bytes;
        *bytes += len + 1;
    }
    m->frame_name = (const char *const *)name;
    return RD_OK;
}

int rd_model_parse(rd_model *m, const char *text, size_t extra, void **extra_at, char *err, size_t errlen)
{
    cursor seen[KEYS];
    int found[KEYS];
    size_t names_bytes = 0;
    rd_model_size z;
    double *values[RD_FIELD_COUNT] = {0};
    memset(m, 0, sizeof *m);
    if (!text)
        return fail(err, errlen, "model text: none given");
    int st = scan(text, seen, found, &names_bytes, &z, err, errlen);
    model_block blk = {1, names_bytes, extra, extra_at, {0}};
    const size_t *off = blk.off;
    if (st == RD_OK)
        st = check_size(&z, err, errlen);
    for (int k = 0; st == RD_OK && k < RD_FIELD_COUNT; ++k) { /* the fields, counts checked */
        cursor c = seen[k];
        long n;
        const size_t want = rd_model_field_length(k, &z);
        st = read_count(&c, &n, rd_model_field_names[k], err, errlen);
        if (st == RD_OK && (size_t)n != want)
            st = fail(err, errlen, "model text, line %d: %s has %ld values, expected %zu", c.line, rd_model_field_names[k], n, want);
        if (st == RD_OK && !(values[k] = malloc(sizeof(double) * (want ? want : 1))))
            st = fail(err, errlen, "model: out of memory");
        if (st == RD_OK)
            st = read_values(&c, values[k], n, rd_model_field_names[k], err, errlen);
    }
    if (st == RD_OK)
        st = place(m, &z, &blk, err, errlen);
    if (st == RD_OK)
        st = fill(m, (const double *const *)values, err, errlen);
    if (st == RD_OK) { /* the description's side: joint names, limits, frame names */
        char **name = (char **)((char *)m->memory + off[5]);
        double *limits = (double *)(name + m->nq); /* RD_LIMITS rows of nq, LIMIT_KEYS' order */
        char *bytes = (char *)m->memory + off[6];
        cursor c = seen[RD_FIELD_COUNT];
        long n;
        st = read_count(&c, &n, "joint_names", err, errlen);
        if (st == RD_OK && n != m->nq)
            st = fail(err, errlen, "model text, line %d: joint_names has %ld names, expected nq = %d", c.line, n, m->nq);
        for (long j = 0; st == RD_OK && j < n; ++j) {
            const size_t len = token(&c, bytes, 256);
            name[j] = bytes;
            bytes += len + 1;
        }
        for (int k = 0; st == RD_OK && k < RD_LIMITS; ++k) {
            double *limit = limits + (size_t)k * (size_t)m->nq;
            const double none = k == 1 ? -INFINITY : INFINITY;
            for (int j = 0; j < m->nq; ++j)
                limit[j] = none;
            if (!found[LIMITS_AT + k])
                continue;
            c = seen[LIMITS_AT + k];
            st = read_count(&c, &n, LIMIT_KEYS[k], err, errlen);
            if (st == RD_OK && n != m->nq)
                st = fail(err, errlen, "model text, line %d: %s has %ld values, expected nq = %d", c.line, LIMIT_KEYS[k],
                          n, m->nq);
            if (st == RD_OK)
                st = read_values(&c, limit, n, LIMIT_KEYS[k], err, errlen);
            for (long j = 0; st == RD_OK && j < n; ++j) {
                if (isnan(limit[j])) /* NaN: none */
                    limit[j] = none;
                else if ((k == 0 || k == 3) && !(limit[j] > 0.0))
                    st = fail(err, errlen, "model text: %s of joint '%s' is %g, expected > 0 (inf: none)", LIMIT_KEYS[k],
                              name[j], limit[j]);
            }
        }
        for (long j = 0; st == RD_OK && j < m->nq; ++j)
            if (!(limits[m->nq + j] <= limits[2 * m->nq + j]))
                st = fail(err, errlen, "model text: joint '%s' has position_lower %g above position_upper %g", name[j],
                          limits[m->nq + j], limits[2 * m->nq + j]);
        if (st == RD_OK && found[FRAME_NAMES])
            st = read_frame_names(&seen[FRAME_NAMES], m, (char **)(limits + RD_LIMITS * (size_t)m->nq), &bytes, err,
                                  errlen);
        m->joint_name = (const char *const *)name;
        m->effort_limit = limits;
        m->position_lower = limits + m->nq;
        m->position_upper = limits + 2 * m->nq;
        m->velocity_limit = limits + 3 * m->nq;
    }
    for (int k = 0; k < RD_FIELD_COUNT; ++k)
        free(values[k]);
    if (st != RD_OK)
        rd_model_free(m);
    return st;
}
